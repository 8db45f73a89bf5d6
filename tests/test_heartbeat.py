"""The line said while a live cell waits on its model (pytest_gaamas.heartbeat), on a clock the test
moves: silence past the interval is said, an answer starts the silence again, nothing after the end."""

import time

from pytest_gaamas.heartbeat import Heartbeat


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def said_within(lines: list[str], count: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while len(lines) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return len(lines) >= count


def test_silence_past_the_interval_is_said_with_how_long_and_the_timeout():
    clock, lines = Clock(), []
    with Heartbeat(lines.append, "test_x[model]", timeout=300, every=0.01, clock=clock) as heartbeat:
        time.sleep(0.1)
        assert lines == []  # the clock has not moved: no silence yet, however often the thread looks
        clock.now = 45.0
        assert said_within(lines, 1)
        assert lines[0] == "test_x[model]: still waiting for an answer, 45 s since the last one (a request may take up to 300 s: --gaamas-timeout)"
        heartbeat.beat()
        count = len(lines)
        time.sleep(0.1)
        assert len(lines) == count  # an answer came at 45 s and the clock stands there: silent for 0 s
    after = len(lines)
    clock.now = 1_000.0
    time.sleep(0.1)
    assert len(lines) == after  # closed: nothing more is said


def test_the_thread_ends_with_the_block_even_when_it_fails():
    lines = []
    try:
        with Heartbeat(lines.append, "x", timeout=1, every=0.01) as heartbeat:
            raise RuntimeError("the cell failed")
    except RuntimeError:
        pass
    assert not heartbeat._thread.is_alive()


def test_a_live_cell_whose_server_is_slow_says_it_is_waiting_against_a_slow_loopback_stand_in(behaviour_project, fake_chat_server,
                                                                                               monkeypatch):  # fmt: skip
    """The loopback stand-in (conftest.FakeChatServer, not a model) answers each request after 0.4 s;
    with a line due after 0.1 s of silence, the run says it waits, names the cell and the model, and
    still records every answer."""
    server = fake_chat_server(delay=0.4)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setattr("pytest_gaamas.heartbeat.HEARTBEAT_EVERY_S", 0.1)
    result = behaviour_project.runpytest("--gaamas-model=openai:fake", "--gaamas-trials=1", "--gaamas-record=new_episodes", "-p", "no:cacheprovider")
    waiting = [line for line in result.stdout.lines if "still waiting for an answer" in line]
    assert waiting and all("test_garp_consistency[openai-fake]: openai:fake" in line for line in waiting), result.stdout.str()[-2000:]
    assert (behaviour_project.path / "cassettes" / "openai-fake" / "garp_consistency" / "test_garp_consistency.yaml").is_file()


def test_a_replay_says_nothing_of_waiting(behaviour_project, fake_chat_server, monkeypatch):
    server = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    assert behaviour_project.runpytest("--gaamas-model=openai:fake", "--gaamas-trials=1", "--gaamas-record=new_episodes", "-p", "no:cacheprovider").ret == 0
    monkeypatch.setattr("pytest_gaamas.heartbeat.HEARTBEAT_EVERY_S", 0.1)
    replay = behaviour_project.runpytest("--gaamas-model=openai:fake", "--gaamas-trials=1", "--gaamas-record=none", "-p", "no:cacheprovider")
    assert replay.ret == 0 and "still waiting" not in replay.stdout.str()
