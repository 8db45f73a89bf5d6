"""A strategy run: the model's function, confined in the sandbox, plays every trial of a game through
the game's own parser (the contract: ``strategy``)."""

from __future__ import annotations

from typing import Any

from . import answers
from .play import Request, TrialRecord, play_trial, request_seed
from .sandbox import Limits, Sandbox, StrategyFailure
from .strategy import Contract, StrategyResult, invalid_trials

#: The sandbox's limits where a caller names none.
DEFAULT_LIMITS = Limits()


class StrategyPlayer:
    """An agent that answers every decision of a game by calling the strategy in its sandbox."""

    def __init__(self, contract: Contract, box: Sandbox):
        self.spec = "strategy"
        self.contract = contract
        self.box = box

    def reply(self, request: Request) -> str:
        value = self.box.call(*self.contract.arguments(request.decision.situation))
        return answers.dump(self.contract.answer_to(request.decision.situation, value))


def run_strategy(game, contract: Contract, code: str, trials: int, *, seed: int, limits: Limits = DEFAULT_LIMITS) -> StrategyResult:
    """Play ``trials`` trials of ``game`` with the strategy ``code``. The first failure, or the first
    answer the game rejects, makes the strategy invalid and every trial with it."""
    records: list[TrialRecord] = []
    with Sandbox(code, contract.function, contract.parameters, limits) as box:
        player = StrategyPlayer(contract, box)
        try:
            for trial in range(trials):
                box.start(seed=request_seed(seed, trial, -1))
                record = play_trial(game, player, trial, seed=seed, temperature=0.0)
                rejected = next((r for r in record.rounds if not r.valid), None)
                if rejected is not None:
                    raise StrategyFailure("illegal action", f"{rejected.reply[:200]} ({rejected.reason})")
                records.append(record)
            box.start(seed=request_seed(seed, trials, -1))
            probes = [(arguments, _probe(contract, box, arguments)) for arguments in contract.probes]
            box.finish()
        except StrategyFailure as failure:
            return StrategyResult(code, failure, invalid_trials(failure, trials), box.calls, box.layers)
        return StrategyResult(code, None, records, box.calls, box.layers, probes)


def _probe(contract: Contract, box: Sandbox, arguments: tuple) -> Any:
    """The strategy's value for the probe, held to the contract's type like any answer it gives."""
    value = box.call(*arguments)
    contract.answer(value)
    return value
