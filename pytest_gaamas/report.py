"""Scores, and the paper-style tables made from them once, on the controller."""

from __future__ import annotations

import math
import re
import statistics
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import tabulate as tabulate_module
from tabulate import tabulate

from . import inert, null_runs
from .figures import Figure
from .stats import Estimate
from .verdicts import Verdict

#: Row order within a model, as in the PyGAAMAS tables.
GENERATION_ORDER = ("strategy", "actions", "actions + CR", "actions + ano")
NO_VALUE = "-"
#: What a table is fitted to when the terminal's width is not known; and how narrow a column may get.
TABLE_WIDTH = 120
MIN_COLUMN_WIDTH = 5


def cell(estimate: Estimate, digits: int = 2) -> str:
    """``0.83 [0.80, 0.86]``, or the paper's ``-`` when nothing valid was measured."""
    if estimate.n == 0 or math.isnan(estimate.value):
        return NO_VALUE
    return f"{estimate.value:.{digits}f} [{estimate.low:.{digits}f}, {estimate.high:.{digits}f}]"


def p_value_text(p: float) -> str:
    """A p-value as a reader wants it: three decimals, and "< 0.001" below that."""
    if math.isnan(p):
        return NO_VALUE
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def p_stated(p: float, name: str = "p") -> str:
    """A p-value in a sentence: ``p = 0.012``, ``p < 0.001``, ``one-sided p = 0.300``."""
    text = p_value_text(p)
    return f"{name} {text}" if text.startswith("<") else f"{name} = {text}"


def invalid_note(invalid: int, word: str = "invalid") -> str:
    """`` (3 invalid)`` after a cell whose answers were not all usable; nothing when all were."""
    return f" ({invalid} {word})" if invalid else ""


@dataclass(frozen=True)
class Score:
    """What one test item measured: one table cell (or one row's worth of columns), with its verdict."""

    behaviour: str
    test_id: str
    model: str
    variant: dict[str, Any]
    metric: str
    score: float | None
    ci: tuple[float | None, float | None]
    n: int
    invalid: int
    passed: bool | None  # True only when the verdict is met; None: a descriptive row, no verdict
    criterion: str
    table: str
    columns: tuple[str, ...]
    cells: dict[str, str]
    details: dict[str, Any] = field(default_factory=dict)
    #: Row labels beyond model and generation (an opponent, a round), and where the row sorts among them.
    row: dict[str, str] = field(default_factory=dict)
    row_rank: int = 0
    #: "rate" or "mean", and the observations behind the score: what a later run is compared with.
    kind: str = "mean"
    sample: tuple[float, ...] = ()
    #: Which way is worse, for gating: "down" (a drop is a regression), "up", or "both" (any change).
    worse: str = "down"
    #: The verdict in the behaviour's own word, where it has one (fidelity: faithful, inconclusive...).
    verdict_label: str = ""
    #: What the score counts, for the allowances of gating: "rate", "dollars", "CCEI", "points", or ""
    #: for a statistic without one (a trend z, a distance), which only a behaviour's allowance gates.
    unit: str = ""
    #: Where the score is drawn in the report (``pytest_gaamas.figures``).
    figures: tuple[Figure, ...] = ()
    #: Met, missed, at chance or inconclusive; None for a descriptive row. Given alone it sets ``passed``;
    #: left out (a score made or saved before there were three verdicts) it is read from ``passed``.
    verdict: Verdict | None = None
    #: What the verdict was decided on, where a helper decided it (``verdicts.Judgement.as_json``): the
    #: table's size (``family``), the table-adjusted interval (``ci``) and its ``confidence`` where it
    #: was widened, and ``chance``, ``chance_margin`` and ``chance_ci`` (the 90% interval) at chance.
    #: None for a score saved before tables were families, or decided without a helper.
    adjusted: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.verdict is not None and not isinstance(self.verdict, str):
            raise ValueError(f"a score's verdict is met, missed, at chance, inconclusive or None, got {self.verdict!r}")
        verdict = Verdict.of(self.verdict)
        if verdict is None:
            verdict = Verdict.of(self.passed)
        elif self.passed is not None and self.passed != (verdict is Verdict.MET):
            raise ValueError(f"a score cannot be passed={self.passed} with the verdict {verdict}")
        object.__setattr__(self, "verdict", verdict)
        object.__setattr__(self, "passed", None if verdict is None else verdict is Verdict.MET)

    @property
    def generation(self) -> str:
        return str(self.variant.get("generation", "actions"))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ci"] = list(self.ci)
        data["columns"] = list(self.columns)
        data["sample"] = list(self.sample)
        data["figures"] = [f.to_json() for f in self.figures]
        data["verdict"] = None if self.verdict is None else self.verdict.value
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Score:
        return cls(**{
            **data, "ci": tuple(data["ci"]), "columns": tuple(data["columns"]), "sample": tuple(data.get("sample", ())),
            "figures": tuple(Figure.from_json(f) for f in data.get("figures", ())),
        })  # fmt: skip

    def estimate(self) -> Estimate:
        """The score as an estimate again, for comparing it with another run's."""
        value = math.nan if self.score is None else self.score
        low, high = (math.nan if x is None else x for x in self.ci)
        valid = 0 if self.score is None else len(self.sample) or self.n - self.invalid
        return Estimate(value, low, high, valid, self.kind, self.sample)


@dataclass(frozen=True)
class ReferenceRow:
    """A row of published or computed figures (humans, random choice) shown under the models."""

    table: str
    label: str
    cells: dict[str, str]
    source: str
    status: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Table:
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    criteria: tuple[str, ...]
    sources: tuple[str, ...]
    #: How many leading columns label a row (model, generation, the behaviour's row labels): a table
    #: printed in parts repeats them in each.
    labels: int = 1
    #: Whether a score of the table carries a verdict: the terminal prints such tables by default.
    judged: bool = False
    #: How the verdicts were reached beyond the criteria: the intervals widened to the table's family,
    #: what a cell at chance was shown within.
    notes: tuple[str, ...] = ()

    def render(self, width: int = TABLE_WIDTH) -> str:
        """The table within ``width`` columns where it can be, no value ever split over two lines.
        Headers wrap at spaces to their column's values; then, while the table is too wide, the
        widest column that can still wrap does, one character narrower: an interval goes under its
        value, a label over two lines, no word and no interval cut. If that is not enough, the table
        is printed in parts, each with the row labels and as many further columns as fit. The notes
        wrap too."""
        rows = [[inert.terminal(value) for value in row] for row in self.rows]  # a cell may hold a model's text
        headers = [inert.terminal(header) for header in self.headers]
        text = _fitted(rows, headers, width)
        if _width(text) > width and len(headers) > self.labels + 1:
            text = "\n\n".join(_fitted(_columns(rows, part), _columns([headers], part)[0], width) for part in self._parts(rows, headers, width))
        notes = [inert.terminal(f"met when: {c}") for c in self.criteria] + [inert.terminal(n) for n in self.notes]
        notes += [inert.terminal(f"source: {s}") for s in self.sources]
        wrapped = [textwrap.fill(note, width, subsequent_indent="    ") for note in notes]
        return "\n".join([text, *wrapped])

    def _parts(self, rows, headers, width: int) -> list[list[int]]:
        """The columns of each part: the labels, then an even share of the other columns, in order,
        in as few parts as the narrowest each column can be (its longest word or interval) allows."""
        floors = _floors(rows, headers)
        labels = list(range(self.labels))
        others = list(range(self.labels, len(headers)))

        def fits(part: list[int]) -> bool:
            return sum(floors[i] for i in labels + part) + 2 * (len(labels) + len(part) - 1) <= width

        for count in range(2, len(others) + 1):
            size = math.ceil(len(others) / count)
            parts = [others[i:i + size] for i in range(0, len(others), size)]
            if all(fits(part) for part in parts):
                break
        return [labels + part for part in parts]

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "headers": list(self.headers), "rows": [list(r) for r in self.rows]}


def _columns(rows, columns: list[int]) -> list[list[str]]:
    return [[row[i] for i in columns] for row in rows]


NBSP = "\u00a0"
#: What must not be split over two lines: an interval, a parenthesised note.
_KEEP_TOGETHER = re.compile(r"\[[^\]]*\]|\([^)]*\)")


def _kept_together(rows) -> list[list[str]]:
    """Each interval and parenthesised note as one word, so that no wrapping splits it."""
    return [[_KEEP_TOGETHER.sub(lambda m: m.group(0).replace(" ", NBSP), str(v)) for v in row] for row in rows]


def _longest(values, split: bool = False) -> int:
    return max((len(part) for value in values for line in value.splitlines()
                for part in (line.split(" ") if split else [line])), default=0)  # fmt: skip


def _floors(rows, headers) -> list[int]:
    """The narrowest each column can be: its longest word or interval, or its header's longest word."""
    rows = _kept_together(rows)
    return [max(_longest([str(header)], split=True), _longest([str(row[i]) for row in rows], split=True), MIN_COLUMN_WIDTH)
            for i, header in enumerate(headers)]  # fmt: skip


def _fitted(rows, headers, width: int) -> str:
    """The table at the widest *level* that fits: every column whose longest line is over the level
    wraps at it (or at its longest word, if that is longer). Lowering the level one character at a
    time and rendering the table at each, as this once did, took time quadratic in a cell's length (a
    6 KB model name: a minute); the levels at which even the narrowest wrapping could not fit are
    skipped unrendered, so only the few at the boundary are rendered."""
    rows = _kept_together(rows)
    columns = [[str(row[i]) for row in rows] for i in range(len(headers))]
    values = [_longest(column) for column in columns]
    header_words = [_longest([str(header)], split=True) for header in headers]
    floors = _floors(rows, headers)
    # How much narrower than its wrapping width a wrapped line can be: the word, and the spaces
    # before it, that did not fit on the line.
    slack = [_longest(column, split=True) + max((len(run) for value in column for run in _SPACES.findall(value)), default=0)
             for column in columns]  # fmt: skip
    wraps = [i for i in range(len(headers)) if values[i] > floors[i]]

    def caps(level: int) -> list[int | None]:
        return [max(level, floors[i]) if i in wraps and values[i] > level else None for i in range(len(headers))]

    def render(level: int) -> str:
        cells = caps(level)
        header_widths = [max(values[i] if cap is None else cap, floors[i]) for i, cap in enumerate(cells)]
        return _tabulate_unpadded(rows, headers, cells, header_widths).replace(NBSP, " ")

    def least_width(level: int) -> int:
        """No rendering at ``level`` is narrower: a wrapped column loses at most its slack."""
        least = [max(values[i] if cap is None else cap - slack[i], header_words[i]) for i, cap in enumerate(caps(level))]
        return sum(least) + 2 * (len(headers) - 1)

    top = max((values[i] for i in wraps), default=0)
    bottom = min((floors[i] for i in wraps), default=top)
    text = render(top)
    if _width(text) <= width or not wraps:
        return text
    low, high = bottom, top - 1  # the widest level whose least width fits, or the bottom
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if least_width(middle) <= width else (low, middle - 1)
    for level in range(low, bottom - 1, -1):
        text = render(level)
        if _width(text) <= width:
            break
    return text


_SPACES = re.compile(" +")


def _tabulate_unpadded(rows, headers, cells: list[int | None], header_widths: list[int]) -> str:
    """tabulate's "simple" format, without the two spaces it adds to every header's width (its
    columns are already two spaces apart), so that a narrow column stays narrow."""
    padding, tabulate_module.MIN_PADDING = tabulate_module.MIN_PADDING, 0
    try:
        return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True,
                        maxcolwidths=cells, maxheadercolwidths=header_widths)  # fmt: skip
    finally:
        tabulate_module.MIN_PADDING = padding


def _width(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def _row_verdict(scores: Sequence[Score]) -> str:
    """One way of showing verdicts in every table: met, missed, at chance or inconclusive, or how many
    of the row's cells are each ("2 met, 1 inconclusive")."""
    counts = {verdict: count for verdict, count in verdict_counts(scores).items() if count}
    if not counts:
        return NO_VALUE
    if len(scores) == 1 and scores[0].verdict_label:
        return scores[0].verdict_label
    if len(counts) == 1:
        return str(next(iter(counts)))
    return ", ".join(f"{count} {verdict}" for verdict, count in counts.items())


def verdict_counts(scores: Iterable[Score]) -> dict[Verdict, int]:
    """How many scores are met, missed, at chance and inconclusive (descriptive rows left out), in that order."""
    judged = [s.verdict for s in scores if s.verdict is not None]
    return {verdict: judged.count(verdict) for verdict in Verdict}


def reached(counts: dict[Verdict, int]) -> dict[Verdict, int]:
    """The counts a run's summary says: met, missed and inconclusive always, at chance where a cell
    was (a run whose behaviours give no chance level, or one saved before there were four verdicts,
    is not told of a verdict it could not reach)."""
    return {verdict: count for verdict, count in counts.items() if count or verdict is not Verdict.AT_CHANCE}


def _per_cell(values: Sequence[int]) -> str:
    """A count for each cell of a row: one number when they agree, else one per cell, in column order."""
    distinct = set(values)
    return str(values[0]) if len(distinct) == 1 else "/".join(str(v) for v in values)


def _model_rank(model: str, model_order: Sequence[str]) -> tuple[int, str]:
    return (model_order.index(model) if model in model_order else len(model_order), model)


def generation_rank(generation: str) -> tuple[int, str]:
    rank = GENERATION_ORDER.index(generation) if generation in GENERATION_ORDER else len(GENERATION_ORDER)
    return (rank, generation)


def build_tables(
    scores: Iterable[Score], references: Iterable[ReferenceRow], model_order: Sequence[str],
    null_rates: Mapping[str, Any] | None = None,
) -> list[Table]:  # fmt: skip
    """One table per title; rows model x generation (x the behaviour's own row labels) in a fixed
    order, so -n 2 prints the same. ``null_rates`` (the run log's): what agents that never read the
    game earn in each table, said under it."""
    by_title: dict[str, list[Score]] = {}
    for score in scores:
        by_title.setdefault(score.table, []).append(score)
    refs: dict[str, dict[str, ReferenceRow]] = {}
    for ref in references:
        refs.setdefault(ref.table, {})[ref.label] = ref

    tables = []
    for title in sorted(by_title):
        items = by_title[title]
        columns = items[0].columns
        row_labels = tuple(items[0].row)
        rows: dict[tuple, dict[str, str]] = {}
        ranks: dict[tuple, int] = {}
        counted: dict[tuple, list[Score]] = {}
        for score in sorted(items, key=lambda s: s.test_id):
            key = (score.model, score.generation, *(score.row.get(label, "") for label in row_labels))
            rows.setdefault(key, {}).update(score.cells)
            counted.setdefault(key, []).append(score)
            ranks[key] = score.row_rank
        if "n" not in columns:  # every table says how many observations and how many were unusable, per cell
            columns = (*columns, "n per cell", "invalid per cell")
            for key, scores in counted.items():
                in_order = sorted(scores, key=lambda s: min((columns.index(c) for c in s.cells if c in columns), default=0))
                rows[key] |= {"n per cell": _per_cell([s.n for s in in_order]),
                              "invalid per cell": _per_cell([s.invalid for s in in_order])}  # fmt: skip
        if any(s.verdict is not None for s in items):
            columns = (*columns, "verdict")
            for key, scores in counted.items():
                rows[key]["verdict"] = _row_verdict(scores)
        keys = sorted(rows, key=lambda k: (_model_rank(k[0], model_order), generation_rank(k[1]), ranks[k], k[2:]))
        body = [(*key, *(rows[key].get(c, "") for c in columns)) for key in keys]
        reference_rows = [refs[title][label] for label in sorted(refs.get(title, {}))]
        padding = ("",) * len(row_labels)
        body += [(r.label, f"({r.status})", *padding, *(r.cells.get(c, "") for c in columns)) for r in reference_rows]
        tables.append(
            Table(
                title=title,
                headers=("model", "generation", *row_labels, *columns),
                rows=tuple(body),
                criteria=tuple(sorted({s.criterion for s in items if s.criterion})),
                sources=tuple(f"{r.label}: {r.source}" for r in reference_rows),
                labels=2 + len(row_labels),
                judged=any(s.verdict is not None for s in items),
                notes=_how_judged(items) + ((null_runs.note(null_rates[title]),) if null_rates and title in null_rates else ()),
            )
        )
    return tables


def _how_judged(scores: Sequence[Score]) -> tuple[str, ...]:
    """What the table's intervals were widened to before they were judged, where they were (the table
    shows the 95% intervals, and a reader comparing one with its threshold must know), and what a
    cell at chance was shown within."""
    widened = sorted({(s.adjusted["family"], s.adjusted["confidence"]) for s in scores if s.adjusted and "confidence" in s.adjusted})
    chances = sorted({(s.adjusted["chance"], s.adjusted["chance_margin"]) for s in scores if s.adjusted and "chance" in s.adjusted})
    return tuple(f"judged on the interval widened to {confidence:.2%} from its sample, the {family} cells of the table being one "
                 "family for each model (Bonferroni); the table shows the 95% one" for family, confidence in widened) + tuple(
        f"at chance (not met): the 90% interval within {chance:.3g} +- {margin:.3g}, two one-sided tests" for chance, margin in chances)  # fmt: skip


def dollars_summary(values: Sequence[float], mean: Estimate) -> tuple[str, str, str]:
    """The cells of the seed's violin plots of dollars kept: median, mean [95% CI], distribution."""
    median = f"{statistics.median(values):g}" if values else NO_VALUE
    return median, cell(mean, 1), distribution(values)


SPARKS = " ▁▂▃▄▅▆▇█"


def distribution(values: Sequence[float], low: float = 0, high: float = 100, bins: int = 11) -> str:
    """A whole distribution in one cell: a bar per bin (0-9, 10-19, ..., 100 for dollars), scaled
    to the fullest bin, between the range's ends: ``0 ▁ ▁▂█   ▁ ▃ 100``."""
    if not values:
        return NO_VALUE
    counts = [0] * bins
    width = (high - low) / (bins - 1)
    for v in values:
        counts[min(bins - 1, max(0, int((v - low) // width)))] += 1
    top = max(counts)
    bars = "".join(SPARKS[0] if c == 0 else SPARKS[max(1, round(c / top * (len(SPARKS) - 1)))] for c in counts)
    return f"{low:g} {bars} {high:g}"
