"""The battle of the sexes between two agents of the same model, with pre-play messages (PyGAAMAS
"Agent-Agent coordination").

Players Y and Z (anonymised) each prefer a different meeting: Y gets 3 when both choose A and 2 when
both choose B; Z the reverse; choosing differently pays both 0. Before round 1 the players exchange
``messages`` messages, taking turns, the ``initiator`` first. Then 10 simultaneous rounds: each
player predicts the other's move and plays.

Two information conditions:

- ``common``: the seed's game (PyGAAMAS, and Cooper et al. 1989's): both players know the whole
  matrix, their own payoffs and the other's.
- ``private``: each player knows only its own payoffs, a game of incomplete information. It is
  where an omniscient writer has something to leak.

Two simulations of each (Zhou et al. 2024, "Is this the real life? Is this just fantasy?"):

- ``agents``: each player is one conversation, and sees only what its player would see: the payoffs
  its condition tells it, the messages, and the public history of moves. The other player's
  instructions and predictions never enter its prompt, nor, in ``private``, the other's payoffs.
- ``script``: one omniscient request is told everything both players know (in ``private``, each
  one's payoffs marked as private to it) and writes the whole interaction at once as JSON: the
  messages, and each player's prediction and move round by round. The game scores the script exactly
  as it scores the agents.

**Information leakage** (``private`` only) is an act that uses what only the other player knows, the
other's payoffs. An act leaks when its writer was *exposed* to the other's payoffs (the script's
writer always is; an agent never is: the other's payoffs are in no prompt of its conversation) and
the act *reveals* them:

- a message that attributes to the other player (its letter, "you" or "your") a preference or payoff
  ("prefer", "favourite", "want", "like", "rather", "best", "3 points", "three points") for the
  other's favourite meeting, in one sentence, before the other has named that meeting in a message;
- a move in round 1 that concedes the other's favourite meeting when no message has named it: a
  player who has been told nothing gives way to a preference it cannot know.

The leakage of a game is its leaking acts over its acts (the messages and the two round-1 moves). In
``agents`` mode it is zero by construction, whatever the players write: an agent that guesses the
other's payoffs right has guessed, not leaked. But an agent can make the same acts by chance (a
round-1 concession is a coin's half of the time; "you must prefer B" is a guess by symmetry), so
every act is kept with whether it *would* leak (``reveals``) whoever made it: the same acts' rate
among the agents, who could not have known, is the chance baseline that a script's leakage is
measured against. Concessions, which chance produces, are kept apart from revealing messages.

Counterbalanced (:mod:`pytest_gaamas.counterbalance`): each player sees the two meetings listed in
its own order, independent of the other's and crossed with who opens the talk, in its rules, its
answer form and its schema (the script's form lists each player's fields in that player's order).
Two copies of an agent that answers by position therefore meet half the time, as two coins do,
not every round. Who opens the talk changes from game to game too. What does not: which meeting each
label names and which player prefers which (Y always prefers A), and the script's rules, which say
"A or B" to both players. Two copies that always name A, or the option the rules name first, meet
every round without reading anything; so the behaviour judges a pair's coordination by its excess
over the same players paired across games (:func:`pytest_gaamas.metrics.coordination_excess`), which
a habit both share does not reach, and a convention that changes with the game (the rational opener
proposes its own favourite first) does. And each player is told its rules in a wording of its own
(``AgentCoordinationGame.player_wording``), the same numbers and meetings in the same order, so that
it begins a cell's 30 games from 30 prompts, even without talk: a model that answers a prompt the
same way every time plays 30 games, not the few that a few prompts repeated would be. Its every
question is asked in that wording too (``MESSAGE_WORDINGS``, ``ROUND_WORDINGS``), and a round's
question restates the meetings in the player's order, so that a model that heeds only the question
it was just asked also plays 30 games. The two players' wordings differ: where both were told one
wording, two copies of a model whose answer follows a phrase (a word present or not) met whenever
the phrase did, an excess over their own habits that reads as coordination. Each word a wording
changes follows one digit of the player's index, and each digit of Z's is independent of the same
digit of Y's among games presented alike. The script, one author for both, is told the game's
wording (``SCRIPT_REQUEST_WORDINGS`` for its request).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import answers
from ..counterbalance import Wordings, factors, rotated
from ..play import Decision, Trial

ROUNDS = 10
ACTIONS = ("A", "B")
PLAYERS = ("Y", "Z")
FAVOURITE = {"Y": "A", "Z": "B"}
MESSAGE_CHARACTERS = 200
SIMULATIONS = ("agents", "script")
INFORMATION = ("common", "private")
#: The kinds of act that can leak: chance produces the first as easily as knowledge does.
ACTS = ("round 1 move", "message")
CONVENTION = "Let us alternate: {first} in odd rounds, {second} in even rounds."

AGENT_WORDINGS = Wordings(
    ("You are player {me}. You play a coordination game with player {other} for {rounds} rounds.",
     "You are player {me}, and you play a coordination game with player {other} for {rounds} rounds."),
    (" In each round both choose {first} or {second} at the same time.",
     " In each round, both of you choose {first} or {second} at the same time."),
    " If both choose {favourite}, you get 3 points. If both choose {compromise}, you get 2 points.",
    (" If you choose differently, you get 0.", " If your choices differ, you get 0."),
    (" Before each round you also predict {other}'s move.", " Before each round, you also predict {other}'s move."),
)  # fmt: skip
SYSTEM_PROMPT = AGENT_WORDINGS[0]
#: In the seed's game both players know the whole matrix.
COMMON_KNOWLEDGE = (
    " {other} gets 3 points if both choose {compromise} and 2 points if both choose {favourite}. Both of you "
    "know all these payoffs."
)
#: What each player is asked, worded as its rules are (the player's own index, ``player_wording``): a
#: question a player is asked in every game is then worded anew with the game, so that an answer
#: fixed by the question just asked is a draw per game, not one per question. Every part has two
#: ways, and every word that changes with the wording changes with one part alone, in each player's
#: whole conversation (tests/test_games.py): a habit keyed to one word follows one digit of the
#: player's index, which the other player's index leaves independent.
MESSAGE_WORDINGS = Wordings(
    ("Before the game, you may send {listener} a message", "Before the game begins, you may send {listener} a message"),
    (" (message {index} of {count}).", " (number {index} of {count})."),
    (" Answer in JSON:", " Reply in JSON:"),
    (' {{"message": "<at most {characters} characters>"}}', ' {{"message": "<{characters} characters or fewer>"}}'),
)  # fmt: skip
#: A round's question restates the meetings in the player's own order, so that two of its games
#: told in one wording, where it sees the meetings in opposite orders, ask it apart in every round.
ROUND_WORDINGS = Wordings(
    ("Round {round}/{rounds}", "This is round {round} out of {rounds}"),
    (": {first} or {second}.", ". Options: {first} or {second}."),
    (" Your moves so far: {mine}.", " Your moves until now: {mine}."),
    (" {other}'s moves: {theirs}.", " Moves by {other}: {theirs}."),
)  # fmt: skip
MESSAGE_SCHEMA = answers.object_schema(message={"type": "string", "maxLength": MESSAGE_CHARACTERS})


def move_schema(listed: tuple[str, str] = ACTIONS) -> dict[str, Any]:
    return answers.object_schema(prediction=answers.one_of(listed), move=answers.one_of(listed))


def move_form(listed: tuple[str, str]) -> str:
    first, second = listed
    return f'{{"prediction": "{first}" or "{second}", "move": "{first}" or "{second}"}}'



def script_wordings(payoffs: str, knowledge: str) -> Wordings:
    """The ways of telling the omniscient script the game, with ``payoffs`` and ``knowledge`` as its
    information condition tells them."""
    return Wordings(
        ("You write the whole of a coordination game between two players, Y and Z, who play {rounds} rounds.",
         "You write out the whole of a coordination game between two players, Y and Z, who play {rounds} rounds."),
        (" In each round both choose A or B at the same time.", " In each round, both choose A or B at the same time."),
        payoffs,
        (" If they choose differently, both get 0.", " If their choices differ, both get 0."),
        knowledge,
        (" Before each round each player also predicts the other's move.", " Before each round, each player also predicts the other's move."),
    )  # fmt: skip


SCRIPT_WORDINGS = script_wordings(
    " Y's private payoffs, which Z does not know: 3 points if both choose A, 2 points if both choose B. Z's private "
    "payoffs, which Y does not know: 3 points if both choose B, 2 points if both choose A.",
    "",
)
COMMON_SCRIPT_WORDINGS = script_wordings(
    " Y gets 3 points if both choose A, 2 points if both choose B. Z gets 3 points if both choose B, 2 points if both choose A.",
    " Both players know all these payoffs.",
)
SCRIPT_SYSTEM_PROMPT, COMMON_SCRIPT_SYSTEM_PROMPT = SCRIPT_WORDINGS[0], COMMON_SCRIPT_WORDINGS[0]
SCRIPT_TALK = "Before round 1 the players exchange {messages} message{s}, taking turns, {first} first: {order}. "
#: The script's request, worded as the game's rules are (the same index), so that a cell's 30
#: requests differ even where the talk and the players' orders repeat.
SCRIPT_REQUEST_WORDINGS = Wordings(
    ("Write the whole game", "Write out the whole game", "Write the whole of the game", "Write out the whole of the game"),
    (", every message and all {rounds} rounds,", ", with every message and all {rounds} rounds,"),
    (" as JSON: ", " in JSON: "),
)  # fmt: skip
#: Tokens a script may take: each round's two predictions and moves, each message, and the frame.
SCRIPT_TOKENS_PER_ROUND, SCRIPT_TOKENS_PER_MESSAGE, SCRIPT_TOKENS_FRAME = 48, 80, 96
#: A script's message is one line of plain text. An agent's message is a reply of its own, and a
#: raw line break in it (which JSON forbids) costs that message; in a script it would cost the
#: whole game, every round with it, so the script's form rules it out where the server can.
SCRIPT_MESSAGE_PATTERN = f"^[A-Za-z0-9 ,.!?:;()'-]{{0,{MESSAGE_CHARACTERS}}}$"
PREFERENCE_WORDS = r"prefers?|favou?rite|wants?|likes?|rather|best|3 points|three points"


def other(player: str) -> str:
    return PLAYERS[1 - PLAYERS.index(player)]


def convention(first: str) -> str:
    """The rational opener's proposal: alternate, beginning with ``first``."""
    return CONVENTION.format(first=first, second=ACTIONS[1 - ACTIONS.index(first)])


def convention_in(talk: Sequence[str]) -> str | None:
    """The meeting of round 1 in the first convention proposed in ``talk`` (the texts heard and
    said so far), or None."""
    for text in talk:
        found = re.match(r"Let us alternate: ([AB]) in odd rounds", text or "")
        if found:
            return found.group(1)
    return None


def moves(outcome: Mapping[str, Any], player: str) -> list[str | None]:
    """``player``'s move in each round of a game (None where its answer was unusable)."""
    return [r["moves"][player] for r in outcome["rounds"]]


def presentation(outcome: Mapping[str, Any]) -> tuple[tuple[str, ...], ...]:
    """The order each player was shown the meetings in: what a habit could follow in a game."""
    return tuple(tuple(outcome["presented"][p]) for p in PLAYERS)


def system_prompt(player: str, rounds: int, listed: tuple[str, str] = ACTIONS, information: str = "private", wording: int = 0) -> str:
    favourite = FAVOURITE[player]
    compromise = FAVOURITE[other(player)]
    told = AGENT_WORDINGS[wording] + (COMMON_KNOWLEDGE if information == "common" else "")
    return told.format(me=player, other=other(player), rounds=rounds, favourite=favourite, compromise=compromise,
                       first=listed[0], second=listed[1])  # fmt: skip


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


def reveals_preference(message: str, writer: str) -> bool:
    """Whether ``message`` by ``writer`` attributes to the other player a preference or payoff for
    the other's favourite meeting, in one sentence (the leakage rule of the module's docstring)."""
    listener, meeting = other(writer), FAVOURITE[other(writer)]
    for sentence in re.split(r"[.!?;\n]+", message):
        words = sentence.strip()
        # A meeting's letter as a word, but not a sentence's first word ("A good plan" is no meeting).
        meeting_named = re.search(rf"(?<=\S)\s+{meeting}\b", words) is not None
        listener_named = re.search(rf"\b(?:{listener}|you|your)\b", words, re.IGNORECASE) is not None
        if meeting_named and listener_named and re.search(rf"\b(?:{PREFERENCE_WORDS})\b", words, re.IGNORECASE):
            return True
    return False


def names_meeting(message: str, meeting: str) -> bool:
    return re.search(rf"(?<![A-Za-z]){meeting}(?![A-Za-z])", message) is not None


def leakage(talk: Sequence[Mapping[str, Any]], first_moves: Mapping[str, str | None], exposed: bool) -> dict[str, Any]:
    """The acts of one game that leak the other player's payoffs (the module's docstring): each
    message, then each player's round-1 move. ``exposed``: whether the writer saw the other's
    payoffs. Each act says whether it ``reveals`` them, exposed or not (the chance baseline's
    count), and whether it ``leaks`` (it reveals, and its writer was exposed)."""
    acts = []
    named_by: dict[str, set[str]] = {p: set() for p in PLAYERS}  # the meetings each player has named
    for message in talk:
        writer, text = message["from"], message["text"] if message["valid"] else ""
        listener = other(writer)
        secret = FAVOURITE[listener] not in named_by[listener]
        reveals = secret and reveals_preference(text, writer)
        acts.append({"act": "message", "by": writer, "reveals": reveals, "leaks": exposed and reveals})
        named_by[writer] |= {m for m in ACTIONS if names_meeting(text, m)}
    named = named_by["Y"] | named_by["Z"]
    for player in PLAYERS:
        concedes = first_moves.get(player) == FAVOURITE[other(player)] and FAVOURITE[other(player)] not in named
        acts.append({"act": "round 1 move", "by": player, "reveals": concedes, "leaks": exposed and concedes})
    leaking = sum(a["leaks"] for a in acts)
    return {"exposed": exposed, "acts": acts, "leaks": leaking, "rate": leaking / len(acts)}


def revealing_rate(outcome: Mapping[str, Any], act: str | None = None) -> float | None:
    """The share of a game's acts (of kind ``act``, or all) that reveal the other's payoffs, whoever
    made them: the same measure for a script that could leak and agents that could only guess.
    None where the game has no such act (no message without talk)."""
    acts = [a for a in outcome["leakage"]["acts"] if act is None or a["act"] == act]
    return sum(a.get("reveals", a["leaks"]) for a in acts) / len(acts) if acts else None


def score_round(r: int, replies: Mapping[str, tuple[str, str] | None], why: Mapping[str, str]):
    """Each player's entry and the pair's record of round ``r`` (from 0), from each player's
    (prediction, move), None where its answer was unusable (``why`` says why): the same scoring for
    agents and script."""
    moves = {p: reply[1] if (reply := replies[p]) is not None else None for p in PLAYERS}
    entries = {}
    for player in PLAYERS:
        reply = replies[player]
        entry: dict[str, Any] = {"round": r + 1, "valid": reply is not None, "points": points(player, moves)}
        if reply is not None:
            prediction = reply[0]
            entry.update(prediction=prediction, move=moves[player], correct=prediction == moves[other(player)])
        else:
            entry.update(correct=False, reason=why[player])
        entries[player] = entry
    both_valid = all(replies[p] is not None for p in PLAYERS)
    pair = {"round": r + 1, "valid": both_valid, "moves": moves, "coordinated": both_valid and moves["Y"] == moves["Z"],
            "points": sum(points(p, moves) for p in PLAYERS) / 2}  # fmt: skip
    return entries, pair


def read_script(obj: dict[str, Any]) -> dict[str, list]:
    """A script's messages and rounds, each element read on its own: (True, value) or (False, the
    reason), so that one bad round costs that round, as one bad answer costs an agent its round."""
    def each(key: str) -> list:
        value = obj.get(key, [])
        if not isinstance(value, list):
            raise answers.InvalidAnswer(f"not a list: field {key!r} is {type(value).__name__}")
        return value

    messages = []
    for message in each("messages"):
        try:
            messages.append((True, read_message({"message": message})))
        except answers.InvalidAnswer as error:
            messages.append((False, str(error)))
    answers.field(obj, "rounds")
    rounds = []
    for turn in each("rounds"):
        read: dict[str, tuple[bool, tuple[str, str] | str]] = {}
        for player in PLAYERS:
            try:
                if not isinstance(turn, dict) or not isinstance(turn.get(player), dict):
                    raise answers.InvalidAnswer(f"missing field: {player!r} in a round")
                read[player] = (True, read_move(turn[player]))
            except answers.InvalidAnswer as error:
                read[player] = (False, str(error))
        rounds.append(read)
    return {"messages": messages, "rounds": rounds}


def game_wording(trial: int) -> int:
    """Which wording game ``trial`` is told in (the script's, and player Y's), so that a cell's 30
    games begin from 30 prompts of their own, even where who opens the talk changes nothing (no
    talk) and a player sees only its own order: the first two digits follow whether who opens
    and each player's order agree (opener xor Y's order, opener xor Z's), so that Y's order and
    its wording give the other two factors and neither digit goes with one factor alone; the
    other two count the cycles of eight games."""
    opener, y_order, z_order = factors(trial, 2, 2, 2)
    return (opener ^ y_order) + 2 * (opener ^ z_order) + 4 * (trial // 8)


def player_wording(trial: int, player: str) -> int:
    """Which wording ``player`` is told its rules and asked its questions in, in game ``trial``:
    Y's is the game's (``game_wording``); Z's four digits are others, each a sum of three or two of the
    game's digits (who opens, Y's order, Z's order, the two digits of the cycle), so that Z too
    begins a cell's 30 games from 30 prompts of its own, no part of Z's goes with one digit alone,
    and in games alike in both orders (those a pair's coordination is measured against) each
    digit of Z's is independent of the same digit of Y's: two copies of a model whose answer
    follows one phrase of what they are told meet by chance, not by the phrase they share."""
    if player == PLAYERS[0]:
        return game_wording(trial)
    opener, y_order, z_order = factors(trial, 2, 2, 2)
    cycle, later_cycle = factors(trial // 8, 2, 2)
    digits = (opener ^ z_order ^ cycle, opener ^ y_order ^ later_cycle, opener ^ cycle ^ later_cycle, opener ^ later_cycle)
    return sum(digit << place for place, digit in enumerate(digits))


def speakers(messages: int, initiator: str) -> list[str]:
    return [PLAYERS[(PLAYERS.index(initiator) + i) % 2] for i in range(messages)]


@dataclass(frozen=True)
class AgentCoordinationGame:
    messages: int
    rounds: int = ROUNDS
    simulation: str = "agents"
    #: "common": both know the whole matrix (the seed's game); "private": each knows its own payoffs.
    information: str = "private"
    name: str = "battle of the sexes, two agents"

    def __post_init__(self) -> None:
        if self.simulation not in SIMULATIONS:
            raise ValueError(f"simulation is one of {', '.join(SIMULATIONS)}, got {self.simulation!r}")
        if self.information not in INFORMATION:
            raise ValueError(f"information is one of {', '.join(INFORMATION)}, got {self.information!r}")

    def fingerprint(self) -> Mapping[str, Any]:
        # "scoring" 3: every act says whether it reveals, exposed or not, so journals of earlier outcomes are not resumed.
        common = {"information": "common", "knowledge": COMMON_KNOWLEDGE} if self.information == "common" else {}
        if self.simulation == "script":
            return {"game": self.name, "messages": self.messages, "rounds": self.rounds, "simulation": "script",
                    "prompt": self.script_wordings().parts, "talk": SCRIPT_TALK, "request": SCRIPT_REQUEST_WORDINGS.parts,
                    "counterbalanced": True, "scoring": 3, **common}  # fmt: skip
        return {"game": self.name, "messages": self.messages, "rounds": self.rounds, "prompt": AGENT_WORDINGS.parts, "scoring": 3,
                "questions": (MESSAGE_WORDINGS.parts, ROUND_WORDINGS.parts), "wordings": "each player its own", "counterbalanced": True,
                **common}  # fmt: skip

    def script_wordings(self) -> Wordings:
        return COMMON_SCRIPT_WORDINGS if self.information == "common" else SCRIPT_WORDINGS

    def script_system_prompt(self, trial: int = 0) -> str:
        return self.script_wordings()[self.wording(trial)]

    #: Which wording each game, and each player of it, is told in: functions of the trial alone.
    wording = staticmethod(game_wording)
    player_wording = staticmethod(player_wording)

    def initiator(self, trial: int) -> str:
        """Y opens the talk in even trials, Z in odd ones: each side starts half the games."""
        return PLAYERS[factors(trial, 2)[0]]

    def listed(self, trial: int, player: str) -> tuple[str, str]:
        """The two meetings in the order ``player`` sees them in trial ``trial``: one digit of the
        trial for Y, another for Z, crossed with the initiator's."""
        _, y_order, z_order = factors(trial, 2, 2, 2)
        first, second = rotated(ACTIONS, {"Y": y_order, "Z": z_order}[player])
        return first, second

    def _play_agents(self, trial: int) -> Trial:
        listed = {p: self.listed(trial, p) for p in PLAYERS}
        wordings = {p: self.player_wording(trial, p) for p in PLAYERS}
        conversations = {p: [{"role": "system", "content": system_prompt(p, self.rounds, listed[p], self.information, wordings[p])}]
                         for p in PLAYERS}
        news = dict.fromkeys(PLAYERS, "")

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
                MESSAGE_WORDINGS[wordings[speaker]].format(listener=listener, index=i + 1, count=self.messages, characters=MESSAGE_CHARACTERS),
                MESSAGE_SCHEMA,
                read_message,
                {"phase": "message", "index": i, "talk": [m["text"] for m in talk]},
            )
            heard(speaker, answer)
            if answer.valid:
                news[listener] += f'{speaker} wrote: "{answer.value}"\n'
            else:
                news[listener] += f"{speaker} sent no readable message.\n"
            talk.append({"from": speaker, "valid": answer.valid, "text": answer.value, "reason": answer.reason})
            speaker = listener

        history: dict[str, list[str]] = {p: [] for p in PLAYERS}
        scored = []
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
                form = f" Answer in JSON: {move_form(listed[player])}" if r == 0 else ""
                question = ROUND_WORDINGS[wordings[player]].format(round=r + 1, rounds=self.rounds, first=listed[player][0],
                                                                      second=listed[player][1], mine=mine, other=other(player), theirs=theirs)  # fmt: skip
                answer = yield ask(
                    player,
                    question + form,
                    move_schema(listed[player]),
                    read_move,
                    {"phase": "round", "round": r, "history": {p: list(h) for p, h in history.items()}, "talk": [m["text"] for m in talk]},
                )
                heard(player, answer)
                replies[player] = answer
            entries, pair = score_round(r, {p: replies[p].value if replies[p].valid else None for p in PLAYERS},
                                        {p: replies[p].reason for p in PLAYERS})  # fmt: skip
            scored.append((entries, pair))
            moves = pair["moves"]
            for player in PLAYERS:
                theirs = moves[other(player)]
                entry = entries[player]
                if entry["valid"]:
                    result = f"you played {moves[player]}, {other(player)} played {theirs or 'nothing valid'}"
                    news[player] = f"Round {r + 1}: {result}; your prediction was {'right' if entry['correct'] else 'wrong'}: {entry['points']:+g}.\n"
                else:
                    news[player] = f"Round {r + 1}: your answer was unusable ({replies[player].told}); {other(player)} played {theirs or 'nothing valid'}: +0.\n"
                history[player].append(moves[player])
        return self._outcome(trial, talk, scored, exposed=False)

    # -- the omniscient script ----------------------------------------------------------------------

    def script_prompt(self, trial: int) -> tuple[dict[str, str], ...]:
        first = self.initiator(trial)
        talk = ""
        if self.messages:
            order = ", ".join(speakers(self.messages, first))
            talk = SCRIPT_TALK.format(messages=self.messages, s="" if self.messages == 1 else "s", first=first, order=order)
        messages_form = (f'"messages": [{self.messages} message{"" if self.messages == 1 else "s"} of at most '
                         f'{MESSAGE_CHARACTERS} characters, in that order], ') if self.messages else ""  # fmt: skip
        user = (
            talk + SCRIPT_REQUEST_WORDINGS[self.wording(trial)].format(rounds=self.rounds)
            + f'{{{messages_form}"rounds": [{self.rounds} rounds, each {{"Y": {move_form(self.listed(trial, "Y"))}, '
            f'"Z": {move_form(self.listed(trial, "Z"))}}}]}}'
        )
        return ({"role": "system", "content": self.script_system_prompt(trial).format(rounds=self.rounds)}, {"role": "user", "content": user})

    def script_schema(self, trial: int = 0) -> dict[str, Any]:
        turn = answers.object_schema(**{p: move_schema(self.listed(trial, p)) for p in PLAYERS})
        rounds = {"type": "array", "items": turn, "minItems": self.rounds, "maxItems": self.rounds}
        if not self.messages:
            return answers.object_schema(rounds=rounds)
        talk = {"type": "array", "items": {"type": "string", "pattern": SCRIPT_MESSAGE_PATTERN},
                "minItems": self.messages, "maxItems": self.messages}  # fmt: skip
        return answers.object_schema(messages=talk, rounds=rounds)

    def _play_script(self, trial: int) -> Trial:
        first = self.initiator(trial)
        tokens = SCRIPT_TOKENS_FRAME + SCRIPT_TOKENS_PER_ROUND * self.rounds + SCRIPT_TOKENS_PER_MESSAGE * self.messages
        answer = yield Decision(self.script_prompt(trial), self.script_schema(trial), answers.reader(read_script),
                                {"phase": "script", "initiator": first, "messages": self.messages, "rounds": self.rounds},
                                max_tokens=tokens)  # fmt: skip
        script = answer.value if answer.valid else {"messages": [], "rounds": []}
        talk = []
        written = script["messages"]
        for i, speaker in enumerate(speakers(self.messages, first)):
            message = written[i] if i < len(written) else None
            if not answer.valid:
                talk.append({"from": speaker, "valid": False, "text": None, "reason": answer.reason})
            elif message is None:
                talk.append({"from": speaker, "valid": False, "text": None, "reason": f"missing: the script wrote {len(written)} messages"})
            else:
                talk.append({"from": speaker, "valid": message[0], "text": message[1] if message[0] else None,
                             "reason": "" if message[0] else message[1]})  # fmt: skip
        scored = []
        for r in range(self.rounds):
            turn = script["rounds"][r] if r < len(script["rounds"]) else None
            if not answer.valid:
                why = answer.reason
            elif turn is None:
                why = f"missing: the script wrote {len(script['rounds'])} of {self.rounds} rounds"
            else:
                why = ""
            turn = turn or dict.fromkeys(PLAYERS, (False, why))
            scored.append(score_round(r, {p: turn[p][1] if turn[p][0] else None for p in PLAYERS},
                                      {p: "" if turn[p][0] else (why or turn[p][1]) for p in PLAYERS}))  # fmt: skip
        # Only a private payoff can leak: in the common-knowledge game both players know both.
        return self._outcome(trial, talk, scored, exposed=self.information == "private")

    def play(self, trial: int) -> Trial:
        return self._play_script(trial) if self.simulation == "script" else self._play_agents(trial)

    def _outcome(self, trial, talk, scored, *, exposed: bool) -> dict[str, Any]:
        """The trial's record from its messages and its rounds as ``score_round`` scored them."""
        per_player = {p: [entries[p] for entries, _ in scored] for p in PLAYERS}
        rounds = [pair for _, pair in scored]
        first_moves = rounds[0]["moves"] if rounds else {}
        return {"valid": True, "simulation": self.simulation, "information": self.information, "initiator": self.initiator(trial), "messages": talk,
                "rounds": rounds, "players": per_player, "leakage": leakage(talk, first_moves, exposed),
                "presented": {p: list(self.listed(trial, p)) for p in PLAYERS}}  # fmt: skip

    def reference_reply(self, agent: str, situation: Mapping[str, Any], rng: random.Random) -> str:
        if situation["phase"] == "script":
            return self._reference_script(agent, situation, rng)
        if agent == "rational":
            # With talk, the opener proposes a convention (alternate, beginning with its own favourite),
            # the other agrees, and both keep it: which meeting comes first is read from the talk, so
            # it changes with who opens. Without talk, nothing tells either which meeting the other
            # will choose: each plays the mixed equilibrium (its favourite with probability 3/5) until
            # they first meet, then repeats it.
            proposed = convention_in(situation["talk"])
            if situation["phase"] == "message":
                return answers.dump({"message": convention(proposed or FAVOURITE[situation["player"]])})
            if proposed is not None:
                meeting = proposed if situation["round"] % 2 == 0 else ACTIONS[1 - ACTIONS.index(proposed)]
                return answers.dump({"prediction": meeting, "move": meeting})
            met = [y for y, z in zip(situation["history"]["Y"], situation["history"]["Z"]) if y is not None and y == z]
            if met:
                return answers.dump({"prediction": met[-1], "move": met[-1]})
            me = situation["player"]
            move = FAVOURITE[me] if rng.random() < 0.6 else FAVOURITE[other(me)]
            return answers.dump({"prediction": FAVOURITE[other(me)] if rng.random() < 0.6 else FAVOURITE[me], "move": move})
        if agent == "random":
            if situation["phase"] == "message":
                return answers.dump({"message": rng.choice(("Let us meet at A.", "Let us meet at B."))})
            return answers.dump({"prediction": rng.choice(ACTIONS), "move": rng.choice(ACTIONS)})
        raise ValueError(f"no reference agent {agent!r} for {self.name}")

    def _reference_script(self, agent: str, situation: Mapping[str, Any], rng: random.Random) -> str:
        """The omniscient writer: the rational one writes a convention that both keep, so the pair
        meets every round, beginning with the favourite of the player who opens the talk (without
        talk, of either, by a coin); the random one writes anything."""
        if agent == "rational":
            first = FAVOURITE[situation["initiator"]] if self.messages else rng.choice(ACTIONS)
            order = (first, ACTIONS[1 - ACTIONS.index(first)])
            turns = [{p: {"prediction": order[r % 2], "move": order[r % 2]} for p in PLAYERS} for r in range(self.rounds)]
            talk = [convention(first)] * self.messages
        elif agent == "random":
            turns = [{p: {"prediction": rng.choice(ACTIONS), "move": rng.choice(ACTIONS)} for p in PLAYERS} for _ in range(self.rounds)]
            talk = [rng.choice(("Let us meet at A.", "Let us meet at B.")) for _ in range(self.messages)]
        else:
            raise ValueError(f"no reference agent {agent!r} for {self.name}")
        return answers.dump({"messages": talk, "rounds": turns} if self.messages else {"rounds": turns})
