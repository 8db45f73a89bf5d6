"""Faults an unlucky user meets: servers that die, a pytest killed mid-run, folders that cannot be
written, files that are damaged, secrets in a server's URL. In each, count what was lost (it must be
nothing: every answered trial is in the cassette or the journal) and read the message (one line
that says what to do, no traceback).

The chat server here is the suite's loopback stand-in (``conftest.FakeChatServer``), not a model.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from pytest_gaamas.errors import UnwritableOutput
from pytest_gaamas.journal import Journal
from pytest_gaamas.play import RoundRecord, TrialRecord
from conftest import outcomes, outlives

#: One trial at a time: these tests count the trials finished when a server dies (trials played at
#: once are tested in test_concurrency.py).
MODEL = ("--gaamas-model=openai:fake", "--gaamas-concurrency=1")
REQUESTS_PER_TRIAL = 25  # the portfolio game: one request per budget


def cassette_of(project) -> Path:
    return project.path / "cassettes" / "openai-fake" / "garp_consistency" / "test_garp_consistency.yaml"


def journals_of(project) -> list[Path]:
    return sorted((project.path / ".gaamas" / "journal" / "openai-fake" / "garp_consistency").glob("*.jsonl"))


def recorded_trials(cassette: Path) -> int:
    return len(yaml.safe_load(cassette.read_text())["interactions"]) // REQUESTS_PER_TRIAL


def no_traceback(result) -> None:
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "\nE   " not in output.replace("E   Failed:", "")


@pytest.fixture
def serving(fake_chat_server, monkeypatch):
    def start(**kwargs):
        server = fake_chat_server(**kwargs)
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        return server

    return start


# -- re-recording never drops what was recorded -----------------------------------------------------


def test_recording_fewer_trials_afresh_refuses_to_replace_the_cassette(behaviour_project, serving):
    serving()
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=4", "--gaamas-record=all").assert_outcomes(passed=1)
    before = cassette_of(behaviour_project).read_bytes()

    result = behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=all")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*was not replaced*would drop 50 of the 100 recorded*--gaamas-replace-recorded*"])
    no_traceback(result)
    assert cassette_of(behaviour_project).read_bytes() == before
    assert journals_of(behaviour_project), "the new answers are kept in the journal"

    replaced = behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=all", "--gaamas-replace-recorded")
    replaced.assert_outcomes(passed=1)
    assert recorded_trials(cassette_of(behaviour_project)) == 2


def test_recording_afresh_the_same_trials_replaces_the_cassette_whole(behaviour_project, serving):
    serving(content='{"asset_a": 50, "asset_b": 50}')
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=all").assert_outcomes(passed=1)
    serving(content='{"asset_a": 60, "asset_b": 40}')
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=all").assert_outcomes(passed=1)
    text = cassette_of(behaviour_project).read_text()
    assert recorded_trials(cassette_of(behaviour_project)) == 2
    assert "60" in text and '\\"asset_a\\": 50' not in text
    assert not list(cassette_of(behaviour_project).parent.glob(".*.tmp")), "no temporary file is left behind"


# -- killed servers and killed runs -----------------------------------------------------------------


def test_a_server_dying_during_a_fresh_recording_loses_no_answered_trial(behaviour_project, serving):
    serving()
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=4", "--gaamas-record=all").assert_outcomes(passed=1)
    original = cassette_of(behaviour_project).read_bytes()

    serving(content='{"asset_a": 70, "asset_b": 30}', die_after=60)  # trials 0 and 1 answered, then it dies
    result = behaviour_project.runpytest(*MODEL, "--gaamas-trials=4", "--gaamas-record=all")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*cannot reach the OpenAI-compatible server*"])
    no_traceback(result)
    assert cassette_of(behaviour_project).read_bytes() == original, "the old cassette stands until the new one is whole"

    healthy = serving(content='{"asset_a": 70, "asset_b": 30}')
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=4", "--gaamas-record=all").assert_outcomes(passed=1)
    assert len(healthy.requests) == 2 * REQUESTS_PER_TRIAL, "only the unanswered trials are asked again"
    assert recorded_trials(cassette_of(behaviour_project)) == 4
    assert '\\"asset_a\\": 50' not in cassette_of(behaviour_project).read_text(), "nothing old is mixed in"
    assert not journals_of(behaviour_project)


def test_a_pytest_killed_with_sigkill_loses_no_answered_trial(behaviour_project, serving):
    server = serving(delay=0.02)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *MODEL, "--gaamas-trials=6", "--gaamas-record=new_episodes"]
    run = subprocess.Popen(command, cwd=behaviour_project.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        journals = journals_of(behaviour_project)
        if journals and len(journals[0].read_text().splitlines()) >= 3:  # header and two trials
            break
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.wait()
    answered = len(server.requests) // REQUESTS_PER_TRIAL
    assert answered >= 2 and not cassette_of(behaviour_project).exists()

    resumed = serving()
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=6", "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    journaled = len(server.requests) // REQUESTS_PER_TRIAL
    assert len(resumed.requests) <= (6 - journaled + 1) * REQUESTS_PER_TRIAL  # at most the trial cut short, again
    resumed.close()
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=6", "--gaamas-record=none").assert_outcomes(passed=1)


def test_the_embedded_servers_watchdog_ends_it_when_its_parent_is_killed(tmp_path):
    """The watchdog the embedded llama.cpp server runs, in a stand-in child (not the real server,
    whose live test is in test_embedded_live.py): SIGKILL the parent, and the child goes too."""
    pid_file = tmp_path / "child.pid"
    child = (
        "import os, sys, time\n"
        "from pytest_gaamas.models.lifeline import die_with_parent\n"
        f"die_with_parent(os.getppid(), poll_seconds=0.05)\n"
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {child!r}])\ntime.sleep(60)"])
    deadline = time.monotonic() + 20
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child_pid = int(pid_file.read_text())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    assert not outlives(child_pid, 10), "the child outlived its killed parent"


# -- files that cannot be written -------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--gaamas-json={bad}/run.json", "--gaamas-cassette-dir={bad}", "--gaamas-journal-dir={bad}",
                                    "--gaamas-save=baseline --gaamas-runs-dir={bad}"])  # fmt: skip
def test_an_output_that_cannot_be_written_is_refused_before_the_run_starts(behaviour_project, option):
    (behaviour_project.path / "a-file").write_text("not a folder")
    bad = behaviour_project.path / "a-file" / "below"
    result = behaviour_project.runpytest("--gaamas-model=reference:rational", "--gaamas-record=new_episodes", *option.format(bad=bad).split())
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot write in*not a folder*choose another place*"])


def test_a_cassette_that_cannot_be_written_fails_the_item_and_keeps_the_journal(behaviour_project, serving):
    server = serving()
    cassette_of(behaviour_project).mkdir(parents=True)  # a folder where the cassette file must go
    result = behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=new_episodes")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*cannot write the cassette*test_garp_consistency.yaml*"])
    no_traceback(result)
    assert len(journals_of(behaviour_project)) == 1

    cassette_of(behaviour_project).rmdir()
    asked = len(server.requests)
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    assert len(server.requests) == asked, "the journal answered: the model was not asked again"
    assert recorded_trials(cassette_of(behaviour_project)) == 2 and not journals_of(behaviour_project)


def test_a_run_document_that_cannot_be_written_at_the_end_is_kept_elsewhere(behaviour_project, monkeypatch):
    from pytest_gaamas.errors import UnwritableOutput
    from pytest_gaamas.session import outputs

    real = outputs.write_atomically

    def failing(path, text, *, what):
        if path.name == "run.json":
            raise UnwritableOutput(f"cannot write the {what} {path} (No space left on device); make its directory writable")
        real(path, text, what=what)

    monkeypatch.setattr(outputs, "write_atomically", failing)
    result = behaviour_project.runpytest("--gaamas-model=reference:rational", "--gaamas-json=run.json")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    line = next(line for line in result.stdout.lines if "No space left" in line)
    kept = Path(line.rsplit("the run is kept in ", 1)[1])
    assert json.loads(kept.read_text())["scores"][0]["model"] == "reference:rational"
    kept.unlink()


# -- damaged files ----------------------------------------------------------------------------------

DAMAGE = {
    "truncated": lambda text: text[: len(text) // 2],
    "not YAML": lambda text: "interactions: [\n  {{{",
    "YAML of another shape": lambda text: "interactions:\n- request: 3\n",
    "binary": lambda text: "\x00\xff" * 100,
    "a response without a body": lambda text: text.replace("body:", "bodi:", 1),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_cassette_is_one_line_that_names_it(behaviour_project, serving, damage):
    serving()
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    cassette = cassette_of(behaviour_project)
    cassette.write_text(DAMAGE[damage](cassette.read_text()), encoding="latin-1")
    result = behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=none")
    result.assert_outcomes(failed=1)
    no_traceback(result)
    output = result.stdout.str()
    assert str(cassette) in output and ("git checkout" in output or "no recorded answer" in output)


def test_a_damaged_model_description_is_one_line_that_names_it(behaviour_project, serving):
    serving()
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=1", "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    meta = behaviour_project.path / "cassettes" / "openai-fake" / "model.json"
    meta.write_text('{"digest": ' + "[" * 5000)
    result = behaviour_project.runpytest(*MODEL, "--gaamas-trials=1", "--gaamas-record=new_episodes", "--gaamas-json=run.json")
    output = result.stdout.str() + result.stderr.str()
    assert str(meta) in output and "not a valid model description" in output
    assert "Traceback" not in output


def record(trial: int) -> TrialRecord:
    return TrialRecord(trial, [RoundRecord(1, [], "{}", True, trial, "")], {"valid": True, "value": trial})


def test_a_corrupt_journal_line_costs_that_line_only(tmp_path):
    stem = tmp_path / "item"
    journal = Journal(stem, "abc")
    for trial in range(5):
        journal.write(record(trial), [])
    journal.close(complete=False)
    lines = journal.path.read_text().splitlines()
    lines[2] = lines[2][: len(lines[2]) // 2]  # trial 1 cut short
    lines[4] = "[" * 10_000  # trial 3 replaced by garbage
    journal.path.write_text("\n".join(lines) + "\n")
    again = Journal(stem, "abc")
    assert sorted(again.finished) == [0, 2, 4] and again.unreadable_lines == 2
    again.write(record(1), [])
    again.close(complete=False)
    assert sorted(Journal(stem, "abc").finished) == [0, 1, 2, 4]


def test_journals_of_other_seeds_are_kept(behaviour_project, serving):
    serving(die_after=30)  # seed 7: one trial answered, then the server dies
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=new_episodes", "--gaamas-seed=7").assert_outcomes(failed=1)
    (seed_7,) = journals_of(behaviour_project)
    serving()
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    assert journals_of(behaviour_project) == [seed_7] and len(seed_7.read_text().splitlines()) == 2


# -- secrets ----------------------------------------------------------------------------------------


def test_credentials_in_the_servers_url_are_written_and_shown_nowhere(behaviour_project, fake_chat_server, monkeypatch):
    server = fake_chat_server()
    url = server.url.replace("http://", "http://alice:hunter2secret@")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    result = behaviour_project.runpytest(*MODEL, "--gaamas-trials=1", "--gaamas-record=new_episodes", "--gaamas-json=run.json")
    result.assert_outcomes(passed=1)
    server.close()
    failed = behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=new_episodes")  # unreachable now
    failed.assert_outcomes(failed=1)
    written = [p.read_text(errors="replace") for p in behaviour_project.path.rglob("*") if p.is_file()]
    shown = result.stdout.str() + result.stderr.str() + failed.stdout.str() + failed.stderr.str()
    assert "cannot reach" in shown
    for text in [*written, shown]:
        assert "hunter2" not in text and "alice" not in text


def test_credentials_are_scrubbed_by_value_on_every_route(behaviour_project, fake_chat_server, monkeypatch):
    """A password, a key in the path, in the query and in a fragment, and an API key the server echoes
    in its answer: none of them in any file written (cassette, journal, run log, JUnit XML) or in
    anything shown, even with the HTTP libraries' own request lines captured at INFO and a failed item."""
    key, password, in_path, in_query, in_fragment = ("Zq9EchoedKeyValue77", "S3cr3tPassw0rd", "Abc123Def456Ghi789Jkl0",
                                                     "QueryKey12345678", "FragKey9876543210")  # fmt: skip
    server = fake_chat_server(content='{"asset_a": 50, "asset_b": 50, "note": "your key is %s"}' % key)
    url = server.url.replace("http://", f"http://alice:{password}@") + f"/{in_path}?api-key={in_query}#{in_fragment}"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    logged = ("--log-level=INFO", "--junitxml=junit.xml", "-rA")
    result = behaviour_project.runpytest(*MODEL, *logged, "--gaamas-trials=1", "--gaamas-record=new_episodes", "--gaamas-json=run.json")
    result.assert_outcomes(passed=1)
    server.close()
    failed = behaviour_project.runpytest(*MODEL, *logged, "-l", "--gaamas-trials=2", "--gaamas-record=new_episodes")  # unreachable now
    failed.assert_outcomes(failed=1)
    written = [p.read_text(errors="replace") for p in behaviour_project.path.rglob("*") if p.is_file()]
    shown = result.stdout.str() + result.stderr.str() + failed.stdout.str() + failed.stderr.str()
    assert "cannot reach" in shown and "REDACTED" in "".join(written)
    for secret in (key, password, in_path, in_query, in_fragment):
        for text in [*written, shown]:
            assert secret not in text, secret


# -- files the suite reads, bounded before they are parsed ------------------------------------------


def test_a_cassette_of_80_kb_of_brackets_fails_its_item_in_one_line_and_the_run_log_is_written(behaviour_project, serving):
    serving()
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=1", "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    cassette = cassette_of(behaviour_project)
    cassette.write_text("interactions: " + "[" * 80_000)
    result = behaviour_project.runpytest_subprocess(
        *MODEL, "--gaamas-model=reference:rational", "--gaamas-trials=1", "--gaamas-record=none", "-n", "2", "--gaamas-json=run.json"
    )
    result.assert_outcomes(failed=1, passed=1)
    no_traceback(result)
    assert "crashed" not in result.stdout.str() and "During handling" not in result.stdout.str()
    result.stdout.fnmatch_lines([f"*{cassette}: not a readable cassette (nested more than 64 levels deep); restore it with*"])
    run = json.loads((behaviour_project.path / "run.json").read_text())
    assert {score["model"] for score in run["scores"]} == {"reference:rational"}  # the other item's, written all the same


# -- a journal is believed only through the exchanges it recorded -----------------------------------


def trials_in_run_log(project) -> list[dict]:
    run = json.loads((project.path / "run.json").read_text())
    (play,) = run["plays"].values()
    return play["trials"]


def forged(line: dict, **changes) -> str:
    lie = {**line, "outcome": {**line["outcome"], "valid": True, "ccei": 0.123}, **changes}
    lie["rounds"] = [{**r, "value": [1000, -900], "valid": True, "reason": ""} for r in line["rounds"]]
    return json.dumps(lie)


def test_a_journal_is_believed_only_through_its_recorded_exchanges_replayed_through_the_game(behaviour_project, serving):
    serving(die_after=30)  # trial 0 answered and journaled, then the server dies
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=3", "--gaamas-record=new_episodes").assert_outcomes(failed=1)
    (journal,) = journals_of(behaviour_project)
    header, honest = journal.read_text().splitlines()
    honest = json.loads(honest)
    assert len(honest["exchanges"]) == REQUESTS_PER_TRIAL
    without_request = [{"response": e["response"]} for e in honest["exchanges"]]
    journal.write_text("\n".join([
        header,
        forged(honest),  # trial 0: its record lies, its exchanges are true
        forged(honest, trial=1, exchanges=[]),  # trial 1: an impossible decision and no reply at all
        forged(honest, trial=2, exchanges=honest["exchanges"][:3]),  # trial 2: the exchanges of another trial, cut short
        forged(honest, trial=5, exchanges=without_request),
        json.dumps({**honest, "trial": 6, "outcome": "valid"}),
        json.dumps({**honest, "trial": 7, "outcome": {"valid": [1]}, "rounds": [{"seed": 1}]}),
    ]) + "\n")  # fmt: skip

    healthy = serving()
    result = behaviour_project.runpytest(*MODEL, "--gaamas-trials=3", "--gaamas-record=new_episodes", "--gaamas-json=run.json")
    result.assert_outcomes(passed=1)
    no_traceback(result)
    # Trial 0 replayed from its journaled exchanges; trial 1 from the 5 answers the cassette kept of
    # it, then asked; trial 2 asked whole.
    assert len(healthy.requests) == 3 * REQUESTS_PER_TRIAL - 30
    assert {body["seed"] for body in healthy.requests}.isdisjoint(r["seed"] for r in honest["rounds"])
    trials = trials_in_run_log(behaviour_project)
    assert trials[0]["outcome"] == honest["outcome"] and all(t["outcome"].get("ccei") != 0.123 for t in trials)
    assert all(r["value"] != [1000, -900] for trial in trials for r in trial["rounds"])
    assert not journals_of(behaviour_project)
    healthy.close()
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=3", "--gaamas-record=none").assert_outcomes(passed=1)


def test_replay_only_reads_no_journal_and_leaves_it_where_it_is(behaviour_project, serving):
    serving(die_after=30)
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=new_episodes").assert_outcomes(failed=1)
    (journal,) = journals_of(behaviour_project)
    header, line = journal.read_text().splitlines()
    lies = "\n".join([header] + [forged(json.loads(line), trial=t, exchanges=[]) for t in range(2)]) + "\n"
    serving()
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=new_episodes", "--gaamas-json=run.json").assert_outcomes(passed=1)
    honest = trials_in_run_log(behaviour_project)
    assert not journal.exists()
    journal.write_text(lies)
    result = behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=none", "--gaamas-json=run.json")
    result.assert_outcomes(passed=1)
    assert trials_in_run_log(behaviour_project) == honest
    assert journal.read_text() == lies


@pytest.mark.parametrize("damage", ["an exchange without its request", "a response without its status", "a status that is text",
                                    "a request that is a list", "exchanges that are a mapping", "a body that is a number"])  # fmt: skip
def test_a_journal_line_with_a_damaged_exchange_costs_that_trial_only(tmp_path, damage):
    exchange = {"request": {"method": "POST", "uri": "http://h/v1/chat/completions", "body": "{}", "headers": {}},
                "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}}}  # fmt: skip
    broken = json.loads(json.dumps(exchange))
    if damage == "an exchange without its request":
        del broken["request"]
    elif damage == "a response without its status":
        del broken["response"]["status"]
    elif damage == "a status that is text":
        broken["response"]["status"]["code"] = "200"
    elif damage == "a request that is a list":
        broken["request"] = [1, 2]
    elif damage == "a body that is a number":
        broken["response"]["body"]["string"] = 12
    journal = Journal(tmp_path / "item", "abc")
    journal.write(record(0), [exchange])
    journal.write(record(1), [exchange, broken] if damage != "exchanges that are a mapping" else [])
    journal.close(complete=False)
    if damage == "exchanges that are a mapping":
        lines = journal.path.read_text().splitlines()
        lines[2] = json.dumps({**json.loads(lines[2]), "exchanges": exchange})
        journal.path.write_text("\n".join(lines) + "\n")
    again = Journal(tmp_path / "item", "abc")
    assert sorted(again.finished) == [0] and again.unreadable_lines == 1


# -- model.json when replaying, and files that are not regular files ------------------------------------


@pytest.mark.parametrize("damage", ["deep JSON", "a list", "binary", "a FIFO", "a directory"])
def test_a_damaged_model_description_when_replaying_is_one_line_early_and_the_run_log_is_written(behaviour_project, serving, damage):
    serving()
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=1", "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    meta = behaviour_project.path / "cassettes" / "openai-fake" / "model.json"
    meta.unlink()
    if damage == "a FIFO":
        os.mkfifo(meta)
    elif damage == "a directory":
        meta.mkdir()
    else:
        meta.write_bytes({"deep JSON": b'{"digest": ' + b"[" * 5000, "a list": b"[1]", "binary": b"\xff\x00" * 50}[damage])
    result = behaviour_project.runpytest_subprocess(
        *MODEL, "--gaamas-trials=1", "--gaamas-record=none", "--gaamas-json=run.json", "--gaamas-markdown=summary.md", timeout=300
    )  # a FIFO read would block: the timeout fails the test
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    no_traceback(result)
    said = "".join(result.stdout.str().split())  # the line wraps to the terminal, at spaces and hyphens
    early = "".join(f"gaamas: {meta}: ".split())
    assert early in said and said.index(early) < said.index("test_garp_consistency.py")
    assert "restoreitwith`gitcheckout--" in said
    (model,) = json.loads((behaviour_project.path / "run.json").read_text())["run"]["models"]
    assert model["recorded_digest"] is None and str(meta) in model["recorded_unreadable"]
    assert (behaviour_project.path / "summary.md").exists()


def test_a_fifo_where_the_journal_is_fails_its_item_in_one_line_without_waiting(behaviour_project, serving):
    serving(die_after=30)
    behaviour_project.runpytest(*MODEL, "--gaamas-trials=2", "--gaamas-record=new_episodes").assert_outcomes(failed=1)
    (journal,) = journals_of(behaviour_project)
    journal.unlink()
    os.mkfifo(journal)
    serving()
    result = behaviour_project.runpytest_subprocess(*MODEL, "--gaamas-trials=2", "--gaamas-record=new_episodes", timeout=300)
    result.assert_outcomes(failed=1)
    no_traceback(result)
    result.stdout.fnmatch_lines([f"*{journal}: a FIFO, not a journal; move it away*"])


# -- a full disk, and what a killed write left ------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 96 KB tmpfs: a real full disk (mounting needs root; elsewhere the test is skipped)."""
    folder = tmp_path / "small-disk"
    folder.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (not root)")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=True)


def test_a_full_disk_under_the_journal_is_one_line_and_loses_no_answered_trial(behaviour_project, serving, small_disk):
    server = serving()
    args = [*MODEL, "--gaamas-trials=4", "--gaamas-record=new_episodes"]
    result = behaviour_project.runpytest(*args, f"--gaamas-journal-dir={small_disk}")
    result.assert_outcomes(failed=1)
    no_traceback(result)
    result.stdout.fnmatch_lines([f"*cannot write the journal {small_disk}/*: the disk holding it is full (No space left on device); "
                                 "free space on it or choose another --gaamas-journal-dir, then run again*"])  # fmt: skip
    answered = len(server.requests)
    assert answered < 4 * REQUESTS_PER_TRIAL and recorded_trials(cassette_of(behaviour_project)) >= 1
    behaviour_project.runpytest(*args).assert_outcomes(passed=1)
    assert len(server.requests) == 4 * REQUESTS_PER_TRIAL, "what was answered before the disk filled was not asked again"


def test_a_journal_line_that_does_not_fit_is_one_line_and_closing_after_it_raises_nothing(tmp_path):
    journal = Journal(tmp_path / "item", "abc")
    journal.write(record(0), [])
    journal._handle = open("/dev/full", "a", encoding="utf-8")  # the disk fills up now
    with pytest.raises(UnwritableOutput) as refused:
        journal.write(record(1), [])
    assert str(refused.value) == (
        f"cannot write the journal {journal.path}: the disk holding it is full (No space left on device); "
        "free space on it or choose another --gaamas-journal-dir, then run again"
    )
    journal.close(complete=False)
    assert sorted(Journal(tmp_path / "item", "abc").finished) == [0]


def leftover(folder: Path, name: str, *, age_s: float) -> Path:
    path = folder / name
    path.write_text("half a cassette")
    os.utime(path, (time.time() - age_s, time.time() - age_s))
    return path


def test_what_a_killed_write_left_is_removed_at_the_next_write_into_its_folder_and_a_live_writers_file_never(tmp_path):
    import fcntl

    from pytest_gaamas.cassettes import write_atomically

    killed = leftover(tmp_path, ".test_a.yaml.k1ll3d_x.tmp", age_s=3600)
    killed_other_name = leftover(tmp_path, ".model.json.abcd1234.tmp", age_s=120)
    just_made = leftover(tmp_path, ".test_b.yaml.fr3sh_xy.tmp", age_s=0)  # its writer may not hold it locked yet
    someone_elses = leftover(tmp_path, ".notes.tmp", age_s=3600)
    live = leftover(tmp_path, ".test_c.yaml.l1ve_xyz.tmp", age_s=3600)  # a slow writer, still writing
    writer = subprocess.Popen([sys.executable, "-c", f"import fcntl, sys, time\nf = open({str(live)!r}, 'a')\n"
                               "fcntl.flock(f, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert writer.stdout.readline() == "locked\n"
        write_atomically(tmp_path / "test_d.yaml", "interactions: []\n", what="cassette")
        assert not killed.exists() and not killed_other_name.exists()
        assert just_made.exists() and someone_elses.exists() and live.exists()
    finally:
        writer.kill()
        writer.wait()
    write_atomically(tmp_path / "test_d.yaml", "interactions: []\n", what="cassette")
    assert not live.exists(), "its writer died: it is a leftover now"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".notes.tmp", ".test_b.yaml.fr3sh_xy.tmp", "test_d.yaml"]
    with open(tmp_path / "test_d.yaml") as written:  # nothing of ours stays locked
        fcntl.flock(written, fcntl.LOCK_EX | fcntl.LOCK_NB)


@pytest.mark.parametrize("field, value", [("digest", {"sha256": "abc"}), ("recorded_with", ["pytest-gaamas", 1]),
                                          ("server", 3.5)])
def test_a_model_description_whose_field_has_the_wrong_type_is_one_line_and_the_run_log_stays_readable(
    pytester, fake_chat_server, monkeypatch, field, value
):
    from conftest import ROOT
    from pytest_gaamas import runlog

    pytester.makepyfile(test_garp_consistency=(ROOT / "behaviours" / "test_garp_consistency.py").read_text())
    pytester.makeini("[pytest]\naddopts = -k 'not fidelity'\n")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_chat_server().url)
    model = ["--gaamas-model=openai:fake", "--gaamas-trials=2"]
    pytester.runpytest(*model, "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    meta = pytester.path / "cassettes" / "openai-fake" / "model.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), field: value}))
    said = f"{meta}: not a model description: {field!r} is not text; restore it with `git checkout -- {meta}`"

    replay = pytester.runpytest(*model, "--gaamas-record=none", "--gaamas-json=run.json")
    assert replay.ret == 0, replay.stdout.str()[-3000:]
    unwrapped = lambda text: "".join(text.split())  # noqa: E731  (the terminal wraps the path anywhere)
    assert unwrapped(said) in unwrapped(replay.stdout.str()) and "INTERNALERROR" not in replay.stdout.str()
    (logged,) = runlog.read(pytester.path / "run.json").run["models"]
    assert logged["recorded_digest"] is None and said in logged["recorded_unreadable"]

    recording = pytester.runpytest(*model, "--gaamas-trials=3", "--gaamas-record=new_episodes")
    assert outcomes(recording) == {"failed": 1} and "INTERNALERROR" not in recording.stdout.str()
    assert unwrapped(said) in unwrapped(recording.stdout.str())
