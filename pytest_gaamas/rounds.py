"""Scores of repeated games, round by round: the learning curves of PyGAAMAS's figures as a series
with 95% intervals, and the late-round averages that the verdicts use."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import stats
from .play import TrialRecord
from .report import cell, invalid_note
from .stats import Estimate

@dataclass(frozen=True)
class RoundScore:
    round: int
    #: Measure name -> estimate over this round's valid answers, in the order the tables show them.
    measures: dict[str, Estimate]
    invalid: int


def round_results(records: Sequence[TrialRecord], key: str = "rounds") -> list[list[dict]]:
    """Each trial's rounds; a trial lost whole (an invalid strategy) has none."""
    return [r.outcome.get(key, []) for r in records]


def series(
    trials: Sequence[Sequence[dict]], *, rates: Sequence[tuple[str, str]] = (("prediction accuracy", "correct"),),
    means: Sequence[tuple[str, str]] = (("points", "points"),),
) -> list[RoundScore]:
    """Per round, over the valid answers: each rate (a share of true ``field``, Wilson) and each mean
    (of a numeric ``field``, bootstrap)."""
    count = max((len(t) for t in trials), default=0)
    out = []
    for r in range(count):
        answered = [t[r] for t in trials if len(t) > r]
        valid = [a for a in answered if a["valid"]]
        measures = {name: stats.mean([a[field] for a in valid]) for name, field in means}
        measures |= {name: stats.wilson(sum(bool(a[field]) for a in valid), len(valid)) for name, field in rates}
        out.append(RoundScore(round=r + 1, measures=measures, invalid=len(answered) - len(valid)))
    return out


def late_means(trials: Sequence[Sequence[dict]], field: str, first_round: int) -> list[float]:
    """Each trial's mean of ``field`` from ``first_round`` on, an invalid round counting as 0 (nothing earned)."""
    means = []
    for rounds in trials:
        late = rounds[first_round - 1:]
        if late:
            means.append(sum(float(a[field] or 0) if a["valid"] else 0.0 for a in late) / len(late))
    return means


#: The unit of each mean measure of ``series`` (its rates are rates).
MEAN_UNITS = {"points": "points"}


def report_series(gaamas, *, title: str, column: str, columns: tuple[str, ...], scores: Sequence[RoundScore]) -> None:
    """Fill ``column`` of the per-round tables, one table per measure: one row per round, one column
    per variant (an opponent, a number of messages), as the seed's figures have one line per variant."""
    for s in scores:
        for measure, estimate in s.measures.items():
            gaamas.score(
                table=f"{title}: {measure} per round [95% CI]",
                metric=f"{measure} per round",
                estimate=estimate,
                invalid=s.invalid,
                passed=None,
                criterion="",
                columns=columns,
                cells={column: cell(estimate) + invalid_note(s.invalid)},
                row={"round": str(s.round)},
                row_rank=s.round,
                unit=MEAN_UNITS.get(measure) if estimate.kind == "mean" else None,
            )
