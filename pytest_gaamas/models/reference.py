"""Scripted reference agents. They answer through the same parsing path as a model, so a behaviour
that a rational agent fails, or a random agent passes, shows itself as a broken test.

The shortcut agents (``first``, ``last``, ``constant``) never read the game: they see only the form
the answer must take (the decision's JSON schema), never the prompt, the situation or the history,
and answer it by position or by rote. A criterion that one of them meets measures the shortcut, not
the construct, unless the construct is one the shortcut truly has (each such exception is named
in ``tests/test_behaviours.py``). They play every game, a user's too, without the game saying how.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from .. import answers
from ..play import Request
from .base import Model

KINDS = {
    "rational": "plays the game-theoretic (or utility-maximising) answer",
    "random": "chooses uniformly at random among the legal answers",
    "human": "answers with a real person's choice from the human data",
    "average": "always makes people's mean choice where the data have one (dictator, ultimatum proposer): plausible in aggregate, unfaithful in person",
    "sustainable": "takes its equal share of what a shared resource regrows, and proposes that share as the norm (the commons)",
}
#: Agents that answer the form without reading the game.
SHORTCUTS = {
    "first": "never reads the game: the first option its answer form lists, the bottom of every range",
    "last": "never reads the game: the last option its answer form lists, the top of every range",
    "constant": "never reads the game: the same answer every time, the middle of every range and the option whose name sorts first",
}
KINDS |= SHORTCUTS
#: The agents every game has; a game with others (the commons' sustainable agent) lists its own.
EVERY_GAME = ("rational", "random", "human")


class ReferenceAgent(Model):
    uses_http = False

    def __init__(self, kind: str):
        super().__init__(f"reference:{kind}")
        self.kind = kind

    def reply(self, request: Request) -> str:
        if self.kind in SHORTCUTS:
            return answers.dump(shortcut_answer(request.schema, self.kind))
        # Seeded by the request, so a reference agent is as reproducible as a replayed cassette.
        rng = random.Random(request.seed)
        return request.game.reference_reply(self.kind, request.decision.situation, rng)

    def provenance(self) -> dict:
        return {"model": self.spec, "server": None, "digest": None, "description": KINDS[self.kind]}


def shortcut_answer(schema: Mapping[str, Any], kind: str) -> Any:
    """What shortcut agent ``kind`` answers to a JSON schema, from the schema alone: an option of an
    enum by its place in the list (or, for ``constant``, by its name), a number at the bottom, top or
    middle of its range, every required field of an object, as many items as an array needs, an
    empty string for free text. A free-text answer with no schema (code) is an empty reply."""
    if "enum" in schema:
        options = list(schema["enum"])
        return {"first": options[0], "last": options[-1], "constant": min(options, key=str)}[kind]
    kind_of = schema.get("type")
    if kind_of == "object":
        return {name: shortcut_answer(spec, kind) for name, spec in schema.get("properties", {}).items()}
    if kind_of == "array":
        count = schema.get("minItems", 0) if kind != "last" else schema.get("maxItems", schema.get("minItems", 0))
        return [shortcut_answer(schema.get("items", {}), kind) for _ in range(count)]
    if kind_of in ("number", "integer"):
        low = schema.get("minimum", 0)
        high = schema.get("maximum", low)
        value = {"first": low, "last": high, "constant": (low + high) / 2}[kind]
        return int(value) if kind_of == "integer" else value
    if kind_of == "boolean":
        return kind != "last"
    return ""
