"""What the terminal shows after a run: the tables that judge a criterion while they fit a few
screens, else their verdicts counted a table a line, the others named; each criterion not met on a
line of its own while they fit a screen, else counted per test; and no value of a table split over
two lines, whatever the width."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import outcomes
from pytest_gaamas import verdicts
from pytest_gaamas.report import Table
from pytest_gaamas.session.findings import findings_by_test

#: 25 items, each a cell with a verdict (one of a table of 25, one at chance: a coin's 60 of 120, which a table of 25
#: still shows at chance, where 15 of 30 no longer is), and a descriptive table of the same rates beside them.
MANY_FINDINGS = '''
import pytest
from pytest_gaamas import stats, verdicts
from pytest_gaamas.report import cell


@pytest.mark.parametrize("successes", range(25))
def test_rate(gaamas, successes):
    rate = stats.wilson(successes, 30) if successes != 15 else stats.wilson(60, 120)
    verdict = verdicts.at_least(rate, 0.8, chance=0.5)
    gaamas.score(table="Rates", metric="rate", estimate=rate, invalid=0, verdict=verdict, criterion="lower 95% bound >= 0.8",
                 columns=("rate",), cells={"rate": cell(rate)}, row={"successes": str(successes)})
    gaamas.score(table="Rates, described", metric="rate", estimate=rate, invalid=0, passed=None, criterion="",
                 columns=("rate",), cells={"rate": cell(rate)}, row={"successes": str(successes)})
    gaamas.verdict(verdict, f"rate {cell(rate)}")
'''
ARGS = ("--gaamas-model=reference:rational", "-p", "no:cacheprovider")


@pytest.fixture
def many_findings(pytester):
    pytester.makepyfile(test_rates=MANY_FINDINGS)
    return pytester


def test_a_table_without_a_criterion_is_named_not_printed_unless_asked(many_findings):
    result = many_findings.runpytest(*ARGS)
    text = result.stdout.str()
    assert "gaamas: Rates =" in text and "gaamas: Rates, described" not in text
    result.stdout.fnmatch_lines(["gaamas: 1 more table, which judge no criterion (rounds, companions), not printed: --gaamas-tables=all*"])
    every = many_findings.runpytest(*ARGS, "--gaamas-tables=all").stdout.str()
    assert "gaamas: Rates, described" in every and "more table" not in every


def test_past_a_screenful_the_findings_are_counted_per_test_and_listed_with_v(many_findings):
    result = many_findings.runpytest(*ARGS)
    # Judged as a table of 25 cells: 20 and 21 of 30, met or missed alone, are inconclusive; 60 of 120 is at chance.
    assert outcomes(result) == {"missed": 16, "at": 1, "inconclusive": 8}  # pytest's parser reads a word of the closing line: "1 at chance"
    result.stdout.fnmatch_lines(["*gaamas: 25 verdicts not met*", "test *items*passed*missed*at chance*inconclusive", "test_rate *25 *0 *16 *1 *8",
                                 "gaamas: each finding with its reason: -v lists them here;*", "*= 16 missed, 1 at chance, 8 inconclusive in *"])  # fmt: skip
    assert "MISSED test_rate" not in result.stdout.str()
    listed = many_findings.runpytest(*ARGS, "-v")
    assert len(re.findall(r"^MISSED test_rate\[", listed.stdout.str(), re.MULTILINE)) == 16
    assert re.findall(r"^AT CHANCE test_rate\[reference-rational-(\d+)\]", listed.stdout.str(), re.MULTILINE) == ["15"]
    assert "; at chance: the 99.6% interval [0.373, 0.627] lies within 0.5 +- 0.15" in " ".join(listed.stdout.str().split())
    assert len(re.findall(r"^INCONCLUSIVE test_rate\[", listed.stdout.str(), re.MULTILINE)) == 8


#: Eight test functions like MANY_FINDINGS's, each its own table of 25 cells (a test function's cells are its table's family).
MANY_TABLES = "".join(MANY_FINDINGS.replace("def test_rate(", f"def test_rate_{n}(").replace('table="Rates', f'table="Rates {n}')
                      for n in range(8))  # fmt: skip


def test_past_a_few_screenfuls_the_tables_are_counted_per_table_and_printed_whole_with_v(pytester):
    """Eight tables of 25 cells fill about 270 lines: a line each counts its cells and verdicts, in the
    tables' order, and -v or --gaamas-tables=all prints them whole."""
    pytester.makepyfile(test_rates=MANY_TABLES)
    result = pytester.runpytest(*ARGS)
    text = result.stdout.str()
    assert "gaamas: Rates 3 =" not in text and "MISSED test_rate" not in text
    result.stdout.fnmatch_lines(["*= gaamas: 8 tables judge a criterion =*", "table *cells *met *missed *at chance *inconclusive",
                                 "Rates 0 *25 *0 *16 *1 *8", *(f"Rates {n} *25 *0 *16 *1 *8" for n in range(1, 8)),
                                 "gaamas: each table whole (2?? lines)*", "*gaamas: 200 verdicts not met*"])  # fmt: skip
    assert "-v prints them here" in " ".join(text.split())
    for whole in ("-v", "--gaamas-tables=all"):
        printed = pytester.runpytest(*ARGS, whole).stdout.str()
        assert all(f"gaamas: Rates {n} =" in printed for n in range(8)) and "tables judge a criterion" not in printed, whole


def test_the_count_per_test_says_how_many_passed_so_a_row_is_read_without_subtracting():
    outcomes = {"a.py::test_x[1]": "passed", "a.py::test_x[2]": "missed", "a.py::test_x[3]": "failed",
                "a.py::test_x[4]": "inconclusive", "a.py::test_y[1]": "passed"}  # fmt: skip
    findings = [("a.py::test_x[2]", verdicts.MISSED, "low"), ("a.py::test_x[4]", verdicts.INCONCLUSIVE, "wide")]
    table = findings_by_test(findings, outcomes)
    assert table.headers[:3] == ("test", "items", "passed")
    assert table.rows == (("test_x", "4", "1", "1", "0", "1"),)  # test_y met everything: not a row


def test_a_wrong_tables_mode_is_one_line(many_findings):
    result = many_findings.runpytest(*ARGS, "--gaamas-tables=some")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*invalid choice*"])


INTERVAL = re.compile(r"-?\d\.\d\d \[-?\d\.\d\d, -?\d\.\d\d\]")


@given(columns=st.integers(1, 14), rows=st.integers(1, 4), width=st.integers(40, 160), label=st.text("ab ", min_size=1, max_size=30))
def test_no_value_of_a_table_is_ever_split_over_two_lines(columns, rows, width, label):
    """Printed in parts where the table is too wide: every interval stands whole on one line, the
    row labels are repeated in each part, and each column is printed exactly once."""
    headers = ("model", "generation", *(f"column {c} of the table" for c in range(columns)))
    body = tuple(("embedded:smollm2", label, *(f"0.{c % 10}{r} [0.{c % 10}0, 0.{c % 10}9]" for c in range(columns))) for r in range(rows))
    text = Table("t", headers, body, (), (), labels=2).render(width)
    lines = text.splitlines()
    for row in body:
        for value in row[2:]:
            value_alone, interval = value.split(" ", 1)
            assert any(interval in line for line in lines), (interval, text)
            assert any(value_alone in line for line in lines)
    parts = text.split("\n\n")
    assert all(part.splitlines()[0].startswith("model") for part in parts)
    assert sum(part.count("column") for part in parts) == columns


def test_a_table_that_fits_is_one_part_and_one_too_wide_is_printed_in_parts_within_the_width():
    headers = ("model", "generation", *(f"{c} messages" for c in range(8)), "verdict")
    body = (("embedded:smollm2", "actions", *("0.57 [0.46, 0.67]",) * 8, "missed"),)
    wide = Table("t", headers, body, (), (), labels=2).render(120)
    assert wide.count("\n\n") == 1 and max(map(len, wide.splitlines())) <= 120
    assert wide.count("embedded:smollm2") == 2 and wide.count("[0.46, 0.67]") == 8
    narrow = Table("t", headers[:4], tuple(row[:4] for row in body), (), (), labels=2).render(120)
    assert "\n\n" not in narrow and narrow.count("0.57 [0.46, 0.67]") == 2


def test_the_cost_of_a_decided_verdict_is_its_item_s_requests_shared_among_its_verdicts():
    from types import SimpleNamespace

    from pytest_gaamas.session.terminal import decision_cost
    from pytest_gaamas.verdicts import Verdict

    def score(test_id, verdict, requests):
        return SimpleNamespace(test_id=test_id, verdict=verdict, details={"requests": requests})

    scores = [score("a", Verdict.MET, 120), score("a", Verdict.INCONCLUSIVE, 120), score("b", Verdict.MISSED, 30),
              score("c", Verdict.INCONCLUSIVE, 60), score("d", None, 999), SimpleNamespace(test_id="e", verdict=Verdict.MET, details={})]
    assert decision_cost(scores) == "2 verdicts decided (met, missed or at chance) on 90 requests, 45 a verdict; 2 inconclusive (50%) on 120"
    assert decision_cost([score("d", None, 5)]) == ""
