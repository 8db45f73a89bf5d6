"""What was answered is never lost nor paid for again: trials resumed from the journal are no live
requests, a journal that cannot be written leaves its answers in the cassette (also under `once`),
and no cassette or journal is written that its reader would refuse.

The servers here are the suite's loopback stand-ins (``conftest.FakeChatServer``), never a model."""

import json

import pytest
import yaml
from conftest import outcomes
from vcr.serializers import yamlserializer

from pytest_gaamas import cassettes, journal
from pytest_gaamas.cassettes import TooLarge
from pytest_gaamas.journal import Journal
from pytest_gaamas.play import RoundRecord, TrialRecord

MODEL = ("--gaamas-model=openai:fake", "--gaamas-concurrency=1", "--gaamas-retries=0")
CASSETTE = ("cassettes", "openai-fake", "garp_consistency", "test_garp_consistency.yaml")
JOURNALS = (".gaamas", "journal", "openai-fake", "garp_consistency")
REQUESTS_PER_TRIAL = 25


def journaled_trials(project) -> int:
    (found,) = project.path.joinpath(*JOURNALS).glob("*.jsonl")
    return len(found.read_text().splitlines()) - 1


def recorded(project) -> int:
    return len(yaml.safe_load(project.path.joinpath(*CASSETTE).read_text())["interactions"])


def test_trials_resumed_from_the_journal_are_not_live_requests_against_the_cap(behaviour_project, fake_chat_server, monkeypatch):
    """Two of four trials answered, then the server died: a cap of exactly the two trials left is enough."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_chat_server(die_after=2 * REQUESTS_PER_TRIAL).url)
    args = [*MODEL, "--gaamas-trials=4", "--gaamas-record=new_episodes"]
    assert outcomes(behaviour_project.runpytest(*args)) == {"failed": 1}
    assert journaled_trials(behaviour_project) == 2
    recording = behaviour_project.path.joinpath(*CASSETTE)
    recording.unlink()  # the journal alone holds the two trials, as after a cassette that could not be written
    healthy = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", healthy.url)
    result = behaviour_project.runpytest(*args, f"--gaamas-max-requests={2 * REQUESTS_PER_TRIAL}")
    assert outcomes(result) == {"passed": 1}, result.stdout.str()
    assert len(healthy.requests) == 2 * REQUESTS_PER_TRIAL and recorded(behaviour_project) == 4 * REQUESTS_PER_TRIAL
    said = " ".join(result.stdout.str().split())
    assert f"{2 * REQUESTS_PER_TRIAL} requests answered live" in said, said


def test_a_journal_that_cannot_be_written_under_once_leaves_every_answer_in_the_cassette(behaviour_project, fake_chat_server, monkeypatch):
    """A full disk under the journal after its first trial: under `once`, whose cassette is written only
    whole, the answers went nowhere; they are written into the cassette, and none is asked again."""
    server = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    write = Journal.write

    def disk_fills_after_one_trial(self, record, exchanges):
        if record.trial >= 1:
            raise journal.UnwritableOutput(f"cannot write the journal {self.path}: the disk holding it is full (No space left on device)")
        write(self, record, exchanges)

    args = [*MODEL, "--gaamas-trials=4", "--gaamas-record=once"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Journal, "write", disk_fills_after_one_trial)
        result = behaviour_project.runpytest(*args)
    assert outcomes(result) == {"failed": 1}
    result.stdout.fnmatch_lines(["*cannot write the journal*the disk holding it is full*"])
    answered = len(server.requests)
    assert answered == 2 * REQUESTS_PER_TRIAL
    assert recorded(behaviour_project) == answered, "what the journal could not keep is in the cassette"

    result = behaviour_project.runpytest(*MODEL, "--gaamas-trials=4", "--gaamas-record=new_episodes")
    assert outcomes(result) == {"passed": 1}
    assert len(server.requests) == 4 * REQUESTS_PER_TRIAL, "nothing answered before the disk filled was asked again"


def test_a_cassette_is_never_written_larger_than_its_reader_reads(tmp_path, monkeypatch):
    """Three answers of 12 MB: the writer refuses the cassette (the reader would refuse it next run),
    saying so in one line, and the old cassette stands."""
    monkeypatch.setattr(cassettes, "MAX_CASSETTE_BYTES", 4096)
    path = tmp_path / "item.yaml"
    persister = cassettes.SafePersister("new_episodes", replace_recorded=False)
    answers = [{"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "x" * 2000}} for _ in range(3)]
    requests = [cassettes.Request("POST", "http://h/v1/chat/completions", json.dumps({"seed": i}), {}) for i in range(3)]
    persister.save_cassette(str(path), {"requests": requests, "responses": answers}, yamlserializer)
    assert isinstance(persister.error, TooLarge) and not path.exists()
    said = str(persister.error)
    assert said.startswith(f"cannot write the cassette {path}: it would hold ") and " MiB a cassette is read within; " in said
    assert "kept in the journal" in said and "\n" not in said


def record(trial: int) -> TrialRecord:
    return TrialRecord(trial, [RoundRecord(1, [], "{}", True, trial, "")], {"valid": True, "value": trial})


def test_a_journal_is_never_written_larger_than_its_reader_reads_and_keeps_the_trials_that_fit(tmp_path, monkeypatch):
    monkeypatch.setattr(journal, "MAX_JOURNAL_BYTES", 4096)
    written = Journal(tmp_path / "item", "abc")
    exchange = {"request": {"method": "POST", "uri": "http://h/v1", "body": "{}", "headers": {}},
                "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "x" * 1500}}}  # fmt: skip
    written.write(record(0), [exchange])
    written.write(record(1), [exchange])
    with pytest.raises(TooLarge, match=r"^cannot write the journal .* MiB a journal is read within; the trials it could not take"):
        written.write(record(2), [exchange])
    written.close(complete=False)
    assert (tmp_path / "item.abc.jsonl").stat().st_size <= 4096
    assert sorted(Journal(tmp_path / "item", "abc").finished) == [0, 1], "the next run reads every trial written"
