"""What a run asked of a model's server: the requests it answered live, the tokens they took as the
server counted them, and the requests sent again after a rate limit, a fault or a timeout. A replayed
answer costs nothing and is not counted. Kept per model, summed over xdist's workers, written to the
run log under each model's ``usage`` and said at the end of the session."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import ModelUnavailable

#: The token counts an OpenAI-compatible server reports, under these names.
TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")


class Usage:
    def __init__(self) -> None:
        self.requests = 0
        self.tokens = dict.fromkeys(TOKEN_FIELDS, 0)
        #: why a request was sent again ("HTTP 429", "timeout") -> how often
        self.retries: dict[str, int] = {}
        self._lock = threading.Lock()

    def answered(self, usage: Any) -> None:
        """One live answer, with the server's ``usage`` object where it sent one."""
        counted = _token_counts(usage)
        with self._lock:
            self.requests += 1
            for name, count in counted.items():
                self.tokens[name] += count

    def retried(self, reason: str) -> None:
        with self._lock:
            self.retries[reason] = self.retries.get(reason, 0) + 1

    def to_json(self) -> dict[str, Any]:
        with self._lock:
            return {"requests": self.requests, **self.tokens, "retries": dict(sorted(self.retries.items()))}

    def merge(self, data: Mapping[str, Any]) -> None:
        """Another process's counts (an xdist worker's ``to_json``) added to these."""
        with self._lock:
            self.requests += _count(data.get("requests"))
            for name in TOKEN_FIELDS:
                self.tokens[name] += _count(data.get(name))
            retries = data.get("retries")
            for reason, count in (retries.items() if isinstance(retries, Mapping) else ()):
                self.retries[str(reason)] = self.retries.get(str(reason), 0) + _count(count)

    def __bool__(self) -> bool:
        return bool(self.requests or self.retries)

    def text(self) -> str:
        """``120 requests answered live: 34,567 prompt and 2,345 completion tokens (1,200 reasoning); 3 sent again (HTTP 429 x2, timeout x1)``"""
        data = self.to_json()
        said = f"{data['requests']:,} request{'s' if data['requests'] != 1 else ''} answered live"
        if data["prompt_tokens"] or data["completion_tokens"]:
            said += f": {data['prompt_tokens']:,} prompt and {data['completion_tokens']:,} completion tokens"
            said += f" ({data['reasoning_tokens']:,} reasoning)" if data["reasoning_tokens"] else ""
        if data["retries"]:
            total = sum(data["retries"].values())
            said += f"; {total:,} sent again (" + ", ".join(f"{reason} x{n}" for reason, n in data["retries"].items()) + ")"
        return said


def described(record: Any) -> str:
    """A run log's ``usage`` of a model in words, as the session said it; empty where there is none."""
    usage = Usage()
    if isinstance(record, Mapping):
        usage.merge(record)
    return usage.text() if usage else ""


def record_mode(run: Mapping[str, Any]) -> str:
    """A run log's record mode as the views say it: a mode that may go live, in a run that sent
    nothing, says so (a header that said "once" for a pure replay misled)."""
    mode = str(run.get("record", "?"))
    if mode in ("once", "new_episodes", "all") and run.get("live_requests") == 0:
        return f"{mode} (nothing went live: every answer was replayed or played by a reference agent)"
    return mode


#: More tokens than any server answers in one request, or than a run log's reader takes as a count:
#: a larger number is nonsense from the server, counted as nothing rather than written as a number
#: that no JSON reader of the run log can hold.
MAX_COUNT = 2**53 - 1


def _count(value: Any) -> int:
    return value if type(value) is int and 0 <= value <= MAX_COUNT else 0


def _token_counts(usage: Any) -> dict[str, int]:
    """The counts in an OpenAI-style ``usage`` (reasoning under ``completion_tokens_details``); a
    server that sends none, or sends nonsense, counts nothing."""
    if not isinstance(usage, Mapping):
        return {}
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, Mapping) else None
    return {"prompt_tokens": _count(usage.get("prompt_tokens")), "completion_tokens": _count(usage.get("completion_tokens")),
            "reasoning_tokens": _count(reasoning)}  # fmt: skip


class RequestBudget:
    """At most ``cap`` requests sent live over the whole run (``--gaamas-max-requests``), counted in
    a file that xdist's workers share: one byte a request, appended under a lock. A replayed answer
    takes nothing from it."""

    def __init__(self, cap: int, path: Path) -> None:
        self.cap, self.path = cap, path

    def take(self) -> None:
        """Counts one request, or raises ``ModelUnavailable`` once the cap is reached."""
        with open(self.path, "ab") as counter:
            fcntl.flock(counter, fcntl.LOCK_EX)
            if os.fstat(counter.fileno()).st_size >= self.cap:
                raise ModelUnavailable(
                    f"this run's cap of {self.cap:,} live requests (--gaamas-max-requests) is reached: the finished trials wait "
                    "in the journal; run again, with a higher cap, to go on"
                )
            counter.write(b".")

    @property
    def taken(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0
