"""What a model's server sends is read within bounds: a size, and a deadline for the whole request.

httpx's timeouts apply to each read, so a server that sends a byte every 299 s holds a request for
ever, and a body that never ends is read until memory runs out. The official clients (``openai``,
``ollama``) both take an httpx transport; the one made here is httpx's own, whose connections read
through a stream that counts what each request has read and gives each read only what is left of
the request's deadline. The bound sits under the transport, where the bytes arrive, and not on the
response, because a recording (vcrpy) reads the whole body inside the transport before any response
reaches its caller. The breaches are exceptions the model classes turn into one line: a timeout
(asked again, as any timeout) or an answer too large (a model that is unavailable as it stands).

A compressed body is bounded as it inflates, not only as it arrives: 2 MB of gzip may inflate to
2 GiB, which the recorder (and the client) would decompress whole. So the body is inflated here,
under the transport and within the bound, and handed up as plain bytes without its
``Content-Encoding``; the server is asked for no encoding but the two inflated here.
"""

from __future__ import annotations

import functools
import sys
import threading
import time
import zlib
from types import ModuleType
from typing import Any

#: A chat completion is a few kilobytes; a reasoning model's, a few hundred. Past this, no answer.
MAX_ANSWER_BYTES = 16 * 1024 * 1024


class AnswerTooLarge(Exception):
    """The server's answer went past ``MAX_ANSWER_BYTES``; reading it further was refused."""


def too_large(error: BaseException | None) -> AnswerTooLarge | None:
    """The ``AnswerTooLarge`` in ``error``'s chain, however the client wrapped it."""
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, AnswerTooLarge):
            return error
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None


class _Request(threading.local):
    """The request this thread is reading: its deadline and the bytes it may still read. A sync
    client reads a request's answer in the thread that sent it; trials played at once each have one."""

    deadline: float | None = None
    seconds: float = 0.0
    bound: int = MAX_ANSWER_BYTES
    left: int = MAX_ANSWER_BYTES


def bounded_transport(http: ModuleType, seconds: float):
    """A transport of ``http`` (the client's httpx: ``httpx``, or ``httpx2``, which newer ``openai``
    releases are built on) whose every request is read within ``MAX_ANSWER_BYTES`` and ``seconds``."""
    transport = http.HTTPTransport()
    pool = transport._pool
    core = sys.modules[type(pool).__module__.split(".")[0]]  # httpcore, or httpcore2 under httpx2
    reading = _Request()
    pool._network_backend = _backend(core)(pool._network_backend, reading)
    transport._pool = _InflatingPool(pool, core, http, reading)
    return _transport(http)(transport, reading, seconds)


#: The encodings inflated here, within the bound, by the ``wbits`` zlib reads each with.
INFLATED = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class _InflatingPool:
    """httpcore's connection pool, whose answers arrive inflated (``_Inflated``) and without a
    ``Content-Encoding`` for anything above to inflate again. Under the transport, so that a recording
    (vcrpy) reads the inflated body, as the client does."""

    def __init__(self, pool: Any, core: ModuleType, http: ModuleType, reading: _Request):
        self._pool, self._core, self._http, self._reading = pool, core, http, reading

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)

    def __enter__(self):
        self._pool.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        self._pool.__exit__(*exc_info)

    def handle_request(self, request):
        request.headers = [(k, v) for k, v in request.headers if k.lower() != b"accept-encoding"] + [(b"Accept-Encoding", b"gzip, deflate")]
        response = self._pool.handle_request(request)
        encodings = [e.strip().lower() for k, v in response.headers if k.lower() == b"content-encoding" for e in v.decode("latin-1").split(",")]
        encodings = [e for e in encodings if e and e != "identity"]
        if not encodings:
            return response
        headers = [(k, v) for k, v in response.headers if k.lower() not in (b"content-encoding", b"content-length")]
        body = _Inflated(response.stream, encodings, self._reading.bound, self._http)
        return self._core.Response(response.status, headers=headers, content=body, extensions=response.extensions)


class _Inflated:
    """A body as it was before the server compressed it, inflated a piece at a time. An encoding not
    inflated here (one the server was not asked for) is passed on as it came, which then reads as no
    chat completion."""

    def __init__(self, stream: Any, encodings: list[str], bound: int, http: ModuleType):
        self._stream = stream
        known = all(e in INFLATED for e in encodings)
        self._stages = [_Inflater(e, bound, http) for e in reversed(encodings)] if known else []

    def __iter__(self):
        for chunk in self._stream:
            for stage in self._stages:
                chunk = stage.inflate(chunk)
            if chunk:
                yield chunk
        tail = b""
        for stage in self._stages:
            tail = stage.inflate(tail) + stage.rest()
        if tail:
            yield tail

    def close(self) -> None:
        if hasattr(self._stream, "close"):
            self._stream.close()


class _Inflater:
    """One encoding undone, giving no more than ``bound`` bytes in all: zlib is asked for one byte
    past what is left, never for all that a piece inflates to."""

    def __init__(self, encoding: str, bound: int, http: ModuleType):
        self.encoding, self.bound, self.left, self._http = encoding, bound, bound, http
        self._zlib = zlib.decompressobj(INFLATED[encoding])
        self._first = True

    def inflate(self, data: bytes) -> bytes:
        try:
            inflated = self._zlib.decompress(data, self.left + 1)
        except zlib.error as error:
            if self.encoding == "deflate" and self._first:  # deflate sent raw, without zlib's header, as some servers do
                self.encoding, self._zlib = "raw deflate", zlib.decompressobj(-zlib.MAX_WBITS)
                return self.inflate(data)
            raise self._http.DecodingError(f"the answer is not the {self.encoding} it says it is ({error})") from None
        self._first = self._first and not data
        return self._counted(inflated)

    def rest(self) -> bytes:
        return self._counted(self._zlib.flush())

    def _counted(self, inflated: bytes) -> bytes:
        self.left -= len(inflated)
        if self.left < 0:
            raise AnswerTooLarge(f"larger than {self.bound:,} bytes once decompressed")
        return inflated


@functools.cache
def _transport(http: Any) -> type:  # a module: httpx, or httpx2
    class BoundedTransport(http.BaseTransport):
        """httpx's transport, each request given its deadline and its byte budget as it starts."""

        def __init__(self, transport, reading: _Request, seconds: float):
            self._transport, self._reading, self.seconds = transport, reading, seconds

        def handle_request(self, request):
            reading = self._reading
            reading.deadline, reading.seconds = time.monotonic() + self.seconds, self.seconds
            reading.bound = reading.left = MAX_ANSWER_BYTES
            return self._transport.handle_request(request)

        def close(self) -> None:
            self._transport.close()

    return BoundedTransport


@functools.cache
def _backend(core: Any) -> type:  # a module: httpcore, or httpcore2
    class BoundedStream(core.NetworkStream):
        def __init__(self, stream, reading: _Request):
            self._stream, self._reading = stream, reading

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            reading = self._reading
            if reading.deadline is not None:
                left = reading.deadline - time.monotonic()
                if left <= 0:
                    raise core.ReadTimeout(f"the whole answer took longer than {reading.seconds:g} s")
                timeout = left if timeout is None else min(timeout, left)
            data = self._stream.read(max_bytes, timeout)
            reading.left -= len(data)
            if reading.left < 0:
                raise AnswerTooLarge(f"larger than {reading.bound:,} bytes")
            return data

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._stream.write(buffer, timeout)

        def close(self) -> None:
            self._stream.close()

        def start_tls(self, *args, **kwargs):
            return BoundedStream(self._stream.start_tls(*args, **kwargs), self._reading)

        def get_extra_info(self, info: str):
            return self._stream.get_extra_info(info)

    class BoundedBackend(core.NetworkBackend):
        def __init__(self, backend, reading: _Request):
            self._backend, self._reading = backend, reading

        def connect_tcp(self, *args, **kwargs):
            return BoundedStream(self._backend.connect_tcp(*args, **kwargs), self._reading)

        def connect_unix_socket(self, *args, **kwargs):
            return BoundedStream(self._backend.connect_unix_socket(*args, **kwargs), self._reading)

        def sleep(self, seconds: float) -> None:
            self._backend.sleep(seconds)

    return BoundedBackend
