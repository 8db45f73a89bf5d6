"""Trials played at once give what one trial at a time gives: the same scores, the same journal
lines, the same cassette, byte for byte; a cassette recorded either way replays the other way; a
server dying mid-way loses nothing. The chat server is the suite's loopback stand-in, not a model."""

import collections
import itertools
import json
import subprocess
import sys
import threading
import time

import pytest
import yaml
from vcr.serializers import yamlserializer

from conftest import ROOT, FakeChatServer, outcomes
from pytest_gaamas import cassettes
from pytest_gaamas.journal import Journal
from pytest_gaamas.play import RoundRecord, TrialRecord

MODEL = "--gaamas-model=openai:fake"


def cassette_of(project):
    return project.path / "cassettes" / "openai-fake" / "garp_consistency" / "test_garp_consistency.yaml"


def test_trials_played_at_once_record_what_one_at_a_time_records(behaviour_project, fake_chat_server, monkeypatch):
    server = fake_chat_server(delay=0.01)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    args = [MODEL, "--gaamas-trials=6", "--gaamas-record=new_episodes"]
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
    args = [MODEL, "--gaamas-trials=8", "--gaamas-record=new_episodes", "--gaamas-concurrency=4"]
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


# -- one writer a cassette and a journal, across processes and runs ---------------------------------


class VaryingChatServer(FakeChatServer):
    """The loopback stand-in (not a model), answering each request as it arrives with the next of a few
    allocations on the budget line: a request asked twice gets two answers, as a sampling model's would."""

    ALLOCATIONS = [(50, 50), (70, 30), (20, 80), (90, 10), (35, 65)]

    def __init__(self, **kwargs):
        self.answers = itertools.count()
        super().__init__("", **kwargs)

    @property
    def content(self) -> str:
        a, b = self.ALLOCATIONS[next(self.answers) % len(self.ALLOCATIONS)]
        return json.dumps({"asset_a": a, "asset_b": b})

    @content.setter
    def content(self, value) -> None:
        pass


def paid_twice(server) -> int:
    """Requests the server answered more than once: each is paid for every time it is asked."""
    asked = collections.Counter(json.dumps(body, sort_keys=True) for body in server.requests)
    return sum(count - 1 for count in asked.values())


def recorded_requests(path) -> int:
    return len(yaml.safe_load(path.read_text())["interactions"])


def test_two_runs_recording_one_item_at_once_pay_each_request_once_and_lose_nothing(behaviour_project, monkeypatch):
    server = VaryingChatServer(delay=0.02)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    try:
        runs = [
            behaviour_project.popen(
                [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", MODEL, f"--gaamas-trials={trials}",
                 "--gaamas-record=new_episodes", "--gaamas-concurrency=2"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
            for trials in (20, 5)
        ]
        said = [run.communicate(timeout=300)[0].decode() for run in runs]
        assert [run.returncode for run in runs] == [0, 0], said
    finally:
        server.close()
    assert paid_twice(server) == 0, "both runs asked the same trials"
    assert len(server.requests) == 20 * 25
    recorded = recorded_requests(cassette_of(behaviour_project))
    assert recorded == 20 * 25, "the 5-trial cassette was written over the 20-trial one"
    folder = cassette_of(behaviour_project).parent
    assert not list(folder.glob(".*.lock")) and not list((behaviour_project.path / ".gaamas").rglob("*.jsonl"))
    replay = behaviour_project.runpytest(MODEL, "--gaamas-trials=20", "--gaamas-record=none")
    assert replay.ret == 0 and sum(outcomes(replay).values()) == 1 and "failed" not in outcomes(replay)  # met or not


def test_two_items_sharing_a_cassette_under_xdist_pay_each_request_once_and_report_what_replays(pytester, monkeypatch):
    pytester.makepyfile(test_garp_consistency=(ROOT / "behaviours" / "test_garp_consistency.py").read_text())
    server = VaryingChatServer(delay=0.01)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    try:  # the consistency and the fidelity items play the same trials, recorded in one cassette
        live = pytester.runpytest_subprocess(
            MODEL, "-n", "2", "--gaamas-trials=6", "--gaamas-record=new_episodes", "--gaamas-concurrency=2", "--gaamas-json=live.json",
            "-p", "no:cacheprovider",
        )
    finally:
        server.close()
    assert live.ret in (0, 1), live.stdout.str()[-3000:]
    assert paid_twice(server) == 0, "both items recorded the cassette they share"
    assert len(server.requests) == 6 * 25
    replay = pytester.runpytest_subprocess(MODEL, "--gaamas-trials=6", "--gaamas-record=none",
                                           "--gaamas-json=replay.json")
    assert replay.ret == live.ret
    scores = lambda name: json.loads((pytester.path / name).read_text())["scores"]  # noqa: E731
    assert scores("live.json") == scores("replay.json"), "the sample reported is not the one the cassette replays"


def test_a_cassette_saved_by_a_writer_that_asked_fewer_keeps_every_exchange_on_disk(
    behaviour_project, fake_chat_server, monkeypatch
):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_chat_server().url)
    behaviour_project.runpytest(MODEL, "--gaamas-trials=4", "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    path = cassette_of(behaviour_project)
    requests, responses = cassettes.read_interactions(path)[:2]
    # A writer that took no lock (another machine on a shared disk) read the cassette when it held one
    # trial, and saves now: what it read and what it recorded, and no fewer than the disk holds.
    one_trial = {"requests": requests[:25], "responses": responses[:25]}
    cassettes.SafePersister("new_episodes", False).save_cassette(path, one_trial, yamlserializer)
    assert recorded_requests(path) == 4 * 25


def record(trial: int) -> TrialRecord:
    return TrialRecord(trial, [RoundRecord(1, [], "{}", True, trial, "")], {"valid": True, "value": trial})


def test_a_journal_has_one_writer_and_the_next_finds_its_trials(tmp_path):
    first = Journal(tmp_path / "item", "abc")
    opened = []
    second = threading.Thread(target=lambda: opened.append(Journal(tmp_path / "item", "abc")))
    second.start()
    time.sleep(0.3)
    assert not opened, "a second writer opened a journal being written"
    first.write(record(0), [])
    first.close(complete=False)
    second.join(timeout=10)
    assert sorted(opened[0].finished) == [0]
    opened[0].close(complete=True)
    assert not list(tmp_path.iterdir())  # neither the journal nor its lock is left


def test_a_journal_keeps_the_trials_another_writer_wrote_since_it_was_read(tmp_path):
    journal = Journal(tmp_path / "item", "abc")
    header = json.dumps({"format": 2, "fingerprint": "abc"})
    trial_3 = json.dumps({**record(3).to_json(), "exchanges": []})
    journal.path.write_text(f"{header}\n{trial_3}\n")  # written meanwhile by a writer that took no lock
    journal.write(record(0), [])
    journal.close(complete=False)
    assert sorted(int(json.loads(line)["trial"]) for line in journal.path.read_text().splitlines()[1:]) == [0, 3]
