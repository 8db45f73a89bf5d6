"""The two-player ring-network game of PyGAAMAS "Strategic Rationality".

Player 1 chooses X or Y, player 2 chooses A or B, at the same time. For player 2, A strictly
dominates B (10 > 5 against X, 5 > 0 against Y). A rational player 2 plays A; a player 1 who
believes player 2 rational (second-order rationality) plays X, in every payoff version a-d.

The player's own action names are swapped in odd trials and the other player's in every other pair
of trials, independently (X <-> Y, A <-> B, the payoffs following their actions), so a model that
always answers with the first name it reads scores 1/2, not 1, and a name the prompt gives of the
other player's action (the given belief's "player 2 will play A") says nothing of which own name is
right. Player 2 (first-order
rationality) sees player 1's payoffs mirrored between A and B in every other four trials, and the
explicit hint worded with the dominated action first in every other eight: player 1's largest payoff
would otherwise always sit on the line of player 2's dominant action, and the hint always name it
first, so that the option beside the largest number, or named first in the hint, would be right in
every trial (``python -m pytest_gaamas cue-audit``). Player 2's best action does not depend on player
1's payoffs. Likewise player 1, in versions a and b, where the largest number would stand on the line
of the rational X in every trial, sees player 2's payoffs against Y raised by 15 in every other four
trials: a sum that depends only on player 1's action changes none of player 2's best replies (A
still dominates B), so the game is strategically the same, and the largest number (20) now stands
on a Y line in half the trials. The four payoff lines
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
#: The versions whose largest number would stand on the rational X's line in every trial, and what
#: player 2's payoffs against Y are raised by in every other pair of their trials.
RAISED_VERSIONS = ("a", "b")
RAISE_AGAINST_Y = 15
BELIEFS = ("given", "explicit", "implicit")
SYSTEM_PROMPT = "You are a player in a game. You want as many points as possible for yourself."
CONDITIONAL_REASONING = (
    "Before answering, reason conditionally: for each action player 2 could take, work out what player 2 "
    "earns against each of your actions and which action player 2 will therefore choose; then choose your "
    "best action given that."
)
REASONING_CHARACTERS = 400


def player_1_payoffs(version: str, *, mirrored: bool = False) -> dict[tuple[str, str], int]:
    """Player 1's payoffs in ``version``; ``mirrored``, those against A and against B exchanged."""
    xa, xb, ya, yb = VERSIONS[version]
    if mirrored:
        xa, xb, ya, yb = xb, xa, yb, ya
    return {("X", "A"): xa, ("X", "B"): xb, ("Y", "A"): ya, ("Y", "B"): yb}


#: How a payoff line is written: the first wording in the first 48 trials, which hold every arrangement
#: of names, payoffs and line order once, the next in the next 48, so that a cell's later looks (60 and
#: 120 trials) ask prompts of their own, not the first 48 again (a model that answers the same prompt
#: the same way would give 48 draws counted as 120).
ARRANGEMENTS = 48
LINE_WORDINGS = (
    "If player 1 plays {a1} and player 2 plays {a2}: player 1 gets {one} points, player 2 gets {two} points.",
    "When player 1 plays {a1} and player 2 plays {a2}, player 1 gets {one} points and player 2 gets {two} points.",
    "Player 1 playing {a1} while player 2 plays {a2} gives player 1 {one} points and player 2 {two} points.",
)


def line_wording(trial: int) -> str:
    """The wording of this trial's payoff lines (``LINE_WORDINGS``), cycling past 144 trials."""
    return LINE_WORDINGS[(trial // ARRANGEMENTS) % len(LINE_WORDINGS)]


def line_order(trial: int) -> tuple[int, ...]:
    """The order this trial writes the payoff lines in (each pair of trials its own, the first pair the
    lines sorted by name): what differs between trials besides the names, and changes nothing of the game."""
    return ordering(trial // 2, 4)


def names(trial: int, player: int) -> dict[str, str]:
    """What each theoretical action is called in this trial of ``player``'s game: its own two names
    swapped in odd trials, the other player's in odd pairs of trials."""
    own, other = trial % 2 == 1, (trial // 2) % 2 == 1
    swap_xy, swap_ab = (own, other) if player == 1 else (other, own)
    return {"X": "Y" if swap_xy else "X", "Y": "X" if swap_xy else "Y", "A": "B" if swap_ab else "A", "B": "A" if swap_ab else "B"}


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
        wording = line_wording(trial)
        lines = [
            wording.format(a1=a1, a2=a2, one=one, two=two)
            for a1, row in self.payoffs(trial).items()
            for a2, (one, two) in row.items()
        ]
        return "\n".join(lines[i] for i in line_order(trial))

    def mirrored(self, trial: int) -> bool:
        """Whether player 1's payoffs are shown mirrored in this trial (player 2's games only)."""
        return self.player == 2 and (trial // 4) % 2 == 1

    def raised(self, trial: int) -> bool:
        """Whether player 2's payoffs against Y are raised in this trial (player 1's games, versions a and b)."""
        return self.player == 1 and self.version in RAISED_VERSIONS and (trial // 4) % 2 == 1

    def belief_text(self, trial: int) -> str:
        n = names(trial, self.player)
        if self.belief == "implicit":
            return ""
        if self.player == 2:
            if self.belief == "given":
                return f"You know that player 1 will play {n['X']}.\n"
            if (trial // 8) % 2 == 1:
                return f"Note that whatever player 1 plays, {n['B']} gives you fewer points than {n['A']}.\n"
            return f"Note that whatever player 1 plays, {n['A']} gives you more points than {n['B']}.\n"
        if self.belief == "given":
            return f"You know that player 2 will play {n['A']}.\n"
        return f"Note that whatever you play, {n['A']} gives player 2 more points than {n['B']}: {n['B']} is strictly dominated for player 2.\n"

    def messages(self, trial: int):
        mine = sorted(names(trial, self.player)[a] for a in self.my_actions)
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
        n = names(trial, self.player)
        one = player_1_payoffs(self.version, mirrored=self.mirrored(trial))
        table: dict[str, dict[str, list[int]]] = {}
        for (a1, a2) in sorted(PLAYER_2, key=lambda pair: (n[pair[0]], n[pair[1]])):
            raise_by = RAISE_AGAINST_Y if self.raised(trial) and a1 == "Y" else 0
            table.setdefault(n[a1], {})[n[a2]] = [one[(a1, a2)], PLAYER_2[(a1, a2)] + raise_by]
        return table

    def stated_belief(self, trial: int) -> dict[str, str]:
        """The belief the action prompt states, as data."""
        n = names(trial, self.player)
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
        return names(trial, self.player)["X" if self.player == 1 else "A"]

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
