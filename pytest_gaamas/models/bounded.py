"""What a model's server sends is read within bounds: a size, and a deadline for the whole request.

httpx's timeouts apply to each read, so a server that sends a byte every 299 s holds a request for
ever, and a body that never ends is read until memory runs out. The official clients (``openai``,
``ollama``) both take an httpx transport; the one made here passes each request to httpx's own and reads
the response through a stream that stops at ``max_bytes`` or at the request's deadline. The
breaches are exceptions the model classes turn into one line: a timeout (asked again, as any
timeout) or an answer too large (a model that is unavailable as it stands).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from types import ModuleType

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


def bounded_transport(http: ModuleType, seconds: float):
    """A transport of ``http`` (the client's httpx: ``httpx``, or ``httpx2``, which newer ``openai``
    releases are built on) whose responses are read within ``MAX_ANSWER_BYTES`` and ``seconds`` in all."""
    return _classes(http)(seconds, MAX_ANSWER_BYTES)


@functools.cache
def _classes(http: ModuleType) -> type:
    class BoundedStream(http.SyncByteStream):
        def __init__(self, stream, max_bytes: int, deadline: float, seconds: float):
            self._stream, self._max_bytes, self._deadline, self._seconds = stream, max_bytes, deadline, seconds

        def __iter__(self) -> Iterator[bytes]:
            read = 0
            for chunk in self._stream:
                read += len(chunk)
                if read > self._max_bytes:
                    raise AnswerTooLarge(f"larger than {self._max_bytes:,} bytes")
                if time.monotonic() > self._deadline:
                    raise http.ReadTimeout(f"the whole answer took longer than {self._seconds:g} s")
                yield chunk

        def close(self) -> None:
            self._stream.close()

    class BoundedTransport(http.BaseTransport):
        def __init__(self, seconds: float, max_bytes: int):
            self._inner = http.HTTPTransport()
            self.seconds, self.max_bytes = seconds, max_bytes

        def handle_request(self, request):
            deadline = time.monotonic() + self.seconds
            response = self._inner.handle_request(request)
            return http.Response(
                status_code=response.status_code, headers=response.headers, extensions=response.extensions,
                stream=BoundedStream(response.stream, self.max_bytes, deadline, self.seconds),
            )  # fmt: skip

        def close(self) -> None:
            self._inner.close()

    return BoundedTransport
