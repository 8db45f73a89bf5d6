"""Where a score is drawn: figures declared by the behaviours, beside their tables.

A behaviour passes ``figures=(Figure(...), ...)`` to ``gaamas.score``; the run log keeps them with
the score, and the report (``pytest_gaamas.drawing``) draws every score that names the same figure
title in one figure, a panel per ``panel``, a series per model (and generation). Nothing here draws:
declarations are plain data, so a run log read years later draws the same figures.

The kinds, each a figure of PyGAAMAS's:

- ``violin``: the distribution of the score's observations (its ``sample``) at category ``x``, one
  violin per series, with the points over it; ``people`` names a distribution of people's choices
  (``pytest_gaamas.people.SOURCES``) drawn beside, ``references`` horizontal lines (random choice).
- ``interval``: the score with its 95% interval at category ``x``; ``references`` are horizontal
  lines (rational, chance, people).
- ``line``: the score with its 95% band at numeric ``x`` (a round, a temperature), a line per series;
  ``references`` are the reference agents' values at the same ``x``, joined into curves.
- ``curve``: the points of ``curve`` ((x, y) pairs: a strategy's answer at every offer), beside the
  empirical distribution function of ``people`` (the share of people whose threshold is at most x).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

VIOLIN, INTERVAL, LINE, CURVE = "violin", "interval", "line", "curve"
KINDS = (VIOLIN, INTERVAL, LINE, CURVE)
#: What a figure's required text is for, said when it is missing.
FIGURE_TEXT = {
    "title": "the figure's title, naming the experiment; every score with the same title is drawn in it",
    "axis": "the y axis's label, in the game's unit ('$ kept of $100', 'rate of X')",
}


class FigureError(ValueError):
    """A figure declared with an argument it cannot be drawn with: one line, naming the argument."""


def __tracebackhide__(excinfo) -> bool:
    """pytest leaves this module's frames out of a FigureError's traceback (the dataclass's own
    ``__init__`` runs in this module's globals): what is shown ends at the behaviour's line."""
    return excinfo.errisinstance(FigureError)


@dataclass(frozen=True)
class Figure:
    #: The figure's title, naming the experiment: scores with the same title are drawn together.
    title: str
    kind: str
    #: The y axis, in the game's unit ("$ kept of $100", "rate of X", "points per round").
    axis: str
    panel: str = ""
    #: A category (violin, interval) or a number (line).
    x: str | float = ""
    x_axis: str = ""
    #: The series within a model (a number of messages, an ablation), shown after the model's name
    #: and coloured alike across models; empty: the generation, where the figure has several.
    series: str = ""
    #: Reference values by label: a horizontal line, or (line) the reference curve's point at ``x``.
    references: Mapping[str, float] = field(default_factory=dict)
    #: A people's distribution by name (``pytest_gaamas.people.SOURCES``), drawn beside.
    people: str = ""
    #: The y axis's range, where the unit has one (0-1 for a rate, 0-100 for dollars).
    limits: tuple[float, float] | None = None
    curve: tuple[tuple[float, float], ...] = ()
    #: Said under the figure: the status of people's figures, what a reference line is.
    note: str = ""

    def __post_init__(self) -> None:
        """Checked where the figure is declared, so that a mistake names the behaviour's own line (in
        one error that names the argument and what it takes) and not the report's drawing at the
        session's end; and where a run log is read, so that no number a renderer cannot draw reaches it."""
        _plain_numbers(self)
        problem = self._problem()
        if problem:
            raise FigureError(f"Figure({self.title!r:.60}): {problem}")

    def _problem(self) -> str | None:
        """What is wrong with this figure's arguments, said as ``argument: what it takes, got what``."""
        if not isinstance(self.kind, str) or self.kind not in KINDS:
            return f"kind is one of {', '.join(map(repr, KINDS))} (figures.VIOLIN, INTERVAL, LINE, CURVE), got {self.kind!r:.80}"
        for name in ("title", "axis", "panel", "x_axis", "series", "people", "note"):
            if not isinstance(getattr(self, name), str):
                return f"{name} is text, got {type(getattr(self, name)).__name__} {getattr(self, name)!r:.80}"
        for name in ("title", "axis"):
            if not getattr(self, name).strip():
                return f"{name} is needed: {FIGURE_TEXT[name]}"
        if self.kind == LINE and not _drawable(self.x):
            return f"x is a number for a {LINE!r} figure (a round, a temperature) within ±{MAX_DRAWN:g}, got {self.x!r:.80}"
        if not isinstance(self.x, str) and not _drawable(self.x):
            return f"x is a category (text) or a number within ±{MAX_DRAWN:g}, got {self.x!r:.80}"
        if not isinstance(self.references, Mapping) or not all(
            isinstance(label, str) and _drawable(value) for label, value in self.references.items()
        ):
            return f"references map labels (text) to numbers within ±{MAX_DRAWN:g}, e.g. {{'rational': 1.0}}, got {self.references!r:.120}"
        if self.limits is not None and not (
            isinstance(self.limits, (tuple, list)) and len(self.limits) == 2 and all(map(_drawable, self.limits))
            and self.limits[0] < self.limits[1]
        ):  # fmt: skip
            return f"limits are (low, high), numbers within ±{MAX_DRAWN:g} with low < high (figures.RATE, DOLLARS), got {self.limits!r:.80}"
        if not isinstance(self.curve, (tuple, list)) or not all(
            isinstance(point, (tuple, list)) and len(point) == 2 and all(map(_drawable, point)) for point in self.curve
        ):
            return f"curve is (x, y) pairs of numbers within ±{MAX_DRAWN:g}, got {self.curve!r:.120}"
        if self.curve and self.kind != CURVE:
            return f"curve is drawn by a {CURVE!r} figure only; a {self.kind!r} figure would leave it out"
        if self.people and self.kind not in (VIOLIN, CURVE):
            return (f"people is drawn by a {VIOLIN!r} or {CURVE!r} figure only; a {self.kind!r} figure shows people's "
                    f"figure as a reference line: references={{'people (source)': value}}")  # fmt: skip
        if self.people:
            from .people import SOURCES

            if self.people not in SOURCES:
                return f"people names one of pytest_gaamas.people.SOURCES: {'; '.join(map(repr, SOURCES))}; got {self.people!r:.80}"
        return None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["references"] = dict(self.references)
        data["limits"] = None if self.limits is None else list(self.limits)
        data["curve"] = [list(point) for point in self.curve]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Figure:
        fields = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        if fields.get("limits") is not None:
            fields["limits"] = tuple(fields["limits"])
        fields["curve"] = tuple(tuple(point) for point in fields.get("curve", ()))
        return cls(**fields)


#: Far past any game's unit, and within what a plot's axis can be drawn over.
MAX_DRAWN = 1e12


def _plain(value: Any) -> Any:
    """A number of any numeric type (numpy's among them) as Python's own; anything else as it is."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return value
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def _plain_numbers(figure: Figure) -> None:
    """A figure's numbers as Python's own, so that ``x=np.int64(3)`` is the round 3 it means."""
    def tuple_of_numbers(value: Any) -> Any:
        return tuple(map(_plain, value)) if isinstance(value, (tuple, list)) else value

    object.__setattr__(figure, "x", _plain(figure.x))
    if isinstance(figure.references, Mapping):
        object.__setattr__(figure, "references", {label: _plain(value) for label, value in figure.references.items()})
    object.__setattr__(figure, "limits", tuple_of_numbers(figure.limits))
    if isinstance(figure.curve, (tuple, list)):
        object.__setattr__(figure, "curve", tuple(tuple_of_numbers(point) for point in figure.curve))


def _drawable(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and abs(value) <= MAX_DRAWN


RATE = (0.0, 1.0)
DOLLARS = (0.0, 100.0)
