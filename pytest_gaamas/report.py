"""Scores, and the paper-style tables made from them once, on the controller."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tabulate import tabulate

from .stats import Estimate

#: Row order within a model, as in the PyGAAMAS tables.
GENERATION_ORDER = ("strategy", "actions", "actions + CR", "actions + ano")
NO_VALUE = "-"


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
    passed: bool | None  # None: a descriptive row, no verdict
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

    @property
    def generation(self) -> str:
        return str(self.variant.get("generation", "actions"))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ci"] = list(self.ci)
        data["columns"] = list(self.columns)
        data["sample"] = list(self.sample)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Score:
        return cls(**{
            **data, "ci": tuple(data["ci"]), "columns": tuple(data["columns"]), "sample": tuple(data.get("sample", ())),
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

    def render(self) -> str:
        lines = [tabulate(self.rows, headers=self.headers, tablefmt="github", disable_numparse=True)]
        lines += [f"pass: {c}" for c in self.criteria]
        lines += [f"source: {s}" for s in self.sources]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "headers": list(self.headers), "rows": [list(r) for r in self.rows]}


def _model_rank(model: str, model_order: Sequence[str]) -> tuple[int, str]:
    return (model_order.index(model) if model in model_order else len(model_order), model)


def _generation_rank(generation: str) -> tuple[int, str]:
    rank = GENERATION_ORDER.index(generation) if generation in GENERATION_ORDER else len(GENERATION_ORDER)
    return (rank, generation)


def build_tables(
    scores: Iterable[Score], references: Iterable[ReferenceRow], model_order: Sequence[str]
) -> list[Table]:
    """One table per title; rows model x generation (x the behaviour's own row labels) in a fixed
    order, so -n 2 prints the same."""
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
        if "n" not in columns:  # every table says how many observations and how many were unusable
            columns = (*columns, "n per cell", "invalid")
            for key, scores in counted.items():
                rows[key] |= {"n per cell": "/".join(sorted({str(s.n) for s in scores}, key=int)),
                              "invalid": str(sum(s.invalid for s in scores))}  # fmt: skip
        keys = sorted(rows, key=lambda k: (_model_rank(k[0], model_order), _generation_rank(k[1]), ranks[k], k[2:]))
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
            )
        )
    return tables


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
