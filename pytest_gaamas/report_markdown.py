"""The run as Markdown, for a CI job's summary or a pull-request comment: the verdict first (the
comparison's, where there is one), then each table with a verdict, then the criteria missed, at chance and
those the trials could not decide (inconclusive). It fits a pull-request comment (65,536
characters): tables that would not are named and left to the HTML report, the findings stay."""

from __future__ import annotations

import re

from tabulate import tabulate

from . import gate, inert
from .report import build_tables, reached, verdict_counts
from .runlog import RunLog
from .usage import described, record_mode
from .verdicts import NOT_MET

#: Findings (and dropped cells) listed in full; the rest are counted (a job summary has a size limit).
FINDINGS_SHOWN = 25
#: A pull-request comment holds at most 65,536 characters; the summary stops short of it, saying so.
MARKDOWN_LIMIT = 65_000


def render(log: RunLog) -> str:
    models = [m.get("model", "") for m in log.run.get("models", [])]
    counts = reached(verdict_counts(log.scores))
    lines = [
        f"# pytest-gaamas: {inert.markdown(', '.join(models) or 'no model')}",
        "",
        *(_outcome(gate.Outcome.of(log.comparison)) if log.comparison else []),
        (f"{sum(counts.values())} criteria judged: " + ", ".join(f"**{n} {verdict}**" for verdict, n in counts.items()) + ". "
         f"{inert.markdown(log.run.get('plugin', ''))}, seed {log.run.get('seed', '?')}, trials {log.run.get('trials', '?')}, "
         f"temperature {log.run.get('temperature', '?')}, record mode {inert.markdown(record_mode(log.run))}."),
        "",
    ]
    asked = [f"- asked of {inert.markdown(m.get('model', ''))}: {inert.markdown(described(m.get('usage')))}"
             for m in log.run.get("models", []) if described(m.get("usage"))]  # fmt: skip
    lines += asked + ([""] if asked else [])
    if log.comparison:
        lines += _comparison(log.comparison)
    findings = _findings(log.findings)
    tables = build_tables(log.scores, log.references, models, log.null_rates)
    # The findings are what a reader acts on: when the whole would not fit a pull-request comment,
    # the tables that do not fit are named and left to the HTML report, and the findings stay.
    room = MARKDOWN_LIMIT - len("\n".join(lines + findings)) - 2_000
    left_out = []
    for table in (t for t in tables if "verdict" in t.headers):
        shown = _table(table)
        if len("\n".join(shown)) + 1 > room:
            left_out.append(table.title)
            continue
        lines += shown
        room -= len("\n".join(shown)) + 1
    if left_out:
        many = f"{len(left_out)} more tables with a verdict are" if len(left_out) > 1 else "1 more table with a verdict is"
        lines += [f"{many} in the HTML report (--gaamas-report), left out here for size: "
                  + "; ".join(inert.markdown(title) for title in left_out), ""]  # fmt: skip
    descriptive = len([t for t in tables if "verdict" not in t.headers])
    if descriptive:
        lines += [f"{descriptive} descriptive tables (round by round, statistics) are in the HTML report (--gaamas-report).", ""]
    lines += findings
    return _within_limit("\n".join(lines))


def _table(table) -> list[str]:
    lines = [f"## {inert.markdown(table.title)}", "", tabulate([[inert.markdown(v) for v in row] for row in table.rows],
             headers=[inert.markdown(h) for h in table.headers], tablefmt="github", disable_numparse=True), ""]  # fmt: skip
    lines += [f"- met when: {inert.markdown(c)}" for c in table.criteria] + [f"- {inert.markdown(n)}" for n in table.notes]
    return lines + [f"- source: {inert.markdown(s)}" for s in table.sources] + [""]


def _findings(all_findings) -> list[str]:
    lines = []
    headings = ("Criteria missed", "Criteria at chance (the trials show the model no better than chance)",
                "Criteria the trials could not decide (inconclusive)")  # fmt: skip
    for verdict, heading in zip(NOT_MET, headings, strict=True):
        findings = [f for f in all_findings if f.get("verdict", "missed") == verdict]
        if not findings:
            continue
        lines += [f"## {heading} ({len(findings)})", ""]
        for finding in findings[:FINDINGS_SHOWN]:
            lines.append(f"- {_code(finding['test_id'].split('::', 1)[-1])}: {inert.markdown(finding['finding'])}")
        if len(findings) > FINDINGS_SHOWN:
            lines.append(f"- ... and {len(findings) - FINDINGS_SHOWN} more (the run log and the HTML report have them all)")
        lines.append("")
    return lines


def _within_limit(text: str) -> str:
    if len(text) <= MARKDOWN_LIMIT:
        return text
    cut = "\n\n... the summary stops here, at its size limit: the run log and the HTML report have it all.\n"
    kept = text[: MARKDOWN_LIMIT - len(cut)]
    return kept[: kept.rfind("\n")] + cut


def _outcome(outcome: gate.Outcome) -> list[str]:
    """The comparison's outcome, first: ``**Comparison with baseline FAILED**: 3 cells dropped, ...``."""
    return [f"**{inert.markdown(outcome.head[0].upper() + outcome.head[1:])}**: {inert.markdown(outcome.details)}.", ""]


def _comparison(comparison: dict) -> list[str]:
    cells = comparison.get("cells", [])
    # A cell that lost its usable answers fails the comparison as a drop does, and is listed with them.
    dropped = [c for c in cells if c.get("dropped") or c.get("lost")]
    outcome = gate.Outcome.of(comparison)
    lines = [f"## Compared with {inert.markdown(outcome.against)}: **{outcome.verdict}**, {inert.markdown(outcome.details)}", ""]
    lines += [f"- {inert.markdown(note)}" for note in comparison.get("notes", [])]
    if dropped:
        rows = [[c["behaviour"], c["cell"], c["models"], _number(c.get("old")), _number(c.get("new")), _number(c.get("p_holm"))]
                for c in dropped[:FINDINGS_SHOWN]]  # fmt: skip
        lines += ["", tabulate([[inert.markdown(v) for v in row] for row in rows],
                               headers=["behaviour", "cell", "model", "old", "new", "p (Holm)"], tablefmt="github", disable_numparse=True)]  # fmt: skip
        if len(dropped) > FINDINGS_SHOWN:
            lines += ["", f"... and {len(dropped) - FINDINGS_SHOWN} more dropped cells (the run log has them all)"]
    return [*lines, ""]


def _number(value) -> str:
    return "-" if value is None else f"{value:.3g}" if isinstance(value, float) else str(value)


def _code(text) -> str:
    """A code span that holds ``text`` whole: its fence is longer than any run of backticks in it."""
    shown = inert.terminal(text)
    fence = "`" * (max((len(run) for run in re.findall("`+", shown)), default=0) + 1)
    return f"{fence} {shown} {fence}"
