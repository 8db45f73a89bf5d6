"""The run as one self-contained HTML file: opens from disk, offline, in any browser.

At the top, where the numbers came from (models and digests, plugin, seed, trials, temperature,
record mode, dates) and how the items ended. Then a section per behaviour: its tables, criteria and
sources with their status, its figures (PNG, embedded), the findings of the criteria missed or left
inconclusive, and per
cell a few example trials, one click away: what the model was asked, what it replied, the decision
read from it or why none could be, and the strategy code where there is one. The comparison with a
saved run, where there is one, closes it. No script, no stylesheet or font from elsewhere.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import drawing, gate, inert
from .report import SPARKS, Table, build_tables, reached, verdict_counts
from .runlog import ItemLog, Play, RunLog
from .usage import described, record_mode
from .verdicts import NOT_MET, Verdict

#: Verdicts styled in a table's verdict column.
VERDICT_WORDS = tuple(v.value for v in Verdict)
#: Trials shown per cell: the first, the first with an invalid answer, the first valid one.
EXAMPLES = 3
#: Characters of one message or reply shown; the run log keeps them whole.
TEXT_LIMIT = 6000
#: Requests of one trial shown in a table, and whole (the last of each conversation); a society of
#: the commons asks up to 120, all in the run log.
ROUNDS_SHOWN = 40
REQUESTS_SHOWN = 4
STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
header,main,nav{max-width:1200px;margin:0 auto;padding:0 24px}
header{padding-top:16px}
h1{font-size:24px;margin:8px 0}
h2{font-size:20px;margin:32px 0 8px;border-bottom:2px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:20px 0 6px}
table{border-collapse:collapse;margin:6px 0;font-size:12.5px;background:#fff}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f0f0f0}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
tr.reference td{color:#555;background:#f7f7f7}
.scroll{overflow-x:auto}
.met,.passed{color:#176f2c;font-weight:600}.missed{color:#9a6700;font-weight:600}.at-chance{color:#8a3a6a;font-weight:600}.inconclusive{color:#4a5a8a;font-weight:600}
.failed{color:#b42318;font-weight:600}
.skipped{color:#666}
.status{font-size:11px;padding:1px 6px;border-radius:8px;background:#eee;white-space:nowrap}
.status.verified{background:#dcf3e2}.status.unverified{background:#fde8c8}.status.computed{background:#e3ecfa}
figure{margin:12px 0;background:#fff;border:1px solid #e3e3e3;padding:8px;display:inline-block;max-width:100%;box-sizing:border-box}
figure img{max-width:100%;height:auto;display:block}
figcaption{font-size:12.5px;color:#444;margin-top:4px;width:0;min-width:100%}
p.empty{padding:10px;background:#fff;border:1px dashed #bbb;color:#555}
details{margin:4px 0;background:#fff;border:1px solid #e3e3e3;padding:4px 8px}
summary{cursor:pointer}
pre{white-space:pre-wrap;word-break:break-word;background:#f4f4f4;padding:6px;margin:4px 0;font-size:12px;max-height:320px;overflow:auto}
.role{font-size:11px;font-weight:600;color:#555;text-transform:uppercase}
ul.findings li{margin:2px 0}
nav ul{columns:3;font-size:13px}
.note{color:#555;font-size:12.5px}
"""


def render(log: RunLog) -> str:
    """The report of ``log``, as one HTML document."""
    tables = build_tables(log.scores, log.references, [m.get("model", "") for m in log.run.get("models", [])], log.null_rates)
    behaviours = list(dict.fromkeys(s.behaviour for s in sorted(log.scores, key=lambda s: s.test_id)))
    drawn = drawing.draw_run(log.scores, [m.get("model", "") for m in log.run.get("models", [])])
    title_of: dict[str, str] = {}
    for score in log.scores:
        title_of.setdefault(score.table, score.behaviour)
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>pytest-gaamas report: {_e(', '.join(_models(log)) or 'no model')}</title>",
        f"<style>{STYLE}</style></head><body>",
        _header(log),
        '<nav><h2 id="contents">Behaviours</h2><ul>',
        *(f'<li><a href="#{_anchor(b)}">{_e(b)}</a></li>' for b in behaviours),
        *(['<li><a href="#comparison">comparison</a></li>'] if log.comparison else []),
        "</ul></nav><main>",
    ]
    plays_shown: dict[str, str] = {}
    for behaviour in behaviours:
        parts.append(_behaviour(
            behaviour, log, [t for t in tables if title_of.get(t.title) == behaviour],
            [d for d in drawn if d.behaviour == behaviour], plays_shown,
        ))  # fmt: skip
    if log.comparison:
        parts.append(_comparison(log.comparison))
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


def _e(text: Any) -> str:
    """``text`` as HTML that shows it as written: markup escaped, and every control a model may
    have written (an escape sequence, a bidirectional override, C1, a lone surrogate) shown as
    Python writes it, line breaks and tabs kept."""
    return html.escape(inert.lines(text), quote=True)


def _anchor(name: str) -> str:
    return "b-" + "".join(c if c.isalnum() else "-" for c in name)


def _models(log: RunLog) -> list[str]:
    return [m.get("model", "") for m in log.run.get("models", [])] or sorted({s.model for s in log.scores})


def _header(log: RunLog) -> str:
    run = log.run
    rows = []
    for model in run.get("models", []):
        digest = model.get("digest") or model.get("recorded_digest") or "-"
        recorded = " (recorded)" if not model.get("digest") and model.get("recorded_digest") else ""
        rows.append(f"<tr><td>{_e(model.get('model', ''))}</td><td><code>{_e(digest)}</code>{recorded}</td>"
                    f"<td>{_e(model.get('server') or model.get('description') or '')}</td></tr>")  # fmt: skip
    facts = [("plugin", run.get("plugin", "?")), ("seed", run.get("seed", "?")), ("trials", run.get("trials", "?")),
             ("temperature", run.get("temperature", "?")), ("record mode", record_mode(run)),
             ("started", run.get("started", "?")), ("finished", run.get("finished", "?")),
             ("python", f"{run.get('python', '?')} on {run.get('platform', '?')}")]  # fmt: skip
    facts += [(f"asked of {model.get('model', '')}", described(model.get("usage"))) for model in run.get("models", []) if described(model.get("usage"))]
    reached_counts = reached(verdict_counts(log.scores))
    judged = ", ".join(f'<span class="{_css(verdict)}">{n} {verdict}</span>' for verdict, n in reached_counts.items())
    lines = [
        "<header><h1>pytest-gaamas report</h1>",
        *([_outcome(gate.Outcome.of(log.comparison))] if log.comparison else []),
        f"<p>{sum(reached_counts.values())} criteria judged: {judged}.{_items(log)}</p>",
        "<table><tr><th>model</th><th>digest</th><th>server</th></tr>", *rows, "</table>",
        "<table>", *(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in facts), "</table>",
    ]
    if not log.has_transcripts:
        kept = "tables and figures" if any(s.figures for s in log.scores) else "tables"
        lines.append(f'<p class="note">This run was saved in format {log.format}, before runs kept their trials and figures: '
                     f"{kept} only, no transcripts. Run again with --gaamas-json or --gaamas-save to keep them.</p>")  # fmt: skip
    lines.append("</header>")
    return "\n".join(lines)


def _outcome(outcome: gate.Outcome) -> str:
    """The comparison's outcome, first in the report, linking to the comparison."""
    head = outcome.head[0].upper() + outcome.head[1:]
    return f'<p><a class="{"passed" if outcome.verdict == "passed" else "failed"}" href="#comparison">{_e(head)}</a>: {_e(outcome.details)}.</p>'


#: An item's outcomes in the order the terminal's closing line counts them.
OUTCOMES = ("passed", *(v.value for v in NOT_MET), "failed", "skipped")


def _items(log: RunLog) -> str:
    """`` 219 items: 13 passed, ...; 1 of them judges no criterion``: the items' own total, beside the
    criteria's (an item may judge no criterion, or a criterion be judged in a cell that is no item of
    its own)."""
    if not log.items:
        return ""
    counts: dict[str, int] = {}
    for item in log.items:
        counts[item.outcome or "unknown"] = counts.get(item.outcome or "unknown", 0) + 1
    order = [*OUTCOMES, *sorted(set(counts) - set(OUTCOMES))]
    said = ", ".join(f'<span class="{_e(_css(k))}">{counts[k]} {_e(k)}</span>' for k in order if k in counts)
    judging = {s.test_id for s in log.scores if s.verdict is not None}
    unjudged = sum(item.test_id not in judging for item in log.items)
    of_them = f"; {unjudged} of them {'judges' if unjudged == 1 else 'judge'} no criterion" if unjudged else ""
    return f" {len(log.items)} item{'s' if len(log.items) != 1 else ''}: {said}{of_them}."


def _behaviour(behaviour: str, log: RunLog, tables: Sequence[Table], drawn: Sequence[drawing.Drawn], plays_shown: dict[str, str]) -> str:
    parts = [f'<section class="behaviour" id="{_anchor(behaviour)}"><h2>{_e(behaviour)}</h2>']
    references = {(r.table, r.label): r for r in log.references}
    judged = [t for t in tables if "verdict" in t.headers]
    for table in judged:
        parts.append(_table(table, references))
    for figure in drawn:
        parts.append(_figure(figure))
    for table in tables:  # descriptive tables (round by round, statistics) one click away
        if table not in judged:
            parts.append(f"<details><summary>{_e(table.title)}</summary>{_table(table, references)}</details>")
    findings = [f for f in log.findings if _behaviour_of(f.get("test_id", "")) == behaviour]
    if findings:
        kinds = {v.value: sum(f.get("verdict", "missed") == v for f in findings) for v in NOT_MET}
        said = ", ".join(f"{n} {verdict}" for verdict, n in kinds.items() if n)
        parts.append(f"<details><summary>Criteria not met: {said}</summary><ul class=\"findings\">")
        for verdict in kinds:
            parts += [f"<li><span class=\"{_css(verdict)}\">{verdict}</span> <code>{_e(f['test_id'].split('::', 1)[-1])}</code>: "
                      f"{_e(f['finding'])}</li>" for f in findings if f.get("verdict", "missed") == verdict]  # fmt: skip
        parts.append("</ul></details>")
    items = [i for i in log.items if i.behaviour == behaviour]
    if items:
        parts.append(f"<h3>Transcripts ({len(items)} cells; up to {EXAMPLES} example trials each)</h3>")
        parts += [_item(item, log.plays, plays_shown) for item in items]
    parts.append("</section>")
    return "\n".join(parts)


def _css(word: str) -> str:
    """A verdict or outcome as a class name: "at chance" is one class, ``at-chance``, not two."""
    return str(word).replace(" ", "-")


def _behaviour_of(test_id: str) -> str:
    stem = test_id.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")
    return stem.removeprefix("test_")


def _table(table: Table, references: Mapping[tuple[str, str], Any]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in table.headers)
    body = []
    for row in table.rows:
        is_reference = (table.title, row[0]) in references
        cells = []
        for header, value in zip(table.headers, row):
            keep_whole = "[" in value or any(bar in value for bar in SPARKS[1:])  # an interval, a distribution
            css = _css(value) if header == "verdict" and value in VERDICT_WORDS else "num" if keep_whole else ""
            cells.append(f'<td class="{css}">{_e(value)}</td>' if css else f"<td>{_e(value)}</td>")
        body.append(f'<tr class="reference">{"".join(cells)}</tr>' if is_reference else f"<tr>{''.join(cells)}</tr>")
    notes = [f"<li>met when: {_e(c)}</li>" for c in table.criteria] + [f"<li>{_e(n)}</li>" for n in table.notes]
    for label in (row[0] for row in table.rows if (table.title, row[0]) in references):
        ref = references[(table.title, label)]
        status = ref.status.split()[0] if ref.status else ""
        notes.append(f'<li>source, {_e(label)}: {_e(ref.source)} <span class="status {_e(status)}">{_e(ref.status)}</span></li>')
    return (f"<h3>{_e(table.title)}</h3><div class=\"scroll\"><table><tr>{head}</tr>{''.join(body)}</table></div>"
            f"<ul class=\"note\">{''.join(notes)}</ul>")  # fmt: skip


def _figure(figure: drawing.Drawn) -> str:
    notes = "".join(f"<br>{_e(n)}" for n in figure.notes)
    if figure.png is None:
        return f'<p class="empty">{_e(figure.caption)}{notes}</p>'
    data = base64.b64encode(figure.png).decode("ascii")
    width, height = _png_size(figure.png)
    return (f'<figure><img src="data:image/png;base64,{data}" width="{width}" height="{height}" alt="{_e(figure.title)}">'
            f"<figcaption>{_e(figure.caption)}{notes}</figcaption></figure>")  # fmt: skip


def _png_size(png: bytes) -> tuple[int, int]:
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def _item(item: ItemLog, plays: Mapping[str, Play], plays_shown: dict[str, str]) -> str:
    variant = ", ".join(f"{k} {v}" for k, v in item.variant.items())
    outcome = f'<span class="{_e(_css(item.outcome))}">{_e(item.outcome or "?")}</span>'
    anchor = "i-" + "".join(c if c.isalnum() else "-" for c in item.test_id)
    body = []
    for play_id in item.plays:
        play = plays.get(play_id)
        if play is None:
            continue
        if play_id in plays_shown:
            body.append(f'<p class="note">The same trials as <a href="#{plays_shown[play_id]}">that cell</a>, replayed.</p>')
            continue
        plays_shown[play_id] = anchor
        body.append(_play(play))
    label = item.test_id.split("::", 1)[-1]
    return (f'<details id="{anchor}"><summary><code>{_e(label)}</code> ({_e(variant)}): {outcome}</summary>'
            f"{''.join(body) or '<p class=note>no trials recorded</p>'}</details>")  # fmt: skip


def _play(play: Play) -> str:
    trials = play.trials
    invalid = sum(not t.get("outcome", {}).get("valid", True) for t in trials)
    about = f"{play.game}, {play.model}, {play.generation}, temperature {play.temperature:g}, seed {play.seed}"
    parts = [f'<p class="note">{_e(about)}: {len(trials)} trials, {invalid} invalid.</p>']
    if play.strategy is not None:
        parts.append(_strategy(play.strategy))
    for trial in _examples(trials):
        parts.append(_trial(trial))
    return "".join(parts)


def _examples(trials: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    if not trials:
        return []
    chosen = [trials[0]]
    for wanted in (False, True):
        found = next((t for t in trials if bool(t.get("outcome", {}).get("valid", True)) is wanted), None)
        if found is not None and found not in chosen:
            chosen.append(found)
    return chosen[:EXAMPLES]


def _strategy(strategy: Mapping[str, Any]) -> str:
    verdict = "valid" if strategy.get("valid") else f"invalid: {strategy.get('reason')}"
    parts = [f"<h4>Strategy ({_e(verdict)})</h4>"]
    request = strategy.get("request")
    if request:
        parts.append(_messages(request.get("messages", [])))
        parts.append(f'<div class="role">reply</div><pre>{_e(_cut(request.get("reply", "")))}</pre>')
    if strategy.get("code"):
        parts.append(f'<div class="role">code run in the sandbox</div><pre>{_e(_cut(strategy["code"]))}</pre>')
    return "".join(parts)


def _conversation_ends(rounds: Sequence[dict]) -> list[dict]:
    """The last request of each conversation in the trial (the two players of a two-agent game hold
    one each): a request no later request of the trial begins with. Linear in the messages: read from
    the last round back, each request's beginnings are hashed once, and a request is looked up among
    the later ones' (comparing each with every later request took 31 s for a trial of 15,000 rounds)."""
    later_beginnings: dict[tuple[int, int], int] = {}  # (length, hash of that many first messages) -> a later round
    ends = []
    for index in range(len(rounds) - 1, -1, -1):
        messages = rounds[index].get("messages", [])
        beginnings = [0]
        for message in messages:
            beginnings.append(hash((beginnings[-1], json.dumps(message, sort_keys=True, default=str))))
        later = later_beginnings.get((len(messages), beginnings[-1]))
        if later is None or rounds[later].get("messages", [])[: len(messages)] != messages:  # not continued
            ends.append(rounds[index])
        for length, beginning in enumerate(beginnings):
            later_beginnings.setdefault((length, beginning), index)
    return ends[::-1]


def _trial(trial: Mapping[str, Any]) -> str:
    rounds = trial.get("rounds", [])
    outcome = trial.get("outcome", {})
    valid = outcome.get("valid", True)
    verdict = "valid" if valid else f"invalid: {outcome.get('reason', '')}"
    parts = [f"<details><summary>trial {_e(trial.get('trial'))}: {_e(verdict)}</summary>"]
    if rounds:
        rows = "".join(
            f"<tr><td>{i + 1}</td><td><code>{_e(_cut(r.get('reply', ''), 300))}</code></td>"
            f"<td>{_e(r.get('value')) if r.get('valid') else '-'}</td><td>{_e(r.get('reason', ''))}</td></tr>"
            for i, r in enumerate(rounds[:ROUNDS_SHOWN])
        )
        more = len(rounds) - ROUNDS_SHOWN
        rows += f'<tr><td colspan="4">... {more} more requests in the run log</td></tr>' if more > 0 else ""
        parts.append(f"<div class=\"scroll\"><table><tr><th>request</th><th>raw reply</th><th>decision</th><th>invalid because</th></tr>{rows}</table></div>")
        ends = _conversation_ends(rounds)
        if len(ends) > REQUESTS_SHOWN:
            parts.append(f'<p class="note">The last {REQUESTS_SHOWN} of its {len(ends)} conversations, whole:</p>')
        for end in ends[-REQUESTS_SHOWN:]:
            parts.append(_messages(end.get("messages", [])))
            if end.get("thinking"):
                parts.append(f'<div class="role">thinking</div><pre>{_e(_cut(end["thinking"]))}</pre>')
            parts.append(f'<div class="role">reply</div><pre>{_e(_cut(end.get("reply", "")))}</pre>')
    shown = {k: v for k, v in outcome.items() if k not in ("rounds", "players", "messages")}
    parts.append(f'<div class="role">outcome</div><pre>{_e(_cut(_plain(shown), 1500))}</pre></details>')
    return "".join(parts)


def _messages(messages: Iterable[Mapping[str, Any]]) -> str:
    return "".join(f'<div class="role">{_e(m.get("role", ""))}</div><pre>{_e(_cut(str(m.get("content", ""))))}</pre>' for m in messages)


def _cut(text: str, limit: int = TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters in the run log]"


def _plain(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _comparison(comparison: Mapping[str, Any]) -> str:
    cells = comparison.get("cells", [])
    notes = "".join(f"<li>{_e(n)}</li>" for n in comparison.get("notes", []))
    rows = []
    for c in cells:
        verdict = "LOST" if c.get("lost") else "DROP" if c.get("dropped") else ""
        old_verdict, new_verdict = c.get("old_verdict"), c.get("new_verdict")
        criterion = f"{old_verdict} -> {new_verdict}" if old_verdict and new_verdict and old_verdict != new_verdict else ""
        rows.append("<tr>" + "".join(f"<td>{_e(v)}</td>" for v in (
            c.get("behaviour"), c.get("cell"), c.get("models"), _number(c.get("old")), _number(c.get("new")),
            _number(c.get("difference")), _number(c.get("p_holm")), verdict, criterion)) + "</tr>")  # fmt: skip
    figure = drawing.draw_comparison(cells)
    return (f'<section id="comparison"><h2>Compared with {_e(comparison.get("with", ""))}</h2><ul class="note">{notes}</ul>'
            + _figure(figure) +
            "<details><summary>every cell compared</summary><div class=\"scroll\"><table><tr><th>behaviour</th><th>cell</th><th>model</th>"
            "<th>old</th><th>new</th><th>new - old</th><th>p (Holm)</th><th>verdict</th><th>criterion</th></tr>"
            + "".join(rows) + "</table></div></details></section>")  # fmt: skip


def _number(value: Any) -> str:
    return "-" if value is None else f"{value:.3g}" if isinstance(value, float) else str(value)
