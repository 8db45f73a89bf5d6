"""Scripted reference agents. They answer through the same parsing path as a model, so a behaviour
that a rational agent fails, or a random agent passes, shows itself as a broken test."""

from __future__ import annotations

import random

from ..play import Request
from .base import Model

KINDS = {
    "rational": "plays the game-theoretic (or utility-maximising) answer",
    "random": "chooses uniformly at random among the legal answers",
    "human": "answers with a real person's choice from the human data",
    "average": "always makes people's mean choice where the data have one (dictator, ultimatum proposer): plausible in aggregate, unfaithful in person",
    "sustainable": "takes its equal share of what a shared resource regrows, and proposes that share as the norm (the commons)",
}
#: The agents every game has; a game with others (the commons' sustainable agent) lists its own.
EVERY_GAME = ("rational", "random", "human")


class ReferenceAgent(Model):
    uses_http = False

    def __init__(self, kind: str):
        super().__init__(f"reference:{kind}")
        self.kind = kind

    def reply(self, request: Request) -> str:
        # Seeded by the request, so a reference agent is as reproducible as a replayed cassette.
        rng = random.Random(request.seed)
        return request.game.reference_reply(self.kind, request.decision.situation, rng)

    def provenance(self) -> dict:
        return {"model": self.spec, "server": None, "digest": None, "description": KINDS[self.kind]}
