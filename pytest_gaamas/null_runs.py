"""How many "met" verdicts an agent that never reads the game earns in each table, measured.

A verdict is only as good as the rate at which it is earned by chance. Each table's cells are
corrected as a family, but what a reader needs beside the table is the figure itself: over seeded
whole-suite runs of the null agents (``reference:random`` and blind agents, which answer from the
prompt's surface), how many of the table's cells each earned "met", per run, and in how many runs
any cell did. ``python -m pytest_gaamas null-rates`` measures it; the shipped behaviours' figures
live in ``data/null_met.json``, keyed by table title and tied to each behaviour file's text by a
digest, so a behaviour changed since its measurement shows as stale instead of as a figure that no
longer describes it. ``NullRates.updated`` merges a measurement of some behaviours into the figures of
all, so that one behaviour changed is measured again alone, at the same seeds.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

FORMAT = 1
GAMES = "pytest_gaamas.games"
#: The shipped figures' plan: the coin at 20 seeds; blind agents that flip coins at 5; blind agents
#: whose every answer is fixed by the request (a constant across the range, an option by its place,
#: a label, what the prompt names or numbers first or last, a hash of its whole wording or of its
#: last message alone) at 3, as the games' counterbalancing draws from the seed.
SHIPPED_PLAN = {
    "reference:random": tuple(range(1, 21)),
    **{f"reference:blind-coin-{p}": tuple(range(1, 6)) for p in ("0.25", "0.75")},
    **{f"reference:blind-{rule}": (1, 2, 3) for rule in (
        "at-0", "at-0.25", "at-0.5", "at-0.75", "at-1", "option-2", "option-2-from-end", "sorts-first", "sorts-last",
        "named-first", "named-last", "number-first", "number-last", "hash-1", "hash-2", "hash-3", "hash-1-last",
        "hash-2-last", "hash-3-last")},
}  # fmt: skip
SHIPPED_FILE = "null_met.json"
#: The positive controls beside them: readers that err (``reference:reader-E``), measured by the same
#: command into their own file, so that the null runs' checks read null agents alone. Their plan: the
#: perfect reader and the two error rates the suite's sensitivity is stated at, each at 3 seeds.
READERS_PLAN = {f"reference:reader-{error}": (1, 2, 3) for error in ("0", "0.1", "0.3")}
READERS_FILE = "reader_met.json"
READER_PREFIX = "reference:reader-"


@dataclass(frozen=True)
class TableNull:
    """One table's figures over the null runs, for one agent."""

    cells: int
    #: Mean number of cells judged "met" per run.
    met_per_run: float
    #: Runs in which at least one cell was judged "met".
    runs_with_met: int
    runs: int


@dataclass(frozen=True)
class NullRates:
    agents: tuple[str, ...]
    seeds: tuple[int, ...]
    #: Table title -> agent spec -> its figures.
    tables: Mapping[str, Mapping[str, TableNull]]
    #: Behaviour name -> the digest of its file's text when measured.
    behaviours: Mapping[str, str]
    #: Table title -> the behaviour that draws it.
    table_behaviour: Mapping[str, str] = field(default_factory=dict)
    #: Agent -> for each of its runs, the test ids it met there: what a suite-wide false-"met" rate
    #: (the runs in which an agent met anything it cannot have) is counted from.
    met_in_runs: Mapping[str, list[list[str]]] = field(default_factory=dict)
    #: Table title -> every behaviour whose cells are in it (a table may gather several, as the fidelity
    #: table does); where not recorded, the one that draws it.
    table_drawn_by: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def drawn_by(self, title: str) -> tuple[str, ...]:
        """The behaviours whose cells the table ``title`` gathers."""
        if title in self.table_drawn_by:
            return tuple(self.table_drawn_by[title])
        return (self.table_behaviour[title],) if title in self.table_behaviour else ()

    def sharing(self, behaviours: Iterable[str]) -> set[str]:
        """``behaviours`` and every behaviour that draws a table with one of them: what measuring them
        again must measure, for their tables' figures to count every cell."""
        found = set(behaviours)
        while True:
            more = {b for title in self.tables for b in self.drawn_by(title) if found & set(self.drawn_by(title))}
            if more <= found:
                return found
            found |= more

    def updated(self, measured: NullRates) -> NullRates:
        """These figures with those of the behaviours ``measured`` played replaced by its own: their
        tables, their digests and, in each of an agent's runs, what it met in them. The runs are the
        same runs (seed by seed), so ``measured`` must have played the same agents at the same seeds."""
        if set(measured.agents) != set(self.agents) or tuple(measured.seeds) != tuple(self.seeds):
            raise ValueError(f"measured with agents {sorted(measured.agents)} at seeds {list(measured.seeds)}, where the figures "
                             f"to update have {sorted(self.agents)} at {list(self.seeds)}: an update plays the same plan")
        again = set(measured.behaviours)
        if unmeasured := self.sharing(again) - again:
            raise ValueError(f"{sorted(again)} share tables with {sorted(unmeasured)}: measure them together")
        kept = {title for title in self.tables if not again & set(self.drawn_by(title))}
        runs = {}
        for agent, old in self.met_in_runs.items():
            new = measured.met_in_runs.get(agent, [[] for _ in old])
            if len(new) != len(old):
                raise ValueError(f"{agent} played {len(new)} runs, where the figures to update have {len(old)}")
            runs[agent] = [sorted([t for t in before if behaviour_of(t) not in again] + after) for before, after in zip(old, new)]
        return NullRates(
            self.agents, self.seeds, {title: self.tables[title] for title in kept} | dict(measured.tables),
            dict(self.behaviours) | dict(measured.behaviours),
            {t: b for t, b in self.table_behaviour.items() if t in kept} | dict(measured.table_behaviour), runs,
            {t: self.drawn_by(t) for t in kept} | {t: measured.drawn_by(t) for t in measured.tables},
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "agents": list(self.agents),
            "seeds": list(self.seeds),
            "behaviours": dict(self.behaviours),
            "met_in_runs": dict(sorted(self.met_in_runs.items())),
            "tables": {
                title: {
                    "behaviour": self.table_behaviour.get(title),
                    "drawn_by": list(self.drawn_by(title)),
                    "agents": {a: vars(f) for a, f in per_agent.items()},
                }
                for title, per_agent in sorted(self.tables.items())
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NullRates:
        if data.get("format") != FORMAT:
            raise ValueError(f"null rates of format {data.get('format')!r}; this plugin reads format {FORMAT}")
        tables = {title: {a: TableNull(**f) for a, f in entry["agents"].items()} for title, entry in data["tables"].items()}
        return cls(
            agents=tuple(data["agents"]), seeds=tuple(data["seeds"]), tables=tables, behaviours=dict(data["behaviours"]),
            table_behaviour={title: entry["behaviour"] for title, entry in data["tables"].items() if entry.get("behaviour")},
            met_in_runs=dict(data.get("met_in_runs") or {}),
            table_drawn_by={title: tuple(entry["drawn_by"]) for title, entry in data["tables"].items() if entry.get("drawn_by")},
        )  # fmt: skip

    def stale(self, behaviour: str, digest: str | None) -> bool:
        """Whether ``behaviour``'s file, or a game it imports, has changed (or is unknown) since these figures were measured."""
        return digest is None or self.behaviours.get(behaviour) != digest


def file_digest(path: Path) -> str:
    """The digest of a behaviour as its null figures were measured: its file's and the source of every
    game module it imports, so that a game told or scored otherwise (a prompt reworded, a seed
    derived anew) marks the figures stale as a change to the file does."""
    digest = hashlib.sha256(path.read_bytes())
    for module in games_imported(path):
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.origin is not None and Path(spec.origin).is_file():
            digest.update(f"\n{module}\n".encode() + Path(spec.origin).read_bytes())
    return digest.hexdigest()[:16]


def games_imported(path: Path) -> list[str]:
    """The modules of ``pytest_gaamas.games`` that the file ``path`` imports, sorted by name."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] if node.module.startswith(GAMES + ".") else []
            if node.module == GAMES:
                names = [f"{GAMES}.{alias.name}" for alias in node.names]
            found += [n for n in names if n not in found]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith(GAMES + ".") and a.name not in found]
    return sorted(found)


def behaviour_digests(files: Iterable[Path]) -> dict[str, str]:
    return {path.stem.removeprefix("test_"): file_digest(path) for path in files}


def behaviour_of(test_id: str) -> str:
    """The behaviour a test id belongs to: ``behaviours/test_dictator_preferences.py::...`` is dictator_preferences."""
    return Path(test_id.split("::")[0]).stem.removeprefix("test_")


def drawers(documents: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, ...]]:
    """Each judged table's behaviours, over run logs."""
    found: dict[str, set[str]] = {}
    for document in documents:
        for score in document["scores"]:
            if score.get("verdict") is not None:
                found.setdefault(score["table"], set()).add(score["behaviour"])
    return {title: tuple(sorted(behaviours)) for title, behaviours in found.items()}


def tally(documents: Sequence[Mapping[str, Any]]) -> tuple[dict[str, dict[str, TableNull]], dict[str, str]]:
    """Each table's "met" verdicts per agent over run logs (one a seed, each with any null agents), as
    ``TableNull`` figures: an agent's runs are the logs it played in."""
    runs: dict[str, int] = {}
    met: dict[tuple[str, str], list[int]] = {}
    cells: dict[tuple[str, str], int] = {}
    owner: dict[str, str] = {}
    for document in documents:
        played = {score["model"] for score in document["scores"]}
        for agent in played:
            runs[agent] = runs.get(agent, 0) + 1
        this_run: dict[tuple[str, str], int] = {}
        judged: dict[tuple[str, str], int] = {}
        for score in document["scores"]:
            if score.get("verdict") is None:
                continue
            key = (score["table"], score["model"])
            owner.setdefault(score["table"], score["behaviour"])
            this_run[key] = this_run.get(key, 0) + (score["verdict"] == "met")
            judged[key] = judged.get(key, 0) + 1
        for key, count in this_run.items():
            cells[key] = max(cells.get(key, 0), judged[key])
            met.setdefault(key, []).append(count)
    tables: dict[str, dict[str, TableNull]] = {}
    for (table, agent), counts in met.items():
        total = runs[agent]
        tables.setdefault(table, {})[agent] = TableNull(cells[table, agent], sum(counts) / total, sum(n > 0 for n in counts), total)
    return tables, owner


def measure(
    files: Sequence[Path], plan: Mapping[str, Sequence[int]], *, workers: int = 2, progress=print,
) -> NullRates:  # fmt: skip
    """Play ``files`` offline with each agent of ``plan`` at each of its seeds (one pytest run a seed,
    with every agent planned at that seed) and count the "met" verdicts of each table. An agent whose
    answers draw nothing at random needs few seeds; a coin needs many."""
    documents = []
    seeds = sorted({seed for planned in plan.values() for seed in planned})
    with tempfile.TemporaryDirectory(prefix="gaamas-null-") as folder:
        for seed in seeds:
            agents = [agent for agent, planned in plan.items() if seed in planned]
            log = Path(folder) / f"seed-{seed}.json"
            command = [
                sys.executable, "-m", "pytest", *map(str, files), "-q", "-p", "no:cacheprovider", f"--gaamas-seed={seed}",
                f"--gaamas-json={log}", f"--gaamas-journal-dir={Path(folder) / 'journal'}", "--gaamas-record=none",
                *(f"--gaamas-model={agent}" for agent in agents), *(("-n", str(workers)) if workers > 1 else ()),
            ]  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "CI": "true"})
            if not log.exists():
                raise RuntimeError(f"the null run at seed {seed} wrote no run log (exit {done.returncode}): {done.stdout[-2000:]}")
            documents.append(json.loads(log.read_text()))
            met = sum(s.get("verdict") == "met" for s in documents[-1]["scores"])
            progress(f"seed {seed}: {len(agents)} agents, {met} cells met")
    tables, owner = tally(documents)
    return NullRates(tuple(plan), tuple(seeds), tables, behaviour_digests(files), owner, met_in_runs(documents), drawers(documents))


def met_in_runs(documents: Sequence[Mapping[str, Any]]) -> dict[str, list[list[str]]]:
    """For each agent, the test ids it met in each run it played."""
    runs: dict[str, list[list[str]]] = {}
    for document in documents:
        met: dict[str, list[str]] = {score["model"]: [] for score in document["scores"]}
        for score in document["scores"]:
            if score.get("verdict") == "met":
                met[score["model"]].append(score["test_id"])
        for agent, ids in met.items():
            runs.setdefault(agent, []).append(sorted(ids))
    return runs


@lru_cache(maxsize=2)
def shipped(name: str = SHIPPED_FILE) -> NullRates | None:
    """The shipped behaviours' figures (the null agents', or ``READERS_FILE``'s readers'), or None
    where the package has none."""
    path = resources.files("pytest_gaamas.data") / name
    if not path.is_file():
        return None
    return NullRates.from_json(json.loads(path.read_text()))


def for_tables(titles: Iterable[str], digests: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """The shipped figures of the tables ``titles``, as a run log keeps them: the null agents' and the
    readers', each table marked stale where a behaviour's file (``digests``: behaviour -> digest of
    the file this run played) has changed since either was measured."""
    found: dict[str, dict[str, Any]] = {}
    for rates in filter(None, (shipped(SHIPPED_FILE), shipped(READERS_FILE))):
        for title in titles:
            per_agent = rates.tables.get(title)
            if per_agent:
                played = [b for b in rates.drawn_by(title) if b in digests] or [rates.table_behaviour.get(title, "")]
                entry = found.setdefault(title, {"agents": {}, "stale": False})
                entry["agents"] = dict(sorted((entry["agents"] | {agent: vars(f) for agent, f in per_agent.items()}).items()))
                entry["stale"] = entry["stale"] or any(rates.stale(b, digests.get(b)) for b in played)
    return found


def note(entry: Mapping[str, Any]) -> str:
    """A table's figures in words, under it: the coin's, the most any blind agent earned, and the share
    of the perfect reader's "met" verdicts that readers that err earn too."""
    agents = entry["agents"]

    def said(agent: str) -> str:
        f = agents[agent]
        return f"{f['met_per_run']:.2g} a run (in {f['runs_with_met']} of {f['runs']} runs)"

    parts = [f"reference:random {said('reference:random')}"] if "reference:random" in agents else []
    blind = [a for a in agents if a != "reference:random" and not a.startswith(READER_PREFIX)]
    if blind:
        worst = max(blind, key=lambda a: (agents[a]["met_per_run"], a))
        parts.append(f"of {len(blind)} blind agents, at most {said(worst)}, {worst.removeprefix('reference:')}")
    stale = "; measured before this behaviour last changed: measure again with python -m pytest_gaamas null-rates"
    said_null = ("met without reading the game, in seeded null runs: " + "; ".join(parts)) if parts else ""
    return "; ".join(filter(None, (said_null, reader_note(agents)))) + (stale if entry.get("stale") else "")


def reader_note(agents: Mapping[str, Mapping[str, Any]]) -> str:
    """The readers' sensitivity in words: of the cells the perfect reader meets a run, the share each
    reader that errs meets; empty where they were not measured, or the perfect reader meets nothing."""
    perfect = agents.get(f"{READER_PREFIX}0")
    if not perfect or not perfect["met_per_run"]:
        return ""
    erring = sorted((a for a in agents if a.startswith(READER_PREFIX) and a != f"{READER_PREFIX}0"), key=lambda a: float(a.removeprefix(READER_PREFIX)))
    shares = [f"{min(1.0, agents[a]['met_per_run'] / perfect['met_per_run']):.2f} ({float(a.removeprefix(READER_PREFIX)):.0%} errors)"
              for a in erring]  # fmt: skip
    return (f"readers that err met {' and '.join(shares)} of the {perfect['met_per_run']:.3g} cells a run the perfect reader meets"
            if shares else "")
