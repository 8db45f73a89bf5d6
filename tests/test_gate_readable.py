"""The gate read from a CI log: the closing line says what the comparison came to; the comparison's
section gives the outcome and the failing cells first, within a screen, and says where the whole is;
a saved cell this run deselected is said to be deselected; the report's header says the outcome
first. On a behaviour of 60 cells scored by the reference agent, a regression planted in its saved run."""

import dataclasses
import json
import re

import pytest

from pytest_gaamas import compare, gate, report_html, report_markdown, runlog
from pytest_gaamas.report import TABLE_WIDTH
from pytest_gaamas.session import terminal

#: 60 items, each a rate with a verdict and a long label, so that a comparison's lines and table run wide.
RATES = '''
import pytest
from pytest_gaamas import stats, verdicts
from pytest_gaamas.report import cell


@pytest.mark.parametrize("successes", range(60))
def test_rate(gaamas, successes):
    rate = stats.wilson(successes % 30, 30)
    verdict = verdicts.at_least(rate, 0.5)
    gaamas.score(table="Rates", metric="rate of the answers the model gave that were the one it was asked for", estimate=rate,
                 invalid=0, verdict=verdict, criterion="lower 95% bound >= 0.5", columns=("rate",), cells={"rate": cell(rate)},
                 row={"successes": str(successes), "condition": "a condition described at length " * 3})
    gaamas.verdict(verdict, f"rate {cell(rate)}")
'''
ARGS = ("--gaamas-model=reference:rational", "-p", "no:cacheprovider", "--gaamas-runs-dir=runs")
GATED = ("--gaamas-compare=before", "--gaamas-compare-fail=rate=0.1")


@pytest.fixture
def saved(pytester, monkeypatch):
    """The 60 cells run and saved as ``before``."""
    monkeypatch.setenv("COLUMNS", "300")  # wider than the summary: the section keeps to its own width
    pytester.makepyfile(test_rates=RATES)
    pytester.runpytest(*ARGS, "--gaamas-save=before")
    assert (pytester.path / "runs" / "before.json").exists()
    return pytester


def plant(pytester, lost: int = 0) -> int:
    """Every saved cell made a met criterion answered every time; the first ``lost`` of them answered
    where they answer nothing now is planted apart. How many cells will drop."""
    path = pytester.path / "runs" / "before.json"
    document = json.loads(path.read_text())
    for s in document["scores"]:
        s |= {"sample": [1.0] * 30, "score": 1.0, "ci": [0.89, 1.0], "passed": True, "verdict": "met", "invalid": 0}
    path.write_text(json.dumps(document))
    return sum(s["score"] is not None for s in document["scores"])


def section(output: str) -> list[str]:
    """The comparison's section: from its separator to the line before the closing one."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"=+ gaamas: compared with ", line))
    return lines[start:-1]


def test_a_failed_comparison_says_so_first_within_a_screen_and_on_the_closing_line(saved):
    plant(saved)
    result = saved.runpytest(*ARGS, *GATED, "--gaamas-report=report.html", "--gaamas-markdown=summary.md", "--gaamas-json=run.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    log = runlog.read(saved.path / "run.json")
    outcome = gate.Outcome.of(log.comparison)
    drops = [n for n in log.comparison["notes"] if n.startswith("DROP ")]
    assert outcome.failed and outcome.dropped == len(drops) > terminal.GATE_LINES - 10 and outcome.gated == 60  # a screen of DROP lines
    shown = section(result.stdout.str())
    assert len(shown) <= terminal.GATE_LINES and max(map(len, shown)) <= TABLE_WIDTH, "\n".join(shown)
    assert re.match(r"=+ gaamas: compared with before: FAILED =+$", shown[0])
    assert shown[1] == f"gaamas: comparison with before FAILED: {outcome.dropped} cells dropped, 0 lost their answers (of the 60 gated)"
    listed = [line for line in shown if line.startswith("gaamas: DROP ")]
    assert shown[2 : 2 + len(listed)] == listed and len(listed) > 20  # the failing cells first, after the outcome
    assert all(line.endswith(terminal.ELLIPSIS) for line in listed if len(line) == TABLE_WIDTH)
    assert any(line.endswith(terminal.ELLIPSIS) for line in listed)  # a long line is cut at the screen's edge
    assert all(re.match(r"gaamas: DROP rates test_rate \(successes \d+, generation actions, condition a condition", line) for line in listed)
    assert len(set(listed)) == len(listed)  # each names its cell first: no two read the same, cut or not
    assert all(re.search(r": 1 -> [\d.]+, worse by [\d.]+ > allowed 0\.1, p \(Holm\) = ", line) for line in drops)
    assert f"gaamas: ... {outcome.dropped - len(listed)} more cells that failed or could not be tested ({outcome.dropped - len(listed)} DROP)" in shown
    changed = len(compare.shown_of(log.comparison["cells"]))
    assert any(line.startswith(f"gaamas: the table of the {changed} cells that changed is not printed here (") for line in shown)
    said = " ".join(" ".join(shown).split())
    assert "the whole comparison, every cell with its p-values: see the report report.html, the summary summary.md, the run log run.json" in said
    closing = result.stdout.lines[-1]
    assert f" {outcome.dropped} of 60 gated cells regressed: comparison with before FAILED ({outcome.dropped} dropped, 0 lost) in " in closing
    # The whole comparison stays in the files: every DROP line in the report and in the summary's notes.
    page = (saved.path / "report.html").read_text(encoding="utf-8")
    summary = (saved.path / "summary.md").read_text(encoding="utf-8")
    assert all(report_html._e(line) in page for line in drops) and summary.count("- DROP rates") == len(drops)
    assert page.split('id="comparison"')[1].count("<tr><td>rates</td>") == 60  # every cell compared, in the report's table


def test_a_passing_comparison_says_how_many_cells_it_gated(saved):
    result = saved.runpytest(*ARGS, *GATED)
    assert result.ret == pytest.ExitCode.OK
    shown = section(result.stdout.str())
    gated = sum(s["verdict"] == "met" for s in json.loads((saved.path / "runs" / "before.json").read_text())["scores"])
    assert 0 < gated < 60
    assert re.match(r"=+ gaamas: compared with before: passed =+$", shown[0])
    assert shown[1] == f"gaamas: comparison with before passed: none of the {gated} gated cells dropped or lost its answers"
    assert not any("DROP" in line for line in shown) and len(shown) <= terminal.GATE_LINES
    assert f" {gated} gated cells held: comparison with before passed in " in result.stdout.lines[-1]
    nothing_gated = saved.runpytest(*ARGS, "--gaamas-compare=before")  # no allowance: compared, never gated
    assert nothing_gated.ret == pytest.ExitCode.OK
    assert " 60 cells compared with before, none gated: comparison passed in " in nothing_gated.stdout.lines[-1]
    assert section(nothing_gated.stdout.str())[1] == "gaamas: comparison with before passed: 60 cells compared, none gated (met before and given an allowance)"


def test_the_closing_line_counts_a_lost_cell_apart_from_the_dropped_ones():
    outcome = gate.Outcome("base", compared=900, gated=30, dropped=3, lost=1)
    assert terminal.closing_words(outcome) == (4, "of 30 gated cells regressed: comparison with base FAILED (3 dropped, 1 lost)")
    assert outcome.said() == "comparison with base FAILED: 3 cells dropped, 1 lost its answers (of the 30 gated)"
    cells = [{"gated": True}] * 26 + [{"gated": True, "dropped": True}] * 3 + [{"gated": True, "dropped": True, "lost": True}]
    assert gate.Outcome.of({"with": "base", "notes": [], "cells": cells + [{}] * 870}) == outcome
    refused = gate.Outcome.of(gate.refused("base", "no saved run 'base'").to_json())
    assert refused.verdict == "refused" and terminal.closing_words(refused) == (1, "comparison with base refused")


@pytest.mark.parametrize("selection", [("-k", "not rate[reference-rational-5]"), ("-m", "not slow"), ("--deselect", "test_rates.py::test_rate[reference-rational-5]"),
                                       ("test_rates.py::test_rate[reference-rational-6]",)])  # fmt: skip
def test_a_saved_cell_this_run_deselected_is_said_deselected_not_renamed(saved, selection):
    if selection[0] == "-m":  # a mark that leaves one item out
        saved.makepyfile(test_rates=RATES.replace("range(60))", "[*range(5), pytest.param(5, marks=pytest.mark.slow), *range(6, 60)])"))
        saved.makeini("[pytest]\nmarkers = slow\n")
    result = saved.runpytest(*ARGS, *GATED, *selection)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    said = " ".join(result.stdout.str().split())
    deselected = 59 if len(selection) == 1 else 1
    assert f"gaamas: {deselected} cell{'s' if deselected > 1 else ''} of the saved run deselected in this run (rates {deselected}), so not compared nor gated on" in said
    assert "re-parametrized" not in said


def test_deselected_under_xdist_is_said_as_without_it(saved):
    result = saved.runpytest_subprocess(*ARGS, *GATED, "-n", "2", "-k", "not rate[reference-rational-5]")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    said = " ".join(result.stdout.str().split())
    assert "gaamas: 1 cell of the saved run deselected in this run (rates 1), so not compared nor gated on" in said and "re-parametrized" not in said


def test_a_saved_cell_whose_behaviour_ran_and_found_no_match_is_said_renamed(saved):
    path = saved.path / "runs" / "before.json"
    document = json.loads(path.read_text())
    document["scores"][0]["row"]["condition"] = "a condition since renamed"
    path.write_text(json.dumps(document))
    saved.runpytest(*ARGS, *GATED, "-k", "not rate[reference-rational-5]", "--gaamas-json=run.json")
    notes = runlog.read(saved.path / "run.json").comparison["notes"]
    assert any(note.startswith("1 cell of the saved run deselected in this run (rates 1)") for note in notes)
    assert any(note.startswith("1 cell of the saved run found no cell of this run to compare with, though their behaviour ran (rates 1): "
                               "renamed or re-parametrized") for note in notes)  # fmt: skip


def test_the_reports_header_says_the_comparisons_outcome_first_and_one_total_a_sentence(saved):
    plant(saved)
    saved.runpytest(*ARGS, *GATED, "--gaamas-report=report.html", "--gaamas-markdown=summary.md", "--gaamas-json=run.json")
    log = runlog.read(saved.path / "run.json")
    outcome = gate.Outcome.of(log.comparison)
    # Each item as a run that plays games keeps it, and one more that judges no criterion: 61 items, 60 criteria.
    verdict_of = {s.test_id: s.verdict.value for s in log.scores}
    items = [runlog.ItemLog(test_id, "rates", "reference:rational", {}, outcome="passed" if verdict == "met" else verdict)
             for test_id, verdict in verdict_of.items()] + [runlog.ItemLog("test_rates.py::test_described", "rates", "reference:rational", {}, outcome="passed")]  # fmt: skip
    log = dataclasses.replace(log, items=items)
    header = report_html._header(log)
    first = re.search(r"<h1>pytest-gaamas report</h1>\n<p>(.*?)</p>", header).group(1)
    assert re.sub("<[^>]+>", "", first) == f"Comparison with before FAILED: {outcome.dropped} cells dropped, 0 lost their answers (of the 60 gated)."
    assert 'class="failed" href="#comparison"' in first
    totals = re.sub("<[^>]+>", "", header.split("</p>")[1])
    criteria, their_parts = re.search(r"(\d+) criteria judged: ([^.]*)\.", totals).groups()
    items, its_parts = re.search(r"(\d+) items: ([^.;]*)", totals).groups()
    for total, parts in ((criteria, their_parts), (items, its_parts)):  # each total is the sum of its own parts
        assert int(total) == sum(int(n) for n in re.findall(r"(\d+) [a-z ]+", parts)), totals
    assert int(items) == len(log.items) == 61 and int(criteria) == 60
    assert "; 1 of them judges no criterion." in totals
    summary = report_markdown.render(log)
    assert summary.split("\n")[2].startswith("**Comparison with before FAILED**: ")  # the summary too says it first
