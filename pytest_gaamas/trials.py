"""Playing an item's trials, up to N at once.

A server that answers many requests at once (Ollama with ``OLLAMA_NUM_PARALLEL``, vLLM, a hosted API)
would otherwise wait for one trial after another. Trials are independent, so up to ``concurrency``
of them are played at the same time, each in its own thread; the rounds of one trial stay in order,
as its conversation needs. Nothing else changes: every request carries the seed of its trial and
round, so it is the same request whenever it is sent; the records come back in trial order; each is
handed to ``finished`` as it completes (to be journaled at once), in the order trials finish.

A trial starts only when one before it has finished, so none waits in a queue: the first error (a
server gone), a Ctrl-C, or a finished trial that could not be handed over (a journal that cannot be
written) stops new trials from starting at once. Those already asked finish or fail, and every one
that finishes is handed over before the error is raised: what was paid for is journaled. A second
Ctrl-C while they finish stops them at their next request.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from .play import Agent, Game, TrialRecord, play_trial


class TrialsStopped(Exception):
    """A second Ctrl-C came while trials finished: this one is not asked further."""


class _Stoppable:
    """``agent``, until ``stop`` is set: then each request it is asked raises ``TrialsStopped``."""

    def __init__(self, agent: Agent, stop: threading.Event):
        self._agent, self._stop = agent, stop

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)

    def reply(self, request):
        if self._stop.is_set():
            raise TrialsStopped()
        return self._agent.reply(request)


def play_trials(
    game: Game, agent: Agent, trials: Iterable[int], *, seed: int, temperature: float, concurrency: int,
    finished: Callable[[TrialRecord], None], stopping: Callable[[int], None] | None = None,
) -> list[TrialRecord]:  # fmt: skip
    """Play ``trials`` and return their records in trial order. ``stopping`` is told, on a Ctrl-C, how
    many trials were running and are left to finish."""
    order = list(trials)
    if concurrency <= 1 or len(order) <= 1:
        records = []
        for trial in order:
            records.append(play_trial(game, agent, trial, seed=seed, temperature=temperature))
            finished(records[-1])
        return records
    stop = threading.Event()
    stoppable = _Stoppable(agent, stop)
    waiting = iter(order)
    #: Every trial played to its end, put here by the thread that played it: a Ctrl-C may come
    #: between a trial's start and its future's being kept, never before its record is here.
    done: dict[int, TrialRecord] = {}
    handed_over: set[int] = set()
    started: set[int] = set()
    #: The trials whose play ended, one way or another: a Ctrl-C may come while the pool starts a
    #: thread, which then plays unseen by the pool's shutdown, so the trials are waited for here.
    ended: set[int] = set()
    ending = threading.Condition()
    running: dict[Future, int] = {}
    error: BaseException | None = None
    pool = ThreadPoolExecutor(max_workers=min(concurrency, len(order)), thread_name_prefix="gaamas-trial")

    def play(trial: int) -> TrialRecord:
        started.add(trial)
        try:
            done[trial] = play_trial(game, stoppable, trial, seed=seed, temperature=temperature)
            return done[trial]
        finally:
            with ending:
                ended.add(trial)
                ending.notify_all()

    def start(count: int) -> None:
        for trial in [t for _, t in zip(range(count), waiting)]:
            running[pool.submit(play, trial)] = trial

    try:
        start(min(concurrency, len(order)))
        while running:
            completed, _ = wait(running, return_when=FIRST_COMPLETED)  # each journaled as it finishes
            for future in completed:
                trial = running[future]
                if future.exception() is None:
                    finished(done[trial])
                    handed_over.add(trial)
                elif error is None:
                    error = future.exception()
                del running[future]
                if error is None:
                    start(1)
    except BaseException as interruption:
        if isinstance(interruption, KeyboardInterrupt) and stopping is not None:
            stopping(len(started) - len(done))
        try:
            pool.shutdown(wait=True, cancel_futures=True)  # no trial starts; those running finish
            with ending:
                ending.wait_for(lambda: started <= ended)
            stop.set()  # a trial whose thread began but not its play yet asks nothing
        except BaseException:
            stop.set()  # a second Ctrl-C: those running stop at their next request, and are lost
            raise
        for trial in [t for t in list(done) if t not in handed_over]:
            with contextlib.suppress(Exception):  # one that could not be handed over first is the error said
                finished(done[trial])
        raise
    finally:
        pool.shutdown(wait=False)
    if error is not None:
        raise error
    return [done[trial] for trial in order]
