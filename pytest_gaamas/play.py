"""Playing a game: decisions, answers, trials, and the loop that asks an agent and records everything.

A game is pure. Its ``play(trial)`` is a generator: it yields a :class:`Decision` (what the agent is
told, the form its answer must take, and what it faces), receives the :class:`Answer` parsed from the
agent's reply, and finally returns the trial's outcome as a JSON-able dict. The loop below is the only
place where agents are asked anything.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .thinking import split_thinking

#: The longest reason an invalid answer keeps.
MAX_REASON = 200


@dataclass(frozen=True)
class Answer:
    """An agent's reply, parsed. ``valid`` is False when the reply was unusable, with the reason."""

    valid: bool
    value: Any = None
    reason: str = ""
    #: The reply as written, for games that carry a conversation on.
    text: str = ""
    #: What a game may tell the model of an unusable reply in a later prompt: the suite's own words,
    #: never what the model wrote (``answers.InvalidAnswer.told``); the reason where it quotes nothing.
    told: str = ""

    def __post_init__(self) -> None:
        if not self.told:
            object.__setattr__(self, "told", self.reason)
        # A reason quotes what the model wrote; a 65 KB value would be copied into every trial.
        if len(self.reason) > MAX_REASON:
            object.__setattr__(self, "reason", f"{self.reason[:MAX_REASON]}... ({len(self.reason):,} characters)")

    @classmethod
    def invalid(cls, reason: str, told: str = "") -> Answer:
        return cls(False, None, reason, told=told)


@dataclass(frozen=True)
class Reply:
    """What a model said: the text that holds its answer, its reasoning kept apart (a server's
    ``reasoning_content`` or ``thinking``), and whether the token limit cut the reply short."""

    text: str
    thinking: str = ""
    truncated: bool = False


@dataclass(frozen=True)
class Decision:
    """One request to an agent.

    ``situation`` holds the facts of the decision in structured form; models never see it, the
    reference agents act on it.
    """

    messages: tuple[Mapping[str, str], ...]
    #: The JSON schema of the answer; empty for a free-text answer (code).
    schema: Mapping[str, Any]
    parse: Callable[[str], Answer]
    situation: Mapping[str, Any] = field(default_factory=dict)
    #: A longer reply than a decision's, where the answer needs it; None for the model's default.
    max_tokens: int | None = None


Trial = Generator[Decision, Answer, dict]


class Game(Protocol):
    name: str

    def play(self, trial: int) -> Trial: ...

    def reference_reply(self, agent: str, situation: Mapping[str, Any], rng: random.Random) -> str:
        """The reply text of reference agent ``agent`` ("rational", "random", "human")."""

    def fingerprint(self) -> Mapping[str, Any]:
        """The parameters that make one game differ from another, for the journal."""


@dataclass(frozen=True)
class Request:
    """What an agent is asked: the decision, plus the sampling parameters of this one request."""

    decision: Decision
    game: Game
    seed: int
    temperature: float

    @property
    def messages(self) -> tuple[Mapping[str, str], ...]:
        return self.decision.messages

    @property
    def schema(self) -> Mapping[str, Any]:
        return self.decision.schema

    def max_tokens(self, default: int) -> int:
        return self.decision.max_tokens or default


class Agent(Protocol):
    spec: str

    def reply(self, request: Request) -> str | Reply: ...


@dataclass
class RoundRecord:
    seed: int
    messages: list[dict]
    reply: str
    valid: bool
    value: Any
    reason: str
    #: The model's reasoning, apart from its answer: never parsed, kept for whoever reads the run.
    thinking: str = ""


@dataclass
class TrialRecord:
    """One trial, whole: every request and reply, the parsed answers, and the outcome."""

    trial: int
    rounds: list[RoundRecord]
    outcome: dict

    @property
    def valid(self) -> bool:
        return bool(self.outcome.get("valid", True))

    def to_json(self) -> dict:
        # Shallow copies: asdict's deep copy was most of the plugin's cost per trial.
        return {"trial": self.trial, "rounds": [dict(vars(r)) for r in self.rounds], "outcome": self.outcome}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrialRecord:
        return cls(data["trial"], [RoundRecord(**r) for r in data["rounds"]], dict(data["outcome"]))


def read_reply(said: str | Reply, decision: Decision) -> tuple[str, str, Answer]:
    """The answer's text, the reasoning apart from it, and the answer parsed from the text alone. A
    reply cut short by the token limit that holds no usable answer says so (``truncated``), whatever
    the parser would have said of the fragment."""
    reply = said if isinstance(said, Reply) else Reply(said)
    text, inline = split_thinking(reply.text)
    thinking = "\n\n".join(part for part in (reply.thinking.strip(), inline) if part)
    answer = decision.parse(text)
    if not answer.valid and reply.truncated:
        answer = Answer.invalid(f"truncated: the reply reached the token limit before a usable answer ({answer.reason})",
                                told=f"truncated: the reply reached the token limit before a usable answer ({answer.told})")
    return text, thinking, replace(answer, text=text)


def request_seed(base_seed: int, trial: int, round_index: int) -> int:
    """A distinct, stable seed for every request, so repeated samples are distinct requests."""
    digest = hashlib.sha256(f"{base_seed}:{trial}:{round_index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def play_trial(game: Game, agent: Agent, trial: int, *, seed: int, temperature: float) -> TrialRecord:
    rounds: list[RoundRecord] = []
    generator = game.play(trial)
    try:
        decision = next(generator)
        while True:
            request = Request(decision, game, request_seed(seed, trial, len(rounds)), temperature)
            reply, thinking, answer = read_reply(agent.reply(request), decision)
            rounds.append(
                RoundRecord(request.seed, [dict(m) for m in decision.messages], reply, answer.valid, answer.value, answer.reason, thinking)
            )
            decision = generator.send(answer)
    except StopIteration as finished:
        return TrialRecord(trial, rounds, dict(finished.value))


def fingerprint(*parts: Any) -> str:
    """A short stable hash of JSON-able parts."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def cell_seed(seed: int, cell: str, temperature: float) -> int:
    """A seed for draws made in one cell: ``seed`` (a run's, or a request's) mixed with the cell (the
    digest of its game's parameters) and its temperature, so that two cells never draw alike."""
    return int(fingerprint(seed, cell, temperature), 16)
