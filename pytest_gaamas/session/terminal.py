"""The terminal's part: where answers come from, said before anything runs, and the summary at the
end, drawn from the session's record (its tables and findings) and from what the session wrote."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from .. import compare, gate, inert
from ..report import TABLE_WIDTH, build_tables
from ..usage import cost_text
from ..verdicts import NOT_MET, Verdict
from .findings import Finding, findings_by_test, findings_heading, verdicts_by_table

if TYPE_CHECKING:
    from .engine import Session

#: Findings listed one by one without -v: about a screenful. Past it, a line per test function
#: counts them, as pytest cuts a long diff short and says how to see it whole.
FINDINGS_LISTED = 20
#: Lines of tables printed whole without -v: about three screenfuls. Past it, a line per table
#: counts its verdicts, as the findings are counted per test past FINDINGS_LISTED.
TABLES_LISTED_LINES = 150
#: The comparison's section: at most this many lines, its separator among them, none wider than
#: the summary's width (a line is cut short, a table too wide or too long is left to the files that
#: hold the whole comparison); the outcome and the lines of the cells that failed come first.
GATE_LINES = 40
#: Notes other than the failing cells' kept in the section when the failing cells fill it.
GATE_NOTES = 8
ELLIPSIS = "\u2026"


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
    comparison = record.comparison if record is not None else None
    if comparison is None and decision is not None:
        comparison = decision.to_json()  # the record could not be made: what was decided is said all the same
    closing_line(reporter, gate.Outcome.of(comparison) if comparison is not None else None)
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
    rendered = [(table, table.render(width)) for table in shown]
    lines = sum(text.count("\n") + 2 for _, text in rendered)
    if settings.tables == "all" or session.config.option.verbose > 0 or lines <= TABLES_LISTED_LINES:
        for table, text in rendered:
            reporter.write_sep("=", inert.terminal(f"gaamas: {table.title}"))
            reporter.write_line(text)
    elif shown:
        reporter.write_sep("=", f"gaamas: {len(shown)} tables judge a criterion")
        reporter.write_line(verdicts_by_table(shown, record.scores).render(width))
        reporter.write_line(fill(f"gaamas: each table whole ({lines:,} lines), with its criterion, people's rows and what a blind agent "
                                 f"earns there: -v prints them here; {views(settings)}", width))  # fmt: skip
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
    if cost := decision_cost(record.scores):
        reporter.write_line(fill(inert.terminal(f"gaamas: {cost}"), width))
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
    if comparison is not None:
        title, *lines = gate_section(comparison, width, views(settings))
        reporter.write_sep("=", title, fullwidth=width)
        for line in lines:
            reporter.write_line(line)


def gate_section(comparison: Any, width: int, where: str) -> list[str]:
    """The comparison's section, its title first, in at most ``GATE_LINES`` lines none wider than
    ``width``: the outcome, the lines of the cells that failed (LOST, DROP) and of the gated cells
    that could not be tested, the other notes, and the table of the cells that changed where it fits;
    ``where`` says where the whole of it is."""
    outcome = gate.Outcome.of(comparison)
    notes = [inert.terminal(f"gaamas: {note}") for note in comparison.get("notes", [])]
    failing = [note for mark in compare.REGRESSION_MARKS for note in notes if note.startswith(f"gaamas: {mark}")]  # LOST, DROP, untested
    others = [note for note in notes if note not in failing and not outcome.refused]
    cells = compare.shown_of(comparison.get("cells", []))
    whole = fill(f"gaamas: the whole comparison, every cell with its p-values: {where}", width).splitlines()
    said = fill(f"gaamas: {inert.terminal(outcome.said())}", width).splitlines()  # whole: the one thing a reader must see
    room = GATE_LINES - 1 - len(said) - len(whole) - (1 if cells else 0)  # the title, the outcome; where the rest is; the table or why not
    fitting = max(room - min(len(others), GATE_NOTES), 1)
    if len(failing) > fitting:
        rest = failing[fitting - 1 :]
        counted = ", ".join(f"{n} {mark.strip()}" for mark in compare.REGRESSION_MARKS if (n := sum(line.startswith(f"gaamas: {mark}") for line in rest)))
        failing = [*failing[: fitting - 1], f"gaamas: ... {len(rest)} more cells that failed or could not be tested ({counted})"]
    others = bounded(others, room - len(failing), "more notes")
    lines = [*said, *(cut(line, width) for line in [*failing, *others])]
    table = compare.render_cells(cells, width=width).splitlines() if cells else []
    if table and max(map(len, table)) <= width and 1 + len(lines) + len(table) + len(whole) <= GATE_LINES:
        lines += table
    elif cells:
        size = f"{max(map(len, table))} columns wide, {len(table)} lines"
        lines.append(cut(f"gaamas: the table of the {len(cells)} cell{'s' if len(cells) != 1 else ''} that changed is not printed "
                         f"here ({size})", width))  # fmt: skip
    return [inert.terminal(f"gaamas: compared with {outcome.against}: {outcome.verdict}"), *lines, *whole]


def bounded(lines: list[str], room: int, more: str) -> list[str]:
    """``lines`` within ``room`` lines, the last of them saying how many more are left out."""
    room = max(room, 1)
    if len(lines) <= room:
        return lines
    return [*lines[: room - 1], f"gaamas: ... {len(lines) - room + 1} {more}"]


def cut(line: str, width: int) -> str:
    """A line no wider than ``width``, cut short with an ellipsis where it is wider."""
    return line if len(line) <= width else line[: width - 1] + ELLIPSIS


def closing_line(reporter: Any, outcome: gate.Outcome | None) -> None:
    """pytest's closing line counts the verdicts in order and ends with the comparison's outcome:
    ``4 of 30 gated cells regressed: comparison with baseline FAILED (3 dropped, 1 lost)``,
    ``30 gated cells held: comparison with baseline passed``."""
    said = None if outcome is None else closing_words(outcome)
    if said is not None:
        count, words = said
        reporter.stats[words] = [outcome] * count
    verdicts_in_order(reporter, last=[said[1]] if said else [])


def closing_words(outcome: gate.Outcome) -> tuple[int, str] | None:
    """The comparison's part of the closing line, as pytest writes it: a count, then words."""
    against = outcome.against
    if outcome.refused:
        return 1, f"comparison with {against} refused"
    if outcome.failed:
        return (outcome.dropped + outcome.lost, f"of {outcome.gated} gated cell{'s' if outcome.gated != 1 else ''} regressed: "
                f"comparison with {against} FAILED ({outcome.dropped} dropped, {outcome.lost} lost)")  # fmt: skip
    if outcome.gated:
        return outcome.gated, f"gated cell{'s' if outcome.gated != 1 else ''} held: comparison with {against} passed"
    if outcome.compared:
        return outcome.compared, f"cell{'s' if outcome.compared != 1 else ''} compared with {against}, none gated: comparison passed"
    return None


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


def decision_cost(scores: Any) -> str:
    """What the run's decided verdicts (met, missed, at chance) rested on, in requests a verdict (an
    item's requests shared among its verdicts), beside the inconclusive ones': the price of a finding.
    Empty where no score says its requests."""
    items: dict[str, tuple[int, list[Verdict]]] = {}
    for score in scores:
        requests = score.details.get("requests") if isinstance(score.details, dict) else None
        if score.verdict is None or not isinstance(requests, int):
            continue
        most, verdicts = items.get(score.test_id, (0, []))
        items[score.test_id] = (max(most, requests), [*verdicts, score.verdict])
    decided = undecided = 0
    decided_requests = undecided_requests = 0.0
    for requests, verdicts in items.values():
        for verdict in verdicts:
            if verdict is Verdict.INCONCLUSIVE:
                undecided, undecided_requests = undecided + 1, undecided_requests + requests / len(verdicts)
            else:
                decided, decided_requests = decided + 1, decided_requests + requests / len(verdicts)
    if not decided + undecided:
        return ""
    each = f", {decided_requests / decided:,.0f} a verdict" if decided else ""
    share = undecided / (decided + undecided)
    return (f"{decided} verdict{'s' if decided != 1 else ''} decided (met, missed or at chance) on {decided_requests:,.0f} "
            f"requests{each}; {undecided} inconclusive ({share:.0%}) on {undecided_requests:,.0f}")


def say_usage(reporter: Any, session: Session) -> None:
    """What the run asked of each server live; nothing for a replay."""
    prices = session.settings.prices
    for spec, usage in sorted(session.collected.usage.items()):
        price = prices.get(spec)
        cost = f"; {cost_text(price.of(usage.tokens))} at --gaamas-prices" if price is not None and usage.requests else ""
        if cost and not usage.tokens["prompt_tokens"] + usage.tokens["completion_tokens"]:
            cost = "; what they cost is not known: the server sent no token counts (a budget charges each at its ceiling)"
        reporter.write_line(inert.terminal(f"gaamas: {spec}: {usage.text()}{cost}"))
    budget = session.request_budget
    if budget is not None and budget.cap is not None:
        reporter.write_line(f"gaamas: {budget.taken:,} of the run's {budget.cap:,} live requests (--gaamas-max-requests) sent")
    if budget is not None and budget.dollars is not None:
        reporter.write_line(f"gaamas: {cost_text(budget.spent)} of the run's budget of {cost_text(budget.dollars)} (--gaamas-budget) spent")


def verdicts_in_order(reporter: Any, last: list[str] | None = None) -> None:
    """The closing line counts the verdicts in one order, "passed, missed, at chance, inconclusive",
    whichever an item reached first (pytest lists the words it does not know in the order first
    seen), then ``last``."""
    stats, words = reporter.stats, [verdict.value for verdict in NOT_MET] + (last or [])
    if not any(word in stats for word in words):
        return
    ordered = {key: value for key, value in stats.items() if key not in words} | {word: stats[word] for word in words if word in stats}
    stats.clear()
    stats.update(ordered)
    reporter._set_main_color()
