"""Playing an item's trials, up to N at once.

A server that answers many requests at once (Ollama with ``OLLAMA_NUM_PARALLEL``, vLLM, a hosted API)
would otherwise wait for one trial after another. Trials are independent, so up to ``concurrency``
of them are played at the same time, each in its own thread; the rounds of one trial stay in order,
as its conversation needs. Nothing else changes: every request carries the seed of its trial and
round, so it is the same request whenever it is sent; the records come back in trial order; each is
handed to ``finished`` as it completes (to be journaled at once), in the order trials finish.

The first error (a server gone) stops new trials from starting; those already asked finish or fail,
and every finished trial has been handed over before the error is raised.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from .play import Agent, Game, TrialRecord, play_trial


def play_trials(
    game: Game, agent: Agent, trials: Iterable[int], *, seed: int, temperature: float, concurrency: int,
    finished: Callable[[TrialRecord], None],
) -> list[TrialRecord]:  # fmt: skip
    """Play ``trials`` and return their records in trial order."""
    order = list(trials)

    def play(trial: int) -> TrialRecord:
        return play_trial(game, agent, trial, seed=seed, temperature=temperature)

    if concurrency <= 1 or len(order) <= 1:
        records = []
        for trial in order:
            records.append(play(trial))
            finished(records[-1])
        return records
    done: dict[int, TrialRecord] = {}
    with ThreadPoolExecutor(max_workers=min(concurrency, len(order)), thread_name_prefix="gaamas-trial") as pool:
        running = {pool.submit(play, trial): trial for trial in order}
        error: BaseException | None = None
        while running:
            completed, _ = wait(running, return_when=FIRST_COMPLETED)  # each journaled as it finishes
            for future in completed:
                trial = running.pop(future)
                if future.exception() is None:
                    done[trial] = future.result()
                    finished(done[trial])
                elif error is None:
                    error = future.exception()
                    for queued in running:  # no new trial once one has failed; those running finish
                        queued.cancel()
            running = {f: t for f, t in running.items() if not f.cancelled()}
        if error is not None:
            raise error
    return [done[trial] for trial in order]
