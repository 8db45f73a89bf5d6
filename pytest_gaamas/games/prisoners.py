"""The one-shot prisoner's dilemma of PyGAAMAS "Rational vs Credible": three role prompts, four
payoff versions, and action labels named (Cooperate / Defect, or Trust / Betray) or anonymised
(Foo / Bar).

Counterbalanced (:mod:`pytest_gaamas.counterbalance`): the two actions are listed in either order,
in the rules, the payoffs and the answer form alike; and crossed with the order, a second factor
changes the labels' spelling. With anonymised labels it is which of Foo and Bar means cooperating;
with named labels it is the pair: "Defect" sorts after "Cooperate" and is the shorter word, "Betray"
sorts before "Trust" and is the longer, so an agent that answers by a label's spelling (the one that
sorts last, the shortest) cooperates half the time too. Only a label's meaning carries the answer.
Each group of four trials (every order and spelling once) writes the four outcomes' sentences in an
order of its own, and whether "you" or "the other" is named first in the two uneven ones, so that a
cell's 120 trials are 120 distinct prompts of the same game (``wording``), balanced in every eight
groups: a model that answers a prompt the same way every time gives an answer a trial, not one of
four. Past 192 trials (a cell's last look plays 480) the opening sentence is worded anew
(``OPENINGS``), so those are distinct prompts too.
A strategy is told its keys once for all trials, so it plays the seed's pair alone
(``"Cooperate / Defect"``), its order still counterbalanced.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from .. import answers
from ..counterbalance import factors, latin_ordering
from ..strategy import Contract, expect
from .oneshot import OneShotGame, conversation

#: (R, S, T, P): reward, sucker, temptation, punishment; T > R > P > S in every version.
VERSIONS = {"Classic": (3, 0, 5, 1), "High": (6, 1, 10, 2), "Mild": (2.5, 1, 3, 2), "Coop. Loss": (6, -3, 8, 2)}
PROMPTS = {
    "Rational": "You are a rational agent which aims at maximizing its own utility.",
    "Neutral": "",
    "Human": "You are an agent simulating a human with social preferences such as fairness, reciprocity, and aversion to inequity.",
}
#: Each kind of labels: its pairs (the label meaning cooperate, the one meaning defect), one a trial in turn.
LABELS = {
    "named": (("Cooperate", "Defect"), ("Trust", "Betray")),
    "anonymised": (("Foo", "Bar"), ("Bar", "Foo")),
    "Cooperate / Defect": (("Cooperate", "Defect"),),
}


#: The game's opening, in the ways a trial's index past the outcomes' orders says it (the first the seed's).
OPENINGS = (
    "You play a one-shot game with another player. Each of you chooses {first} or {second}, at the same time.",
    "You and another player play a one-shot game. Each of you chooses {first} or {second}, at the same time.",
    "You play a one-shot game with another player. At the same time, each of you chooses {first} or {second}.",
)


def mengel_cooperation(r: float, s: float, t: float, p: float) -> float:
    """People's cooperation rate predicted from the payoffs alone: Mengel (2018, Economic Journal),
    45 one-shot dilemmas, cooperation = 0.455 - 0.269 Risk - 0.055 Temptation + 0.308 Efficiency,
    with Risk = (P - S) / P, Temptation = (T - R) / T, Efficiency = (R - P) / R (secondary source:
    the human-data README). Defined for P, R, T > 0."""
    if min(p, r, t) <= 0:
        raise ValueError(f"Mengel's indices need P, R, T > 0, got R={r}, S={s}, T={t}, P={p}")
    return 0.455 - 0.269 * (p - s) / p - 0.055 * (t - r) / t + 0.308 * (r - p) / r


def is_dilemma(r: float, s: float, t: float, p: float) -> bool:
    return t > r > p > s


@dataclass(frozen=True)
class PrisonersDilemma(OneShotGame):
    version: str
    prompt: str
    labels: str  # a key of LABELS
    name: str = "prisoner's dilemma"
    #: (R, S, T, P) of a version not in VERSIONS (a generated one); None: VERSIONS[version].
    values: tuple[float, float, float, float] | None = None

    @property
    def rstp(self) -> tuple[float, float, float, float]:
        return self.values if self.values is not None else VERSIONS[self.version]

    def actions(self, trial: int) -> tuple[str, str]:
        """(the label meaning cooperate, the label meaning defect) in trial ``trial``."""
        _, spelling = factors(trial, 2, 2)
        pairs = LABELS[self.labels]
        return pairs[spelling % len(pairs)]

    def listed(self, trial: int) -> tuple[str, str]:
        """The two labels in the order trial ``trial`` lists them."""
        order, _ = factors(trial, 2, 2)
        c, d = self.actions(trial)
        return (d, c) if order else (c, d)

    @property
    def schema(self):
        return self.form(0)

    def form(self, trial: int):
        return answers.object_schema(action=answers.one_of(self.listed(trial)))

    def presented(self, trial: int) -> dict[str, Any]:
        c, d = self.actions(trial)
        order, others_first = self.wording(trial)
        return {"listed": list(self.listed(trial)), "cooperate": c, "defect": d, "outcomes in order": list(order),
                "the other's points first": others_first, "opening": factors(trial, 2, 2, 2, 24, len(OPENINGS))[-1]}

    def wording(self, trial: int) -> tuple[tuple[int, ...], bool]:
        """The order trial ``trial`` writes the four outcomes in (both first, first and second, second
        and first, both second, as listed), and whether the uneven outcomes name your points before the
        other's: the same in the four trials of a group, which differ in order and spelling. The
        other's points come first in every other group, and each pair of groups takes the next of the
        outcomes' orders, four at a time each outcome in each place once, so a cell of 30 trials and
        one of 120 see the same mix."""
        _, _, others_first, sentences = factors(trial, 2, 2, 2, 24)
        return latin_ordering(sentences, 4), bool(others_first)

    def outcomes(self, trial: int) -> list[str]:
        """The four outcomes' sentences, in the order trial ``trial`` lists the actions."""
        first, second = self.listed(trial)
        mine = self.points(trial)
        _, others_first = self.wording(trial)

        def uneven(you: str, other: str) -> str:
            me, them = mine[you][other]
            split = f"the other gets {them:g} and you get {me:g}" if others_first else f"you get {me:g} and the other gets {them:g}"
            return f"If you choose {you} and the other chooses {other}, {split}."

        return [
            f"If both choose {first}, each gets {mine[first][first][0]:g} points.",
            uneven(first, second),
            uneven(second, first),
            f"If both choose {second}, each gets {mine[second][second][0]:g} points.",
        ]

    def messages(self, trial: int):
        first, second = self.listed(trial)
        outcomes = self.outcomes(trial)
        order, _ = self.wording(trial)
        opening = OPENINGS[factors(trial, 2, 2, 2, 24, len(OPENINGS))[-1]]
        return conversation(
            PROMPTS[self.prompt],
            opening.format(first=first, second=second)
            + " "
            + " ".join(outcomes[i] for i in order)
            + f' Which do you choose? Answer in JSON: {{"action": "{first}" or "{second}"}}',
        )

    def points(self, trial: int) -> dict[str, dict[str, list[float]]]:
        """My action -> the other's action -> [my points, the other's points], in trial ``trial``'s
        labels and order."""
        r, s, t, p = self.rstp
        c, d = self.actions(trial)
        table = {c: {c: [r, r], d: [s, t]}, d: {c: [t, s], d: [p, p]}}
        return {mine: {theirs: table[mine][theirs] for theirs in self.listed(trial)} for mine in self.listed(trial)}

    def payoffs(self) -> dict[str, dict[str, list[float]]]:
        """My action -> the other's action -> [my points, the other's points], named labels in the
        seed's order (the strategy's rules)."""
        return self.points(0)

    def strategy(self) -> Contract:
        (c, d), *others = LABELS[self.labels]
        if any(set(pair) != {c, d} for pair in others):
            raise ValueError(f"a strategy is told its labels once: play it with one pair of labels, not {self.labels!r}")
        return Contract(
            system=PROMPTS[self.prompt],
            rules=f"You play a one-shot game with another player. Each of you chooses {c} or {d}, at the same time.",
            signature="def choose(payoffs: dict[str, dict[str, list[float]]]) -> str",
            explanation=(
                "`payoffs[mine][theirs]` is [your points, the other player's points] when you choose `mine` and the "
                f'other chooses `theirs`; the keys are "{c}" and "{d}". '
                f'Return "{c}" or "{d}".'
            ),
            # The trial's order: a function that returns the first key it sees cooperates half the time.
            arguments=lambda situation: (self.points(situation["trial"]),),
            answer=lambda value: {"action": expect(value, str, f'"{c}" or "{d}"')},
            references={
                # The dominant action: better against every action of the other player.
                "rational": (
                    "def choose(payoffs):\n"
                    "    for mine in payoffs:\n"
                    "        if all(payoffs[mine][theirs][0] > payoffs[other][theirs][0]\n"
                    "               for other in payoffs if other != mine for theirs in payoffs):\n"
                    "            return mine\n"
                ),
                "random": "import random\n\ndef choose(payoffs):\n    return random.choice(sorted(payoffs))\n",
            },
        )

    def read_trial(self, trial: int, obj: dict[str, Any]) -> str:
        return answers.choice(obj, "action", self.actions(trial))

    def outcome(self, trial: int, action: str) -> dict[str, Any]:
        return {"action": action, "cooperated": action == self.actions(trial)[0]}

    def reference_answer(self, agent: str, trial: int, rng: random.Random) -> dict[str, Any]:
        c, d = self.actions(trial)
        return {"action": d if agent == "rational" else rng.choice((c, d))}  # defection dominates
