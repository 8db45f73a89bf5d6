"""What an item reports, made from what its behaviour declared: the ``Score`` of a cell, the one-line
finding of a criterion not met, and the fidelity table's row. ``Experiment`` hands over to these."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from . import fidelity, verdicts
from .fidelity import Fidelity, HumanChoices
from .figures import Figure
from .report import NO_VALUE, Score, cell, p_value_text
from .stats import Estimate
from .strategy import StrategyResult
from .verdicts import Verdict


def score_of(
    *, behaviour: str, test_id: str, model: str, variant: Mapping[str, Any], estimate: Estimate, judged: Verdict | None,
    decided: verdicts.Judgement | None, invalid_reasons: Mapping[str, int], strategy: StrategyResult | None,
    table: str, metric: str, invalid: int, criterion: str, columns: tuple[str, ...], cells: Mapping[str, str],
    details: Mapping[str, Any] | None, row: Mapping[str, str] | None, row_rank: int, n: int | None, worse: str,
    verdict_label: str, unit: str | None, figures: Sequence[Figure],
) -> Score:  # fmt: skip
    """A cell's score: the item's identity, the estimate and its verdict (``decided``: what the table's
    family decided it on), and what the behaviour declared (``Experiment.score``)."""
    measured = not (estimate.n == 0 or math.isnan(estimate.value))
    return Score(
        behaviour=behaviour,
        test_id=test_id,
        model=model,
        variant={"generation": "actions", **variant},
        metric=metric,
        score=estimate.value if measured else None,
        ci=(estimate.low, estimate.high) if measured else (None, None),
        n=estimate.n + invalid if n is None else n,
        invalid=invalid,
        passed=None if judged is None else judged is Verdict.MET,
        verdict=judged,
        criterion=criterion,
        table=table,
        columns=tuple(columns),
        cells=dict(cells),
        details={
            **(details or {}),
            "invalid_reasons": dict(sorted(invalid_reasons.items())),
            **({"strategy": strategy.to_json()} if strategy else {}),
        },
        row={k: str(v) for k, v in (row or {}).items()},
        row_rank=row_rank,
        kind=estimate.kind,
        sample=estimate.sample,
        worse=worse,
        verdict_label=verdict_label,
        unit=unit if unit is not None else ("rate" if estimate.kind == "rate" else ""),
        figures=tuple(figures),
        adjusted=None if decided is None else decided.as_json(),
    )


def finding_of(finding: str, judged: Verdict, family: verdicts.TableFamily | None, judged_observations: Sequence[int],
               strategy: StrategyResult | None, invalid_reasons: Mapping[str, int]) -> str:  # fmt: skip
    """A criterion not met, in one line: the behaviour's ``finding``, what the verdict was decided on,
    and why answers were unusable where some were."""
    finding += decided_on(family, judged)
    if judged_observations and not any(judged_observations):
        finding += "; no valid answer"
    if strategy is not None and strategy.failure is not None:
        finding += f"; the strategy is invalid: {strategy.failure.reason}"
    elif invalid_reasons:
        reasons = ", ".join(f"{kind} {count}" for kind, count in sorted(invalid_reasons.items(), key=lambda kv: -kv[1]))
        finding += f"; unusable answers: {reasons}"
    return " ".join(finding.split())[:600]


def decided_on(family: verdicts.TableFamily | None, verdict: Verdict) -> str:
    """What the item's last judgement of this verdict was decided on, said after its finding:
    the table-adjusted interval, and the interval that showed it at chance."""
    judgement = next((j for j in reversed(family.judged) if j.verdict is verdict), None) if family else None
    if judgement is None:
        return ""
    said = ""
    if judgement.widened:
        adjusted = judgement.adjusted
        said += (f"; judged on the table-adjusted interval [{adjusted.low:.3g}, {adjusted.high:.3g}] "
                 f"({judgement.confidence:.2%}, one of {judgement.family_size} cells)")  # fmt: skip
    if judgement.chance is not None:
        level, margin, interval = judgement.chance
        said += (f"; at chance: the {100 * getattr(interval, 'confidence', 0.9):.4g}% interval [{interval.low:.3g}, {interval.high:.3g}] "
                 f"lies within {level:.3g} +- {margin:.3g}")  # fmt: skip
    if family is not None and family.looks > 1:
        said += f"; look {family.look + 1} of {family.looks}, at {family.trials} trials ({family.share:g} of the level)"
    return said


def fidelity_row(result: Fidelity | None, values: Sequence[float], humans: HumanChoices, *, invalid: int, label: str) -> dict[str, Any]:
    """The fidelity table's row ``label`` for a comparison of the model's valid choices with people's:
    the keyword arguments of ``Experiment.score``."""
    n = len(values) + invalid
    cells = dict.fromkeys(fidelity.COLUMNS, NO_VALUE) | {"n": str(n), "invalid": str(invalid)}
    if result is not None:
        test, unit = result.test, humans.unit
        cells |= {
            "model mean": f"{result.model_mean:.3g}",
            "human mean": f"{result.human_mean:.3g}",
            "difference [90% CI]": cell(result.difference, 3 if humans.tolerance < 1 else 1),
            "aggregate (mean within margin)": f"{result.aggregate} (+-{unit}{humans.mean_margin:g})",
            "Wasserstein [upper bound]": f"{unit}{test.distance:.3g} [{unit}{test.upper:.3g}, {fidelity.confidence_words(1 - humans.level)}]",
            "p same as people": p_value_text(test.p_value),
            "two levels": result.levels,
        }
    return {
        "table": fidelity.TABLE,
        "metric": "Wasserstein distance to people",
        "estimate": Estimate(result.test.distance, result.test.distance, result.test.upper, len(values))
        if result else Estimate(math.nan, math.nan, math.nan, 0),
        "invalid": invalid,
        "verdict": verdicts.faithful(result),
        "criterion": fidelity.criterion(humans),
        "columns": fidelity.COLUMNS,
        "cells": cells,
        "details": {
            "choices": list(values),
            "humans": {"n": len(humans.values), "source": humans.source, "tolerance": humans.tolerance, "level": humans.level},
            **({"p_value": result.test.p_value, "test": result.test.statistic, "verdict": result.verdict,
                "difference_of_means_90": result.difference.as_json(), "aggregate": result.aggregate,
                "mean_margin": humans.mean_margin, "paradox": result.paradox, "levels": result.levels} if result else {}),
        },
        "row": {"choice": label},
        "worse": "up",
        "verdict_label": result.verdict if result else "no valid choice",
    }
