"""What a run asked of a model's server: the requests it answered live, the tokens they took as the
server counted them, and the requests sent again after a rate limit, a fault or a timeout. A replayed
answer costs nothing and is not counted. Kept per model, summed over xdist's workers, written to the
run log under each model's ``usage`` and said at the end of the session."""

from __future__ import annotations

import fcntl
import math
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import safejson
from .errors import ModelUnavailable, UnreadableFile

#: The token counts an OpenAI-compatible server reports, under these names.
TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")


class Usage:
    def __init__(self) -> None:
        self.requests = 0
        self.tokens = dict.fromkeys(TOKEN_FIELDS, 0)
        #: why a request was sent again ("HTTP 429", "timeout") -> how often
        self.retries: dict[str, int] = {}
        #: Told each live answer's token counts: what charges them to the run's budget, where it has one.
        self.meter: Callable[[Mapping[str, int]], None] | None = None
        self._lock = threading.Lock()

    def answered(self, usage: Any) -> None:
        """One live answer, with the server's ``usage`` object where it sent one."""
        counted = _token_counts(usage)
        with self._lock:
            self.requests += 1
            for name, count in counted.items():
                self.tokens[name] += count
        if self.meter is not None:
            self.meter(counted)

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


@dataclass(frozen=True)
class Price:
    """What a model's server charges, in dollars per million tokens (``--gaamas-prices``). Reasoning
    tokens are counted among the completion tokens, as the servers count and bill them."""

    prompt: float
    completion: float

    def of(self, tokens: Mapping[str, int]) -> float:
        return (tokens.get("prompt_tokens", 0) * self.prompt + tokens.get("completion_tokens", 0) * self.completion) / 1e6


#: Models that cost nothing unless the price table says otherwise: played here, on this machine.
FREE_PREFIXES = ("embedded:", "reference:")
PRICES_SHAPE = '{"openai:gpt-4.1-mini": {"prompt": 0.4, "completion": 1.6}}, dollars per million tokens'


def read_prices(path: Path) -> dict[str, Price]:
    """The price table at ``path``: a JSON object of model -> {"prompt": USD, "completion": USD} per
    million tokens. A ``ValueError`` of one line says what is wrong and what the file should hold."""
    try:
        table = safejson.read_file(path, what="price table", remedy=f"it should hold {PRICES_SHAPE}", limit=1 << 20)
    except UnreadableFile as error:
        raise ValueError(str(error)) from None
    if not isinstance(table, dict) or not table:
        raise ValueError(f"{path} should hold a JSON object like {PRICES_SHAPE}")
    prices = {}
    for model, price in table.items():
        if not isinstance(price, dict) or set(price) != {"prompt", "completion"}:
            raise ValueError(f"{path}: {model!r} should be {{\"prompt\": USD, \"completion\": USD}} per million tokens, got {price!r:.80}")
        for kind, value in price.items():
            if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{path}: {model!r} {kind} should be a number of dollars per million tokens, at least 0, got {value!r:.40}")
        prices[model] = Price(float(price["prompt"]), float(price["completion"]))
    return prices


def cost_text(dollars: float) -> str:
    return f"${dollars:,.4f}" if dollars < 1 else f"${dollars:,.2f}"


class RequestBudget:
    """What the whole run may send live, all models and xdist workers together: at most ``cap``
    requests (``--gaamas-max-requests``), at most ``dollars`` spent (``--gaamas-budget``). Requests
    are counted in a file the workers share, one byte each, appended under a lock; what each answer
    cost, in a second file beside it, a line each. A replayed answer takes nothing from either. The
    spend is known once an answer has come: the request that crosses the budget is the last."""

    def __init__(self, cap: int | None, path: Path, dollars: float | None = None) -> None:
        self.cap, self.path, self.dollars = cap, path, dollars

    @property
    def ledger(self) -> Path:
        return self.path.with_name(self.path.name + ".spent")

    def take(self) -> None:
        """Counts one request, or raises ``ModelUnavailable`` once the cap is reached or the budget spent."""
        with open(self.path, "ab") as counter:
            fcntl.flock(counter, fcntl.LOCK_EX)
            if self.cap is not None and os.fstat(counter.fileno()).st_size >= self.cap:
                raise ModelUnavailable(
                    f"this run's cap of {self.cap:,} live requests (--gaamas-max-requests) is reached: the finished trials wait "
                    "in the journal; run again, with a higher cap, to go on"
                )
            if self.dollars is not None and (spent := self.spent) >= self.dollars:
                raise ModelUnavailable(
                    f"this run's budget of {cost_text(self.dollars)} (--gaamas-budget) is spent ({cost_text(spent)} at "
                    "--gaamas-prices): the finished trials wait in the journal; run again, with a larger budget, to go on"
                )
            counter.write(b".")

    def charge(self, dollars: float) -> None:
        """What one answer cost, added to the run's spend."""
        with open(self.ledger, "a") as ledger:
            fcntl.flock(ledger, fcntl.LOCK_EX)
            ledger.write(f"{dollars!r}\n")

    @property
    def spent(self) -> float:
        try:
            return math.fsum(float(line) for line in self.ledger.read_text().split())
        except (OSError, ValueError):
            return 0.0

    @property
    def taken(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0
