"""One run record: the session's end makes one typed RunLog, and the terminal summary, the HTML report,
the Markdown summary and the gate all read that same object; a run read back from its run log renders
the very bytes its live run wrote."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_gaamas import gate, plugin, report_html, report_markdown, runlog
from pytest_gaamas.report import build_tables
from pytest_gaamas.session import terminal
from pytest_gaamas.session.engine import Ending

RATIONAL = "--gaamas-model=reference:rational"


def spied(monkeypatch, module, name: str, seen: list, record_of) -> None:
    """``module.name`` still called, the record it was handed kept in ``seen``."""
    real = getattr(module, name)

    def spy(*args, **kwargs):
        seen.append(record_of(*args, **kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)


def test_the_summary_the_reports_and_the_gate_read_one_record(behaviour_project, monkeypatch):
    behaviour_project.runpytest(RATIONAL, "--gaamas-save=before").assert_outcomes(passed=1)
    summaries, reports, summaries_md, gated = [], [], [], []
    spied(monkeypatch, terminal, "summary", summaries, lambda reporter, session: session.record)
    spied(monkeypatch, report_html, "render", reports, lambda log: log)
    spied(monkeypatch, report_markdown, "render", summaries_md, lambda log: log)
    spied(monkeypatch, gate, "decide", gated, lambda saved, current, **_: current)
    result = behaviour_project.runpytest(RATIONAL, "--gaamas-compare=before", "--gaamas-report=report.html",
                                         "--gaamas-markdown=summary.md")  # fmt: skip
    result.assert_outcomes(passed=1)
    assert len(summaries) == len(reports) == len(summaries_md) == len(gated) == 1
    record = summaries[0]
    assert isinstance(record, runlog.RunLog)
    assert reports[0] is record and summaries_md[0] is record and gated[0] is record
    # what the gate decided is in the record the views read, and the summary shows it
    assert record.comparison is not None and record.comparison["with"] == "before"
    assert any("gaamas: compared with before" in line for line in result.outlines)


def test_a_run_with_no_file_to_write_still_summarises_from_its_record(behaviour_project, monkeypatch):
    summaries = []
    spied(monkeypatch, terminal, "summary", summaries, lambda reporter, session: session.record)
    result = behaviour_project.runpytest(RATIONAL)
    result.assert_outcomes(passed=1)
    assert isinstance(summaries[0], runlog.RunLog) and summaries[0].scores
    titles = [t.title for t in build_tables(summaries[0].scores, summaries[0].references, ["reference:rational"])]
    assert any(f"gaamas: {titles[0]}" in line for line in result.outlines)


@pytest.mark.parametrize("log_name", ["run.json", "run.json.gz"])
def test_a_saved_run_renders_the_reports_its_live_run_wrote_byte_for_byte(behaviour_project, log_name):
    behaviour_project.runpytest(RATIONAL, "--gaamas-save=before").assert_outcomes(passed=1)
    result = behaviour_project.runpytest(RATIONAL, "--gaamas-compare=before", f"--gaamas-json={log_name}",
                                         "--gaamas-report=report.html", "--gaamas-markdown=summary.md")  # fmt: skip
    result.assert_outcomes(passed=1)
    folder = behaviour_project.path
    saved = runlog.read(folder / log_name)
    assert saved.comparison is not None, "the comparison is part of what is compared"
    assert report_html.render(saved).encode("utf-8") == (folder / "report.html").read_bytes()
    assert report_markdown.render(saved).encode("utf-8") == (folder / "summary.md").read_bytes()
    judged = sum(score.verdict is not None for score in saved.scores)
    assert f"<p>{judged} criteria judged: " in (folder / "report.html").read_text(encoding="utf-8")


def test_the_gate_is_a_decision_made_of_two_records_alone(behaviour_project):
    """No session, no pytest: two run records in, a decision out, the same each time it is asked;
    only the hook makes an exit status of it."""
    behaviour_project.runpytest(RATIONAL, "--gaamas-json=run.json").assert_outcomes(passed=1)
    saved = runlog.read(behaviour_project.path / "run.json")
    first = gate.decide(saved, saved, against="run.json", saved_path=behaviour_project.path / "run.json", allowed_drops={"rate": 0.1})
    again = gate.decide(saved, saved, against="run.json", saved_path=behaviour_project.path / "run.json", allowed_drops={"rate": 0.1})
    assert first == again and not first.failed and not first.refused and first.changes
    assert "no cell dropped significantly by more than allowed, nor lost its answers" in first.notes
    assert plugin.exit_status(Ending(decision=first)) is None
    dropped = dataclasses.replace(first, changes=(dataclasses.replace(first.changes[0], gated=True, dropped=True),))
    assert dropped.failed and plugin.exit_status(Ending(decision=dropped)) == pytest.ExitCode.TESTS_FAILED
    refused = gate.refused("elsewhere", "no saved run 'elsewhere'")
    assert plugin.exit_status(Ending(decision=refused, orphaned=True)) == pytest.ExitCode.USAGE_ERROR
    assert plugin.exit_status(Ending(decision=refused, unwritten=True)) == pytest.ExitCode.INTERNAL_ERROR
