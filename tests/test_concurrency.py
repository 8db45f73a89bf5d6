"""Trials played at once give what one trial at a time gives: the same scores, the same journal
lines, the same cassette, byte for byte; a cassette recorded either way replays the other way; a
server dying mid-way loses nothing. The chat server is the suite's loopback stand-in, not a model."""

import json

import pytest

from conftest import outcomes

MODEL = "--gaamas-model=openai:fake"


def cassette_of(project):
    return project.path / "cassettes" / "openai-fake" / "garp_consistency" / "test_garp_consistency.yaml"


def test_trials_played_at_once_record_what_one_at_a_time_records(behaviour_project, fake_chat_server, monkeypatch):
    server = fake_chat_server(delay=0.01)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    args = [MODEL, "--gaamas-trials=6", "--gaamas-record=once"]
    behaviour_project.runpytest(*args, "--gaamas-concurrency=1", "--gaamas-json=one.json").assert_outcomes(passed=1)
    one_at_a_time = cassette_of(behaviour_project).read_bytes()
    assert server.most_in_flight == 1
    cassette_of(behaviour_project).unlink()
    behaviour_project.runpytest(*args, "--gaamas-concurrency=4", "--gaamas-json=four.json").assert_outcomes(passed=1)
    assert server.most_in_flight == 4, "four trials were asked at once"
    assert cassette_of(behaviour_project).read_bytes() == one_at_a_time
    load = lambda name: json.loads((behaviour_project.path / name).read_text())["scores"]  # noqa: E731
    assert load("one.json") == load("four.json")

    server.close()  # a cassette recorded four at a time replays one at a time, and the reverse
    for concurrency in ("1", "4"):
        replay = behaviour_project.runpytest(MODEL, "--gaamas-trials=6", "--gaamas-record=none", f"--gaamas-concurrency={concurrency}")
        replay.assert_outcomes(passed=1)


def test_a_server_dying_while_trials_run_at_once_loses_nothing(behaviour_project, fake_chat_server, monkeypatch):
    dying = fake_chat_server(die_after=110, delay=0.005)  # the first four trials finish, the next are cut short
    monkeypatch.setenv("OPENAI_BASE_URL", dying.url)
    args = [MODEL, "--gaamas-trials=8", "--gaamas-record=once", "--gaamas-concurrency=4"]
    result = behaviour_project.runpytest(*args)
    assert outcomes(result) == {"failed": 1}
    result.stdout.fnmatch_lines(["*cannot reach the OpenAI-compatible server*"])
    (journal,) = (behaviour_project.path / ".gaamas" / "journal" / "openai-fake" / "garp_consistency").glob("*.jsonl")
    journaled = len(journal.read_text().splitlines()) - 1
    assert journaled >= 1

    healthy = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", healthy.url)
    behaviour_project.runpytest(*args).assert_outcomes(passed=1)
    answered_but_cut_short = 110 - journaled * 25  # kept in the cassette, replayed, not asked again
    assert len(healthy.requests) == (8 - journaled) * 25 - answered_but_cut_short
    healthy.close()
    behaviour_project.runpytest(MODEL, "--gaamas-trials=8", "--gaamas-record=none").assert_outcomes(passed=1)


@pytest.mark.parametrize("value", ["0", "1000", "many"])
def test_a_concurrency_that_makes_no_sense_is_refused(behaviour_project, value):
    result = behaviour_project.runpytest(MODEL, f"--gaamas-concurrency={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
