"""Recording and replaying model exchanges with vcrpy.

One cassette per test item, at ``<cassette dir>/<model>/<behaviour>/<item>.yaml``. Requests match on
method, path and the parsed JSON body, never on order or host, so the embedded server's port does
not matter and each trial's seed (in the body) makes repeated samples distinct requests; a recorded
answer is served once. Only ``Content-Type`` is kept of the headers, on both sides, so no
credential or cookie is ever written.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import vcr
from vcr.record_mode import RecordMode

#: --gaamas-record values, and the vcrpy modes that implement them.
RECORD_MODES = {
    "none": RecordMode.NONE,  # replay only; a request no cassette holds is an error
    "once": RecordMode.NEW_EPISODES,  # replay what is recorded, record what is missing
    "all": RecordMode.ALL,  # record everything afresh
}
KEPT_HEADERS = frozenset({"content-type"})
MATCHER = "gaamas_json_request"


@lru_cache(maxsize=65_536)
def _canonical_body(body: bytes | str | None) -> str:
    if body is None:
        return ""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return text


def same_request(r1, r2) -> bool:
    """Method, path and parsed JSON body: the one matcher, so each pair costs a single call."""
    return r1.method == r2.method and r1.path == r2.path and _canonical_body(r1.body) == _canonical_body(r2.body)


def _keep_only_content_type(headers) -> dict:
    return {k: v for k, v in headers.items() if k.lower() in KEPT_HEADERS}


def _scrub_request(request):
    request.headers = _keep_only_content_type(request.headers)
    return request


def _scrub_response(response: dict) -> dict:
    response["headers"] = _keep_only_content_type(response.get("headers", {}))
    return response


def _recorder(record_mode: str) -> vcr.VCR:
    recorder = vcr.VCR(
        record_mode=RECORD_MODES[record_mode],
        match_on=[MATCHER],
        before_record_request=_scrub_request,
        before_record_response=_scrub_response,
        decode_compressed_response=True,
    )
    recorder.register_matcher(MATCHER, same_request)
    return recorder


@contextlib.contextmanager
def cassette(path: Path, record_mode: str) -> Iterator:
    """Record or replay every HTTP exchange inside the block, per ``record_mode``."""
    if record_mode not in RECORD_MODES:
        raise ValueError(f"record mode must be one of {', '.join(RECORD_MODES)}, got {record_mode!r}")
    if record_mode != "none":
        path.parent.mkdir(parents=True, exist_ok=True)
    if record_mode == "all" and path.exists():
        path.unlink()  # vcrpy would keep the old exchanges beside the new ones
    with _recorder(record_mode).use_cassette(str(path)) as tape:
        yield tape
