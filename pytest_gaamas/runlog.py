"""The run log: everything one pytest session measured, in one versioned JSON document, to be read
again later (``--gaamas-json``, ``--gaamas-save``, ``python -m pytest_gaamas report``).

Format 3, the current one. A JSON object (gzip-compressed when the file name ends in ``.gz``)::

    format       3
    run          provenance: plugin, python, platform, models (spec, digest, server), seed,
                 trials ("paper" or N), temperature ("paper" or T), record mode, started, finished
    scores       [Score]: one per table cell an item reported (``report.Score.to_json``): behaviour,
                 test_id, model, variant, metric, score, ci [low, high], n, invalid, verdict ("met",
                 "missed", "inconclusive", or null for a descriptive row), passed (true when met,
                 else false; null for a descriptive row), criterion, table, columns, cells, details,
                 row, row_rank, kind ("rate" or "mean"), sample (the observations), worse, verdict_label,
                 unit, figures ([figures.Figure]: where the score is drawn)
    references   [ReferenceRow]: table, label, cells, source, status (of people's and benchmark rows)
    tables       [{title, headers, rows}]: the tables as the terminal showed them
    plays        {play id: Play}: every game an item played, whole (below); items that replay the
                 same cells (a criterion over another item's trials) share one play
    items        [{test_id, behaviour, model, variant, outcome, plays: [play id]}]: outcome is
                 "passed", "missed" or "inconclusive" (a criterion not met, reported), "failed",
                 "skipped" or "" (unknown)
    findings     [{test_id, verdict, finding}]: the one-line finding of each criterion not met, and
                 its verdict ("missed" or "inconclusive")
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
"""

from __future__ import annotations

import gzip
import json
import math
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import safejson
from .errors import UnreadableFile
from .report import ReferenceRow, Score

FORMAT = 3
OUTCOMES = ("passed", "missed", "inconclusive", "failed", "skipped")


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
    trials: list[dict[str, Any]]
    strategy: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {**vars(self), "trials": [{**t, "rounds": _shared_compacted(t.get("rounds", []))} for t in self.trials]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Play:
        play = cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})
        play.trials = [{**t, "rounds": _shared_expanded(t.get("rounds", []))} for t in play.trials]
        return play


def _shared_compacted(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each round's request without the messages it repeats from an earlier round of its trial (a
    conversation resends all of them every round; two players alternate rounds): ``shared`` says
    which earlier round, and how many of its first messages this one begins with."""
    out: list[dict[str, Any]] = []
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


def _shared_expanded(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, round_ in enumerate(rounds):
        earlier, shared = round_.get("shared", (None, 0))
        if shared and not (type(earlier) is int and 0 <= earlier < index and type(shared) is int
                           and 0 < shared <= len(out[earlier]["messages"])):  # fmt: skip
            raise ValueError(f"round {index} shares {shared!r} messages with round {earlier!r}, which it cannot")
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

    def cassette(self, relative_path: str) -> None:
        with self._lock:
            self.cassettes_used.add(relative_path)

    def to_json(self) -> dict[str, Any]:
        return {
            "scores": [s.to_json() for s in self.scores],
            "references": [r.to_json() for r in self.references],
            "plays": {key: p.to_json() for key, p in self.plays.items()},
            "items": [i.to_json() for i in self.items.values()],
            "cassettes": sorted(self.cassettes_used),
        }

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

    @property
    def has_transcripts(self) -> bool:
        return bool(self.plays)


def document(
    *, run: Mapping[str, Any], collector: Collector, tables: Iterable[Mapping[str, Any]],
    outcomes: Mapping[str, str], findings: Iterable[tuple[str, str, str]], comparison: Mapping[str, Any] | None = None,
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
    return data


def _finding(data: Mapping[str, Any]) -> dict[str, str]:
    """A finding read back; one saved before there were three verdicts was a missed one."""
    finding = {"verdict": "missed", **data}
    if finding["verdict"] not in ("missed", "inconclusive"):
        raise ValueError(f"a finding's verdict is missed or inconclusive, got {finding['verdict']!r}")
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


def dumps(data: Mapping[str, Any], path: Path) -> bytes:
    """The document as the file at ``path`` holds it: JSON, gzip-compressed for a ``.gz`` name."""
    text = json.dumps(data, ensure_ascii=False) + "\n"
    raw = text.encode("utf-8")
    return gzip.compress(raw, compresslevel=6, mtime=0) if path.suffix == ".gz" else raw


def read(path: Path) -> RunLog:
    """A run log from disk, either format; one line naming the file and what to do when it cannot be read."""
    remedy = "write it again with --gaamas-json=PATH or --gaamas-save=NAME"
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise UnreadableFile(f"{path}: no such run log; {remedy}") from None
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as error:
        raise UnreadableFile(f"{path}: cannot read this run log ({getattr(error, 'strerror', None) or error}); {remedy}") from None
    return parse(text, path)


def parse(text: str, path: Path | None = None) -> RunLog:
    name = path or "run log"
    remedy = "write it again with --gaamas-json=PATH or --gaamas-save=NAME"
    try:
        data = safejson.loads(text)
    except safejson.JSONError as error:
        raise UnreadableFile(f"{name}: not a run log ({error}); {remedy}") from None
    if not isinstance(data, dict) or not isinstance(data.get("scores"), list):
        raise UnreadableFile(f"{name}: not a run log (no scores); {remedy}")
    version = data.get("format", 1)
    if type(version) is not int or version > FORMAT:
        raise UnreadableFile(f"{name}: run log format {version!r} is newer than this pytest-gaamas reads ({FORMAT}); upgrade pytest-gaamas")
    try:
        return RunLog(
            format=version,
            run=dict(data.get("run") or {}),
            scores=[Score.from_json(s) for s in data["scores"]],
            references=[ReferenceRow(**r) for r in data.get("references", [])],
            plays={key: Play.from_json(p) for key, p in (data.get("plays") or {}).items()},
            items=[ItemLog.from_json(i) for i in data.get("items", [])],
            findings=[_finding(f) for f in data.get("findings", [])],
            comparison=data.get("comparison"),
            path=path,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise UnreadableFile(f"{name}: a damaged run log ({error.__class__.__name__}: {str(error)[:120]}); {remedy}") from None
