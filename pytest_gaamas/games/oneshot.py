"""One-shot games: one request per trial, one JSON answer, one outcome.

A concrete game says what the agent is told (``messages``), the answer's form (``schema`` and
``read``), what the answer means (``outcome``) and what each reference agent answers. A game whose
form changes from trial to trial (options listed in another order, a range asked the other way
round: :mod:`pytest_gaamas.counterbalance`) says so in ``form(trial)`` and ``read_trial``, and
what each trial showed in ``presented(trial)``, which is kept in the trial's outcome.
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

    @property
    def schema(self) -> Mapping[str, Any]:
        """The answer's JSON schema, where it is the same in every trial (a game may set it as a class attribute)."""
        return {}

    def messages(self, trial: int) -> tuple[dict[str, str], ...]:
        raise NotImplementedError

    def read(self, obj: dict[str, Any]) -> Any:
        raise NotImplementedError

    def outcome(self, trial: int, value: Any) -> dict[str, Any]:
        raise NotImplementedError

    def reference_answer(self, agent: str, trial: int, rng: random.Random) -> dict[str, Any]:
        raise NotImplementedError

    def form(self, trial: int) -> Mapping[str, Any]:
        """The answer's JSON schema in trial ``trial``: ``schema`` unless the form is counterbalanced."""
        return self.schema

    def read_trial(self, trial: int, obj: dict[str, Any]) -> Any:
        """The answer of trial ``trial`` read from its JSON object: ``read`` unless the form changes."""
        return self.read(obj)

    def presented(self, trial: int) -> Mapping[str, Any]:
        """How trial ``trial`` was arranged (the options' order, the framing), for its record."""
        return {}

    def fingerprint(self) -> Mapping[str, Any]:
        # Two trials: a game whose arrangement alternates differs from one that does not from trial 1 on.
        return {"game": self.name, "messages": self.messages(0), "schema": self.form(0), "trial 1": [self.messages(1), self.form(1)]}

    def play(self, trial: int) -> Trial:
        decision = Decision(self.messages(trial), self.form(trial), answers.reader(lambda obj: self.read_trial(trial, obj)), {"trial": trial})
        answer = yield decision
        presented = self.presented(trial)
        arrangement = {"presented": dict(presented)} if presented else {}
        if not answer.valid:
            return {"valid": False, "reason": answer.reason, **arrangement}
        return {"valid": True, **self.outcome(trial, answer.value), **arrangement}

    def reference_reply(self, agent: str, situation: Mapping[str, Any], rng: random.Random) -> str:
        if agent not in getattr(self, "reference_kinds", ("rational", "random", "human")):
            raise ValueError(f"no reference agent {agent!r} for {self.name}")
        return answers.dump(self.reference_answer(agent, situation["trial"], rng))
