"""A Ctrl-C loses nothing that was answered: trials played at once stop starting, those running are
journaled as they finish, and no complete cassette is replaced by the part recorded before it.

The servers here are the suite's loopback stand-ins (``conftest.FakeChatServer``), never a model."""

import signal
import threading

import pytest
import yaml
from conftest import outcomes

from pytest_gaamas.games.dictator import DictatorGame
from pytest_gaamas.trials import play_trials

MODEL = "--gaamas-model=openai:fake"
CASSETTE = ("cassettes", "openai-fake", "garp_consistency", "test_garp_consistency.yaml")
REQUESTS_PER_TRIAL = 25


class InterruptedWhileAnswering:
    """A stand-in agent: once ``running`` requests are in flight, the main thread gets a SIGINT (a
    Ctrl-C); every request waits until the interruption has reached it, then is answered."""

    spec = "interrupted"

    def __init__(self, running: int):
        self.running, self.lock = running, threading.Lock()
        self.asked = 0
        self.interrupted = threading.Event()
        self.main = threading.main_thread().ident

    def reply(self, request):
        with self.lock:
            self.asked += 1
            last = self.asked == self.running
        if last:
            signal.pthread_kill(self.main, signal.SIGINT)
        assert self.interrupted.wait(timeout=30), "the Ctrl-C never reached the main thread"
        return '{"dollars": 50}'


def interrupted_trials(**told) -> tuple[InterruptedWhileAnswering, list[int]]:
    """24 trials, 4 at once, and a Ctrl-C once the first 4 are asked: the agent, and the trials handed over."""
    agent = InterruptedWhileAnswering(running=4)

    def ctrl_c(signum, frame):
        agent.interrupted.set()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, ctrl_c)
    handed_over: list[int] = []
    try:
        with pytest.raises(KeyboardInterrupt):
            play_trials(DictatorGame("human"), agent, range(24), seed=0, temperature=0.7, concurrency=4,
                        finished=lambda record: handed_over.append(record.trial), **told)  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, previous)
    return agent, handed_over


def test_one_ctrl_c_with_trials_running_at_once_sends_no_queued_trial_and_hands_over_those_that_finish():
    agent, handed_over = interrupted_trials()
    assert agent.asked == 4, f"{agent.asked} trials were asked, 4 were running when Ctrl-C came"
    assert sorted(handed_over) == [0, 1, 2, 3], "every trial answered after the Ctrl-C is handed over, to be journaled"


def test_a_ctrl_c_says_how_many_trials_are_left_to_finish():
    told: list[int] = []
    interrupted_trials(stopping=told.append)
    assert told == [4]


def interactions(project) -> list:
    return yaml.safe_load(project.path.joinpath(*CASSETTE).read_text())["interactions"]


def test_ctrl_c_while_recording_afresh_with_replace_recorded_leaves_the_complete_cassette(behaviour_project, fake_chat_server, monkeypatch):
    """Under --gaamas-record=all --gaamas-replace-recorded, a Ctrl-C after two of four trials: the four
    recorded before stand, the two answered wait in the journal, and the next run asks only the rest."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_chat_server().url)
    args = [MODEL, "--gaamas-trials=4", "--gaamas-concurrency=1", "--gaamas-record=all", "--gaamas-replace-recorded"]
    behaviour_project.runpytest(*args).assert_outcomes(passed=1)
    complete = behaviour_project.path.joinpath(*CASSETTE).read_bytes()
    assert len(interactions(behaviour_project)) == 4 * REQUESTS_PER_TRIAL

    from pytest_gaamas.models.openai_compatible import OpenAICompatibleModel

    reply, answered = OpenAICompatibleModel.reply, 0

    def interrupted(model, request):  # a Ctrl-C as the third trial's first request goes out
        nonlocal answered
        if answered == 2 * REQUESTS_PER_TRIAL:
            raise KeyboardInterrupt
        answered += 1
        return reply(model, request)

    server = fake_chat_server(content='{"asset_a": 70, "asset_b": 30}')
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OpenAICompatibleModel, "reply", interrupted)
        result = behaviour_project.runpytest(*args, no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert len(server.requests) == 2 * REQUESTS_PER_TRIAL
    assert behaviour_project.path.joinpath(*CASSETTE).read_bytes() == complete, "a complete cassette was replaced by half of one"

    healthy = fake_chat_server(content='{"asset_a": 70, "asset_b": 30}')
    monkeypatch.setenv("OPENAI_BASE_URL", healthy.url)
    assert outcomes(behaviour_project.runpytest(*args)) == {"passed": 1}
    assert len(healthy.requests) == 2 * REQUESTS_PER_TRIAL, "the two trials answered before the Ctrl-C were not asked again"
    recorded = interactions(behaviour_project)
    assert len(recorded) == 4 * REQUESTS_PER_TRIAL and all("70" in i["response"]["body"]["string"] for i in recorded)
