"""The plugin itself, driven through pytester: options, verdicts, tables, JSON, cassettes, journal."""

import json

import pytest

from conftest import ROOT, outcomes
from pytest_gaamas import cassettes

SHIPPED = f"--gaamas-cassette-dir={ROOT / 'cassettes'}"


def test_the_plugin_is_inert_in_a_suite_that_does_not_use_it(pytester):
    pytester.makepyfile("def test_plain():\n    assert sum([1, 1]) == 2\n")
    result = pytester.runpytest("--gaamas-json=run.json")
    result.assert_outcomes(passed=1)
    assert "gaamas:" not in result.stdout.str()
    assert not (pytester.path / "run.json").exists()


def test_help_lists_the_options(pytester):
    result = pytester.runpytest("--help")
    options = ("--gaamas-model", "--gaamas-trials", "--gaamas-record", "--gaamas-json", "--gaamas-threshold",
               "--gaamas-save", "--gaamas-compare", "--gaamas-compare-fail", "--gaamas-runs-dir")  # fmt: skip
    for option in options:
        result.stdout.fnmatch_lines([f"*{option}*"])


@pytest.mark.parametrize(
    "argument, message",
    [
        ("--gaamas-model=olama:mistral", "*did you mean 'ollama:mistral'*"),
        ("--gaamas-model=reference:oracle", "*no reference agent 'oracle'*"),
        ("--gaamas-model=embedded:gpt5", "*no embedded model 'gpt5'*"),
        ("--gaamas-threshold=min_mean_ccei", "*NAME=NUMBER*"),
        ("--gaamas-trials=0", "*between 1 and 10000*"),
        ("--gaamas-compare-fail=rate=0.1", "*needs --gaamas-compare*"),
        ("--gaamas-compare-fail=0.1", "*UNIT=DROP or BEHAVIOUR=DROP*say which*"),
        ("--gaamas-compare-fail=garp=0.1", "*no unit or behaviour named 'garp' in this run*behaviours: garp_consistency*"),
        ("--gaamas-compare=nothing-saved", "*--gaamas-compare: no saved run 'nothing-saved'*"),
        ("--gaamas-verdicts=lenient", "*invalid choice*"),
        ("--gaamas-save=../up", "*letters, digits*"),
        ("--gaamas-trials=1000000000", "*--gaamas-trials must be between 1 and 10000*"),
        (f"--gaamas-seed={10**31}", "*--gaamas-seed must be between 0 and 4294967295*"),
        ("--gaamas-seed=-1", "*--gaamas-seed must be between 0 and 4294967295*"),
        ("--gaamas-markdown=", "*--gaamas-markdown is given empty (an unset variable?)*"),
        ("--gaamas-timeout=0", "*--gaamas-timeout must be between 1 and 3600*"),
        ("--gaamas-threshold=garp_consistency.min_mean_cei=0.8",
         "*garp_consistency reads no threshold 'min_mean_cei' (it reads: min_mean_ccei)*python -m pytest_gaamas thresholds*"),
        ("--gaamas-threshold=garp.min_mean_ccei=0.8", "*no behaviour 'garp' in this run (behaviours: garp_consistency)*"),
        ("--gaamas-threshold=min_mean_cei=0.8", "*no behaviour of this run reads a threshold 'min_mean_cei'*"),
        ("--gaamas-json=", "*--gaamas-json is given empty*"),
        ("--gaamas-cassette-dir=", "*--gaamas-cassette-dir is given empty*"),
    ],
)
def test_wrong_options_are_one_clear_line(behaviour_project, argument, message):
    result = behaviour_project.runpytest(argument)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_reference_agents_land_where_theory_says(behaviour_project):
    result = behaviour_project.runpytest(
        "--gaamas-model=reference:rational", "--gaamas-model=reference:random", "--gaamas-model=reference:human",
        "--gaamas-json=run.json",
    )  # fmt: skip
    # Findings, not failures; people's CCEI (0.88) has an interval that straddles 0.86, as far as the design looks.
    assert outcomes(result) == {"passed": 1, "missed": 1, "inconclusive": 1}
    scores = {s["model"]: s for s in json.loads((behaviour_project.path / "run.json").read_text())["scores"]}
    assert scores["reference:rational"]["score"] == 1.0 and scores["reference:rational"]["passed"]
    assert 0.68 <= scores["reference:random"]["score"] <= 0.76 and not scores["reference:random"]["passed"]
    assert 0.80 <= scores["reference:human"]["score"] <= 0.93 and scores["reference:human"]["n"] == 120  # undecided at 30 and 60
    assert all(s["invalid"] == 0 for s in scores.values()) and scores["reference:rational"]["n"] == scores["reference:random"]["n"] == 30


def test_ini_settings_apply_and_the_command_line_wins(behaviour_project):
    behaviour_project.makeini("[pytest]\naddopts = -k 'not fidelity'\ngaamas_model = reference:random\ngaamas_trials = 5\n")
    result = behaviour_project.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["*test_garp_consistency[[]reference-random[]]*"])
    result = behaviour_project.runpytest("--gaamas-model=reference:rational", "--gaamas-json=run.json")
    result.assert_outcomes(passed=1)
    (score,) = json.loads((behaviour_project.path / "run.json").read_text())["scores"]
    assert score["model"] == "reference:rational" and score["n"] == 5


def test_a_threshold_can_be_overridden(behaviour_project):
    args = ["--gaamas-model=reference:human", "--gaamas-trials=10"]
    assert outcomes(behaviour_project.runpytest(*args)) == {"inconclusive": 1}  # 10 people cannot decide 0.9
    behaviour_project.runpytest(*args, "--gaamas-threshold=garp_consistency.min_mean_ccei=0.5").assert_outcomes(passed=1)


def test_a_missed_verdict_is_a_finding_in_one_line_and_fails_only_when_asked(behaviour_project):
    args = ["--gaamas-model=reference:random", "--gaamas-model=reference:rational"]
    reported = behaviour_project.runpytest(*args)
    assert reported.ret == pytest.ExitCode.OK and outcomes(reported) == {"passed": 1, "missed": 1}
    reported.stdout.fnmatch_lines([
        "*gaamas: 1 verdict not met (reported, not failed: --gaamas-verdicts=fail fails them)*",
        "MISSED test_garp_consistency[[]reference-random[]]: mean CCEI 0.7* with 0 of 30 trials invalid; meeting it",
        "    needs the lower 95% bound of the mean CCEI >= 0.86; look 1 of 3, at 30 trials (0.5 of the level)",
    ])  # fmt: skip
    failed = behaviour_project.runpytest(*args, "--gaamas-verdicts=fail")
    assert failed.ret == pytest.ExitCode.TESTS_FAILED and outcomes(failed) == {"passed": 1, "failed": 1}
    for result in (reported, failed):
        output = result.stdout.str()
        assert "Traceback" not in output and "\nE  " not in output and "def test_garp_consistency" not in output


def test_the_json_document(behaviour_project):
    behaviour_project.runpytest("--gaamas-model=reference:rational", "--gaamas-trials=3", "--gaamas-json=out/run.json")
    document = json.loads((behaviour_project.path / "out" / "run.json").read_text())
    run = document["run"]
    assert run["plugin"].startswith("pytest-gaamas ") and run["seed"] == 0 and run["trials"] == 3
    assert run["models"][0]["model"] == "reference:rational"
    (score,) = document["scores"]
    assert set(score) >= {"behaviour", "test_id", "model", "variant", "score", "ci", "n", "invalid", "passed"}
    assert score["behaviour"] == "garp_consistency" and score["variant"] == {"generation": "actions"}
    assert document["tables"][0]["headers"][:2] == ["model", "generation"]


def table_of(output: str) -> str:
    """The tables and findings, up to the closing line (which holds the time taken)."""
    start = output.index("gaamas: Economic rationality")
    return output[start:].rstrip().rsplit("\n", 1)[0]


def test_the_table_is_the_same_with_and_without_xdist(behaviour_project):
    args = ["--gaamas-model=reference:random", "--gaamas-model=reference:rational", "--gaamas-trials=6", "-p", "no:randomly"]
    serial = behaviour_project.runpytest_subprocess(*args, "--gaamas-json=serial.json")
    parallel = behaviour_project.runpytest_subprocess(*args, "-n", "2", "--gaamas-json=parallel.json")
    assert table_of(serial.stdout.str()) == table_of(parallel.stdout.str())
    load = lambda name: json.loads((behaviour_project.path / name).read_text())  # noqa: E731
    assert load("serial.json")["scores"] == load("parallel.json")["scores"]


def test_models_run_together_are_judged_each_as_in_a_run_of_its_own(pytester):
    """A family of claims is one model's: Holm's correction over the prisoner's dilemma's eight
    role cells and their contraries (16 p-values) is the same whether another model plays beside it
    in the run or not."""
    pytester.makepyfile(test_rational_vs_credible=(ROOT / "behaviours" / "test_rational_vs_credible.py").read_text())
    args = ["--gaamas-trials=6", "-k", "role_fidelity", "-p", "no:cacheprovider"]
    pytester.runpytest_subprocess(*args, "--gaamas-model=reference:random", "--gaamas-model=reference:first", "--gaamas-json=together.json")
    pytester.runpytest_subprocess(*args, "--gaamas-model=reference:random", "--gaamas-json=alone.json")
    load = lambda name: json.loads((pytester.path / name).read_text())["scores"]  # noqa: E731
    alone, together = load("alone.json"), [s for s in load("together.json") if s["model"] == "reference:random"]
    assert len(alone) == 8 and all(s["details"]["family"] == 16 for s in alone)
    assert together == alone  # not a family of 16, nor anything else of the other model's


def test_replaying_the_shipped_cassettes_is_byte_for_byte_stable(behaviour_project):
    args = ["--gaamas-model=embedded:smollm2", "--gaamas-record=none", SHIPPED]
    behaviour_project.runpytest(*args, "--gaamas-json=first.json")
    behaviour_project.runpytest(*args, "--gaamas-json=second.json")
    first = json.loads((behaviour_project.path / "first.json").read_text())
    second = json.loads((behaviour_project.path / "second.json").read_text())
    assert first["scores"] == second["scores"] and first["tables"] == second["tables"]
    assert first["scores"][0]["n"] == 30
    assert first["run"]["models"][0]["recorded_digest"].startswith("sha256:")


def test_a_request_no_cassette_holds_fails_and_names_it(behaviour_project):
    result = behaviour_project.runpytest("--gaamas-model=embedded:smollm2", "--gaamas-record=none", SHIPPED, "--gaamas-seed=99")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*replay only: no recorded answer for POST /chat/completions*seed*--gaamas-record=new_episodes*"])


def test_a_missing_cassette_file_fails_clearly(behaviour_project):
    behaviour_project.mkdir("empty")
    result = behaviour_project.runpytest("--gaamas-model=embedded:smollm2", "--gaamas-record=none", "--gaamas-cassette-dir=empty")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*replay only, and there is no cassette*record it with --gaamas-record=new_episodes*"])


def test_an_unreachable_server_is_one_line_that_says_what_to_do(behaviour_project, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    result = behaviour_project.runpytest("--gaamas-model=openai:nothing", "--gaamas-record=new_episodes", "--gaamas-trials=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*openai:nothing: cannot reach the OpenAI-compatible server at http://127.0.0.1:9/v1*OPENAI_BASE_URL*"])


def test_an_unreachable_model_stops_once_and_its_other_items_are_skipped(behaviour_project, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    result = behaviour_project.runpytest(
        "--gaamas-model=openai:nothing", "--gaamas-model=reference:rational", "--gaamas-record=new_episodes", "--gaamas-trials=2", "-k", "garp",
    )  # fmt: skip
    # The reference agent plays on; two of its choices cannot decide whether it is faithful to people.
    assert outcomes(result) == {"failed": 1, "skipped": 1, "passed": 1, "inconclusive": 1}
    result.stdout.fnmatch_lines(["gaamas: 1 more item skipped, the model being unavailable: openai:nothing: cannot reach*"])


def test_recorded_cassettes_hold_no_credentials_and_replay_offline(behaviour_project, fake_chat_server, monkeypatch):
    server = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secretsecretsecretsecret")
    args = ["--gaamas-model=openai:fake", "--gaamas-trials=2"]
    behaviour_project.runpytest(*args, "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    assert len(server.requests) == 50
    cassette = behaviour_project.path / "cassettes" / "openai-fake" / "garp_consistency" / "test_garp_consistency.yaml"
    text = cassette.read_text()
    assert "secret" not in text and "authorization" not in text.lower() and "cookie" not in text.lower()
    server.close()
    behaviour_project.runpytest(*args, "--gaamas-record=none").assert_outcomes(passed=1)


def test_a_criterion_over_replayed_cells_reads_the_records_already_replayed(pytester, fake_chat_server, monkeypatch):
    """Replay only, the GARP cell and its fidelity test (which replays the cell's cassette) open the
    cassette once between them, with the same records; recording, each opens it."""
    pytester.makepyfile(test_garp_consistency=(ROOT / "behaviours" / "test_garp_consistency.py").read_text())
    opened = []
    open_cassette = cassettes.cassette
    monkeypatch.setattr(cassettes, "cassette", lambda path, *a, **k: opened.append(path) or open_cassette(path, *a, **k))
    monkeypatch.setenv("OPENAI_BASE_URL", fake_chat_server().url)
    args = ["--gaamas-model=openai:fake", "--gaamas-trials=2", "-p", "no:xdist", f"--gaamas-json={pytester.path / 'run.json'}"]
    pytester.runpytest(*args, "--gaamas-record=new_episodes").assert_outcomes(passed=1, failed=0)
    assert len(opened) == 2
    opened.clear()
    pytester.runpytest(*args, "--gaamas-record=none").assert_outcomes(passed=1, failed=0)
    assert len(opened) == 1
    run = json.loads((pytester.path / "run.json").read_text())
    assert len(run["items"]) == 2 and len({p for item in run["items"] for p in item["plays"]}) == 1  # one play, both items


def test_a_dying_server_loses_nothing_and_the_next_run_resumes(behaviour_project, fake_chat_server, monkeypatch):
    dying = fake_chat_server(die_after=60)  # 2 trials of 25 budgets finish, the third dies
    monkeypatch.setenv("OPENAI_BASE_URL", dying.url)
    args = ["--gaamas-model=openai:fake", "--gaamas-trials=4", "--gaamas-record=all", "--gaamas-concurrency=1"]
    result = behaviour_project.runpytest(*args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*cannot reach the OpenAI-compatible server*"])
    (journal,) = (behaviour_project.path / ".gaamas" / "journal" / "openai-fake" / "garp_consistency").glob("*.jsonl")
    assert len(journal.read_text().splitlines()) == 1 + 2  # header and two finished trials

    healthy = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", healthy.url)
    behaviour_project.runpytest(*args).assert_outcomes(passed=1)
    assert len(healthy.requests) == 2 * 25  # only the two unfinished trials were asked again
    assert not journal.exists()  # a finished item leaves no journal behind
    healthy.close()
    # Nothing was lost: the two trials answered before the server died are in the cassette too.
    behaviour_project.runpytest("--gaamas-model=openai:fake", "--gaamas-trials=4", "--gaamas-record=none").assert_outcomes(passed=1)


def test_a_cassette_no_item_uses_any_more_is_listed_and_fails_the_check(behaviour_project):
    recorded = ROOT / "cassettes" / "embedded-smollm2" / "garp_consistency" / "test_garp_consistency.yaml"
    folder = behaviour_project.path / "cassettes" / "embedded-smollm2" / "garp_consistency"
    folder.mkdir(parents=True)
    (folder / "test_garp_consistency.yaml").write_bytes(recorded.read_bytes())
    args = ["--gaamas-model=embedded:smollm2", "--gaamas-record=none", "--gaamas-check-cassettes"]
    clean = behaviour_project.runpytest(*args)
    assert clean.ret == pytest.ExitCode.OK
    clean.stdout.fnmatch_lines(["embedded:smollm2: 1 of 1 cassettes used"])
    (folder / "test_garp_consistency_before_a_rename.yaml").write_bytes(recorded.read_bytes())
    orphaned = behaviour_project.runpytest(*args)
    assert orphaned.ret == pytest.ExitCode.TESTS_FAILED
    orphaned.stdout.fnmatch_lines([
        "embedded:smollm2: 1 of 2 cassettes used; 1 used by no item (a renamed test or reordered parameters?):",
        "    embedded-smollm2/garp_consistency/test_garp_consistency_before_a_rename.yaml",
    ])  # fmt: skip


def test_the_run_says_before_it_plays_whether_requests_may_go_live(behaviour_project):
    def said(result) -> str:
        return " ".join(result.stdout.str().split())  # the line wraps to the terminal

    live = behaviour_project.runpytest(
        "--gaamas-model=embedded:smollm2", "--gaamas-model=reference:random", "--gaamas-record=new_episodes", "--collect-only"
    )
    assert "gaamas: embedded:smollm2: 0 cassettes in" in said(live) and "anything not recorded there is asked live" in said(live)
    assert "gaamas: reference:random" not in said(live)
    assert "WARNING:" in said(live) and "does not exist: every request of embedded:smollm2 will be sent live" in said(live)
    (behaviour_project.path / "cassettes" / "embedded-smollm2").mkdir(parents=True, exist_ok=True)
    known = behaviour_project.runpytest("--gaamas-model=embedded:smollm2", "--gaamas-record=new_episodes", "--collect-only")
    assert "0 cassettes in" in said(known) and "WARNING:" not in said(known)  # a folder that exists is no mistyped one
    replay = behaviour_project.runpytest_subprocess("--gaamas-model=embedded:smollm2", "--gaamas-record=none", "-n", "2", "--gaamas-trials=1")
    assert said(replay).index("replay only: a request no cassette holds fails") < said(replay).index("there is no cassette")


THREE_VERDICTS = '''
from dataclasses import dataclass

import pytest
from pytest_gaamas import answers, stats, verdicts
from pytest_gaamas.games.oneshot import OneShotGame, conversation
from pytest_gaamas.report import cell


@dataclass(frozen=True)
class Nod(OneShotGame):
    name: str = "nod"
    schema = answers.object_schema(nod=answers.one_of(("yes",)))

    def messages(self, trial):
        return conversation("", 'Answer in JSON: {"nod": "yes"}')

    def read(self, obj):
        return answers.choice(obj, "nod", ("yes",))

    def outcome(self, trial, value):
        return {}

    def reference_answer(self, agent, trial, rng):
        return {"nod": "yes"}


@pytest.mark.parametrize("successes, trials", [(30, 30), (15, 30), (5, 30), (0, 0)])
def test_rate(gaamas, successes, trials):
    gaamas.play(Nod(), 1, temperature=0.0)  # so that the run log lists the item and its outcome
    rate = stats.wilson(successes, trials)
    verdict = verdicts.at_least(rate, 0.5)
    gaamas.score(table="Three verdicts", metric="rate", estimate=rate, invalid=0, verdict=verdict,
                 criterion="lower 95% bound >= 0.5", columns=("rate",), cells={"rate": cell(rate)},
                 row={"trials": f"{successes} of {trials}"})
    gaamas.verdict(verdict, f"rate {cell(rate)}")


def test_score_takes_one_verdict(gaamas):
    with pytest.raises(TypeError, match="not both"):
        gaamas.score(table="t", metric="m", estimate=stats.wilson(1, 2), invalid=0, passed=True, verdict="met",
                     criterion="", columns=(), cells={})


def test_coin(gaamas):
    gaamas.play(Nod(), 1, temperature=0.0)
    rate = stats.wilson(15, 30)
    verdict = verdicts.at_least(rate, 0.5, chance=0.5)
    gaamas.score(table="Three verdicts", metric="rate", estimate=rate, invalid=0, verdict=verdict,
                 criterion="lower 95% bound >= 0.5", columns=("rate",), cells={"rate": cell(rate)}, row={"trials": "a coin's 15 of 30"})
    gaamas.verdict(verdict, f"rate {cell(rate)}")
'''


def test_each_verdict_has_its_line_its_count_and_its_exit_code(pytester):
    """Met passes; missed, at chance and inconclusive are findings, reported beside each other;
    --gaamas-verdicts fails the missed and the at chance with fail, and the inconclusive too with
    fail-inconclusive. The four cells of test_rate are one table, judged at 1 - 0.05/4 even when
    one of them is selected alone."""
    pytester.makepyfile(test_three=THREE_VERDICTS)
    args = ["--gaamas-model=reference:rational", "-p", "no:cacheprovider", "--gaamas-json=run.json"]
    reported = pytester.runpytest(*args)
    assert reported.ret == pytest.ExitCode.OK and outcomes(reported) == {"passed": 2, "missed": 2, "at": 1, "inconclusive": 1}
    reported.stdout.fnmatch_lines([
        "test_three.py .imm.a *",
        "*gaamas: 4 verdicts not met: 2 missed (reported, not failed: --gaamas-verdicts=fail fails them), 1 at chance "
        "(reported, not failed: --gaamas-verdicts=fail fails them), 1 inconclusive (reported, not failed: "
        "--gaamas-verdicts=fail-inconclusive fails them)*",
        "MISSED test_rate[[]reference-rational-0-0[]]: rate -; no valid answer",
        "MISSED test_rate[[]reference-rational-5-30[]]: rate 0.17 [[]0.07, 0.34[]]; judged on the table-adjusted interval*",
        "AT CHANCE test_coin[[]reference-rational[]]: rate 0.50 [[]0.33, 0.67[]]; judged on the table-adjusted interval [[]0.339, 0.661[]]*",
        "INCONCLUSIVE test_rate[[]reference-rational-15-30[]]: rate 0.50 [[]0.33, 0.67[]]; judged on the table-adjusted interval*",
        "*= 2 passed, 2 missed, 1 at chance, 1 inconclusive in *",
    ])  # fmt: skip
    assert "reference-rational-30-30]: rate" not in reported.stdout.str()  # met: nothing to say
    document = json.loads((pytester.path / "run.json").read_text())
    rows = {row[2]: row[-1] for row in document["tables"][0]["rows"]}
    assert rows == {"30 of 30": "met", "15 of 30": "inconclusive", "5 of 30": "missed", "0 of 0": "missed", "a coin's 15 of 30": "at chance"}
    assert {item["test_id"].split("::")[1]: item["outcome"] for item in document["items"]}["test_coin[reference-rational]"] == "at chance"
    adjusted = {score["test_id"].split("::")[1]: score["adjusted"] for score in document["scores"]}
    perfect = adjusted["test_rate[reference-rational-30-30]"]
    # One end read: the two-sided interval of twice the table's error, its ends exact one-sided bounds.
    assert perfect["family"] == 4 and perfect["confidence"] == pytest.approx(1 - 2 * 0.05 / 4)
    coin_interval = [pytest.approx(0.3562, abs=1e-4), pytest.approx(0.6438, abs=1e-4)]
    coin = adjusted["test_coin[reference-rational]"]
    assert coin["chance_ci"] == coin_interval and (coin["family"], coin["chance"], coin["chance_margin"]) == (1, 0.5, 0.15)
    assert coin["confidence"] == pytest.approx(0.9) and coin["ci"] == [pytest.approx(0.3389, abs=1e-4), pytest.approx(0.6611, abs=1e-4)]
    assert "; at chance: the 90% interval [0.356, 0.644] lies within 0.5 +- 0.15" in " ".join(reported.stdout.str().split())

    failed = pytester.runpytest(*args, "--gaamas-verdicts=fail")
    assert failed.ret == pytest.ExitCode.TESTS_FAILED and outcomes(failed) == {"passed": 2, "failed": 3, "inconclusive": 1}
    failed.stdout.fnmatch_lines(["*4 verdicts not met: 2 missed (failed), 1 at chance (failed), 1 inconclusive (reported, not failed: *"])
    strict = pytester.runpytest(*args, "--gaamas-verdicts=fail-inconclusive")
    assert strict.ret == pytest.ExitCode.TESTS_FAILED and outcomes(strict) == {"passed": 2, "failed": 4}
    strict.stdout.fnmatch_lines(["*4 verdicts not met: 2 missed (failed), 1 at chance (failed), 1 inconclusive (failed)*"])
    only_undecided = pytester.runpytest(*args, "--gaamas-verdicts=fail", "-k", "15 and not coin")
    assert only_undecided.ret == pytest.ExitCode.OK and outcomes(only_undecided) == {"inconclusive": 1}
    only_undecided.stdout.fnmatch_lines(["*(97.50%, one of 4 cells)"])  # selected alone, still judged in its table of 4
    for result in (reported, failed, strict):
        assert "Traceback" not in result.stdout.str() and "def test_rate" not in result.stdout.str()


def test_the_run_log_keeps_each_verdict_and_xdist_counts_them_alike(pytester):
    pytester.makepyfile(test_three=THREE_VERDICTS)
    args = ["--gaamas-model=reference:rational", "-p", "no:cacheprovider", "-k", "rate"]
    serial = pytester.runpytest_subprocess(*args, "--gaamas-json=serial.json")
    parallel = pytester.runpytest_subprocess(*args, "-n", "2", "--gaamas-json=parallel.json")
    assert outcomes(serial) == outcomes(parallel) == {"passed": 1, "missed": 2, "inconclusive": 1}
    serial_log, parallel_log = (json.loads((pytester.path / f"{name}.json").read_text()) for name in ("serial", "parallel"))
    for key in ("scores", "items", "findings"):
        assert serial_log[key] == parallel_log[key], key
    by_id = lambda rows, field: {r["test_id"].split("[")[1].rstrip("]"): r[field] for r in rows}  # noqa: E731
    expected = {"reference-rational-30-30": "met", "reference-rational-15-30": "inconclusive",
                "reference-rational-5-30": "missed", "reference-rational-0-0": "missed"}  # fmt: skip
    assert by_id(serial_log["scores"], "verdict") == expected
    assert by_id(serial_log["scores"], "passed") == {k: v == "met" for k, v in expected.items()}
    assert by_id(serial_log["items"], "outcome") == {k: "passed" if v == "met" else v for k, v in expected.items()}
    assert by_id(serial_log["findings"], "verdict") == {k: v for k, v in expected.items() if v != "met"}
    assert serial_log["format"] == 4


def test_the_cassette_check_answers_for_the_behaviours_run_and_those_whose_file_is_gone(behaviour_project, fake_chat_server, monkeypatch):
    """A behaviour added beside the ones run, recorded but not run (not yet listed, or left out with
    -k), is held to nothing; once its file is gone, its cassettes are orphans and fail the check."""
    import shutil

    monkeypatch.setenv("OPENAI_BASE_URL", fake_chat_server().url)
    model = ("--gaamas-model=openai:fake", "--gaamas-trials=1")
    behaviour_project.runpytest(*model, "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    recorded = behaviour_project.path / "cassettes" / "openai-fake"
    shutil.copytree(recorded / "garp_consistency", recorded / "extra")
    (recorded / "extra" / "test_garp_consistency.yaml").rename(recorded / "extra" / "test_extra.yaml")
    behaviour_project.makepyfile(test_extra="def test_extra():\n    pass\n")
    run_one = ("test_garp_consistency.py", *model, "--gaamas-record=none", "--gaamas-check-cassettes")
    held = behaviour_project.runpytest(*run_one)
    assert held.ret == 0 and "openai:fake: 1 of 1 cassettes used" in held.stdout.str()
    (behaviour_project.path / "test_extra.py").unlink()
    orphaned = behaviour_project.runpytest(*run_one)
    assert orphaned.ret == pytest.ExitCode.TESTS_FAILED and "1 used by no item" in orphaned.stdout.str()
    assert "openai-fake/extra/test_extra.yaml" in orphaned.stdout.str()
