"""Scores of repeated games, round by round: the learning curves of PyGAAMAS's figures as a series
with 95% intervals, and the late-round averages that the verdicts use."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from . import stats
from .figures import LINE, RATE, Figure
from .play import Game, TrialRecord, play_trial
from .report import cell, invalid_note
from .stats import Estimate

#: The reference agents whose curves are drawn beside a model's, round by round.
REFERENCE_AGENTS = ("rational", "random")

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
    means: Sequence[tuple[str, str]] = (("points", "points"),), intervals: bool = True,
) -> list[RoundScore]:
    """Per round, over the valid answers: each rate (a share of true ``field``, Wilson) and each mean
    (of a numeric ``field``, bootstrap; without its interval where ``intervals`` is false, as a
    reference curve needs none). A trial lost whole (an invalid strategy) is invalid in every round."""
    mean = stats.mean if intervals else stats.average
    count = max((len(t) for t in trials), default=0)
    lost = sum(1 for t in trials if not t)
    out = []
    for r in range(count):
        answered = [t[r] for t in trials if len(t) > r]
        valid = [a for a in answered if a["valid"]]
        measures = {name: mean([a[field] for a in valid]) for name, field in means}
        measures |= {name: stats.wilson(sum(bool(a[field]) for a in valid), len(valid)) for name, field in rates}
        out.append(RoundScore(round=r + 1, measures=measures, invalid=len(answered) - len(valid) + lost))
    return out


def invalid_rounds(trials: Sequence[Sequence[dict]], rounds_per_trial: int) -> int:
    """The rounds with an invalid answer, every round of a trial lost whole counted."""
    return sum(rounds_per_trial if not rounds else sum(not a["valid"] for a in rounds) for rounds in trials)


def invalid_trials(trials: Sequence[Sequence[dict]]) -> int:
    """The trials with an invalid answer in some round, or lost whole (an invalid strategy, no
    rounds): a cell's invalid count, in trials as its n is."""
    return sum(1 for rounds in trials if not rounds or any(not a["valid"] for a in rounds))


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


def reference_curves(
    game: Game, trials: int, seed: int, measure: Callable[..., Sequence[RoundScore]] | None = None,
) -> dict[str, Sequence[RoundScore]]:  # fmt: skip
    """The per-round scores of the reference agents on ``game`` (``measure(records, intervals=False)``
    makes them from the records, ``series(round_results(records))`` by default): the rational and
    random curves of the figures, played here and now, since they cost nothing and need no cassette.
    Their values are drawn, never their intervals, which are not computed."""
    try:
        return dict(_reference_curves(game, trials, seed, measure))  # type: ignore[arg-type]  # unhashable: below
    except TypeError:  # a game with an unhashable field: played afresh
        return dict(_reference_curves.__wrapped__(game, trials, seed, measure))


@functools.lru_cache(maxsize=256)
def _reference_curves(game: Game, trials: int, seed: int, measure) -> dict[str, tuple[RoundScore, ...]]:
    """Played once per process for each game, however many models a run compares with them."""
    from .models.reference import ReferenceAgent  # models import this package's modules

    measure = measure or (lambda records, intervals: series(round_results(records), intervals=intervals))
    curves = {}
    for kind in REFERENCE_AGENTS:
        agent = ReferenceAgent(kind)
        records = [play_trial(game, agent, t, seed=seed, temperature=0.0) for t in range(trials)]
        curves[f"reference:{kind}"] = tuple(measure(records, intervals=False))
    return curves


def report_series(
    gaamas, *, title: str, column: str, columns: tuple[str, ...], scores: Sequence[RoundScore],
    references: Mapping[str, Sequence[RoundScore]] | None = None, series_label: str = "",
    people: Mapping[str, Mapping[str, float]] | None = None, note: str = "", panel: str = "",
) -> None:  # fmt: skip
    """Fill ``column`` of the per-round tables, one table per measure: one row per round, one column
    per variant (an opponent, a number of messages), as the seed's figures have one line per variant.

    Each round is drawn too, in a figure per measure: a panel per ``column`` and generation (unless
    ``series_label`` names the line instead, as the two-agent game has one line per number of
    messages, in a ``panel`` per simulation), with ``references``' curves (``reference_curves``) and ``people``'s figures (measure
    -> label -> value) as reference lines."""
    generation = str(gaamas.variant.get("generation", "actions"))
    reference_at = {label: {r.round: r for r in curve} for label, curve in (references or {}).items()}
    for s in scores:
        for measure, estimate in s.measures.items():
            values = {label: at[s.round].measures[measure].value for label, at in reference_at.items()
                      if s.round in at and at[s.round].measures[measure].n}  # fmt: skip
            values |= (people or {}).get(measure, {})
            figure = Figure(
                title=f"{title}: {measure} per round", kind=LINE, axis=f"{measure} [95% CI]",
                panel=panel if series_label else f"{column}, {generation}", x=s.round, x_axis="round",
                series=series_label, references=values,
                limits=RATE if estimate.kind == "rate" else None, note=note,
            )  # fmt: skip
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
                figures=(figure,),
            )
