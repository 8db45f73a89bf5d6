"""A criterion missed or left inconclusive is reported, not failed, and every tool that reads
pytest's reports shows it as what it is: pytest's expected failure, never a pass."""

import importlib.util
import xml.etree.ElementTree as ET

import pytest
from conftest import ROOT, gaamas_command, outcomes

AGENTS = ["--gaamas-model=reference:random", "--gaamas-model=reference:rational"]


def test_the_junit_xml_marks_a_missed_item_and_counts_no_pass_for_it(behaviour_project):
    result = behaviour_project.runpytest(*AGENTS, "--junitxml=junit.xml")
    assert result.ret == 0 and outcomes(result) == {"passed": 1, "missed": 1}
    suite = ET.parse(behaviour_project.path / "junit.xml").getroot().find("testsuite")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    missed = next(case for name, case in cases.items() if "random" in name)
    met = next(case for name, case in cases.items() if "rational" in name)
    mark = missed.find("skipped")
    assert mark is not None and mark.get("type") == "pytest.xfail" and mark.get("message").startswith("missed: ")
    assert "CCEI" in mark.get("message")
    assert met.find("skipped") is None and met.find("failure") is None
    assert int(suite.get("skipped")) == 1 and int(suite.get("failures")) == 0  # reported, not failed


def test_a_missed_item_fails_in_the_junit_xml_when_verdicts_fail(behaviour_project):
    result = behaviour_project.runpytest(*AGENTS, "--junitxml=junit.xml", "--gaamas-verdicts=fail")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    suite = ET.parse(behaviour_project.path / "junit.xml").getroot().find("testsuite")
    assert int(suite.get("failures")) == 1


def test_last_failed_reruns_nothing_it_should_not_and_ra_says_missed(behaviour_project):
    result = behaviour_project.runpytest(*AGENTS, "-rA")
    text = result.stdout.str()
    assert "MISSED" in text and "PASSED" in text
    assert text.count("PASSED") == 1  # the rational agent's item only


@pytest.mark.skipif(importlib.util.find_spec("pytest_html") is None, reason="pytest-html is not installed")
def test_pytest_html_counts_a_missed_item_as_an_expected_failure_not_a_pass(behaviour_project):
    behaviour_project.runpytest(*AGENTS, "--html=report.html", "--self-contained-html")
    page = (behaviour_project.path / "report.html").read_text()
    assert "1 Passed" in page and "1 Expected failure" in page


@pytest.mark.skipif(importlib.util.find_spec("pytest_recording") is None, reason="pytest-recording is not installed")
def test_pytest_recording_beside_it_adds_no_warning(behaviour_project):
    """pytest-recording asks for vcrpy's matchers to be assertion-rewritten when pytest loads it;
    with this plugin loaded first that once warned on every run."""
    result = behaviour_project.runpytest_subprocess(*AGENTS)  # both loaded as installed, in the order pytest finds them
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == 0 and "PytestAssertRewriteWarning" not in text and "warnings summary" not in text, text[-2000:]
    assert outcomes(result) == {"passed": 1, "missed": 1}


def test_the_thresholds_command_lists_every_threshold_a_behaviour_reads_with_its_default():
    code, said, _ = gaamas_command("thresholds", str(ROOT / "behaviours"))
    assert code == 0
    assert "garp_consistency.min_mean_ccei  (default 0.86)" in said and "ultimatum.min_acceptance  (default 0.5)" in said
    assert said.count("\n") >= 16
    code, _, errors = gaamas_command("thresholds", str(ROOT / "nowhere"))
    assert code == 2 and "no behaviour file" in errors
