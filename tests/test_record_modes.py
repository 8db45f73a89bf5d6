"""--gaamas-record's modes, named and behaving as vcrpy's, and the one source of --help and of the docs'
table of options. Against the loopback chat server of conftest.py, never a model: 25 requests a GARP
trial."""

import re

import pytest
import yaml

from conftest import ROOT, outcomes
from pytest_gaamas import __main__, settings

MODEL = "--gaamas-model=openai:fake"
CASSETTE = ("cassettes", "openai-fake", "garp_consistency", "test_garp_consistency.yaml")
#: The line a run with `once` fails an item by, where its cassette exists and lacks a request.
ONCE_LACKS = ("*--gaamas-record=once: *test_garp_consistency.yaml exists and holds no answer for POST /chat/completions*; "
              "once records only cassettes that do not exist yet, as vcrpy's once does. Record what a cassette lacks with "
              "--gaamas-record=new_episodes (spelled once here before)*")  # fmt: skip


def recorded(project) -> list[str]:
    """The request bodies a cassette holds, in order."""
    return [i["request"]["body"] for i in yaml.safe_load(project.path.joinpath(*CASSETTE).read_text())["interactions"]]


def test_once_records_a_cassette_that_is_not_there_whole_and_then_only_replays_it(behaviour_project, fake_chat_server, monkeypatch):
    server = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    result = behaviour_project.runpytest(MODEL, "--gaamas-trials=2", "--gaamas-record=once")
    result.assert_outcomes(passed=1)
    assert len(server.requests) == 50 and len(recorded(behaviour_project)) == 50
    assert "a cassette not there yet is recorded live from the model, whole" in " ".join(result.stdout.str().split())
    before = behaviour_project.path.joinpath(*CASSETTE).read_bytes()
    behaviour_project.runpytest(MODEL, "--gaamas-trials=2", "--gaamas-record=once").assert_outcomes(passed=1)
    assert len(server.requests) == 50 and behaviour_project.path.joinpath(*CASSETTE).read_bytes() == before


def test_once_fails_in_one_line_where_an_existing_cassette_lacks_a_request_and_records_nothing(behaviour_project, fake_chat_server, monkeypatch):
    server = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    behaviour_project.runpytest(MODEL, "--gaamas-trials=2", "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    before = behaviour_project.path.joinpath(*CASSETTE).read_bytes()
    result = behaviour_project.runpytest(MODEL, "--gaamas-trials=3", "--gaamas-record=once")
    assert outcomes(result) == {"failed": 1}
    result.stdout.fnmatch_lines([ONCE_LACKS])
    (line,) = [line for line in result.stdout.lines if line.startswith("openai:fake: --gaamas-record=once: ")]
    assert line.endswith("or everything afresh with --gaamas-record=all.") and "Traceback" not in result.stdout.str()  # one line
    assert len(server.requests) == 50  # nothing asked live
    assert behaviour_project.path.joinpath(*CASSETTE).read_bytes() == before
    assert not list((behaviour_project.path / ".gaamas" / "journal").rglob("*.jsonl"))  # nor journaled


def test_new_episodes_records_the_missing_requests_and_keeps_the_recorded_ones(behaviour_project, fake_chat_server, monkeypatch):
    server = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    behaviour_project.runpytest(MODEL, "--gaamas-trials=2", "--gaamas-record=new_episodes").assert_outcomes(passed=1)
    two_trials = recorded(behaviour_project)
    result = behaviour_project.runpytest(MODEL, "--gaamas-trials=3", "--gaamas-record=new_episodes")
    result.assert_outcomes(passed=1)
    assert len(server.requests) == 75  # the third trial only
    three_trials = recorded(behaviour_project)
    assert len(three_trials) == 75 and three_trials[:50] == two_trials
    assert "OnceChanged" not in result.stdout.str()
    behaviour_project.runpytest(MODEL, "--gaamas-trials=3", "--gaamas-record=once").assert_outcomes(passed=1)  # whole now


def test_once_cut_short_leaves_no_cassette_and_its_trials_in_the_journal(behaviour_project, fake_chat_server, monkeypatch):
    """A cassette `once` writes is whole: a server dying mid-run leaves none, so the next run with `once`
    records it, taking the finished trials from the journal without asking them again."""
    dying = fake_chat_server(die_after=60)  # two trials answered, the third cut short
    monkeypatch.setenv("OPENAI_BASE_URL", dying.url)
    args = [MODEL, "--gaamas-trials=4", "--gaamas-record=once", "--gaamas-retries=0", "--gaamas-concurrency=1"]
    assert outcomes(behaviour_project.runpytest(*args)) == {"failed": 1}
    assert not behaviour_project.path.joinpath(*CASSETTE).exists()
    (journal,) = (behaviour_project.path / ".gaamas" / "journal" / "openai-fake" / "garp_consistency").glob("*.jsonl")
    journaled = len(journal.read_text().splitlines()) - 1
    assert journaled == 2
    healthy = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", healthy.url)
    behaviour_project.runpytest(*args).assert_outcomes(passed=1)
    assert len(healthy.requests) == 50 and len(recorded(behaviour_project)) == 100


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_once_is_said_to_have_changed_meaning_once_a_session(behaviour_project, workers):
    """Its meaning changed: a deprecation warning, once, naming what it meant before."""
    result = behaviour_project.runpytest_subprocess("--gaamas-model=reference:rational", "--gaamas-trials=2", "--gaamas-record=once", *workers)
    said = " ".join(result.stdout.str().split())
    assert said.count("OnceChanged: --gaamas-record=once now means what vcrpy's once means") == 1, said
    assert "is --gaamas-record=new_episodes, the default outside CI" in said
    quiet = behaviour_project.runpytest("--gaamas-model=reference:rational", "--gaamas-trials=2", "--gaamas-record=new_episodes")
    assert "OnceChanged" not in quiet.stdout.str()


def test_once_under_filterwarnings_error_is_said_not_an_internal_error(behaviour_project):
    """A project's ``filterwarnings = error`` turned the notice that once changed meaning into an
    INTERNALERROR before anything ran; it is said on stderr, and the run goes on."""
    behaviour_project.makeini("[pytest]\naddopts = -k 'not fidelity'\nfilterwarnings = error\n")
    result = behaviour_project.runpytest_subprocess("--gaamas-model=reference:rational", "--gaamas-trials=2", "--gaamas-record=once")
    assert result.ret == pytest.ExitCode.OK and "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert "ignore::pytest_gaamas.settings.OnceChanged" in result.stderr.str()


def test_the_default_record_mode_is_new_episodes_outside_ci_and_none_in_it(behaviour_project, monkeypatch):
    def said(result) -> str:
        return " ".join(result.stdout.str().split())

    monkeypatch.delenv("CI", raising=False)
    assert "(--gaamas-record=new_episodes; --gaamas-record=none replays only)" in said(behaviour_project.runpytest("--collect-only"))
    monkeypatch.setenv("CI", "true")
    assert "replay only: a request no cassette holds fails" in said(behaviour_project.runpytest("--collect-only"))


def test_help_lists_every_record_mode_and_a_mode_misspelt_is_refused_with_them(pytester):
    result = pytester.runpytest("--help")
    help_text = " ".join(result.stdout.str().split())
    record = help_text[help_text.index("--gaamas-record=MODE"):help_text.index("--gaamas-json=PATH")]
    for mode in ("none:", "once:", "new_episodes:", "all:"):
        assert mode in record, record
    assert "Default: new_episodes, or none where the CI environment variable is set" in record
    wrong = pytester.runpytest("--gaamas-record=onse")
    assert wrong.ret == pytest.ExitCode.USAGE_ERROR
    wrong.stderr.fnmatch_lines(["*invalid choice: 'onse' (choose from 'none', 'once', 'new_episodes', 'all')*"])


# -- one source for --help and docs/options.md --------------------------------------------------


def test_the_docs_table_of_options_is_the_one_the_option_definitions_render():
    document = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    assert settings.with_options_table(document) == document, (
        "docs/options.md's table differs from pytest_gaamas/settings.py's OPTIONS: "
        "write it again with `python -m pytest_gaamas options-table --update docs/options.md`"
    )


def test_help_says_what_the_docs_table_says_of_each_option(pytester):
    help_text = " ".join(pytester.runpytest("--help").stdout.str().split())
    for option in settings.OPTIONS:
        shown = f"{option.flag}={option.metavar}" if option.metavar else option.flag
        assert shown in help_text
        assert f"{shown} {option.plain}" in help_text, option.name
        assert "`" not in option.plain and "](" not in option.plain


def test_every_option_pytest_knows_is_in_the_table(pytester):
    help_text = pytester.runpytest("--help").stdout.str()
    given = set(re.findall(r"^  (--gaamas-[a-z-]+)", help_text, re.MULTILINE))
    assert given and given == {option.flag for option in settings.OPTIONS}


def test_the_command_prints_the_table_and_writes_it_between_the_markers(tmp_path, capsys):
    assert __main__.main(["options-table"]) == 0
    assert capsys.readouterr().out == settings.options_table()
    opening, closing = settings.TABLE_MARKERS
    stale = tmp_path / "options.md"
    stale.write_text(f"# Options\n\nProse before.\n\n{opening}\n\n| option | meaning |\n|---|---|\n| `--gaamas-old` | gone |\n\n{closing}\n\nProse after.\n")
    assert __main__.main(["options-table", "--update", str(stale)]) == 0
    written = stale.read_text()
    assert written == f"# Options\n\nProse before.\n\n{opening}\n\n{settings.options_table()}\n{closing}\n\nProse after.\n"
    unmarked = tmp_path / "plain.md"
    unmarked.write_text("no table here\n")
    assert __main__.main(["options-table", "--update", str(unmarked)]) == 2
    assert unmarked.read_text() == "no table here\n"


def test_plain_text_reads_links_and_code_as_a_terminal_shows_them():
    assert settings.plain_text("see `--x` ([Installing](installing.md#which))") == "see --x (docs/installing.md)"
    assert settings.plain_text("[the commons](behaviours.md#c) and **bold**") == "the commons (docs/behaviours.md) and bold"
