"""The battle of the sexes between two agents of the same model, with pre-play messages (PyGAAMAS
"Agent-Agent coordination").

Players Y and Z (anonymised) each prefer a different meeting: Y gets 3 when both choose A and 2 when
both choose B; Z the reverse; choosing differently pays both 0. Before round 1 the players exchange
``messages`` messages, taking turns, the ``initiator`` first. Then 10 simultaneous rounds: each
player predicts the other's move and plays.

Each player is one conversation, and sees only what its player would see: its own payoffs, the
messages, and the public history of moves. The other player's instructions, payoffs and predictions
never enter its prompt (an omniscient prompt would make coordination look easier than it is).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import answers
from ..play import Decision, Trial

ROUNDS = 10
ACTIONS = ("A", "B")
PLAYERS = ("Y", "Z")
FAVOURITE = {"Y": "A", "Z": "B"}
MESSAGE_CHARACTERS = 200

SYSTEM_PROMPT = (
    "You are player {me}. You play a coordination game with player {other} for {rounds} rounds. In each "
    "round both choose A or B at the same time. If both choose {favourite}, you get 3 points. If both "
    "choose {compromise}, you get 2 points. If you choose differently, you get 0. Before each round you "
    "also predict {other}'s move."
)
MESSAGE_SCHEMA = answers.object_schema(message={"type": "string", "maxLength": MESSAGE_CHARACTERS})
MOVE_SCHEMA = answers.object_schema(prediction=answers.one_of(ACTIONS), move=answers.one_of(ACTIONS))


def other(player: str) -> str:
    return PLAYERS[1 - PLAYERS.index(player)]


def system_prompt(player: str, rounds: int) -> str:
    favourite = FAVOURITE[player]
    compromise = FAVOURITE[other(player)]
    return SYSTEM_PROMPT.format(me=player, other=other(player), rounds=rounds, favourite=favourite, compromise=compromise)


def points(player: str, moves: Mapping[str, str | None]) -> float:
    mine, theirs = moves[player], moves[other(player)]
    if mine is None or mine != theirs:
        return 0.0
    return 3.0 if mine == FAVOURITE[player] else 2.0


def read_message(obj: dict[str, Any]) -> str:
    message = answers.text(obj, "message").strip()
    if len(message) > MESSAGE_CHARACTERS:
        raise answers.InvalidAnswer(f"message too long: {len(message)} characters, at most {MESSAGE_CHARACTERS}")
    return message


def read_move(obj: dict[str, Any]) -> tuple[str, str]:
    return answers.choice(obj, "prediction", ACTIONS), answers.choice(obj, "move", ACTIONS)


@dataclass(frozen=True)
class AgentCoordinationGame:
    messages: int
    rounds: int = ROUNDS
    name: str = "battle of the sexes, two agents"

    def fingerprint(self) -> Mapping[str, Any]:
        return {"game": self.name, "messages": self.messages, "rounds": self.rounds, "prompt": SYSTEM_PROMPT}

    def initiator(self, trial: int) -> str:
        """Y opens the talk in even trials, Z in odd ones: each side starts half the games."""
        return PLAYERS[trial % 2]

    def play(self, trial: int) -> Trial:
        conversations = {p: [{"role": "system", "content": system_prompt(p, self.rounds)}] for p in PLAYERS}
        news = {p: "" for p in PLAYERS}

        def ask(player: str, text: str, schema, read, situation) -> Decision:
            conversations[player].append({"role": "user", "content": news[player] + text})
            news[player] = ""
            return Decision(tuple(conversations[player]), schema, answers.reader(read), {"player": player, **situation})

        def heard(player: str, answer) -> None:
            conversations[player].append({"role": "assistant", "content": answer.text})

        talk: list[dict[str, Any]] = []
        speaker = self.initiator(trial)
        for i in range(self.messages):
            listener = other(speaker)
            answer = yield ask(
                speaker,
                f"Before the game, you may send {listener} a message (message {i + 1} of {self.messages}). "
                f'Answer in JSON: {{"message": "<at most {MESSAGE_CHARACTERS} characters>"}}',
                MESSAGE_SCHEMA,
                read_message,
                {"phase": "message", "index": i},
            )
            heard(speaker, answer)
            if answer.valid:
                news[listener] += f'{speaker} wrote: "{answer.value}"\n'
            else:
                news[listener] += f"{speaker} sent no readable message.\n"
            talk.append({"from": speaker, "valid": answer.valid, "text": answer.value, "reason": answer.reason})
            speaker = listener

        history: dict[str, list[str]] = {p: [] for p in PLAYERS}
        per_player: dict[str, list[dict[str, Any]]] = {p: [] for p in PLAYERS}
        rounds: list[dict[str, Any]] = []
        for r in range(self.rounds):
            # Y then Z in even rounds, Z then Y in odd ones: each conversation is asked twice in a row,
            # so a server's cached prefix serves every other request. Neither sees the other's move
            # of this round: moves are simultaneous.
            order = PLAYERS if r % 2 == 0 else PLAYERS[::-1]
            replies = {}
            for player in order:
                mine = ", ".join(m or "-" for m in history[player]) or "none"
                theirs = ", ".join(m or "-" for m in history[other(player)]) or "none"
                # The answer's form is spelt out once; the schema holds it on every request.
                form = ' Answer in JSON: {"prediction": "A" or "B", "move": "A" or "B"}' if r == 0 else ""
                answer = yield ask(
                    player,
                    f"Round {r + 1}/{self.rounds}. Your moves so far: {mine}. {other(player)}'s moves so far: {theirs}.{form}",
                    MOVE_SCHEMA,
                    read_move,
                    {"phase": "round", "round": r, "history": {p: list(h) for p, h in history.items()}},
                )
                heard(player, answer)
                replies[player] = answer
            moves = {p: replies[p].value[1] if replies[p].valid else None for p in PLAYERS}
            for player in PLAYERS:
                theirs = moves[other(player)]
                answer = replies[player]
                entry = {"round": r + 1, "valid": answer.valid, "points": points(player, moves)}
                if answer.valid:
                    prediction = answer.value[0]
                    entry.update(prediction=prediction, move=moves[player], correct=prediction == theirs)
                    result = f"you played {moves[player]}, {other(player)} played {theirs or 'nothing valid'}"
                    news[player] = f"Round {r + 1}: {result}; your prediction was {'right' if entry['correct'] else 'wrong'}: {entry['points']:+g}.\n"
                else:
                    entry.update(correct=False, reason=answer.reason)
                    news[player] = f"Round {r + 1}: your answer was unusable ({answer.reason}); {other(player)} played {theirs or 'nothing valid'}: +0.\n"
                per_player[player].append(entry)
                history[player].append(moves[player])
            both_valid = all(replies[p].valid for p in PLAYERS)
            rounds.append(
                {
                    "round": r + 1,
                    "valid": both_valid,
                    "moves": moves,
                    "coordinated": both_valid and moves["Y"] == moves["Z"],
                    "points": sum(points(p, moves) for p in PLAYERS) / 2,
                }
            )
        return {"valid": True, "initiator": self.initiator(trial), "messages": talk, "rounds": rounds, "players": per_player}

    def reference_reply(self, agent: str, situation: Mapping[str, Any], rng: random.Random) -> str:
        if agent == "rational":
            # Two copies of one rational agent share a convention, and say it: alternate, A first.
            if situation["phase"] == "message":
                return answers.dump({"message": "Let us alternate: A in odd rounds, B in even rounds."})
            convention = ACTIONS[situation["round"] % 2]
            return answers.dump({"prediction": convention, "move": convention})
        if agent == "random":
            if situation["phase"] == "message":
                return answers.dump({"message": rng.choice(("Let us meet at A.", "Let us meet at B."))})
            return answers.dump({"prediction": rng.choice(ACTIONS), "move": rng.choice(ACTIONS)})
        raise ValueError(f"no reference agent {agent!r} for {self.name}")
