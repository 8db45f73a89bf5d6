"""Scores, and the paper-style tables made from them once, on the controller."""

from __future__ import annotations

import math
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
    passed: bool
    criterion: str
    table: str
    columns: tuple[str, ...]
    cells: dict[str, str]
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def generation(self) -> str:
        return str(self.variant.get("generation", "actions"))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ci"] = list(self.ci)
        data["columns"] = list(self.columns)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Score:
        return cls(**{**data, "ci": tuple(data["ci"]), "columns": tuple(data["columns"])})


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
    """One table per title; rows model x generation in a fixed order, so -n 2 prints the same."""
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
        rows: dict[tuple[str, str], dict[str, str]] = {}
        for score in sorted(items, key=lambda s: s.test_id):
            rows.setdefault((score.model, score.generation), {}).update(score.cells)
        keys = sorted(rows, key=lambda k: (_model_rank(k[0], model_order), _generation_rank(k[1])))
        body = [(model, generation, *(rows[(model, generation)].get(c, "") for c in columns)) for model, generation in keys]
        reference_rows = [refs[title][label] for label in sorted(refs.get(title, {}))]
        body += [(r.label, f"({r.status})", *(r.cells.get(c, "") for c in columns)) for r in reference_rows]
        tables.append(
            Table(
                title=title,
                headers=("model", "generation", *columns),
                rows=tuple(body),
                criteria=tuple(sorted({s.criterion for s in items})),
                sources=tuple(f"{r.label}: {r.source}" for r in reference_rows),
            )
        )
    return tables
