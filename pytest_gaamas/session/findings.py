"""A criterion not met is a finding: missed, at chance or inconclusive. Its report is one line, no
traceback; it is reported (an expected failure, with the verdict's word) or failed, as
``--gaamas-verdicts`` says; and a failure's or a skip's line that may quote a model is made inert."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from .. import inert
from ..errors import VerdictNotMet
from ..report import NBSP, Score, Table, verdict_counts
from ..verdicts import AT_CHANCE, INCONCLUSIVE, MISSED, NOT_MET, Verdict

#: The user property that carries an item's finding, by its verdict.
VERDICT_PROPERTY = "gaamas_verdict"
INCONCLUSIVE_PROPERTY = "gaamas_inconclusive"
AT_CHANCE_PROPERTY = "gaamas_at_chance"
VERDICT_OF_PROPERTY = {VERDICT_PROPERTY: MISSED, AT_CHANCE_PROPERTY: AT_CHANCE, INCONCLUSIVE_PROPERTY: INCONCLUSIVE}
PROPERTY_OF_VERDICT = {verdict: name for name, verdict in VERDICT_OF_PROPERTY.items()}
#: The verdicts each --gaamas-verdicts mode fails an item for; the others are reported. At chance shows
#: the criterion not met, as missed does: ``fail`` fails both.
FAILED_VERDICTS = {"report": (), "fail": (MISSED, AT_CHANCE), "fail-inconclusive": (MISSED, AT_CHANCE, INCONCLUSIVE)}
#: The value of --gaamas-verdicts that fails each verdict.
FAILED_FROM = {MISSED: "--gaamas-verdicts=fail", AT_CHANCE: "--gaamas-verdicts=fail", INCONCLUSIVE: "--gaamas-verdicts=fail-inconclusive"}
Finding = tuple[str, Verdict, str]


def is_finding(call: pytest.CallInfo[Any]) -> bool:
    return call.when == "call" and call.excinfo is not None and call.excinfo.errisinstance(VerdictNotMet)


def report_of(item: pytest.Item, call: pytest.CallInfo[Any]) -> pytest.TestReport:
    """A finding's report made from its one line. pytest's own would format the finding's
    traceback, which no tool shows, parsing the behaviour's source for every missed criterion:
    a fifth of a whole suite's replay."""
    assert call.excinfo is not None and call.when == "call"
    sections = [(f"Captured {key} {when}", content) for when, key, content in item._report_sections]
    return pytest.TestReport(item.nodeid, item.location, dict.fromkeys(item.keywords, 1), "failed", str(call.excinfo.value), call.when,
                             sections, call.duration, call.start, call.stop, user_properties=item.user_properties)  # fmt: skip


def judge(report: pytest.TestReport, not_met: VerdictNotMet, mode: str) -> None:
    """The finding's property on ``report``, and the report failed or reported as ``mode`` says."""
    finding = str(not_met)
    report.user_properties.append((PROPERTY_OF_VERDICT[not_met.verdict], finding))
    if not_met.verdict in FAILED_VERDICTS[mode]:
        report.longrepr = f"verdict: {finding}"
    else:
        # Reported, not failed: pytest's own form for that is an expected failure, which every
        # tool that reads reports (JUnit XML, pytest-html, pytest-sugar, --lf) shows as such and
        # none counts as a pass; the terminal shows the verdict's word.
        report.outcome = "skipped"
        report.wasxfail = f"{not_met.verdict.value}: {finding}"
        report.longrepr = None


def is_ours(item: pytest.Item) -> bool:
    return "gaamas_model" in getattr(item, "fixturenames", ())


def inert_message(item: pytest.Item, call: pytest.CallInfo[Any]) -> None:
    """A failure's or a skip's message shown, never obeyed: before the report is made from it."""
    error = call.excinfo.value if call.excinfo is not None else None
    if is_ours(item) and isinstance(error, (pytest.fail.Exception, pytest.skip.Exception)) and isinstance(error.msg, str):
        error.msg = inert.terminal(error.msg)


def inert_report(item: pytest.Item, report: pytest.TestReport) -> None:
    """The report's line shown, never obeyed, after every other hook has made it."""
    if is_ours(item) and isinstance(report.longrepr, str):
        report.longrepr = inert.terminal(report.longrepr)


def reported_verdict(report: pytest.TestReport) -> Verdict | None:
    """Missed, at chance or inconclusive for an item whose criterion was not met, else None."""
    return next((VERDICT_OF_PROPERTY[name] for name, _ in report.user_properties if name in VERDICT_OF_PROPERTY), None)


def test_status(report: pytest.TestReport) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    """The verdict's word for an item whose criterion was not met and that did not fail."""
    verdict = reported_verdict(report) if report.when == "call" and not report.failed else None
    if verdict is None:
        return None
    return verdict.value, verdict.value[0], (verdict.value.upper(), {"yellow": True})


def findings_by_test(findings: list[Finding], outcomes: dict[str, str]) -> Table:
    """How many items of each test function passed, missed a criterion, were at chance and left it inconclusive, of
    how many run: a row is read without subtracting (the rest failed or were skipped)."""
    def function(test_id: str) -> str:
        return test_id.split("::", 1)[-1].split("[", 1)[0]

    counts: dict[str, dict[Verdict, int]] = {}
    for test_id, verdict, _ in findings:
        counts.setdefault(function(test_id), dict.fromkeys(NOT_MET, 0))[verdict] += 1
    items = collections.Counter(function(test_id) for test_id in outcomes)
    passed = collections.Counter(function(test_id) for test_id, outcome in outcomes.items() if outcome == "passed")
    rows = tuple((name, str(items[name]), str(passed[name]), *(str(counts[name][verdict]) for verdict in NOT_MET))
                 for name in sorted(counts))  # fmt: skip
    return Table("findings", ("test", "items", "passed", *(str(verdict).replace(" ", NBSP) for verdict in NOT_MET)), rows, (), ())


def verdicts_by_table(tables: Sequence[Table], scores: Iterable[Score]) -> Table:
    """Each table's cells and how many of them reached each verdict, a row a table in the order
    given: the run at a glance, where its tables whole would fill many screens."""
    by_title: dict[str, list[Score]] = {}
    for score in scores:
        by_title.setdefault(score.table, []).append(score)
    rows = []
    for table in tables:
        counts = verdict_counts(by_title.get(table.title, []))
        rows.append((inert.terminal(table.title), str(sum(counts.values())), *(str(counts[verdict]) for verdict in Verdict)))
    return Table("verdicts by table", ("table", "cells", *(str(verdict).replace(" ", NBSP) for verdict in Verdict)), tuple(rows), (), ())


def findings_heading(findings: list[Finding], mode: str) -> str:
    """``9 verdicts not met: 5 missed (failed), 1 at chance (failed), 3 inconclusive (reported, ...)``:
    how many of each, and whether they fail the session under ``--gaamas-verdicts`` (``mode``)."""
    counts = {verdict: sum(f[1] == verdict for f in findings) for verdict in NOT_MET}
    total = sum(counts.values())

    def fate(verdict: Verdict) -> str:
        return "failed" if verdict in FAILED_VERDICTS[mode] else f"reported, not failed: {FAILED_FROM[verdict]} fails them"

    heading = f"{total} verdict{'s' if total != 1 else ''} not met"
    if not counts[INCONCLUSIVE] and not counts[AT_CHANCE]:
        return f"{heading} ({fate(MISSED)})"
    return f"{heading}: " + ", ".join(f"{count} {verdict} ({fate(verdict)})" for verdict, count in counts.items() if count)
