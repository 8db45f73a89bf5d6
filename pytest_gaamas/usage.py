"""What a run asked of a model's server: the requests it answered live, the tokens they took as the
server counted them, and the requests sent again after a rate limit, a fault or a timeout. A replayed
answer costs nothing and is not counted. Kept per model, summed over xdist's workers, written to the
run log under each model's ``usage`` and said at the end of the session."""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from . import safejson
from .errors import ModelUnavailable, UnreadableFile

#: The token counts an OpenAI-compatible server reports, under these names.
TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")



def appended_lines(path: Path, read_to: int) -> tuple[list[str], int]:
    """The whole lines other processes appended to ``path`` past ``read_to`` bytes, and where the
    next look starts: a line still being written is read at the next look, whole."""
    try:
        with open(path, "rb") as appended:
            appended.seek(read_to)
            tail = appended.read()
    except OSError:
        return [], read_to
    whole = tail[: tail.rfind(b"\n") + 1]
    return whole.decode("utf-8", "replace").splitlines(), read_to + len(whole)

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


def _is_count(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_COUNT


def _count(value: Any) -> int:
    return value if _is_count(value) else 0


def _token_counts(usage: Any) -> dict[str, int]:
    """The counts in an OpenAI-style ``usage`` (reasoning under ``completion_tokens_details``), each
    only where the server sent it as a count: a count it did not send, or sent as nonsense, is
    unknown, not 0, and the run's budget charges it at its ceiling (``RequestBudget.charged``)."""
    if not isinstance(usage, Mapping):
        return {}
    details = usage.get("completion_tokens_details")
    sent: dict[str, Any] = {"prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
            "reasoning_tokens": details.get("reasoning_tokens") if isinstance(details, Mapping) else None}  # fmt: skip
    return {name: value for name, value in sent.items() if _is_count(value)}


@dataclass(frozen=True)
class Price:
    """What a model's server charges, in dollars per million tokens (``--gaamas-prices``). Reasoning
    tokens are counted among the completion tokens, as the servers count and bill them."""

    prompt: float
    completion: float

    def of(self, tokens: Mapping[str, int]) -> float:
        return (tokens.get("prompt_tokens", 0) * self.prompt + tokens.get("completion_tokens", 0) * self.completion) / 1e6


#: The most a price table may ask for a million tokens, in dollars: far past any server's price (the
#: dearest listed in 2025 asked $600), and small enough that no count of tokens makes a cost of
#: ``$inf``. A larger price is a slip of the keyboard, refused before anything is sent.
MOST_PRICE = 10_000

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
            if type(value) not in (int, float) or not math.isfinite(value) or not 0 <= value <= MOST_PRICE:
                raise ValueError(f"{path}: {model!r} {kind} should be a number of dollars per million tokens, from 0 to "
                                 f"{MOST_PRICE:,}, got {value!r:.40}")  # fmt: skip
        prices[model] = Price(float(price["prompt"]), float(price["completion"]))
    return prices


def cost_text(dollars: float) -> str:
    return f"${dollars:,.4f}" if dollars < 1 else f"${dollars:,.2f}"


#: The ledger counts billionths of a dollar: whole numbers, which add up exactly however many lines.
NANO = 10**9
#: How often a request waiting for room in the budget looks again at what other processes settled.
LEDGER_POLL_S = 0.2


def nanodollars(dollars: float) -> int:
    return math.ceil(min(dollars, 1e15) * NANO)


def prompt_tokens_most(request: Any) -> int:
    """The most prompt tokens ``request`` can be: one a byte of its messages written as JSON, which
    also covers the few tokens a chat template adds around each message (a token is at least a byte)."""
    messages = [dict(message) for message in request.messages]
    return len(json.dumps(messages, ensure_ascii=False).encode("utf-8", "surrogatepass"))


class _Tally:
    """A process's running totals of the run's ledger, brought up to date by reading only what was
    appended since it last looked (at 24,000 requests, reading it whole each time took 10 ms a
    request), and the lock and condition its process's threads share."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.paid = self.held = self._read_to = 0
        self.unmetered: set[str] = set()
        self.changed = threading.Condition(threading.Lock())

    def read(self) -> None:
        lines, self._read_to = appended_lines(self.path, self._read_to)
        for line in lines:
            kind, _, rest = line.partition(" ")
            if kind == "unmetered":
                self.unmetered.add(rest)
                continue
            try:
                held, paid = (int(part) for part in line.split())
            except ValueError:
                continue
            self.held, self.paid = self.held + held, self.paid + paid

    def append(self, line: str) -> None:
        with open(self.path, "a", encoding="utf-8") as ledger:
            ledger.write(line + "\n")
        self.read()


class RequestBudget:
    """What the whole run may send live, all models and xdist workers together: at most ``cap``
    requests (``--gaamas-max-requests``), at most ``dollars`` spent (``--gaamas-budget``). Requests
    are counted in a file the workers share, one byte each, appended under a lock. Their cost goes
    in a second file beside it, the ledger, a line a change: a request holds the most it may cost
    (its ceiling: its prompt at a token a byte, and every reply token it may take) from before it
    is sent until its answer comes, when the hold gives way to what the answer cost. A request is
    sent only where what was paid, what requests in flight hold and its own ceiling fit the budget,
    so requests sent at once never pass it together. A replayed answer takes nothing from either.

    The session's budget is shared; each model takes from it through its own ``priced`` view, which
    knows the model's price and the most tokens its replies may take."""

    def __init__(self, cap: int | None, path: Path, dollars: float | None = None) -> None:
        self.cap, self.path, self.dollars = cap, path, dollars
        self._tally = _Tally(self.ledger)
        self._spec = ""
        self._price: Price | None = None
        self._reply_tokens_most: Callable[[Any], int] = lambda request: 0
        self._patience = 0.0
        self._say: Callable[[str], None] = lambda line: None
        self._largest_prompt = 0
        self._held = threading.local()

    def priced(self, spec: str, price: Price, reply_tokens_most: Callable[[Any], int], *, patience: float,
               say: Callable[[str], None]) -> RequestBudget:  # fmt: skip
        """This budget as model ``spec``'s requests take from it, at ``price``: each holds its
        ceiling, ``reply_tokens_most(request)`` reply tokens (the request is None where the model
        does not pass it) and its prompt's. A request waits at most ``patience`` seconds (the
        longest a request in flight takes) for the requests in flight to leave it room; ``say``
        tells the run, once, that the server sends no token counts."""
        view = copy.copy(self)
        view._spec, view._price, view._reply_tokens_most, view._patience, view._say = spec, price, reply_tokens_most, patience, say
        view._largest_prompt, view._held = 0, threading.local()
        return view

    @property
    def ledger(self) -> Path:
        return self.path.with_name(self.path.name + ".spent")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[BinaryIO]:
        """The counter, open to append, locked against this process's other threads and against
        the other processes."""
        with self._tally.changed, open(self.path, "ab") as counter:
            fcntl.flock(counter, fcntl.LOCK_EX)
            yield counter

    def _ceiling(self, request: Any) -> tuple[int, int]:
        """The most prompt and reply tokens ``request`` may take. Where the model does not pass its
        request, the largest prompt its server has counted so far stands for the prompt's."""
        prompt = prompt_tokens_most(request) if request is not None else self._largest_prompt
        return prompt, self._reply_tokens_most(request)

    def _cost(self, prompt: int, completion: int) -> int:
        price = self._price
        return 0 if price is None else nanodollars(price.of({"prompt_tokens": prompt, "completion_tokens": completion}))

    def take(self, request: Any = None) -> None:
        """Counts one request and holds its ceiling against the budget, waiting while requests in
        flight hold what it needs; raises ``ModelUnavailable`` once the cap is reached or no room is
        left. A request this thread sent before and that is still held ended without an answer
        (refused and sent again, or failed): it holds nothing any more."""
        self.release()
        prompt, completion = self._ceiling(request)
        ceiling = self._cost(prompt, completion)
        deadline = time.monotonic() + self._patience
        while True:
            with self._locked() as counter:
                if self.cap is not None and os.fstat(counter.fileno()).st_size >= self.cap:
                    raise ModelUnavailable(
                        f"this run's cap of {self.cap:,} live requests (--gaamas-max-requests) is reached: the finished trials wait "
                        "in the journal; run again, with a higher cap, to go on"
                    )
                if self.dollars is None:
                    counter.write(b".")
                    return
                self._tally.read()
                paid, held = self._tally.paid, self._tally.held
                if paid + held + ceiling <= nanodollars(self.dollars):
                    counter.write(b".")
                    self._tally.append(f"{ceiling} 0")
                    self._held.ceiling, self._held.tokens = ceiling, (prompt, completion)
                    return
                if held <= 0 or time.monotonic() >= deadline:
                    in_flight = f" and {cost_text(held / NANO)} held by requests in flight" if held > 0 else ""
                    raise ModelUnavailable(
                        f"this run's budget of {cost_text(self.dollars)} (--gaamas-budget) is spent: {cost_text(paid / NANO)} paid"
                        f"{in_flight} leave less than the next request may cost, {cost_text(ceiling / NANO)} ({prompt:,} prompt and "
                        f"{completion:,} reply tokens at --gaamas-prices): the finished trials wait in the journal; run again, with a "
                        "larger budget, to go on"
                    )
            with self._tally.changed:  # an answer settled here, or, at the latest, another look at what other processes settled
                self._tally.changed.wait(LEDGER_POLL_S)

    def charged(self, tokens: Mapping[str, int]) -> None:
        """The answer to this thread's request came, with the token counts its server sent: the
        request's hold gives way to what it cost. A count the server did not send is charged at
        its ceiling, never as nothing, and the run says so once."""
        ceiling = getattr(self._held, "ceiling", 0)
        prompt_most, completion_most = getattr(self._held, "tokens", None) or (self._largest_prompt, self._reply_tokens_most(None))
        self._held.ceiling, self._held.tokens = 0, None
        prompt, completion = tokens.get("prompt_tokens", prompt_most), tokens.get("completion_tokens", completion_most)
        self._largest_prompt = max(self._largest_prompt, tokens.get("prompt_tokens", 0))
        unmetered = not {"prompt_tokens", "completion_tokens"} <= tokens.keys()
        with self._locked():
            self._tally.read()
            first = unmetered and self._spec not in self._tally.unmetered
            self._tally.append(f"{-ceiling} {self._cost(prompt, completion)}")
            if first:
                self._tally.append(f"unmetered {self._spec}")
            self._tally.changed.notify_all()
        if first:
            self._say(f"{self._spec}: its server answers without token counts (usage): each such answer is charged its ceiling at "
                      f"--gaamas-prices, every reply token it may take ({completion:,}) and its prompt at a token a byte "
                      f"({prompt:,}), {cost_text(self._cost(prompt, completion) / NANO)} for this one")  # fmt: skip

    def release(self) -> None:
        """This thread's request, if one is held, ended without an answer: it holds nothing more."""
        ceiling = getattr(self._held, "ceiling", 0)
        if not ceiling:
            return
        self._held.ceiling, self._held.tokens = 0, None
        with self._locked():
            self._tally.append(f"{-ceiling} 0")
            self._tally.changed.notify_all()

    @property
    def spent(self) -> float:
        """What the run's answers cost, all processes together, in dollars."""
        with self._tally.changed:
            self._tally.read()
            return self._tally.paid / NANO

    @property
    def taken(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0
