"""The terminal's part: where answers come from, said before anything runs, and the summary at the
end, drawn from the session's record (its tables and findings) and from what the session wrote."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from .. import compare, inert
from ..report import TABLE_WIDTH, build_tables
from ..verdicts import NOT_MET, Verdict
from .findings import Finding, findings_by_test, findings_heading

if TYPE_CHECKING:
    from .engine import Session

#: Findings listed one by one without -v: about a screenful. Past it, a line per test function
#: counts them, as pytest cuts a long diff short and says how to see it whole.
FINDINGS_LISTED = 20
#: The closing line's word for the cells a comparison failed on (dropped, or their answers lost).
DROPPED = "dropped in the comparison"


def fill(line: str, width: int) -> str:
    """A long line of the summary over several, never broken inside an option's name."""
    return textwrap.fill(line, width, subsequent_indent="    ", break_on_hyphens=False)


def announce(config: Any, lines: list[str] | None, *, after_status_line: bool = False) -> None:
    """Said before anything runs: where answers come from, and whether a request may go live."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or lines is None:
        return
    if after_status_line and reporter.isatty:
        reporter.write_line("")  # end xdist's "ready: 2/2 workers", which a terminal rewrites in place
    width = min(reporter._tw.fullwidth, TABLE_WIDTH)
    for line in lines:
        reporter.write_line(fill(inert.terminal(line), width))


def summary(reporter: Any, session: Session) -> None:
    """The tables, findings, checks and comparison of the run, from its record."""
    settings, record, decision = session.settings, session.record, session.ending.decision
    verdicts_in_order(reporter)
    if decision is not None and decision.failed:  # the closing line says the comparison failed, and how many cells
        reporter.stats[DROPPED] = decision.dropped
    for error in session.errors + session.written.errors:
        reporter.write_line(inert.terminal(f"gaamas: {error}"), red=True, bold=True)
    for reason, count in sorted(session.skipped_unavailable.items()):
        reporter.write_line(inert.terminal(f"gaamas: {count} more item{'s' if count != 1 else ''} skipped, the model being unavailable: {reason}"), yellow=True)
    if session.is_worker:
        return
    if record is None:
        say_usage(reporter, session)
        return
    width = min(reporter._tw.fullwidth, TABLE_WIDTH) if reporter.isatty else TABLE_WIDTH
    tables = build_tables(record.scores, record.references, settings.models, record.null_rates)
    shown = [table for table in tables if table.judged or settings.tables == "all"]
    for table in shown:
        reporter.write_sep("=", inert.terminal(f"gaamas: {table.title}"))
        reporter.write_line(table.render(width))
    if len(shown) < len(tables):
        reporter.write_line(fill(f"gaamas: {unshown_tables(len(tables) - len(shown), settings)}", width))
    findings: list[Finding] = [(f["test_id"], Verdict(f["verdict"]), f["finding"]) for f in record.findings]
    if findings:
        reporter.write_sep("=", f"gaamas: {findings_heading(findings, settings.verdicts)}")
        if len(findings) <= FINDINGS_LISTED or session.config.option.verbose > 0:
            for verdict in NOT_MET:
                for test_id, _, finding in sorted(f for f in findings if f[1] == verdict):
                    reporter.write_line(fill(inert.terminal(f"{verdict.upper()} {test_id.split('::', 1)[-1]}: {finding}"), width))
        else:
            reporter.write_line(findings_by_test(findings, session.outcomes).render(width))
            reporter.write_line(fill(f"gaamas: each finding with its reason: -v lists them here; {views(settings)}", width))
    if session.cassettes is not None:
        reporter.write_sep("=", "gaamas: cassette check")
        for line in session.cassettes.notes:
            reporter.write_line(inert.terminal(line))
    if session.written.saved:
        name, path = session.written.saved
        reporter.write_line(inert.terminal(f"gaamas: saved this run as {name!r} ({path})"))
    for what, path in session.written.views:
        reporter.write_line(inert.terminal(f"gaamas: wrote the {what} to {path}"))
    say_usage(reporter, session)
    if decision is not None:
        reporter.write_sep("=", inert.terminal(f"gaamas: compared with {decision.against}"))
        table = compare.render(decision.changes, width=width)
        if table:
            reporter.write_line(table)
        for note in decision.notes:
            reporter.write_line(inert.terminal(f"gaamas: {note}"))


def views(settings: Any) -> str:
    """Where the whole run can be read: the files this run writes, else the options that write them."""
    written = {"report": settings.report_path, "summary": settings.markdown_path, "run log": settings.json_path}
    named = [f"the {what} {path}" for what, path in written.items() if path]
    if named:
        return "see " + ", ".join(named)
    return "the report (--gaamas-report=PATH), the summary (--gaamas-markdown=PATH) and the run log (--gaamas-json=PATH) hold them all"


def unshown_tables(count: int, settings: Any) -> str:
    tables = f"{count} more table{'s' if count != 1 else ''}, which judge no criterion (rounds, companions),"
    return f"{tables} not printed: --gaamas-tables=all prints them here; {views(settings)}"


def say_usage(reporter: Any, session: Session) -> None:
    """What the run asked of each server live; nothing for a replay."""
    for spec, usage in sorted(session.collected.usage.items()):
        reporter.write_line(inert.terminal(f"gaamas: {spec}: {usage.text()}"))
    budget = session.request_budget
    if budget is not None:
        reporter.write_line(f"gaamas: {budget.taken:,} of the run's {budget.cap:,} live requests (--gaamas-max-requests) sent")


def verdicts_in_order(reporter: Any) -> None:
    """The closing line counts the verdicts in one order, "passed, missed, at chance, inconclusive",
    whichever an item reached first: pytest lists the words it does not know in the order first seen."""
    stats, words = reporter.stats, [verdict.value for verdict in NOT_MET]
    if not any(word in stats for word in words):
        return
    ordered = {key: value for key, value in stats.items() if key not in words} | {word: stats[word] for word in words if word in stats}
    stats.clear()
    stats.update(ordered)
    reporter._set_main_color()
