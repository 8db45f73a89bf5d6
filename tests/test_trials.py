"""Trials played at once are each handed over (to be journaled) as soon as they finish, not when the
last one does: a run killed mid-way has journaled every trial that finished."""

import threading

from pytest_gaamas.games.dictator import DictatorGame
from pytest_gaamas.trials import play_trials


class WaitsForOthers:
    """Trial 0 answers only once another trial has been handed over (or after 5 s, wrongly)."""

    spec = "waits"

    def __init__(self):
        self.handed_over = threading.Event()
        self.waited_in_vain = False

    def reply(self, request):
        if request.seed == self.first_seed:
            self.waited_in_vain = not self.handed_over.wait(timeout=5)
        return '{"dollars": 50}'


def test_each_trial_is_handed_over_as_it_finishes():
    from pytest_gaamas.play import request_seed

    agent = WaitsForOthers()
    agent.first_seed = request_seed(0, 0, 0)
    order = []

    def finished(record):
        order.append(record.trial)
        agent.handed_over.set()

    records = play_trials(DictatorGame("human"), agent, range(4), seed=0, temperature=0.7, concurrency=4, finished=finished)
    assert not agent.waited_in_vain, "no trial was handed over while another was still running"
    assert order[-1] == 0 and [r.trial for r in records] == [0, 1, 2, 3]
