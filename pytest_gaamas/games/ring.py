"""The two-player ring-network game of PyGAAMAS "Strategic Rationality".

Player 1 chooses X or Y, player 2 chooses A or B, at the same time. For player 2, A strictly
dominates B (10 > 5 against X, 5 > 0 against Y). A rational player 2 plays A; a player 1 who
believes player 2 rational (second-order rationality) plays X, in every payoff version a-d.

Action names are swapped in odd trials (X <-> Y, A <-> B, the payoffs following their actions), so
a model that always answers with the first name it reads scores 1/2, not 1. The four payoff lines
come in an order of their own in each pair of trials (``line_order``), so that the 30 trials of a
cell are 30 distinct prompts: a model that answers the same prompt the same way (at temperature 0)
gives 30 draws, not the 2 that two prompts asked 15 times each would be.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from .. import answers
from ..counterbalance import ordering
from ..strategy import Contract, expect
from .oneshot import OneShotGame, conversation

#: Player 2's payoff for (player 1's action, player 2's action), the same in every version.
PLAYER_2 = {("X", "A"): 10, ("X", "B"): 5, ("Y", "A"): 5, ("Y", "B"): 0}
#: Player 1's payoffs per version (the seed's table): (X vs A, X vs B, Y vs A, Y vs B).
VERSIONS = {"a": (15, 5, 0, 10), "b": (8, 7, 7, 8), "c": (6, 5, 0, 10), "d": (15, 5, 0, 40)}
BELIEFS = ("given", "explicit", "implicit")
SYSTEM_PROMPT = "You are a player in a game. You want as many points as possible for yourself."
CONDITIONAL_REASONING = (
    "Before answering, reason conditionally: for each action player 2 could take, work out what player 2 "
    "earns against each of your actions and which action player 2 will therefore choose; then choose your "
    "best action given that."
)
REASONING_CHARACTERS = 400


def player_1_payoffs(version: str) -> dict[tuple[str, str], int]:
    xa, xb, ya, yb = VERSIONS[version]
    return {("X", "A"): xa, ("X", "B"): xb, ("Y", "A"): ya, ("Y", "B"): yb}


def line_order(trial: int) -> tuple[int, ...]:
    """The order this trial writes the payoff lines in (each pair of trials its own, the first pair the
    lines sorted by name): what differs between trials besides the names, and changes nothing of the game."""
    return ordering(trial // 2, 4)


def names(trial: int) -> dict[str, str]:
    """What each theoretical action is called in this trial."""
    if trial % 2 == 0:
        return {"X": "X", "Y": "Y", "A": "A", "B": "B"}
    return {"X": "Y", "Y": "X", "A": "B", "B": "A"}


@dataclass(frozen=True)
class RingGame(OneShotGame):
    player: int  # 2: first-order rationality; 1: second-order
    belief: str
    version: str = "a"
    conditional_reasoning: bool = False
    name: str = "ring network"

    @property
    def my_actions(self) -> tuple[str, str]:
        return ("X", "Y") if self.player == 1 else ("A", "B")

    @property
    def schema(self):
        action = answers.one_of(self.my_actions)
        if self.conditional_reasoning:
            return answers.object_schema(reasoning={"type": "string", "maxLength": REASONING_CHARACTERS}, action=action)
        return answers.object_schema(action=action)

    def matrix(self, trial: int) -> str:
        lines = [
            f"If player 1 plays {a1} and player 2 plays {a2}: player 1 gets {one} points, player 2 gets {two} points."
            for a1, row in self.payoffs(trial).items()
            for a2, (one, two) in row.items()
        ]
        return "\n".join(lines[i] for i in line_order(trial))

    def belief_text(self, trial: int) -> str:
        n = names(trial)
        if self.belief == "implicit":
            return ""
        if self.player == 2:
            if self.belief == "given":
                return f"You know that player 1 will play {n['X']}.\n"
            return f"Note that whatever player 1 plays, {n['A']} gives you more points than {n['B']}.\n"
        if self.belief == "given":
            return f"You know that player 2 will play {n['A']}.\n"
        return f"Note that whatever you play, {n['A']} gives player 2 more points than {n['B']}: {n['B']} is strictly dominated for player 2.\n"

    def messages(self, trial: int):
        mine = sorted(names(trial)[a] for a in self.my_actions)
        form = '{"reasoning": "<your reasoning>", "action": ' if self.conditional_reasoning else '{"action": '
        reasoning = CONDITIONAL_REASONING + "\n" if self.conditional_reasoning else ""
        return conversation(
            SYSTEM_PROMPT,
            f"You are player {self.player} in a one-shot game. Player 1 chooses X or Y and player 2 chooses A or B, "
            f"at the same time.\n{self.matrix(trial)}\n{self.belief_text(trial)}{reasoning}"
            f'Which action do you choose? Answer in JSON: {form}"{mine[0]}" or "{mine[1]}"}}',
        )

    def payoffs(self, trial: int) -> dict[str, dict[str, list[int]]]:
        """Player 1's action -> player 2's action -> [player 1's points, player 2's points], as named in this trial."""
        n = names(trial)
        one = player_1_payoffs(self.version)
        table: dict[str, dict[str, list[int]]] = {}
        for (a1, a2) in sorted(PLAYER_2, key=lambda pair: (n[pair[0]], n[pair[1]])):
            table.setdefault(n[a1], {})[n[a2]] = [one[(a1, a2)], PLAYER_2[(a1, a2)]]
        return table

    def stated_belief(self, trial: int) -> dict[str, str]:
        """The belief the action prompt states, as data."""
        n = names(trial)
        if self.belief == "given":
            return {"player_1_plays": n["X"]} if self.player == 2 else {"player_2_plays": n["A"]}
        if self.belief == "explicit":
            return {"dominated_for_player_2": n["B"]}
        return {}

    def strategy(self) -> Contract:
        told = {
            "given": f"`belief` tells what player {3 - self.player} will play, as "
            + ('{"player_1_plays": "X"}.' if self.player == 2 else '{"player_2_plays": "A"}.'),
            "explicit": '`belief` names player 2\'s strictly dominated action, as {"dominated_for_player_2": "B"}.',
            "implicit": "`belief` is an empty dict: work out what the other player will do from the payoffs.",
        }[self.belief]
        return Contract(
            system=SYSTEM_PROMPT,
            rules=(
                f"You are player {self.player} in a one-shot game. Player 1 chooses one of two actions and player 2 "
                "one of two others, at the same time, and each gets the points that the pair of actions gives. "
                "The actions' names change from game to game."
            ),
            signature="def choose(payoffs: dict[str, dict[str, list[int]]], belief: dict[str, str]) -> str",
            explanation=(
                "`payoffs[a1][a2]` is [player 1's points, player 2's points] when player 1 plays a1 and player 2 plays "
                'a2, for example {"X": {"A": [15, 10], "B": [5, 5]}, "Y": {"A": [0, 5], "B": [10, 0]}}. '
                f"{told} Return the name of your action (one of "
                + ("the keys of `payoffs`)." if self.player == 1 else "the keys of `payoffs[a1]`).")
            ),
            arguments=lambda situation: (self.payoffs(situation["trial"]), self.stated_belief(situation["trial"])),
            answer=self._strategy_answer,
            references={"rational": RATIONAL_STRATEGY[self.player], "random": RANDOM_STRATEGY[self.player]},
        )

    def _strategy_answer(self, value: Any) -> dict[str, Any]:
        action = expect(value, str, "an action's name")
        return {"reasoning": "", "action": action} if self.conditional_reasoning else {"action": action}

    def read(self, obj: dict[str, Any]) -> str:
        if self.conditional_reasoning:
            answers.text(obj, "reasoning")
        return answers.choice(obj, "action", self.my_actions)

    def rational_name(self, trial: int) -> str:
        return names(trial)["X" if self.player == 1 else "A"]

    def outcome(self, trial: int, action: str) -> dict[str, Any]:
        return {"action": action, "rational": action == self.rational_name(trial)}

    def reference_answer(self, agent: str, trial: int, rng: random.Random) -> dict[str, Any]:
        action = self.rational_name(trial) if agent == "rational" else rng.choice(self.my_actions)
        return {"reasoning": "", "action": action} if self.conditional_reasoning else {"action": action}


_DOMINANT_FOR_PLAYER_2 = """
def dominant_for_player_2(payoffs):
    ones = list(payoffs)
    twos = list(payoffs[ones[0]])
    for mine in twos:
        if all(payoffs[a1][mine][1] > payoffs[a1][other][1] for a1 in ones for other in twos if other != mine):
            return mine
"""
#: The reference strategies: player 2 plays its dominant action; player 1 best-responds to it.
RATIONAL_STRATEGY = {
    2: _DOMINANT_FOR_PLAYER_2 + "\ndef choose(payoffs, belief):\n    return dominant_for_player_2(payoffs)\n",
    1: _DOMINANT_FOR_PLAYER_2
    + "\ndef choose(payoffs, belief):\n    theirs = dominant_for_player_2(payoffs)\n"
    "    return max(payoffs, key=lambda mine: payoffs[mine][theirs][0])\n",
}
RANDOM_STRATEGY = {
    1: "import random\n\ndef choose(payoffs, belief):\n    return random.choice(sorted(payoffs))\n",
    2: "import random\n\ndef choose(payoffs, belief):\n    return random.choice(sorted(next(iter(payoffs.values()))))\n",
}
