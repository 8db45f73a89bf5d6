"""Recording and replaying model exchanges with vcrpy, so that nothing recorded is ever lost.

One cassette per test item, at ``<cassette dir>/<model>/<behaviour>/<item>.yaml``. Requests match on
method, path and the parsed JSON body, never on order or host, so the embedded server's port does
not matter and each trial's seed (in the body) makes repeated samples distinct requests; a recorded
answer is served once. Only ``Content-Type`` is kept of the headers, on both sides, and credentials
in the URL (user-info, key-bearing query parameters) are removed, so no secret is ever written.

What keeps recordings safe:

- a cassette is replaced only whole: written to a temporary file beside it, flushed to disk, then
  renamed over the old one, so a run killed while writing leaves the old cassette as it was;
- a cassette has one writer at a time (``one_writer``, a lock beside it from before it is read until
  it is written): two items sharing it under xdist, or two runs of one item, record in turn, and the
  second replays what the first paid for; and a cassette saved by ``once`` or ``new_episodes`` keeps
  every exchange the file on disk holds that the save lacks, so that no writer ever leaves fewer than
  it found;
- ``--gaamas-record=once`` writes a cassette only where there was none, and only whole: a run that
  ends by an error leaves the finished trials in the journal and no cassette, so the next run does
  not meet a cassette lacking requests; a cassette that exists is only replayed;
- ``--gaamas-record=all`` records afresh into memory and, at the end, refuses to replace a cassette
  whose recorded requests the new recording lacks (fewer trials, changed prompts) unless the run
  says ``--gaamas-replace-recorded``; nothing is replaced then, and the new answers stay in the
  item's journal (:mod:`pytest_gaamas.journal`), which also holds every finished trial's exchanges,
  so a trial answered before a crash reaches the cassette when the item is next run;
- a cassette that cannot be read or written is one line naming the file and saying what to do;
- a cassette is read within bounds before it is parsed, as anyone may have edited it: at most
  :data:`MAX_CASSETTE_BYTES`, also once decompressed, a regular file (never a FIFO that would block),
  YAML read by :mod:`pytest_gaamas.safeyaml` (no recursion, no depth past 64, no alias, no object
  tags), and every exchange rebuilt from the fields replay reads, each checked for its type.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import gzip
import io
import json
import os
import re
import stat
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import vcr

try:
    import fcntl
except ImportError:  # not POSIX: temporary files are written unlocked, and never removed by another run
    fcntl = None  # type: ignore[assignment]
from vcr import filters as vcr_filters
from vcr.persisters.filesystem import CassetteNotFoundError
from vcr.record_mode import RecordMode
from vcr.request import Request
from vcr.serialize import serialize
from vcr.serializers import compat

from . import safejson, safeyaml
from .errors import GaamasError, UnreadableFile, UnwritableOutput
from .redact import has_known_secrets, redact_url, scrub_known

#: --gaamas-record values, named and behaving as vcrpy's (and pytest-recording's), and the vcrpy
#: modes that implement them, in the order --help lists them.
RECORD_MODES = {
    "none": RecordMode.NONE,  # replay only; a request no cassette holds is an error
    "once": RecordMode.ONCE,  # record a cassette that does not exist yet; an existing one replays only
    "new_episodes": RecordMode.NEW_EPISODES,  # replay what is recorded, record what is missing
    "all": RecordMode.ALL,  # record everything afresh
}
#: The modes that record what no cassette holds yet (``all`` records everything, whatever is held).
ADDING_MODES = ("once", "new_episodes")
KEPT_HEADERS = frozenset({"content-type"})
MATCHER = "gaamas_json_request"
RESTORE_HINT = "restore it with `git checkout -- {path}`, or record it again with --gaamas-record=all"
#: A disk that is full, or a quota used up.
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
#: The temporary files ``write_atomically`` makes (``tempfile.mkstemp`` names them so).
_TEMPORARY = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")
STALE_AFTER_S = 60.0
#: What a cassette's YAML may weigh, read or decompressed: 16 times the largest shipped one. Its
#: writer refuses what its reader would (``refuse_past_bound``).
MAX_CASSETTE_BYTES = 32 << 20
#: What to do when a cassette would pass it.
TOO_LARGE_CASSETTE = (
    "its answers are kept in the journal; answers this large are seldom a chat model's: check the server's URL, "
    "or lower --gaamas-max-tokens or --gaamas-trials"
)


class RecordingRefused(GaamasError):
    """``--gaamas-record=all`` would have dropped recorded exchanges; nothing was replaced."""


@lru_cache(maxsize=65_536)
def _canonical_body(body: bytes | str | None) -> str:
    if body is None:
        return ""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    except (ValueError, RecursionError):
        return text


def request_key(request) -> tuple[str, str, str]:
    """What two requests must share to be the same request."""
    return request.method, request.path, _canonical_body(request.body)


def same_request(r1, r2) -> bool:
    """vcrpy's matcher: the same ``request_key``, the one that RequestIndex looks requests up by."""
    return request_key(r1) == request_key(r2)


def _keep_only_content_type(headers) -> dict:
    return {k: v for k, v in headers.items() if k.lower() in KEPT_HEADERS}


def _scrub_request(request):
    request.headers = _keep_only_content_type(request.headers)
    request.uri = redact_url(request.uri)
    return request


def _scrub_response(response: dict) -> dict | None:
    """What is kept of a response: an answer, with its content type only. An error (HTTP 400 and
    above: a refused key, a missing model, a rate limit, a server fault) is not an answer and is
    never recorded, so it can never be replayed as one; it may also quote the request's secrets."""
    status = (response.get("status") or {}).get("code")
    if not isinstance(status, int) or status >= 400:
        return None
    response["headers"] = _keep_only_content_type(response.get("headers", {}))
    body = response.get("body")
    if has_known_secrets() and isinstance(body, dict) and isinstance(body.get("string"), (str, bytes)):  # a key echoed
        text = body["string"].decode("utf-8", "surrogateescape") if isinstance(body["string"], bytes) else body["string"]
        scrubbed = scrub_known(text)
        if scrubbed != text:
            body["string"] = scrubbed.encode("utf-8", "surrogateescape") if isinstance(body["string"], bytes) else scrubbed
    return response


class SafePersister:
    """vcrpy's file persister, made total on reading and atomic on writing. One per cassette: in
    ``all`` mode it hides the old cassette from vcrpy (nothing old is served or merged) and guards
    it at saving time; in ``once`` mode it writes nothing over a cassette it read. A block that
    ended by an error (``unfinished``: a Ctrl-C, a server gone) leaves its answers to the journal:
    ``once`` writes no cassette then, and ``all`` does not replace one that exists. Where the
    journal could not keep them (``unjournaled``), they are written into the cassette instead, by
    ``all`` beside every exchange it held."""

    def __init__(self, record_mode: str, replace_recorded: bool):
        self.record_mode = record_mode
        self.replace_recorded = replace_recorded
        #: Why the cassette could not be saved: raised once vcrpy has unpatched the HTTP clients
        #: (an error raised inside its save would leave them patched).
        self.error: GaamasError | None = None
        #: What the cassette holds, put on the tape by ``put_on`` rather than by vcrpy.
        self.loaded: tuple | None = None
        #: The block recording the cassette ended by an error.
        self.unfinished = False
        #: The journal could not keep what was answered (``unjournaled``): a recording cut short is
        #: then written all the same, even by ``once``, rather than lost.
        self.unjournaled = False

    def load_cassette(self, cassette_path, serializer):
        if self.record_mode == "all":
            raise CassetteNotFoundError()
        self.loaded = read_interactions(Path(cassette_path))
        # vcrpy would pass every exchange read through its recording filters again, copying it
        # whole three times: half the time a replay spends reading its cassettes. ``put_on`` puts
        # them on the tape through the same scrubbing, without the copies.
        raise CassetteNotFoundError()

    def put_on(self, tape) -> None:
        """The exchanges read onto ``tape`` as vcrpy's loading leaves them: scrubbed, counted as
        loaded, the tape rewound for playing."""
        if self.loaded is None:
            return
        requests, responses, *metadata = self.loaded
        for request, response in zip(requests, responses):
            if "content-encoding" in {name.lower() for name in response["headers"]}:
                response = vcr_filters.decode_response(response)
            kept = _scrub_response(response)
            if kept is not None:
                tape.data.append((_scrub_request(request), kept))
        tape._old_interactions = list(tape.data)
        tape._loaded_count = len(tape.data)
        tape.dirty, tape.rewound = False, True
        tape._metadata = metadata[0] if metadata else {}

    def save_cassette(self, cassette_path, cassette_dict, serializer):
        if self.record_mode == "none":
            return  # replay only writes nothing, whatever reached the tape
        path = Path(cassette_path)
        journaled = self.unfinished and not self.unjournaled  # what an error cut short waits in the journal
        if self.record_mode == "once" and (self.loaded is not None or journaled):
            return  # once records a cassette that was not there, whole
        if self.record_mode == "all" and journaled and path.is_file():
            return  # a recording cut short never replaces a whole one, whatever --gaamas-replace-recorded says
        try:
            if self.record_mode == "all" and self.unfinished and path.is_file():
                cassette_dict = self._with_exchanges_on_disk(path, cassette_dict)  # no journal holds them: kept beside
            elif self.record_mode == "all" and not self.replace_recorded and path.is_file():
                self._refuse_if_dropping(path, cassette_dict)
            if self.record_mode in ADDING_MODES:
                cassette_dict = self._with_exchanges_on_disk(path, cassette_dict)
            text = serialize(cassette_dict, serializer)
            refuse_past_bound(path, len(text.encode("utf-8")), MAX_CASSETTE_BYTES, "cassette", TOO_LARGE_CASSETTE)
            write_atomically(path, gzip.compress(text.encode("utf-8"), mtime=0) if is_compressed(path) else text, what="cassette")
        except GaamasError as error:
            self.error = error

    @staticmethod
    def _with_exchanges_on_disk(path: Path, cassette_dict) -> dict:
        """What is saved, and every exchange the cassette on disk holds that it lacks: a cassette is never
        written with fewer exchanges than it has, whoever wrote them since it was read (a writer that took
        no lock: another machine on a shared disk, an older version)."""
        try:
            old_requests, old_responses, *_ = read_interactions(path)
        except CassetteNotFoundError:
            return cassette_dict
        new = {request_key(request) for request in cassette_dict["requests"]}
        kept = [(request, response) for request, response in zip(old_requests, old_responses)
                if request_key(request) not in new]  # fmt: skip
        if not kept:
            return cassette_dict
        return {
            **cassette_dict,
            "requests": [*cassette_dict["requests"], *(_scrub_request(request) for request, _ in kept)],
            "responses": [*cassette_dict["responses"], *(_scrub_response(response) for _, response in kept)],
        }

    @staticmethod
    def _refuse_if_dropping(path: Path, cassette_dict) -> None:
        old_requests, _, *_ = read_interactions(path)
        new = {request_key(r) for r in cassette_dict["requests"]}
        dropped = sum(request_key(r) not in new for r in old_requests)
        if dropped:
            raise RecordingRefused(
                f"{path} was not replaced: this run asked {len(new)} requests and would drop {dropped} of the "
                f"{len(old_requests)} recorded there (fewer trials, or other prompts). The new answers are kept in "
                "the journal. Replace it on purpose with --gaamas-replace-recorded, or record with the settings it "
                "was recorded with."
            )


@contextlib.contextmanager
def one_writer(path: Path, waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """While the block runs, no other process writes ``path`` (a cassette, a journal): an exclusive
    lock on ``.<name>.lock`` beside it, taken before ``path`` is read and held until it is written, so
    that two items recording one cassette, or two runs of one item, take turns and the second finds
    what the first recorded. The lock file goes when the block ends; a lock dies with its process.
    Where no lock file can be made (a folder that cannot be written), nothing can be written there
    either, and the block runs unlocked, as it does without ``fcntl``: writing will say what is wrong.
    ``waiting`` is called once where another process holds it, before waiting for it."""
    lock = path.with_name(f".{path.name}.lock")
    descriptor = _locked(lock, waiting) if fcntl is not None else None
    try:
        yield
    finally:
        if descriptor is not None:
            with contextlib.suppress(OSError):
                os.unlink(lock)  # while still held, so that whoever waits on it locks afresh
            os.close(descriptor)


def _locked(lock: Path, waiting: Callable[[], None] | None) -> int | None:
    """A descriptor of ``lock`` held exclusively, or None where there can be none."""
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    while True:
        try:
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
            descriptor = os.open(lock, flags, 0o644)
        except OSError:
            return None
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if waiting is not None:
                    waiting()
                    waiting = None
                fcntl.flock(descriptor, fcntl.LOCK_EX)
            if os.stat(lock, follow_symlinks=False).st_ino == os.fstat(descriptor).st_ino:
                return descriptor  # the file locked is still the one at that name
        except FileNotFoundError:
            pass
        except OSError:
            os.close(descriptor)
            return None
        os.close(descriptor)  # its holder removed it while we waited: lock the one there now


def held(cassette_dir: Path, folder: Path) -> set[str]:
    """The cassettes under ``folder``, as paths relative to ``cassette_dir`` (how items report theirs)."""
    if not folder.is_dir():
        return set()
    return {p.relative_to(cassette_dir).as_posix() for pattern in ("*.yaml", "*.yaml.gz") for p in folder.rglob(pattern)}


def is_compressed(path: Path) -> bool:
    """A cassette whose name ends in ``.gz`` is gzip-compressed YAML (``zcat`` shows it)."""
    return path.name.endswith(".gz")


def read_interactions(path: Path) -> tuple:
    """(requests, responses[, metadata]) of the cassette at ``path``, or one clear line. Its YAML is
    read by :mod:`pytest_gaamas.safeyaml`, never by vcrpy's serializer, whose loaders recurse (and,
    before vcrpy 8.2.1, would construct any Python object)."""
    if path.is_dir():  # no cassette yet; writing one there will say what is wrong
        raise CassetteNotFoundError()
    hint = RESTORE_HINT.format(path=path)
    try:
        raw = safejson.read_bytes(path, what="cassette", remedy=hint, limit=MAX_CASSETTE_BYTES)
    except FileNotFoundError:
        raise CassetteNotFoundError() from None
    try:
        text = (gunzip(raw, MAX_CASSETTE_BYTES) if is_compressed(path) else raw).decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as error:
        raise UnreadableFile(f"{path}: cannot read this cassette ({_reason(error)}); {hint}") from None
    if not text.strip():
        raise CassetteNotFoundError()
    try:
        data = safeyaml.load(text)
        interactions = data.get("interactions") if isinstance(data, dict) else None
        if not isinstance(interactions, list):
            raise ValueError("no list of interactions")
        requests, responses = [], []
        for number, interaction in enumerate(interactions, 1):
            try:
                request, response = recorded_exchange(interaction)
            except ValueError as error:
                raise ValueError(f"interaction {number}: {error}") from None
            requests.append(request)
            responses.append(response)
    except ValueError as error:  # safeyaml.YAMLRefused among them
        raise UnreadableFile(f"{path}: not a readable cassette ({error}); {hint}") from None
    errors = sorted({code for r in responses if isinstance(code := (r.get("status") or {}).get("code"), int) and code >= 400})
    if errors:  # recorded before errors were kept out of cassettes: never replayed as answers
        raise UnreadableFile(
            f"{path} holds HTTP {', '.join(map(str, errors))} errors where answers should be; errors are never replayed as "
            "answers: record the cell afresh with --gaamas-record=all --gaamas-replace-recorded"
        )
    metadata = data.get("metadata")
    return (requests, responses, metadata) if isinstance(metadata, dict) and metadata else (requests, responses)


def gunzip(data: bytes, limit: int) -> bytes:
    """``data`` decompressed, if that makes at most ``limit`` bytes: a few kilobytes may inflate to
    gigabytes, so it is never decompressed further than that."""
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
        text = stream.read(limit + 1)
    if len(text) > limit:
        raise OSError(f"more than {limit:,} bytes once decompressed")
    return text


def recorded_exchange(exchange: Any) -> tuple[Request, dict]:
    """A recorded exchange, ``{"request": ..., "response": ...}`` as a cassette or a journal holds
    it, rebuilt from the fields a replay reads and nothing else, each of its type; or ValueError
    saying what is wrong with it."""
    if not isinstance(exchange, dict):
        raise ValueError("an exchange that is not a mapping")
    request, response = exchange.get("request"), exchange.get("response")
    if not isinstance(request, dict):
        raise ValueError("an exchange without its request")
    method, uri, body = request.get("method"), request.get("uri"), request.get("body")
    if not isinstance(method, str) or not isinstance(uri, str):
        raise ValueError("a request without its method or URI")
    if body is not None and not isinstance(body, (str, bytes)):
        raise ValueError("a request whose body is not text")
    if not isinstance(response, dict):
        raise ValueError("an exchange without its response")
    status = response.get("status")
    code = status.get("code") if isinstance(status, dict) else None
    if not isinstance(status, dict) or type(code) is not int or not 100 <= code <= 599:
        raise ValueError("a response without an HTTP status code")
    message = status.get("message", "")
    if not isinstance(message, str):
        raise ValueError("a status message that is not text")
    response_body = response.get("body")
    content = response_body.get("string") if isinstance(response_body, dict) else None
    if not isinstance(content, (str, bytes)):
        raise ValueError("a response without its body")
    try:
        rebuilt_request = Request(method, uri, body, _headers(request.get("headers", {})))
        content = content.encode("utf-8") if isinstance(content, str) else content
    except UnicodeEncodeError:
        raise ValueError("a body that is not UTF-8 text") from None
    headers = _headers(response.get("headers", {}))
    return rebuilt_request, {"status": {"code": code, "message": message}, "headers": headers, "body": {"string": content}}


def _headers(headers: Any) -> dict[str, list[str]]:
    if not isinstance(headers, dict) or not all(isinstance(name, str) for name in headers):
        raise ValueError("headers that are not a mapping of names")
    rebuilt = {}
    for name, values in headers.items():
        values = [values] if isinstance(values, str) else values
        if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
            raise ValueError(f"a header {name[:40]!r} that is not text")
        rebuilt[name] = list(values)
    return rebuilt


class TooLarge(UnwritableOutput):
    """A cassette or a journal would pass the bound its reader reads it within."""


def refuse_past_bound(path: Path, size: int, limit: int, what: str, remedy: str) -> None:
    """Raise ``TooLarge`` where ``size`` bytes would pass ``limit``, the most the reader of ``path``
    takes: a file written is a file read back, never one the next run refuses."""
    if size > limit:
        raise TooLarge(
            f"cannot write the {what} {path}: it would hold {size / 2**20:,.1f} MiB, past the {limit >> 20} MiB a {what} "
            f"is read within; {remedy}"
        )


def created_mode() -> int:
    """The mode ``open`` gives a new file under the process's umask (read by setting it, the only way)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomically(path: Path, text: str | bytes, *, what: str, elsewhere: str = "") -> None:
    """``text`` at ``path``, whole or not at all: a temporary file beside it, flushed, then renamed.
    The temporary file is locked while it exists, so that what a killed write left can be told from
    a live one's and removed at the next write into the folder."""
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(path.parent)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            os.fchmod(handle, created_mode())  # mkstemp's 0600 would make every file written private
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_EX)  # held until it is renamed, and released by a death
            with os.fdopen(handle, "wb", closefd=False) as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        finally:
            os.close(handle)
    except OSError as error:
        raise UnwritableOutput(cannot_write(what, path, error, elsewhere)) from None


def cannot_write(what: str, path: Path, error: OSError, elsewhere: str = "") -> str:
    """One line: what could not be written where, and what to do (``elsewhere``: where else it may
    go, " or ..."); a full disk is said to be one."""
    if error.errno in DISK_FULL:
        return f"cannot write the {what} {path}: the disk holding it is full ({error.strerror}); free space on it{elsewhere}"
    return f"cannot write the {what} {path} ({_reason(error)}); make its directory writable{elsewhere}"


def remove_stale_temporaries(folder: Path) -> None:
    """Remove the temporary files a killed ``write_atomically`` left in ``folder``: those no live
    writer holds locked (a lock dies with its process) and older than a minute (a writer locks its
    file the moment it makes it, and nothing takes longer than that to start). Never a live one."""
    if fcntl is None:
        return
    try:
        names = [name for name in os.listdir(folder) if _TEMPORARY.fullmatch(name)]
    except OSError:
        return
    for name in names:
        candidate = folder / name
        with contextlib.suppress(OSError):  # gone meanwhile, or held: left alone
            descriptor = os.open(candidate, safejson.NONBLOCKING_READ | getattr(os, "O_NOFOLLOW", 0))
            try:
                found = os.fstat(descriptor)
                if stat.S_ISREG(found.st_mode) and time.time() - found.st_mtime > STALE_AFTER_S:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises while its writer lives
                    if os.stat(candidate, follow_symlinks=False).st_ino == found.st_ino:
                        os.unlink(candidate)
            finally:
                os.close(descriptor)


def _reason(error: BaseException) -> str:
    strerror = getattr(error, "strerror", None)
    if strerror:
        return strerror
    lines = str(error).strip().splitlines()
    return (lines[0] if lines else type(error).__name__)[:160]


def _recorder(persister, record_mode: str) -> vcr.VCR:
    recorder = vcr.VCR(
        record_mode=RECORD_MODES[record_mode],
        match_on=[MATCHER],
        before_record_request=_scrub_request,
        before_record_response=_scrub_response,
        decode_compressed_response=True,
    )
    recorder.register_matcher(MATCHER, same_request)
    recorder.register_persister(persister)
    return recorder


@contextlib.contextmanager
def cassette(path: Path, record_mode: str, *, replace_recorded: bool = False) -> Iterator:
    """Record or replay every HTTP exchange inside the block, per ``record_mode``. The cassette is
    written when the block ends, also when it ends by an error: what was answered is kept (by
    ``once``, in the journal only: it writes a cassette whole or not at all)."""
    if record_mode not in RECORD_MODES:
        raise ValueError(f"record mode must be one of {', '.join(RECORD_MODES)}, got {record_mode!r}")
    persister = SafePersister(record_mode, replace_recorded)
    with _recorder(persister, record_mode).use_cassette(str(path)) as tape:
        tape._gaamas_persister = persister
        persister.put_on(tape)
        tape._gaamas_index = RequestIndex(tape)
        tape._gaamas_index.install()
        try:
            yield tape
        except BaseException:
            persister.unfinished = True
            raise
    if persister.error is not None:
        raise persister.error


def unjournaled(tape) -> None:
    """The journal could not keep what ``tape``'s block answers: whatever ends the block, its
    answers are written into the cassette rather than lost (``SafePersister.unjournaled``)."""
    tape._gaamas_persister.unjournaled = True


class _Held:
    """A persister of exchanges held in memory (checked by ``recorded_exchange``), that writes nothing."""

    def __init__(self, exchanges: list[dict[str, Any]]):
        self.exchanges = exchanges

    def load_cassette(self, cassette_path, serializer):
        if not self.exchanges:
            raise CassetteNotFoundError()
        held = [recorded_exchange(exchange) for exchange in self.exchanges]
        return [request for request, _ in held], [response for _, response in held]

    def save_cassette(self, cassette_path, cassette_dict, serializer):
        pass


@contextlib.contextmanager
def replaying(exchanges: list[dict[str, Any]], name: str = "the journaled exchanges") -> Iterator:
    """Every HTTP exchange inside the block served from ``exchanges`` alone, each once, as a replay
    serves a cassette; any other request is refused as in replay-only mode, whatever cassette is
    open around the block. Nothing is written."""
    with _recorder(_Held(exchanges), "none").use_cassette(name) as tape:
        tape._gaamas_index = RequestIndex(tape)  # what a ``Replayer`` reads the exchanges from
        tape._gaamas_index.install()
        yield tape


class RequestIndex:
    """Finding a request's recorded answers by a dictionary lookup, where vcrpy compares it with
    every recorded request in turn (a 300-round repeated game scanned 300 x 300 times). The same
    matcher, ``request_key``, so the same answers are found in the same order."""

    def __init__(self, tape):
        self.tape = tape
        self.positions: dict[tuple[str, str, str], list[int]] = {}
        self.indexed = 0
        self.lock = threading.Lock()  # trials played at once look up and record from several threads

    def install(self) -> None:
        self.tape._responses = self.responses  # play_response and __contains__ look it up on the instance

    def responses(self, request):
        data = self.tape.data
        with self.lock:
            for position in range(self.indexed, len(data)):  # exchanges recorded since the last lookup
                self.positions.setdefault(request_key(data[position][0]), []).append(position)
            self.indexed = len(data)
            request = self.tape._before_record_request(request)
            found = list(self.positions.get(request_key(request), ()))
        for position in found:
            yield position, data[position][1]

    def play_recorded(self, key: tuple[str, str, str], read: Callable[[Any], Any]) -> Any:
        """``read`` of the first recorded response to ``key`` not played yet, which is then played,
        as vcrpy's ``play_response`` plays it; None, with nothing played, where there is none or
        ``read`` does not take it."""
        tape = self.tape
        if tape.record_mode == RecordMode.ALL or not (tape.rewound or tape.allow_playback_repeats):
            return None
        data = tape.data
        with self.lock:
            for position in range(self.indexed, len(data)):
                self.positions.setdefault(request_key(data[position][0]), []).append(position)
            self.indexed = len(data)
            for position in self.positions.get(key, ()):
                if tape.play_counts[position] == 0 or tape.allow_playback_repeats:
                    value = read(data[position][1])
                    if value is None:
                        return None
                    if tape.play_counts[position] == 0 and position < tape._loaded_count:
                        tape._played_interactions.append((data[position][0], data[position][1]))
                    tape.play_counts[position] += 1
                    return value
        return None

    def forget(self) -> None:
        """After the tape's exchanges were reordered: index them afresh at the next lookup."""
        with self.lock:
            self.positions, self.indexed = {}, 0


class Replayer:
    """A model whose recorded answers are read straight from the open cassette. The request the
    official client would send (the model's ``wire_request``) is looked up by ``request_key``, and
    the first recorded answer to it not yet played is played, as vcrpy would play it; the same
    answers in the same order, without building and parsing HTTP for each. Anything else (nothing
    recorded, an error status, a body that is not a plain chat completion) goes through the client
    and vcrpy, which record it, refuse it or say what is wrong, as they always did."""

    def __init__(self, model, tape):
        self.model = model
        self.index: RequestIndex = tape._gaamas_index

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def reply(self, request):
        method, path, body = self.model.wire_request(request)
        key = (method, path, json.dumps(body, sort_keys=True, separators=(",", ":")))
        recorded = self.index.play_recorded(key, self._read)
        return recorded if recorded is not None else self.model.reply(request)

    def _read(self, response: Any):
        if not isinstance(response, dict) or (response.get("status") or {}).get("code") != 200:
            return None
        text = (response.get("body") or {}).get("string")
        try:
            completion = json.loads(text)  # type: ignore[arg-type]  # not text: a TypeError, no answer
        except (TypeError, ValueError, RecursionError):
            return None
        return self.model.recorded_reply(completion)


def replayer(model, tape):
    """``model`` answering from ``tape`` where it can say what its client would send; else itself."""
    return Replayer(model, tape) if tape is not None and hasattr(model, "wire_request") else model


# -- exchanges as the journal keeps them -------------------------------------------------------


def request_seed_of(request) -> int | None:
    """The seed a request carries: the OpenAI-compatible body's ``seed``, Ollama's ``options.seed``."""
    try:
        body = json.loads(_canonical_body(request.body))
    except (ValueError, RecursionError):
        return None
    if not isinstance(body, dict):
        return None
    seed = body.get("seed", (body.get("options") or {}).get("seed") if isinstance(body.get("options"), dict) else None)
    return seed if isinstance(seed, int) else None


def exchanges_of(tape, seeds: set[int], start: int) -> list[dict[str, Any]]:
    """The exchanges recorded on ``tape`` from index ``start`` on whose requests carry one of ``seeds``
    (one trial's: trials played at once record their exchanges interleaved), as JSON-able dicts
    (copies: vcrpy's converters change what they are given)."""
    return [
        {"request": _text(compat.convert_to_unicode(request._to_dict())), "response": _text(compat.convert_to_unicode(copy.deepcopy(response)))}
        for request, response in tape.data[start:]
        if request_seed_of(request) in seeds
    ]


def in_trial_order(tape, seeds_in_order: list[int], start: int) -> None:
    """Put the exchanges recorded from ``start`` on in the order a sequential run records them (each
    request's seed is its trial's and round's), so that playing trials at once writes the same
    cassette as playing them one by one."""
    rank = {seed: i for i, seed in enumerate(seeds_in_order)}
    recorded = tape.data[start:]
    recorded.sort(key=lambda exchange: rank.get(request_seed_of(exchange[0]), len(rank)))  # type: ignore[arg-type]  # None: unranked
    tape.data[start:] = recorded
    tape._gaamas_index.forget()


def _text(value: Any) -> Any:
    """Bytes left anywhere in an exchange, as text (a chat server's bodies and headers are UTF-8)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, dict):
        return {key: _text(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_text(item) for item in value]
    return value


def restore(tape, exchanges: list[dict[str, Any]]) -> int:
    """Put journaled exchanges back on ``tape`` where it does not hold them yet; how many were."""
    held = {request_key(request) for request in tape.requests}
    restored = 0
    for exchange in exchanges:
        request, response = recorded_exchange(exchange)
        if request_key(request) in held:
            continue
        tape.append(request, response)
        held.add(request_key(request))
        restored += 1
    return restored
