"""The portfolio game of PyGAAMAS "Economic Rationality", on the budgets real people faced.

An investor allocates 100 points between asset A and asset B. One of two equally likely states will
occur; each point in asset A pays ``a`` dollars in state A, each point in asset B pays ``b`` dollars
in state B. Allocating (α, 100 - α) points buys the state-contingent bundle (α·a, (100 - α)·b), a
point on the budget line x / (100 a) + y / (100 b) = 1. That is the budget line of Choi, Kariv,
Müller & Silverman (2014),
whose intercepts (in tokens) are 100 a and 100 b, so trial *i* replays the 25 budget lines of one
subject of that study, and the model's CCEI can be set beside that person's.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import answers
from ..data import PortfolioSubject, ckms2014_subjects
from ..metrics import ccei
from ..play import Decision, Trial

POINTS = 100
#: How far the two allocations may sum from 100 points and still count as on the budget line. Every
#: one of the 29,550 human choices lies within it (largest miss: 0.94 points).
BUDGET_TOLERANCE_POINTS = 1.0

SYSTEM_PROMPT = "You are an investor. You make your own decisions."

USER_PROMPT = (
    "You have {points} points to invest between two assets, A and B. Tomorrow exactly one of two "
    "equally likely states occurs. If state A occurs, each point invested in asset A pays "
    "${pay_a:.3f} and asset B pays nothing. If state B occurs, each point invested in asset B pays "
    "${pay_b:.3f} and asset A pays nothing. Invest all {points} points: the two amounts must sum "
    "to {points}. Answer with a JSON object only, of the form "
    '{{"asset_a": <points in A>, "asset_b": <points in B>}}.'
)

ANSWER_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "asset_a": {"type": "number", "minimum": 0, "maximum": POINTS},
        "asset_b": {"type": "number", "minimum": 0, "maximum": POINTS},
    },
    "required": ["asset_a", "asset_b"],
    "additionalProperties": False,
}


def read_allocation(obj: dict[str, Any]) -> tuple[float, float]:
    a, b = answers.number(obj, "asset_a"), answers.number(obj, "asset_b")
    if a < 0 or b < 0:
        raise answers.InvalidAnswer(f"negative allocation: ({a:g}, {b:g})")
    if abs(a + b - POINTS) > BUDGET_TOLERANCE_POINTS:
        raise answers.InvalidAnswer(f"off the budget line: allocations sum to {a + b:g}, not {POINTS} ± {BUDGET_TOLERANCE_POINTS:g}")
    return a, b


parse_allocation = answers.reader(read_allocation)


def sample_subjects(n: int, seed: int) -> tuple[PortfolioSubject, ...]:
    """n distinct subjects of CKMS (2014), the same ones for the same seed."""
    everyone = ckms2014_subjects()
    if n > len(everyone):
        raise ValueError(f"only {len(everyone)} subjects have budgets; asked for {n} trials")
    return tuple(everyone[i] for i in random.Random(f"ckms2014:{seed}").sample(range(len(everyone)), n))


@dataclass(frozen=True)
class PortfolioGame:
    subjects: Sequence[PortfolioSubject]
    name: str = "portfolio"
    has_human_data: bool = True

    def fingerprint(self) -> Mapping[str, Any]:
        return {"game": self.name, "subjects": [s.subject for s in self.subjects], "prompt": USER_PROMPT}

    def play(self, trial: int) -> Trial:
        subject = self.subjects[trial]
        payouts = subject.intercepts / POINTS  # dollars per point, for assets A and B
        bundles = []
        for budget, (pay_a, pay_b) in enumerate(payouts):
            answer = yield Decision(
                messages=(
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": USER_PROMPT.format(points=POINTS, pay_a=pay_a, pay_b=pay_b)},
                ),
                schema=ANSWER_SCHEMA,
                parse=parse_allocation,
                situation={"subject": subject.subject, "budget": budget, "pay_a": pay_a, "pay_b": pay_b},
            )
            if not answer.valid:
                return {"valid": False, "subject": subject.subject, "invalid_budget": budget + 1, "reason": answer.reason}
            points_a, points_b = answer.value
            bundles.append((points_a * pay_a, points_b * pay_b))
        return {
            "valid": True,
            "subject": subject.subject,
            "ccei": ccei(subject.prices, np.array(bundles)),
            "subject_ccei": subject.authors_ccei,
        }

    def reference_reply(self, agent: str, situation: Mapping[str, Any], rng: random.Random) -> str:
        if agent == "rational":
            # Cobb-Douglas with equal weights: half the points on each asset at every price. It
            # maximises a utility, so it satisfies GARP exactly.
            points_a = POINTS / 2
        elif agent == "random":
            # Bronars' benchmark: a point drawn uniformly on the budget line.
            points_a = rng.uniform(0, POINTS)
        elif agent == "human":
            subject = next(s for s in self.subjects if s.subject == situation["subject"])
            x_chosen, y_chosen = subject.choices[situation["budget"]]
            return f'{{"asset_a": {x_chosen / situation["pay_a"]:.6f}, "asset_b": {y_chosen / situation["pay_b"]:.6f}}}'
        else:
            raise ValueError(f"no reference agent {agent!r} for the portfolio game")
        return f'{{"asset_a": {points_a:.6f}, "asset_b": {POINTS - points_a:.6f}}}'
