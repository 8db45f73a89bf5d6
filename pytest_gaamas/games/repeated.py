"""Repeated games against an opponent who follows a hidden pattern (PyGAAMAS "Beliefs" and
"Agent-Human Coordination").

Each round the agent predicts the opponent's next move, and, where the rules ask for it, plays a move
of its own. A trial is one conversation: the rules come once, each round is one request, and the next
request carries the last round's result and the opponent's moves so far. An unusable answer makes
that round invalid (no points); the trial goes on.

Counterbalanced (:mod:`pytest_gaamas.counterbalance`): trial i faces the opponent's pattern
``patterns[i % len(patterns)]`` and lists the moves rotated by a second digit of i, crossed with the
first, so that the move listed first is the opponent's as often as chance makes it: an agent that
answers by position, or with one move every time, scores what a coin scores. The listing is the same
in every round of a trial (one conversation).

Each cycle of patterns and listings is told in a wording of its own (``wording``): the rules and the
round line say the same things, with the same numbers and moves in the same order, in other words.
So a cell's 30 trials are 30 distinct conversations, and a model that answers the same conversation
the same way (at temperature 0, or a reasoning model near it) plays 30 games, not the 4 to 9 that
patterns and listings alone would give it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import answers
from ..counterbalance import Wordings, factors, latin_ordering
from ..play import Decision, Trial
from ..strategy import Contract, StrategyFailure, expect

ROUNDS = 10

HEAD_TAIL = ("Head", "Tail")
ROCK_PAPER_SCISSORS = ("Rock", "Paper", "Scissors")
BEATS = {"Rock": "Scissors", "Paper": "Rock", "Scissors": "Paper"}  # key beats value
BOS_ACTIONS = ("A", "B")


def matching_pennies_points(move: str | None, prediction: str, opponent: str) -> float:
    return 1.0 if move == opponent else -1.0


def prediction_points(move: str | None, prediction: str, opponent: str) -> float:
    return 1.0 if prediction == opponent else 0.0


def rps_win_draw_loss_points(move: str | None, prediction: str, opponent: str) -> float:
    if move == opponent:
        return 1.0
    return 2.0 if move is not None and BEATS[move] == opponent else 0.0


def bos_points(move: str | None, prediction: str, opponent: str) -> float:
    """The agent is the player who prefers B: A = 3 for its favourite meeting, B = 2 for the other, C = 0 apart."""
    if move != opponent:
        return 0.0
    return 3.0 if move == "B" else 2.0


@dataclass(frozen=True)
class Rules:
    """What the agent is told, the moves, whether it plays a move besides predicting, and its points."""

    name: str
    moves: tuple[str, ...]
    #: The ways of telling the rules; wording 0 is the one a strategy's author reads.
    wordings: Wordings
    asks_move: bool
    points: Callable[[str | None, str, str], float]

    def told(self, rounds: int, moves: Sequence[str] | None = None, wording: int = 0) -> str:
        """The rules as the agent reads them, in wording ``wording``, the moves in the order ``moves`` lists them."""
        listed = tuple(moves or self.moves)
        return self.wordings[wording].format(rounds=rounds, moves=", ".join(listed[:-1]) + " or " + listed[-1])

    def best_response(self, prediction: str) -> str:
        if self.points is rps_win_draw_loss_points:
            return next(m for m in self.moves if BEATS[m] == prediction)
        return prediction  # matching pennies and coordination: match the opponent


# Rewordings keep every number and every move's name where it was, so that an agent reading the
# prompt's numbers or the order in which it names the moves answers each wording alike.
MATCHING_PENNIES = Rules(
    "matching pennies",
    HEAD_TAIL,
    Wordings(
        ("You play matching pennies against the same opponent for {rounds} rounds. ",
         "For {rounds} rounds you play matching pennies against the same opponent. "),
        "In each round both players secretly choose {moves}, then reveal them. ",
        ("If the two pennies match, you win 1 point; if they differ, you lose 1 point. ",
         "You win 1 point when the two pennies match and lose 1 point when they differ. "),
        "Before each round you also predict the opponent's move.",
    ),
    asks_move=True,
    points=matching_pennies_points,
)

RPS_PREDICTION = Rules(
    "rock-paper-scissors, prediction",
    ROCK_PAPER_SCISSORS,
    Wordings(
        ("You face the same opponent at rock-paper-scissors for {rounds} rounds. ",
         "For {rounds} rounds you face the same opponent at rock-paper-scissors. "),
        ("In each round you predict the opponent's move ({moves}): ",
         "Each round, you predict which move the opponent will play ({moves}): "),
        "a correct prediction earns 1 point, a wrong one 0.",
    ),
    asks_move=False,
    points=prediction_points,
)

RPS_WIN_DRAW_LOSS = Rules(
    "rock-paper-scissors, win 2 / draw 1 / loss 0",
    ROCK_PAPER_SCISSORS,
    Wordings(
        ("You play rock-paper-scissors against the same opponent for {rounds} rounds. ",
         "For {rounds} rounds you play rock-paper-scissors against the same opponent. "),
        "Rock beats Scissors, Scissors beats Paper, Paper beats Rock. ",
        ("A win earns 2 points, a draw 1, a loss 0. ", "You earn 2 points for a win, 1 for a draw, 0 for a loss. "),
        "Before each round you also predict the opponent's move.",
    ),
    asks_move=True,
    points=rps_win_draw_loss_points,
)

BATTLE_OF_THE_SEXES = Rules(
    "battle of the sexes, anonymised",
    BOS_ACTIONS,
    Wordings(  # no capitalised article: "A" is a move's name
        ("You are player Y and play a coordination game against player Z for {rounds} rounds. ",
         "You are player Y; for {rounds} rounds you play a coordination game against player Z. "),
        ("In each round both choose {moves} at the same time. ", "Each round, both of you choose {moves} at the same time. "),
        "If both choose B, you get 3 points and Z gets 2. If both choose A, you get 2 points and Z gets 3. ",
        ("If you choose differently, both get 0. ", "If your choices differ, both get 0. "),
        "Before each round you also predict Z's move.",
    ),
    asks_move=True,
    points=bos_points,
)

#: The line that opens each round's request, in its ways.
ROUND_LINES = Wordings(
    ("Round {round}/{rounds}. ", "This is round {round} of {rounds}. "),
    ("Opponent's moves so far: {seen}. ", "The opponent's moves until now: {seen}. "),
)


def pattern_prediction(history: Sequence[str], moves: Sequence[str]) -> str:
    """The next move of the shortest cycle that explains the history (the first move before any)."""
    for period in range(1, len(history) + 1):
        if all(history[i] == history[i - period] for i in range(period, len(history))):
            return history[len(history) - period]
    return moves[0]


@dataclass(frozen=True)
class HiddenPatternGame:
    rules: Rules
    #: The opponent's hidden cycles; trial i faces patterns[i % len(patterns)].
    patterns: tuple[tuple[str, ...], ...]
    rounds: int = ROUNDS
    name: str = "hidden pattern"

    def fingerprint(self) -> Mapping[str, Any]:
        return {"game": self.name, "rules": self.rules.wordings.parts, "round_lines": ROUND_LINES.parts,
                "patterns": self.patterns, "rounds": self.rounds, "counterbalanced": True}

    @property
    def listings(self) -> int:
        """The orders the moves are listed in: all of them. The rotations of one order keep its cycle,
        and rock-paper-scissors listed Rock, Paper, Scissors or a rotation always names next the move
        that beats the last one named, which is also the 3-loop's next move."""
        return math.factorial(len(self.rules.moves))

    def arrangement(self, trial: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(the opponent's pattern, the moves in the order they are listed) in trial ``trial``."""
        pattern, order = factors(trial, len(self.patterns), self.listings)
        return self.patterns[pattern], tuple(self.rules.moves[i] for i in latin_ordering(order, len(self.rules.moves)))

    def wording(self, trial: int) -> tuple[int, int]:
        """(the round line's wording, the rules' wording) in trial ``trial``: each whole cycle of
        patterns and listings its own, the round line's changing fastest, so that the last request
        differs from cycle to cycle as well as the whole conversation."""
        cycle = trial // (len(self.patterns) * self.listings)
        round_line, rules = factors(cycle, len(ROUND_LINES), len(self.rules.wordings))
        return round_line, rules

    def schema(self, listed: Sequence[str]) -> dict[str, Any]:
        fields = {"prediction": answers.one_of(tuple(listed))}
        if self.rules.asks_move:
            fields["move"] = answers.one_of(tuple(listed))
        return answers.object_schema(**fields)

    def read(self, obj: dict[str, Any]) -> tuple[str, str | None]:
        prediction = answers.choice(obj, "prediction", self.rules.moves)
        move = answers.choice(obj, "move", self.rules.moves) if self.rules.asks_move else None
        return prediction, move

    def answer_form(self, listed: Sequence[str]) -> str:
        options = " or ".join(f'"{m}"' for m in listed)
        fields = [f'"prediction": {options}'] + ([f'"move": {options}'] if self.rules.asks_move else [])  # the opponent's, then yours
        return "Answer in JSON: {" + ", ".join(fields) + "}"

    def play(self, trial: int) -> Trial:
        pattern, listed = self.arrangement(trial)
        round_line, rules = self.wording(trial)
        opponent = [pattern[r % len(pattern)] for r in range(self.rounds)]
        messages: list[dict[str, str]] = [{"role": "system", "content": self.rules.told(self.rounds, listed, rules)}]
        results: list[dict[str, Any]] = []
        news = ""
        for r in range(self.rounds):
            seen = ", ".join(opponent[:r]) or "none"
            opening = ROUND_LINES[round_line].format(round=r + 1, rounds=self.rounds, seen=seen)
            messages.append({"role": "user", "content": f"{news}{opening}{self.answer_form(listed)}"})
            answer = yield Decision(
                messages=tuple(messages),
                schema=self.schema(listed),
                parse=answers.reader(self.read),
                situation={"history": opponent[:r], "round": r},
            )
            messages.append({"role": "assistant", "content": answer.text})
            result = {"round": r + 1, "opponent": opponent[r], "valid": answer.valid}
            if answer.valid:
                prediction, move = answer.value
                points = self.rules.points(move, prediction, opponent[r])
                result.update(prediction=prediction, move=move, correct=prediction == opponent[r], points=points)
                played = f", you played {move}" if move else ""
                verdict = "right" if prediction == opponent[r] else "wrong"
                news = f"Round {r + 1}: opponent played {opponent[r]}; your prediction was {verdict}{played}: {points:+g}.\n"
            else:
                result.update(reason=answer.reason, correct=False, points=None)
                news = f"Round {r + 1}: opponent played {opponent[r]}; your answer was unusable ({answer.told}): no points.\n"
            results.append(result)
        return {"valid": True, "pattern": list(pattern), "rounds": results, "presented": {"listed": list(listed), "wording": [round_line, rules]}}

    def strategy(self) -> Contract:
        moves = ", ".join(f'"{m}"' for m in self.rules.moves)
        if self.rules.asks_move:
            signature = "def play(opponent_moves: list[str]) -> list[str]"
            returns = f"Return [your prediction of the opponent's next move, your move], each one of {moves}."
        else:
            signature = "def predict(opponent_moves: list[str]) -> str"
            returns = f"Return your prediction of the opponent's next move, one of {moves}."
        return Contract(
            system="",
            rules=self.rules.told(self.rounds),
            signature=signature,
            explanation=(
                "The function is called once a round, before the moves are revealed; `opponent_moves` lists the "
                "opponent's moves in the rounds so far, oldest first (empty in round 1). It may keep what it "
                f"wants in global variables between the rounds of one game. {returns}"
            ),
            arguments=lambda situation: (list(situation["history"]),),
            answer=self._strategy_answer,
            references={"rational": self._reference_strategy("rational"), "random": self._reference_strategy("random")},
        )

    def _strategy_answer(self, value: Any) -> dict[str, Any]:
        if not self.rules.asks_move:
            return {"prediction": expect(value, str, "a move")}
        pair = expect(value, list, "[prediction, move]")  # a tuple arrives as a list
        if len(pair) != 2:
            raise StrategyFailure("wrong return type", f"returned {len(pair)} moves, not [prediction, move]")
        return {"prediction": expect(pair[0], str, "a move"), "move": expect(pair[1], str, "a move")}

    def _reference_strategy(self, agent: str) -> str:
        moves = self.rules.moves
        if agent == "random":
            head = "import random\n\n"
            body = f"    prediction = random.choice({moves!r})\n"
            move = f"random.choice({moves!r})"
        else:  # the shortest cycle that explains the history, and the best response to its next move
            head = ""
            body = (
                "    for period in range(1, len(opponent_moves) + 1):\n"
                "        if all(opponent_moves[i] == opponent_moves[i - period] for i in range(period, len(opponent_moves))):\n"
                "            prediction = opponent_moves[len(opponent_moves) - period]\n"
                "            break\n"
                f"    else:\n        prediction = {moves[0]!r}\n"
            )
            move = f"{ {m: self.rules.best_response(m) for m in moves}!r}[prediction]"
        if self.rules.asks_move:
            return f"{head}def play(opponent_moves):\n{body}    return [prediction, {move}]\n"
        return f"{head}def predict(opponent_moves):\n{body}    return prediction\n"

    def reference_reply(self, agent: str, situation: Mapping[str, Any], rng: random.Random) -> str:
        moves = self.rules.moves
        if agent == "rational":
            prediction = pattern_prediction(situation["history"], moves)
            move = self.rules.best_response(prediction)
        elif agent == "random":
            prediction, move = rng.choice(moves), rng.choice(moves)
        else:
            raise ValueError(f"no reference agent {agent!r} for {self.rules.name}")
        fields = {"prediction": prediction} | ({"move": move} if self.rules.asks_move else {})
        return answers.dump(fields)
