"""One-shot games: one request per trial, one JSON answer, one outcome.

A concrete game says what the agent is told (``messages``), the answer's form (``schema`` and
``read``), what the answer means (``outcome``) and what each reference agent answers.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from .. import answers
from ..play import Decision, Trial


def conversation(system: str, user: str) -> tuple[dict[str, str], ...]:
    """A system message only where the game sets one (a "neutral" prompt has none)."""
    return (({"role": "system", "content": system},) if system else ()) + ({"role": "user", "content": user},)


class OneShotGame:
    name = "one-shot"
    has_human_data = False
    schema: Mapping[str, Any] = {}

    def messages(self, trial: int) -> tuple[dict[str, str], ...]:
        raise NotImplementedError

    def read(self, obj: dict[str, Any]) -> Any:
        raise NotImplementedError

    def outcome(self, trial: int, value: Any) -> dict[str, Any]:
        raise NotImplementedError

    def reference_answer(self, agent: str, trial: int, rng: random.Random) -> dict[str, Any]:
        raise NotImplementedError

    def fingerprint(self) -> Mapping[str, Any]:
        return {"game": self.name, "messages": self.messages(0), "schema": self.schema}

    def play(self, trial: int) -> Trial:
        answer = yield Decision(self.messages(trial), self.schema, answers.reader(self.read), {"trial": trial})
        if not answer.valid:
            return {"valid": False, "reason": answer.reason}
        return {"valid": True, **self.outcome(trial, answer.value)}

    def reference_reply(self, agent: str, situation: Mapping[str, Any], rng: random.Random) -> str:
        if agent not in getattr(self, "reference_kinds", ("rational", "random", "human")):
            raise ValueError(f"no reference agent {agent!r} for {self.name}")
        return answers.dump(self.reference_answer(agent, situation["trial"], rng))
