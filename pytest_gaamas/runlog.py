"""The run log: everything one pytest session measured, in one versioned JSON document, to be read
again later (``--gaamas-json``, ``--gaamas-save``, ``python -m pytest_gaamas report``).

Format 3, the current one. A JSON object (gzip-compressed when the file name ends in ``.gz``)::

    format       3
    run          provenance: plugin, python, platform, models (spec, digest, server, and usage:
                 the requests answered live, their tokens and retries), seed, trials ("paper" or N),
                 temperature ("paper" or T), record mode, live_requests (every model's), started, finished
    scores       [Score]: one per table cell an item reported (``report.Score.to_json``): behaviour,
                 test_id, model, variant, metric, score, ci [low, high], n, invalid, verdict ("met",
                 "missed", "at chance", "inconclusive", or null for a descriptive row), passed (true when met,
                 else false; null for a descriptive row), criterion, table, columns, cells, details,
                 row, row_rank, kind ("rate" or "mean"), sample (the observations), worse, verdict_label,
                 unit, figures ([figures.Figure]: where the score is drawn), adjusted (what the verdict
                 was decided on: {family, ci, confidence, chance, chance_margin, chance_ci}, see
                 ``report.Score.adjusted``; absent from runs saved before tables were families)
    references   [ReferenceRow]: table, label, cells, source, status (of people's and benchmark rows)
    tables       [{title, headers, rows}]: the tables as the terminal showed them
    plays        {play id: Play}: every game an item played, whole (below); items that replay the
                 same cells (a criterion over another item's trials) share one play
    items        [{test_id, behaviour, model, variant, outcome, plays: [play id]}]: outcome is
                 "passed", "missed", "at chance" or "inconclusive" (a criterion not met, reported), "failed",
                 "skipped" or "" (unknown)
    findings     [{test_id, verdict, finding}]: the one-line finding of each criterion not met, and
                 its verdict ("missed", "at chance" or "inconclusive"; "at chance" from the runs
                 that have the fourth verdict on)
    comparison   with --gaamas-compare: {with, notes, cells: [compare.CellChange.to_json]}

    Play: id, behaviour, model, game (its name), game_fingerprint (a hash of its parameters),
          generation ("actions", "strategy", ...), seed, temperature,
          trials: [{trial, outcome, rounds: [{seed, messages, reply, thinking, valid, value, reason}]}]
              each round is one request, the raw reply, the model's reasoning kept apart, the parsed
              decision (``value``) or why it is invalid; ``messages`` are the messages sent, less
              those it repeats from an earlier round of the trial: ``shared`` [round, count] (absent:
              none) says that it begins with the first ``count`` messages of that round's request;
              a trial's ``outcome`` is what the game made of it (payoffs, correctness, validity);
          strategy (strategy mode): {valid, reason, code, calls, sandbox, probes, request}, where
              ``request`` is the round that asked for the code and the reply it came in; the trials
              are then the strategy's own plays in the sandbox (their ``reply`` is the function's
              value).

Format 2 had two verdicts: a score's ``passed`` alone, every finding a missed one. It is read as
format 3 with each verdict taken from ``passed`` (true met, false missed) and each finding missed.

Format 1 (runs saved before the run log, no ``format`` field) held run, scores, references, tables
and comparison only. It is read as it is: such a run still compares with ``--gaamas-compare`` and
still makes a report (tables and figures), which says it holds no transcripts.

Read back, a document is checked against its format's schema (``SCHEMAS``: the types of the classes
and records it is read into) by pydantic, in strict mode, before anything is built from it or uses it.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import gc
import gzip
import json
import math
import operator
import stat
import threading
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict, Union

from . import inert, safejson
from .errors import UnreadableFile
from .figures import MAX_DRAWN
from .report import ReferenceRow, Score
from .usage import Usage

FORMAT = 4
OUTCOMES = ("passed", "missed", "at chance", "inconclusive", "failed", "skipped")
#: The largest run log read, decompressed: the whole suite's is 14 MB for one model; a gzip file of
#: 2 MB may inflate to 2 GiB, and would be read no further than this.
MAX_BYTES = 256 * 1024 * 1024


# -- the records of a run log that are not read into a class of their own. A record's keys not named
# here are kept and not checked: they are read by nothing.


class Message(TypedDict):
    role: str
    content: str


class Round(TypedDict, total=False):
    seed: int
    messages: list[Message]
    reply: str
    thinking: str
    valid: bool
    value: Any
    reason: str
    #: [round, count]: this round's messages begin with the first ``count`` of that round's.
    shared: tuple[int, int]


class Outcome(TypedDict, total=False):
    valid: bool
    reason: str


class Trial(TypedDict, total=False):
    trial: int
    rounds: list[Round]
    outcome: Outcome


class Strategy(TypedDict, total=False):
    valid: bool
    reason: str | None
    code: str | None
    calls: int
    sandbox: list[str]
    probes: list[Any]
    request: Round | None


class _ModelNamed(TypedDict):
    model: str


class UsageRecord(TypedDict, total=False):
    requests: int
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int
    retries: dict[str, int]


class ModelRecord(_ModelNamed, total=False):
    #: what the run asked of the model's server live (``usage.Usage``); absent where it asked nothing
    usage: UsageRecord
    digest: str | None
    recorded_digest: str | None
    recorded_with: str | None
    server: str | None
    description: str
    weights: str


class RunRecord(TypedDict, total=False):
    plugin: str
    python: str
    platform: str
    models: list[ModelRecord]
    seed: int
    trials: int | Literal["paper"]
    temperature: float | Literal["paper"]
    record: str
    #: requests answered live over the run, every model (from format 3's later runs on)
    live_requests: int
    started: str
    finished: str


class TableRecord(TypedDict):
    title: str
    headers: list[str]
    rows: list[list[str]]


class _FindingNamed(TypedDict):
    test_id: str
    finding: str


class Finding(_FindingNamed, total=False):
    #: from format 3 on; a finding of format 2 was a missed criterion
    verdict: Literal["missed", "at chance", "inconclusive"]


class _CellNamed(TypedDict):
    behaviour: str
    cell: str
    models: str


class ComparisonCell(_CellNamed, total=False):
    test_id: str
    old: float | None
    new: float | None
    old_ci: tuple[float | None, float | None]
    new_ci: tuple[float | None, float | None]
    old_n: int
    new_n: int
    difference: float | None
    p_value: float | None
    p_holm: float | None
    worse: str
    allowed_drop: float | None
    dropped: bool
    unit: str
    headline: bool
    #: whether a significant drop here fails the run: the saved run met the cell's criterion
    gated: bool
    old_verdict: str | None
    new_verdict: str | None


Comparison = TypedDict("Comparison", {"with": str, "notes": list[str], "cells": list[ComparisonCell]}, total=False)


@dataclass
class Play:
    """One game, played whole by one model: every trial's requests, replies and outcome."""

    id: str
    behaviour: str
    model: str
    game: str
    game_fingerprint: str
    generation: str
    seed: int
    temperature: float
    trials: list[Trial]
    strategy: Strategy | None = None

    def to_json(self) -> dict[str, Any]:
        return {**vars(self), "trials": [{**t, "rounds": _shared_compacted(list(t.get("rounds", [])))} for t in self.trials]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Play:
        play = cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})
        play.trials = [typing.cast(Trial, {**t, "rounds": _shared_expanded(list(t.get("rounds", [])))}) for t in play.trials]
        return play


def _shared_compacted(rounds: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Each round's request without the messages it repeats from an earlier round of its trial (a
    conversation resends all of them every round; two players alternate rounds): ``shared`` says
    which earlier round, and how many of its first messages this one begins with."""
    out: list[Mapping[str, Any]] = []
    for index, round_ in enumerate(rounds):
        messages = round_.get("messages", [])
        best, shared = None, 0
        for earlier in range(index - 1, -1, -1):
            previous = rounds[earlier].get("messages", [])
            count = 0
            while count < min(len(previous), len(messages)) and previous[count] == messages[count]:
                count += 1
            if count > shared:
                best, shared = earlier, count
        out.append({**round_, "messages": messages[shared:], "shared": [best, shared]} if shared else round_)
    return out


#: How far sharing may expand a trial's messages: a conversation of R rounds resends about R/2
#: messages a round, so R = 100 expands some fifty-fold; a file whose rounds each share all the
#: previous one's (15,000 rounds, a billion messages) would fill the memory of whoever reads it.
MAX_EXPANSION = 100
MIN_EXPANDED = 10_000


def _shared_expanded(rounds: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stored = sum(len(r.get("messages", [])) if isinstance(r.get("messages"), list) else 0 for r in rounds)
    bound, expanded = max(MIN_EXPANDED, MAX_EXPANSION * stored), 0
    for index, round_ in enumerate(rounds):
        earlier, shared = round_.get("shared", (None, 0))
        if shared and not (type(earlier) is int and 0 <= earlier < index and type(shared) is int
                           and 0 < shared <= len(out[earlier]["messages"])):  # fmt: skip
            raise ValueError(f"round {index} shares {shared!r} messages with round {earlier!r}, which it cannot")
        expanded += shared + len(round_.get("messages", []))
        if expanded > bound:
            raise ValueError(f"its rounds share messages {expanded:,} times over, past {bound:,}: no conversation this suite records")
        messages = (out[earlier]["messages"][:shared] if shared else []) + list(round_.get("messages", []))
        out.append({**{k: v for k, v in round_.items() if k != "shared"}, "messages": messages})
    return out


@dataclass
class ItemLog:
    test_id: str
    behaviour: str
    model: str
    variant: dict[str, Any]
    plays: list[str] = field(default_factory=list)
    outcome: str = ""

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ItemLog:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})


@dataclass(frozen=True)
class Mark:
    """How far the collection had come: its scores and reference rows, its plays, and an item's plays."""

    scores: int
    references: int
    plays: frozenset[str]
    item_plays: int | None


@dataclass
class Look:
    """What one look of an item added to the collection: taken out when the design looks again, put
    back when the next look cannot play."""

    scores: list[Score]
    references: list[ReferenceRow]
    plays: dict[str, Play]
    item: ItemLog | None
    item_plays: list[str]


class Collector:
    """What the items of one process measured, gathered as they report it. Under xdist each worker
    has its own and sends it to the controller once, when the worker finishes (``to_json``), as
    syrupy sends its snapshots; nothing of it travels in test reports or the JUnit XML."""

    def __init__(self) -> None:
        self.scores: list[Score] = []
        self.references: list[ReferenceRow] = []
        self.plays: dict[str, Play] = {}
        self.items: dict[str, ItemLog] = {}
        self.cassettes_used: set[str] = set()
        #: model -> what this process asked of its server live
        self.usage: dict[str, Usage] = {}
        self._lock = threading.Lock()

    def score(self, score: Score) -> None:
        with self._lock:
            self.scores.append(score)

    def reference(self, row: ReferenceRow) -> None:
        with self._lock:
            self.references.append(row)

    def play(self, item: ItemLog, play: Play) -> None:
        with self._lock:
            self.plays.setdefault(play.id, play)
            logged = self.items.setdefault(item.test_id, item)
            if play.id not in logged.plays:
                logged.plays.append(play.id)

    def requests(self, test_id: str) -> int:
        """The requests ``test_id``'s games asked so far: a round a request, a strategy's code one."""
        with self._lock:
            item = self.items.get(test_id)
            plays = [self.plays[key] for key in (item.plays if item else ()) if key in self.plays]
        return sum(1 if play.generation == "strategy" else sum(len(t.get("rounds", ())) for t in play.trials) for play in plays)

    def cassette(self, relative_path: str) -> None:
        with self._lock:
            self.cassettes_used.add(relative_path)

    def mark(self, test_id: str) -> Mark:
        """Where the collection stands before a look of ``test_id``'s sequential design."""
        with self._lock:
            item = self.items.get(test_id)
            return Mark(len(self.scores), len(self.references), frozenset(self.plays), None if item is None else len(item.plays))

    def take(self, test_id: str, mark: Mark) -> Look:
        """What ``test_id`` added since ``mark`` (a look the design went past), taken out of the collection."""
        with self._lock:
            scores, references = self.scores[mark.scores:], self.references[mark.references:]
            del self.scores[mark.scores:], self.references[mark.references:]
            plays = {key: self.plays.pop(key) for key in list(self.plays) if key not in mark.plays}
            if mark.item_plays is None:
                return Look(scores, references, plays, self.items.pop(test_id, None), [])
            item = self.items[test_id]
            item_plays = item.plays[mark.item_plays:]
            del item.plays[mark.item_plays:]
            return Look(scores, references, plays, None, item_plays)

    def restore(self, test_id: str, look: Look) -> None:
        """A look ``take`` took out, put back: the design's last look that could play."""
        with self._lock:
            self.scores += look.scores
            self.references += look.references
            for key, play in look.plays.items():
                self.plays.setdefault(key, play)
            if look.item is not None:
                self.items[test_id] = look.item
            elif look.item_plays:
                self.items[test_id].plays += [p for p in look.item_plays if p not in self.items[test_id].plays]

    def to_json(self, *, plays: bool = True) -> dict[str, Any]:
        """What a worker sends; without the games played (``plays``) where the run keeps no log
        to write them into: they are most of it, and its tables need none of them."""
        return {
            "scores": [s.to_json() for s in self.scores],
            "references": [r.to_json() for r in self.references],
            "plays": {key: p.to_json() for key, p in self.plays.items()} if plays else {},
            "items": [i.to_json() for i in self.items.values()],
            "cassettes": sorted(self.cassettes_used),
            "usage": {spec: usage.to_json() for spec, usage in self.usage.items()},
        }

    def add_usage(self, spec: str, usage: Mapping[str, Any]) -> None:
        with self._lock:
            self.usage.setdefault(spec, Usage()).merge(usage)

    def merge(self, data: Mapping[str, Any]) -> None:
        """A worker's collector, as ``to_json`` sent it."""
        with self._lock:
            self.scores += [Score.from_json(s) for s in data.get("scores", [])]
            self.references += [ReferenceRow(**r) for r in data.get("references", [])]
            for key, play in data.get("plays", {}).items():
                self.plays.setdefault(key, Play.from_json(play))
            for item in data.get("items", []):
                logged = self.items.setdefault(item["test_id"], ItemLog.from_json(item))
                logged.plays += [p for p in item.get("plays", []) if p not in logged.plays]
            self.cassettes_used.update(data.get("cassettes", []))
        for spec, usage in (data.get("usage") or {}).items():
            self.add_usage(spec, usage)


@dataclass
class RunLog:
    """A run log read back."""

    format: int
    run: dict[str, Any]
    scores: list[Score]
    references: list[ReferenceRow]
    plays: dict[str, Play]
    items: list[ItemLog]
    findings: list[dict[str, str]]
    comparison: dict[str, Any] | None
    path: Path | None = None
    #: table title -> what agents that never read the game earned there (``null_runs.for_tables``)
    null_rates: dict[str, Any] = field(default_factory=dict)

    @property
    def has_transcripts(self) -> bool:
        return bool(self.plays)


def document(
    *, run: Mapping[str, Any], collector: Collector, tables: Iterable[Mapping[str, Any]],
    outcomes: Mapping[str, str], findings: Iterable[tuple[str, str, str]], comparison: Mapping[str, Any] | None = None,
    null_rates: Mapping[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The run log of a finished session, as JSON-able data, in a stable order. ``findings`` are
    (test id, verdict, finding) of each criterion not met."""
    items = []
    for item in sorted(collector.items.values(), key=lambda i: i.test_id):
        items.append({**item.to_json(), "outcome": outcomes.get(item.test_id, "")})
    data: dict[str, Any] = {
        "format": FORMAT,
        "run": dict(run),
        "scores": finite([s.to_json() for s in sorted(collector.scores, key=lambda s: s.test_id)]),
        "references": [r.to_json() for r in sorted(_distinct(collector.references), key=lambda r: (r.table, r.label))],
        "tables": list(tables),
        "plays": {key: collector.plays[key].to_json() for key in sorted(collector.plays)},
        "items": items,
        "findings": [{"test_id": t, "verdict": v, "finding": f} for t, v, f in sorted(findings)],
    }
    if comparison is not None:
        data["comparison"] = finite(dict(comparison))
    if null_rates:
        data["null_rates"] = dict(null_rates)
    return data


def _finding(data: Mapping[str, Any]) -> dict[str, str]:
    """A finding read back; one saved before there were three verdicts was a missed one."""
    finding = {"verdict": "missed", **data}
    if finding["verdict"] not in ("missed", "at chance", "inconclusive"):
        raise ValueError(f"a finding's verdict is missed, at chance or inconclusive, got {finding['verdict']!r}")
    return finding


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite number made null: JSON has no such numbers, and a
    statistic that could not be computed (a test with no variance) is absent, not a number."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def _distinct(rows: Iterable[ReferenceRow]) -> list[ReferenceRow]:
    """Each reference row once: every item of a table reports its table's rows."""
    return list({(r.table, r.label): r for r in rows}.values())


def unwritten(
    *, run: Mapping[str, Any], collector: Collector, outcomes: Mapping[str, str], findings: Iterable[tuple[str, str, str]],
    null_rates: Mapping[str, Any] | None = None,
) -> RunLog:  # fmt: skip
    """The record of a finished session that writes no file: what ``document`` holds, in its order,
    without the games played (no worker sent them), taken as collected rather than read back from a
    text no one will read. Its tables are the ones the document's would be."""
    items = [ItemLog(**{**item.to_json(), "outcome": outcomes.get(item.test_id, "")})
             for item in sorted(collector.items.values(), key=lambda i: i.test_id)]  # fmt: skip
    return RunLog(
        format=FORMAT,
        run=dict(run),
        scores=sorted(collector.scores, key=lambda s: s.test_id),
        references=sorted(_distinct(collector.references), key=lambda r: (r.table, r.label)),
        plays={},
        items=items,
        findings=[{"test_id": t, "verdict": str(v), "finding": f} for t, v, f in sorted(findings)],
        comparison=None,
        null_rates=dict(null_rates or {}),
    )


def record(data: Mapping[str, Any]) -> RunLog:
    """The record of a finished session, which its terminal summary, reports and gate all read: its
    document read back as the file that holds it would be, so that a saved run renders the very
    reports the live run that wrote it did."""
    return parse(json.dumps(data, ensure_ascii=False))


def dumps(data: Mapping[str, Any], path: Path) -> bytes:
    """The document as the file at ``path`` holds it: JSON, gzip-compressed for a ``.gz`` name."""
    text = json.dumps(data, ensure_ascii=False) + "\n"
    raw = text.encode("utf-8")
    return gzip.compress(raw, compresslevel=6, mtime=0) if path.suffix == ".gz" else raw


# -- reading a run log back ------------------------------------------------------------------------
# A run log is checked against its format's schema before anything is built from it: the types of
# what it is read into (Score, Figure, ReferenceRow, Play, ItemLog and the records above). A value of
# the wrong type, a field missing or one no such record has is one line naming the field, rather
# than a traceback wherever the value is used later (a report, a comparison).


class _Scored(TypedDict):
    scores: list[Score]


class Format1(_Scored, total=False):
    run: RunRecord
    references: list[ReferenceRow]
    tables: list[TableRecord]
    comparison: Comparison | None


class Format2(Format1, total=False):
    plays: dict[str, Play]
    items: list[ItemLog]
    findings: list[Finding]


class NullAgentRecord(TypedDict):
    cells: int
    met_per_run: float
    runs_with_met: int
    runs: int


class NullTableRecord(TypedDict):
    agents: dict[str, NullAgentRecord]
    #: the behaviour's file, or a game module it imports, has changed since the figures were measured
    stale: bool


class Format4(Format2, total=False):
    #: table title -> the "met" verdicts agents that never read the game earned there (null_runs)
    null_rates: dict[str, NullTableRecord]


SCHEMAS: dict[int, type] = {1: Format1, 2: Format2, 3: Format2, 4: Format4}
REMEDY = "write it again with --gaamas-json=PATH or --gaamas-save=NAME"


class _Damaged(ValueError):
    """What is wrong, and where in the document: ``at`` adds the places it was found in, innermost first."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem, self.where = problem, ""

    def at(self, place: str) -> _Damaged:
        self.where = place + self.where
        return self

    def __str__(self) -> str:
        return f"{self.where.removeprefix('.') or 'the document'} {self.problem}"


def read(path: Path) -> RunLog:
    """A run log from disk, either format; one line naming the file and what to do when it cannot be read."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO or a device would be waited on, or read forever
            raise UnreadableFile(f"{path}: not a run log, not even a regular file; {REMEDY}")
        with path.open("rb") as file:
            packed = file.read(2) == b"\x1f\x8b"
            file.seek(0)
            raw = (gzip.GzipFile(fileobj=file) if packed else file).read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise UnreadableFile(f"{path}: larger than the {MAX_BYTES >> 20} MiB a run log may be{' once decompressed' if packed else ''}; "
                                 f"not a run log this suite wrote, or {REMEDY}")  # fmt: skip
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise UnreadableFile(f"{path}: no such run log; {REMEDY}") from None
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as error:
        raise UnreadableFile(f"{path}: cannot read this run log ({getattr(error, 'strerror', None) or error}); {REMEDY}") from None
    return parse(text, path)


def parse(text: str, path: Path | None = None) -> RunLog:
    """The run log in ``text``, read from ``path``. Python's cycle collector is paused meanwhile: a
    run log is half a million objects, none in a cycle, and the collector would look through those
    made so far again and again as they are made, a third of the time reading takes."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _parsed(text, path)
    finally:
        if collecting:
            gc.enable()


def _parsed(text: str, path: Path | None) -> RunLog:
    name = path or "run log"
    try:
        data = safejson.loads(text)
    except safejson.JSONError as error:
        raise UnreadableFile(f"{name}: not a run log ({error}); {REMEDY}") from None
    if not isinstance(data, dict) or not isinstance(data.get("scores"), list):
        raise UnreadableFile(f"{name}: not a run log (no scores); {REMEDY}")
    version = data.get("format", 1)
    if type(version) is int and version > FORMAT:
        raise UnreadableFile(f"{name}: run log format {version} is newer than this pytest-gaamas reads ({FORMAT}); upgrade pytest-gaamas")
    if type(version) is not int or version not in SCHEMAS:
        raise UnreadableFile(f"{name}: a damaged run log (format is {_found(version)}, where one of {', '.join(map(str, SCHEMAS))} belongs); {REMEDY}")
    try:
        _check(SCHEMAS[version], data)
        _check_scores(data["scores"])
        later = version >= 2  # what format 1 did not hold is not read from it
        return RunLog(
            format=version,
            run=dict(data.get("run") or {}),
            scores=[_built(f"scores[{i}]", Score.from_json, s) for i, s in enumerate(data["scores"])],
            references=[_built(f"references[{i}]", lambda r: ReferenceRow(**r), r) for i, r in enumerate(data.get("references", []))],
            plays={key: _built(f"plays[{_key(key)}]", Play.from_json, p) for key, p in (data.get("plays", {}) if later else {}).items()},
            items=[ItemLog.from_json(i) for i in (data.get("items", []) if later else [])],
            findings=[_built(f"findings[{i}]", _finding, f) for i, f in enumerate(data.get("findings", []) if later else [])],
            comparison=data.get("comparison"),
            path=path,
            null_rates=dict(data.get("null_rates") or {}),
        )
    except _Damaged as damage:
        raise UnreadableFile(f"{name}: a damaged run log ({damage}); {REMEDY}") from None


class Adjusted(TypedDict, total=False):
    """What a score's verdict was decided on (``report.Score.adjusted``), as the report reads it."""

    family: int
    ci: tuple[float | None, float | None]
    confidence: float
    chance: float
    chance_margin: float
    chance_ci: tuple[float | None, float | None]


def _check_scores(scores: list[dict[str, Any]]) -> None:
    """What the schema leaves open of each score (checked as it is): ``adjusted`` of the shape the
    report reads, and the numbers a figure draws (the score, its interval, its sample) within what a
    plot can draw. An interval of ±1e308 is a number JSON holds, and no axis spans it."""
    for index, score in enumerate(scores):
        if score.get("adjusted") is not None:
            try:
                _check(Adjusted, score["adjusted"])
            except _Damaged as damage:
                raise damage.at(f"scores[{index}].adjusted") from None
        drawn = [(".score", score["score"]), *((f".ci[{i}]", v) for i, v in enumerate(score["ci"])),
                 *((f".sample[{i}]", v) for i, v in enumerate(score.get("sample", ())))]  # fmt: skip
        for where, value in drawn:
            if value is not None and not abs(value) <= MAX_DRAWN:
                raise _Damaged(f"is {_found(value)}, where a number within ±{MAX_DRAWN:g} belongs").at(f"scores[{index}]{where}")


def _built(where: str, build, data):
    """What ``build`` makes of a record already checked, or where it refused and why."""
    try:
        return build(data)
    except (KeyError, TypeError, ValueError) as error:
        raise _Damaged(f"is refused: {inert.terminal(str(error)[:160])}").at(where) from None


def _check(kind: Any, data: Any) -> None:
    """Raises :class:`_Damaged` at the first part of ``data`` (JSON, as read) that is not of ``kind``,
    as pydantic's strict validation against ``kind``'s model (``_model``) finds it."""
    from pydantic import ValidationError

    try:
        _adapter(kind).validate_python(data)
    except ValidationError as error:
        raise _damaged(kind, error.errors(include_url=False, include_context=False)[0]) from None


@functools.cache
def _adapter(kind: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(_model(kind))


@functools.cache
def _model(kind: Any) -> Any:
    """``kind`` as JSON holds it, for pydantic's strict validation: a dataclass or a record is a typed
    dict (a dataclass's closed, a record's other keys not checked), a tuple a list (of its length where
    it has one), a set of words (an enum) those words. Made once for each type, from the classes' own
    types, so that a field added to them is read back. (A typed dict, not a pydantic model: pydantic
    checks a run log's 90,000 records ten times faster into dicts than into models.)"""
    from annotated_types import Len
    from pydantic import ConfigDict, with_config
    from typing_extensions import NotRequired, TypedDict

    origin, arguments = typing.get_origin(kind), typing.get_args(kind)
    first = _first_only()
    if _is_enum(kind):
        return Literal[tuple(m.value for m in kind)]
    if origin in (Union, types.UnionType):
        return functools.reduce(operator.or_, map(_model, arguments))
    if _fixed(kind):
        item = _model(functools.reduce(operator.or_, arguments))
        return typing.Annotated[list[item], Len(len(arguments), len(arguments)), first]  # type: ignore[valid-type]
    if origin in (list, tuple, Sequence):
        return typing.Annotated[list[_model(arguments[0])], first]  # type: ignore[misc]
    if origin in (dict, Mapping):
        return typing.Annotated[dict[str, _model(arguments[1])], first]  # type: ignore[misc]
    if dataclasses.is_dataclass(kind) or _is_record(kind):
        fields, required = _fields(kind)
        shapes = {name: _model(of) if name in required else NotRequired[_model(of)] for name, of in fields.items()}
        closed = dataclasses.is_dataclass(kind)  # a record read into a class has no field beyond the class's
        return with_config(ConfigDict(strict=True, extra="forbid" if closed else "ignore"))(TypedDict(kind.__name__, shapes))  # type: ignore[operator]
    return kind


@functools.cache
def _first_only() -> Any:
    """Pydantic's mark that a list's or a dict's first wrong item is told, not the next million a
    hostile file may hold; hashable, as a union's arms are."""
    from pydantic import FailFast

    class FirstOnly(FailFast):
        __hash__ = object.__hash__

    return FirstOnly()


def _damaged(kind: Any, error: Mapping[str, Any]) -> _Damaged:
    """Pydantic's error as one of a run log's: the field's place, and what it is where what belongs."""
    if error["type"] in ("missing", "extra_forbidden"):
        *parents, name = error["loc"]
        where, record = _place(kind, parents)
        if error["type"] == "extra_forbidden":
            return _Damaged(f"has a field {_key(name)} that no run log this pytest-gaamas wrote has").at(where)
        return _Damaged(f"has no {name} ({_expected(_fields(_arm(record))[0][name])})").at(where)
    where, expected = _place(kind, error["loc"])
    if error["type"] in ("too_short", "too_long"):  # a tuple's list of another length
        return _Damaged(f"is {_found(error['input'])}, where a list of {len(typing.get_args(_arm(expected)))} belongs").at(where)
    if typing.get_origin(expected) in (Union, types.UnionType):  # said of the types a value of its kind could have been
        expected = functools.reduce(operator.or_, [arm for arm in typing.get_args(expected) if _fits(error["input"], arm)] or [expected])
    return _Damaged(f"is {_found(error['input'])}, where {_expected(expected)} belongs").at(where)


def _place(kind: Any, loc: Sequence[int | str]) -> tuple[str, Any]:
    """Where a pydantic error's ``loc`` is in a document of ``kind``, as a run log's errors name it
    (``scores[3].ci[0]``, ``plays["p"].seed``), and the type that belongs there."""
    where = ""
    for part in loc:
        kind = _arm(kind)
        origin, arguments = typing.get_origin(kind), typing.get_args(kind)
        if origin in (Union, types.UnionType):
            break  # ``part`` names the type pydantic tried: the value is the union's, at this place
        if isinstance(part, int):
            where, kind = where + f"[{part}]", arguments[min(part, len(arguments) - 1) if _fixed(kind) else 0]
        elif origin in (dict, Mapping):
            where, kind = where + f"[{_key(part)}]", arguments[1]
        else:
            where, kind = where + f".{part}", _fields(kind)[0][part]
    return where, kind


def _fits(value: Any, kind: Any) -> bool:
    """Whether ``value`` has the JSON type of a ``kind`` (text of a set of words, a number of an integer)."""
    if typing.get_origin(kind) is Literal or _is_enum(kind):
        return any(type(value) is type(word) for word in (typing.get_args(kind) if typing.get_origin(kind) else [m.value for m in kind]))
    return _expected(kind) == _expected(type(value)) or (kind is float and type(value) is int)


def _fixed(kind: Any) -> bool:
    """A tuple of a given length (an interval): a list of that length in JSON."""
    return typing.get_origin(kind) is tuple and typing.get_args(kind)[-1:] != (Ellipsis,)


def _arm(kind: Any) -> Any:
    """The type a value of ``kind`` that is not null has: ``kind`` itself where it is not a single one."""
    arms = [arm for arm in typing.get_args(kind) if arm is not type(None)]
    return arms[0] if typing.get_origin(kind) in (Union, types.UnionType) and len(arms) == 1 else kind


def _is_enum(kind: Any) -> bool:
    """A set of words (a verdict), stored as their values."""
    return isinstance(kind, type) and issubclass(kind, enum.Enum)


def _is_record(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, dict) and hasattr(kind, "__required_keys__")


@functools.cache
def _fields(kind: Any) -> tuple[dict[str, Any], frozenset[str]]:
    """The fields of a dataclass or a record, with their types, and those that must be present."""
    hints = typing.get_type_hints(kind)
    if dataclasses.is_dataclass(kind):
        fields = dataclasses.fields(kind)
        required = {f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
        return {f.name: hints[f.name] for f in fields}, frozenset(required)
    return hints, frozenset(kind.__required_keys__)


_NAMES: dict[Any, str] = {str: "text", int: "an integer", float: "a number", bool: "true or false", type(None): "null", list: "a list"}


def _expected(kind: Any) -> str:
    origin = typing.get_origin(kind)
    if origin is Literal:
        return " or ".join(json.dumps(a) for a in typing.get_args(kind))
    if _is_enum(kind):
        return " or ".join(json.dumps(m.value) for m in kind)
    if origin in (Union, types.UnionType):
        return " or ".join(_expected(arm) for arm in typing.get_args(kind))
    if origin in (list, tuple, Sequence):
        return "a list"
    return _NAMES.get(kind, "an object")  # a dict, a dataclass or a record


def _found(value: Any) -> str:
    if isinstance(value, str):
        return f'the text "{inert.terminal(value[:40])}{"..." if len(value) > 40 else ""}"'
    if isinstance(value, (list, dict)):
        return f"{'a list' if isinstance(value, list) else 'an object'} of {len(value)}"
    return json.dumps(value)  # a number, true, false or null, as the file has it


def _key(key: str) -> str:
    return f'"{inert.terminal(key[:40])}{"..." if len(key) > 40 else ""}"'
