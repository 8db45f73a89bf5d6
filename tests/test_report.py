"""The run log, the report and the summary: everything kept, read back in either format, drawn, and
opened in a real browser."""

import copy
import dataclasses
import gzip
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SHIPPED, gaamas_command, outcomes, play_trials
from hypothesis import given
from hypothesis import strategies as st
from test_drawing import checked

from pytest_gaamas import drawing, inert, report_html, report_markdown, runlog
from pytest_gaamas.errors import UnreadableFile
from pytest_gaamas.figures import INTERVAL, LINE, VIOLIN, Figure
from pytest_gaamas.report import Score, Table, build_tables, p_stated

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Where the browser test leaves its screenshot for whoever reads the CI run.
ARTIFACTS = Path(os.environ.get("GAAMAS_ARTIFACTS", ROOT / "test-artifacts"))
REPORT_BUDGET_BYTES = 5_000_000


# -- the run log ----------------------------------------------------------------------------------

messages = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant"]), "content": st.text(max_size=5)}), max_size=4)


@given(st.lists(messages, max_size=6), st.data())
def test_a_trial_s_requests_are_kept_whole_however_they_share_messages(conversation_parts, data):
    """Rounds that resend a conversation are stored once; read back, every request is whole."""
    rounds, so_far = [], []
    for part in conversation_parts:
        if data.draw(st.booleans(), label="new conversation"):
            so_far = []
        so_far = so_far + part
        rounds.append({"seed": len(rounds), "messages": list(so_far), "reply": "r", "valid": True, "value": 1, "reason": ""})
    play = runlog.Play("p", "b", "m", "g", "f", "actions", 0, 0.7, [{"trial": 0, "rounds": rounds, "outcome": {}}])
    stored = play.to_json()
    assert runlog.Play.from_json(json.loads(json.dumps(stored))).trials == play.trials
    assert sum(len(r["messages"]) for r in stored["trials"][0]["rounds"]) <= sum(len(r["messages"]) for r in rounds)


def test_a_damaged_message_reference_is_a_one_line_error(tmp_path):
    rounds = [{"messages": [{"role": "user", "content": "a"}]}, {"messages": [], "shared": [5, 1]}]
    document = {"format": 2, "run": {}, "scores": [], "plays": {"p": {"id": "p", "behaviour": "b", "model": "m", "game": "g",
                "game_fingerprint": "f", "generation": "actions", "seed": 0, "temperature": 0.7,
                "trials": [{"trial": 0, "rounds": rounds, "outcome": {}}]}}}  # fmt: skip
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    with pytest.raises(UnreadableFile, match=r"run.json: a damaged run log .*write it again"):
        runlog.read(path)


def test_run_logs_that_cannot_be_read_say_which_and_what_to_do(tmp_path):
    cases = {
        "missing.json": None,
        "cut.json.gz": gzip.compress(b'{"format": 2, "scores": []}')[:-6],
        "text.json": b"not json at all",
        "newer.json": json.dumps({"format": runlog.FORMAT + 1, "scores": []}).encode(),
        "list.json": b"[1, 2]",
        "binary.json": b"\xff\xfe\x00garbage",
    }
    for name, content in cases.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
        with pytest.raises(UnreadableFile) as error:
            runlog.read(tmp_path / name)
        message = str(error.value)
        assert name in message and "\n" not in message, message
        assert "upgrade pytest-gaamas" in message if name == "newer.json" else "write it again" in message


def test_a_run_log_is_the_same_in_json_and_gzip(smollm2_replay, tmp_path):
    document = smollm2_replay.document
    for name in ("run.json", "run.json.gz"):
        (tmp_path / name).write_bytes(runlog.dumps(document, tmp_path / name))
    plain, packed = runlog.read(tmp_path / "run.json"), runlog.read(tmp_path / "run.json.gz")
    assert plain.plays == packed.plays and plain.scores == packed.scores
    assert (tmp_path / "run.json.gz").stat().st_size * 5 < (tmp_path / "run.json").stat().st_size


def test_the_run_log_keeps_every_trial_of_every_item(smollm2_replay):
    document = smollm2_replay.document
    assert document["format"] == runlog.FORMAT
    log = runlog.parse(json.dumps(document))
    assert {i.behaviour for i in log.items} == set(SHIPPED)
    assert {i.outcome for i in log.items} <= {"passed", "missed", "at chance", "inconclusive"}
    for item in log.items:
        assert item.plays, item.test_id
        for play_id in item.plays:
            play = log.plays[play_id]
            assert len(play.trials) in play_trials(item.behaviour), item.test_id
            assert [t["trial"] for t in play.trials] == list(range(len(play.trials))), item.test_id
            for trial in play.trials:
                for round_ in trial["rounds"]:
                    assert round_["messages"] and isinstance(round_["reply"], str), item.test_id
                    assert round_["valid"] or round_["reason"], item.test_id
            if play.generation == "strategy":  # the request, the reply, and the code or why there is none
                assert play.strategy["request"]["reply"] and (play.strategy["code"] or play.strategy["reason"]), item.test_id
    # a criterion over another item's cells shares its play rather than keeping a copy
    fidelity = next(i for i in log.items if "::test_dictator_fidelity[" in i.test_id)
    experiment = next(i for i in log.items if i.test_id == fidelity.test_id.replace("test_dictator_fidelity", "test_dictator_preferences"))
    assert fidelity.plays == experiment.plays
    assert len(document["findings"]) == sum(s["passed"] is False for s in document["scores"])


def test_runs_saved_in_the_old_shape_still_compare_and_still_make_a_report(smollm2_replay, tmp_path):
    """Format 1 had no format field, no plays, no items: comparing with it works as before, and its
    report has tables and figures and says that it holds no transcripts."""
    old = copy.deepcopy({key: smollm2_replay.document[key] for key in ("run", "scores", "references", "tables")})
    for score in old["scores"]:
        del score["figures"]  # nor did its scores declare figures
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "old.json").write_text(json.dumps(old))
    log = runlog.read(tmp_path / "runs" / "old.json")
    assert log.format == 1 and not log.has_transcripts
    page = report_html.render(log)
    assert "before runs kept their trials" in page
    assert "<table>" in page and "Economic rationality" in page
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "behaviours/test_ultimatum.py", "-q", "-p", "no:cacheprovider", "-k", "not fidelity",
         "--gaamas-compare=old", f"--gaamas-runs-dir={tmp_path / 'runs'}", f"--gaamas-journal-dir={tmp_path / 'journal'}"],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "CI": "true"}, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0 and "cells paired with" in done.stdout, done.stdout[-2000:]


def test_scores_and_transcripts_stay_out_of_the_junit_xml_and_cross_xdist_whole(behaviour_project):
    """Workers send their results once, when they finish; no score travels in a test report."""
    for name, extra in (("serial", ()), ("parallel", ("-n", "2"))):
        result = behaviour_project.runpytest("--gaamas-model=reference:random", "--gaamas-trials=6", f"--junitxml={name}.xml",
                                             f"--gaamas-json={name}.json", *extra)  # fmt: skip
        assert outcomes(result) == {"missed": 1}, result.stdout.str()
        xml = (behaviour_project.path / f"{name}.xml").read_text()
        assert "gaamas_score" not in xml and "sample" not in xml and "asset_a" not in xml
        assert 'name="test_garp_consistency[reference-random]"' in xml and len(xml) < 2000
    serial, parallel = (json.loads((behaviour_project.path / f"{n}.json").read_text()) for n in ("serial", "parallel"))
    for key in ("scores", "plays", "items", "findings", "references"):
        assert serial[key] == parallel[key], key
    assert len(next(iter(serial["plays"].values()))["trials"]) == 6


# -- figures ------------------------------------------------------------------------------------------


def score(model="m", value=0.5, sample=(), figure=None, generation="actions", test_id="t", invalid=0) -> Score:
    return Score(
        behaviour="b", test_id=test_id, model=model, variant={"generation": generation}, metric="x", score=value,
        ci=(None, None) if value is None else (value - 0.1, value + 0.1), n=30, invalid=invalid, passed=None,
        criterion="", table="T", columns=("A", "B"), cells={}, sample=tuple(sample), figures=(figure,) if figure else (),
    )  # fmt: skip


def test_a_figure_with_no_valid_answer_says_so_instead_of_drawing_an_empty_frame():
    figure = Figure("rates", INTERVAL, "rate", x="A")
    (drawn,) = drawing.draw_run([score(value=None, figure=figure, invalid=30)])
    assert drawn.png is None and "no valid answer from m in any cell (30 invalid)" in drawn.caption
    page = report_html._figure(drawn)
    assert "<img" not in page and "no valid answer" in page


def test_a_figure_says_which_of_its_cells_had_no_valid_answer():
    figure = Figure("shares", VIOLIN, "$ kept", x="A")
    (drawn,) = drawing.draw_run([score(sample=[10, 20, 30], figure=figure), score(model="n", value=None, figure=figure, test_id="u")])
    assert drawn.png.startswith(b"\x89PNG") and "no valid answer, so nothing drawn, for: n at A" in drawn.caption


def test_a_figure_with_a_legend_taller_than_its_panels_grows_to_hold_it():
    """Forty series (models x variants), each with its own line in the legend: drawn, not refused."""
    scores = [score(model=f"model {m}", value=0.5, test_id=f"t{m}-{v}",
                    figure=Figure("many", LINE, "rate", x=1, x_axis="round", series=f"variant {v}", references={f"reference {v}": 0.4}))
              for m in range(5) for v in range(8)]  # fmt: skip
    (drawn,) = drawing.draw_run(scores)
    width, height = report_html._png_size(drawn.png)
    assert drawn.png.startswith(b"\x89PNG") and height > width / 2


def test_figures_are_drawn_the_same_every_time():
    figure = Figure("shares", VIOLIN, "$ kept", x="A", people="MobLab dictators: $ kept of $100", references={"half": 50})
    first, second = (drawing.draw_run([score(sample=[10, 20, 30, 90], value=37.5, figure=figure)])[0].png for _ in range(2))
    assert first == second


def test_a_model_s_text_cannot_break_out_of_the_report(smollm2_replay):
    """Whatever a model wrote is shown as text: no tag, script or closing element of its own."""
    log = runlog.parse(json.dumps(smollm2_replay.document))
    play = next(iter(log.plays.values()))
    play.trials[0]["rounds"][0]["reply"] = '</pre></details><script>alert(1)</script><img src=x onerror=alert(2)>'
    page = report_html._play(play)
    assert "<script>" not in page and "<img" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_markdown_summary_keeps_its_tables_whole_whatever_the_cells_hold(smollm2_replay):
    log = runlog.parse(json.dumps(smollm2_replay.document))
    log.findings.insert(0, {"test_id": "x::y", "finding": "a | b\nc <b>"})
    text = report_markdown.render(log)
    assert "a \\| b\\\\nc \\<b\\>" in text
    met = sum(s["passed"] is True for s in smollm2_replay.document["scores"])
    assert text.count("| embedded\\:smollm2 ") >= 10 and f"**{met} met**" in text


def test_the_comparison_is_drawn_with_its_drops_marked():
    cells = [{"behaviour": "ultimatum", "cell": f"cell {i}", "models": "m", "old": 0.8, "new": 0.3 if i == 0 else 0.79,
              "old_ci": [0.7, 0.9], "new_ci": [0.2, 0.4] if i == 0 else [0.7, 0.88], "dropped": i == 0, "headline": True,
              "unit": "rate", "p_holm": 0.001, "gated": i == 0} for i in range(3)]  # fmt: skip
    unchanged = [{**cells[1], "cell": f"steady {i}", "p_holm": 0.9, "old_verdict": "met", "new_verdict": "met"} for i in range(50)]
    drawn = drawing.draw_comparison(cells + unchanged)
    assert drawn.png.startswith(b"\x89PNG") and "1 cell gated on, 2 others that changed; 1 DROP" in drawn.caption
    assert drawing.draw_comparison(unchanged).png is None  # nothing gated, nothing changed: nothing to draw
    page = report_html._comparison({"with": "baseline", "notes": ["n"], "cells": cells})
    assert "DROP" in page and "<img" in page


# -- the report, in a real browser -----------------------------------------------------------------


def browser_problems(page_path: Path, screenshot: Path | None = None) -> tuple[list[str], dict]:
    """Open ``page_path`` in headless Chromium: every console error and failed resource, each image
    not rendered at a non-zero size, and what the page holds."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run", "--disable-quic"])  # fmt: skip
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}") if message.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.on("requestfailed", lambda request: problems.append(f"failed resource: {request.url[:100]}"))
            page.goto(page_path.resolve().as_uri(), wait_until="load")
            page.locator("details > summary").first.click()  # a transcript opens with a click
            held = page.evaluate("""() => ({
                images: document.images.length,
                unrendered: Array.from(document.images).filter(i => {
                    const box = i.getBoundingClientRect();
                    return !(i.complete && i.naturalWidth > 0 && box.width > 0 && box.height > 0);
                }).map(i => i.alt),
                sections: Array.from(document.querySelectorAll('section.behaviour')).map(s => s.querySelector('h2').textContent),
                opened: document.querySelector('details[open] pre, details[open] table') !== null,
                sizes: Array.from(document.images).map(i => [i.alt, i.naturalWidth, i.getBoundingClientRect().width]),
                external: Array.from(document.querySelectorAll('[src],[href]')).map(e => e.getAttribute('src') || e.getAttribute('href'))
                    .filter(u => !u.startsWith('data:') && !u.startsWith('#')),
            })""")
            problems += [f"figure not rendered: {alt}" for alt in held["unrendered"]]
            problems += [f"reference outside the file: {url}" for url in held["external"]]
            if screenshot is not None:
                page.locator("details[open]").first.evaluate("e => e.open = false")
                page.evaluate("window.scrollTo(0, 0)")
                page.screenshot(path=str(screenshot))
        finally:
            browser.close()
    return problems, held


def browser_or_skip() -> None:
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing = "playwright (pip install -e '.[dev]')"
    else:
        missing = "" if CHROMIUM else "Chromium (apt-get install chromium)"
    if missing:
        if os.environ.get("GAAMAS_REQUIRE_LIVE"):
            pytest.fail(f"the browser test needs {missing}; .ci/run installs it")
        pytest.skip(f"the browser test needs {missing}")


def test_the_report_of_a_replayed_run_opens_in_a_real_browser(smollm2_replay):
    browser_or_skip()
    report = smollm2_replay.folder / "report.html"
    assert report.stat().st_size < REPORT_BUDGET_BYTES, report.stat().st_size
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    problems, held = browser_problems(report, ARTIFACTS / "report.png")
    assert problems == []
    assert sorted(held["sections"]) == sorted(SHIPPED)
    assert held["images"] >= len(SHIPPED) and held["opened"]
    # in a 1280 px window every figure is shown at the size it was drawn for, its text with it
    shrunk = [(alt, natural, round(shown)) for alt, natural, shown in held["sizes"] if natural < 700 or abs(shown - natural) > 0.5]
    assert shrunk == []
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000
    summary = (smollm2_replay.folder / "summary.md").read_text()
    assert summary.startswith("# pytest-gaamas: " + inert.markdown("embedded:smollm2")) and "## Economic rationality" in summary


def test_the_browser_check_catches_a_broken_report(tmp_path):
    """The check above can fail: a missing image, a script error and a resource from elsewhere are caught."""
    browser_or_skip()
    page = tmp_path / "broken.html"
    page.write_text('<!doctype html><html><body><details><summary>s</summary><pre>x</pre></details>'
                    '<img src="missing.png" alt="gone"><script>undefined_function()</script>'
                    '<link rel="stylesheet" href="https://cdn.example/x.css"></body></html>')  # fmt: skip
    problems, _ = browser_problems(page)
    assert any("figure not rendered: gone" in p for p in problems), problems
    assert any("undefined_function" in p for p in problems), problems
    assert any("https://cdn.example/x.css" in p for p in problems), problems


def test_a_saved_run_makes_the_same_report_later_with_every_figure_legible(smollm2_replay, tmp_path, monkeypatch):
    """The replayed suite's report made again from its saved run log, as ``python -m pytest_gaamas
    report`` makes it: the same bytes as the report and the summary the run wrote; and every figure in
    it legible, with nothing drawn over anything (tests/test_drawing.py's checks). One drawing of the
    suite's figures serves both."""
    run = tmp_path / "run.json.gz"
    run.write_bytes(runlog.dumps(smollm2_replay.document, run))
    drawn: list[drawing.Drawn] = []
    draw_run = drawing.draw_run

    def keeping(*args, **options):
        figures = draw_run(*args, **options, keep=True)
        drawn.extend(figures)
        return figures

    monkeypatch.setattr(drawing, "draw_run", keeping)
    code, said, errors = gaamas_command("report", str(run), "-o", str(tmp_path / "later.html"), "--markdown", str(tmp_path / "later.md"))
    assert code == 0 and "wrote" in said, errors
    assert (tmp_path / "later.md").read_text() == (smollm2_replay.folder / "summary.md").read_text()
    later, first = ((p).read_text() for p in (tmp_path / "later.html", smollm2_replay.folder / "report.html"))
    assert later == first
    assert len(drawn) >= 20
    assert checked(drawn) == []
    code, _, errors = gaamas_command("report", "no-such-run", "--runs-dir", str(tmp_path))
    assert code == 2 and errors.count("\n") == 1 and "--gaamas-save" in errors


# -- three verdicts in the run log, the report and the summary ------------------------------------


def judged(cell: str, verdict: str) -> Score:
    return Score(
        behaviour="b", test_id=f"behaviours/test_b.py::test_b[m-{cell}]", model="m", variant={"generation": "actions"},
        metric="rate", score=0.5, ci=(0.3, 0.7), n=30, invalid=0, passed=None, verdict=verdict,
        criterion="lower 95% bound >= 0.5", table="Verdicts", columns=("rate",), cells={"rate": "0.50 [0.30, 0.70]"},
        row={"cell": cell}, kind="rate",
    )  # fmt: skip


def three_verdicts_log() -> dict:
    collector = runlog.Collector()
    for cell, verdict in (("a", "met"), ("b", "missed"), ("c", "inconclusive")):
        collector.score(judged(cell, verdict))
    return runlog.document(
        run={"models": [{"model": "m"}]}, collector=collector, tables=[], outcomes={},
        findings=[("behaviours/test_b.py::test_b[m-c]", "inconclusive", "rate 0.50 [0.30, 0.70] straddles 0.5"),
                  ("behaviours/test_b.py::test_b[m-b]", "missed", "rate 0.10 [0.05, 0.20]")],
    )  # fmt: skip


def test_a_cell_at_chance_is_kept_counted_and_listed_in_the_run_log_the_report_and_the_summary(tmp_path):
    document = three_verdicts_log()
    test_id = "behaviours/test_b.py::test_b[m-d]"
    adjusted = {"family": 4, "chance": 0.5, "chance_margin": 0.15, "chance_ci": [0.36, 0.64]}
    document["scores"].append(judged("d", "at chance").to_json() | {"adjusted": adjusted})
    document["findings"].append({"test_id": test_id, "verdict": "at chance", "finding": "rate 0.50 [0.33, 0.67]"})
    document["items"] = [{"test_id": test_id, "behaviour": "b", "model": "m", "variant": {}, "outcome": "at chance", "plays": []}]
    path = tmp_path / "run.json"
    path.write_bytes(runlog.dumps(document, path))
    log = runlog.read(path)
    assert [(s.verdict, s.passed) for s in log.scores][-1] == ("at chance", False) and log.scores[-1].adjusted["chance"] == 0.5
    summary = report_markdown.render(log)
    assert "4 criteria judged: **1 met**, **1 missed**, **1 at chance**, **1 inconclusive**." in summary
    assert "## Criteria at chance (the trials show the model no better than chance) (1)" in summary
    page = report_html.render(log)
    assert '<span class="at-chance">1 at chance</span>' in page and '<td class="at-chance">at chance</td>' in page
    assert "Criteria not met: 1 missed, 1 at chance, 1 inconclusive" in page


def test_the_run_log_keeps_each_score_s_verdict_and_each_finding_s(tmp_path):
    path = tmp_path / "run.json.gz"
    path.write_bytes(runlog.dumps(three_verdicts_log(), path))
    log = runlog.read(path)
    assert log.format == runlog.FORMAT == 4
    assert [(s.verdict, s.passed) for s in log.scores] == [("met", True), ("missed", False), ("inconclusive", False)]
    assert [(f["test_id"][-2], f["verdict"]) for f in log.findings] == [("b", "missed"), ("c", "inconclusive")]
    assert [s.to_json() for s in log.scores] == three_verdicts_log()["scores"]


def test_a_run_log_with_two_verdicts_is_read_with_its_verdicts_taken_from_passed(tmp_path):
    """Format 2 had passed alone and findings without a verdict: each was met or missed."""
    old = three_verdicts_log()
    old["format"] = 2
    for score in old["scores"]:
        score["passed"] = score.pop("verdict") == "met"
    for finding in old["findings"]:
        del finding["verdict"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    log = runlog.read(tmp_path / "old.json")
    assert log.format == 2 and [s.verdict for s in log.scores] == ["met", "missed", "missed"]
    assert {f["verdict"] for f in log.findings} == {"missed"}
    assert "2 missed" in report_markdown.render(log) and "inconclusive (" not in report_markdown.render(log)


def test_a_verdict_that_contradicts_itself_or_is_no_verdict_is_a_damaged_run_log(tmp_path):
    for damage in ({"verdict": "maybe"}, {"verdict": "missed", "passed": True}, {"verdict": 1}):
        document = three_verdicts_log()
        document["scores"][0].update(damage)
        (tmp_path / "run.json").write_text(json.dumps(document))
        with pytest.raises(UnreadableFile, match="a damaged run log.*write it again") as error:
            runlog.read(tmp_path / "run.json")
        assert "\n" not in str(error.value)
    document = three_verdicts_log()
    document["findings"][0]["verdict"] = "met"  # a met criterion has no finding
    (tmp_path / "run.json").write_text(json.dumps(document))
    with pytest.raises(UnreadableFile, match="a damaged run log"):
        runlog.read(tmp_path / "run.json")


def test_the_report_and_the_summary_say_met_missed_and_inconclusive(tmp_path):
    log = runlog.parse(json.dumps(three_verdicts_log()))
    summary = report_markdown.render(log)
    assert "3 criteria judged: **1 met**, **1 missed**, **1 inconclusive**." in summary
    rows = {line.split("|")[3].strip(): line.split("|")[-2].strip() for line in summary.splitlines() if line.startswith("| m ")}
    assert rows == {"a": "met", "b": "missed", "c": "inconclusive"}
    assert "## Criteria missed (1)" in summary and "## Criteria the trials could not decide (inconclusive) (1)" in summary
    shown = inert.markdown  # a model's or a run log's text is shown with its punctuation escaped
    assert summary.index(shown("straddles 0.5")) > summary.index("(inconclusive) (1)") > summary.index(shown("0.10 [0.05, 0.20]"))
    assert "- met when: " + shown("lower 95% bound >= 0.5") in summary
    page = report_html.render(log)
    for verdict in ("met", "missed", "inconclusive"):
        assert f'<span class="{verdict}">1 {verdict}</span>' in page and f'<td class="{verdict}">{verdict}</td>' in page
    assert "Criteria not met: 1 missed, 1 inconclusive" in page and '<span class="inconclusive">inconclusive</span> <code>' in page


# -- a model's text in the summary and the terminal's tables ---------------------------------------

#: What Markdown would make live: an image that calls home, links, HTML, a bare URL and address,
#: a table cell's end, a code span and a heading of its own, an entity, and a terminal's escapes.
HOSTILE_MARKDOWN = ("![pixel](https://evil.example/p.png) [click](javascript:alert(1)) <img src=x onerror=alert(1)> "
                    "https://evil.example/phish www.evil.example ceo@evil.example a|b ``` code\n# heading &lt;script&gt; "
                    "*bold* _em_ \x1b]52;c;aGk=\x07")  # fmt: skip
PUNCTUATION_ESCAPED = re.compile(r"(?:[^!-/:-@\[-`{-~]|\\[!-/:-@\[-`{-~])*")


@given(st.text())
def test_a_models_text_in_markdown_has_every_punctuation_mark_escaped(text):
    """CommonMark shows a backslash-escaped punctuation mark as itself: nothing of the text can open
    a link, an image, HTML, a code span or a table cell, and no line break starts a block."""
    escaped = inert.markdown(text)
    assert PUNCTUATION_ESCAPED.fullmatch(escaped) and "\n" not in escaped


def test_the_markdown_summary_shows_a_models_text_and_makes_nothing_of_it(smollm2_replay):
    log = runlog.parse(json.dumps(smollm2_replay.document))
    log.findings.insert(0, {"test_id": "behaviours/test_x.py::test_y[`a`|b]", "finding": HOSTILE_MARKDOWN})
    log.run["models"] = [{"model": HOSTILE_MARKDOWN}]
    log.scores[0] = dataclasses.replace(log.scores[0], cells={c: HOSTILE_MARKDOWN for c in log.scores[0].columns})
    log.comparison = {"with": HOSTILE_MARKDOWN, "notes": [HOSTILE_MARKDOWN], "cells": [
        {"behaviour": HOSTILE_MARKDOWN, "cell": HOSTILE_MARKDOWN, "models": HOSTILE_MARKDOWN, "old": 0.8, "new": 0.2, "p_holm": 0.01, "dropped": True}]}  # fmt: skip
    text = report_markdown.render(log)
    shown = inert.markdown(HOSTILE_MARKDOWN)
    assert text.count(shown) >= 6  # the title, the comparison's heading, note and table, a table cell, the finding
    assert "evil" not in text.replace(shown, "") and "`` behaviours" not in text
    for block in re.split(r"\n(?!\|)", text):  # every row of a table has as many cells as its header
        rows = [line for line in block.split("\n") if line.startswith("|")]
        assert len({len(re.findall(r"(?<!\\)\|", row)) for row in rows}) <= 1, rows


def test_a_table_cell_written_by_a_model_is_shown_in_the_terminal_not_obeyed():
    table = Table("t", ("model", "reply"), (("m", "ok\x1b[2J\n=== 40 passed ===\x07"),), ("pass: \x1b]52;c;aGk=\x07",), ())
    text = table.render(60)
    assert all(c.isprintable() for c in text.replace("\n", "")) and "\\x1b[2J\\n=== 40 passed ===\\x07" in text
    assert not any(line.startswith("===") for line in text.splitlines())


def test_the_markdown_summary_of_a_thousand_drops_and_findings_fits_a_pull_request_comment():
    """A pull-request comment holds 65,536 characters: the summary lists the first dropped cells,
    counts the rest and stops short of the limit saying where the rest is, rather than being
    refused whole."""
    document = three_verdicts_log()
    document["findings"] = [{"test_id": f"behaviours/test_b.py::test_b[m-{i}]", "finding": "x" * 4000, "verdict": "missed"}
                            for i in range(1000)]  # fmt: skip
    log = runlog.parse(json.dumps(document))
    cell = {"behaviour": "b", "cell": "a cell " * 20, "models": "m", "old": 0.9, "new": 0.1, "p_holm": 0.001, "dropped": True}
    log = dataclasses.replace(log, comparison={"with": "saved.json", "notes": [], "cells": [cell] * 1000})
    summary = report_markdown.render(log)
    assert len(summary) <= report_markdown.MARKDOWN_LIMIT < 65_536
    assert f"**FAILED**, {inert.markdown('1000 cells dropped, 0 lost their answers (of the 1000 gated)')}" in summary and f"... and {1000 - report_markdown.FINDINGS_SHOWN} more dropped cells" in summary
    assert summary.count("| a cell") == report_markdown.FINDINGS_SHOWN
    assert summary.endswith("the run log and the HTML report have it all.\n") and "## Criteria missed (1000)" in summary
    small = report_markdown.render(runlog.parse(json.dumps(three_verdicts_log())))
    assert "size limit" not in small and "left out here for size" not in small


def test_the_whole_smollm2_summary_fits_a_comment_with_every_finding_section_and_names_what_it_left_out(smollm2_replay):
    log = runlog.parse(json.dumps(smollm2_replay.document))
    text = report_markdown.render(log)
    assert len(text) <= report_markdown.MARKDOWN_LIMIT and "stops here" not in text
    assert "## Criteria missed (" in text and "## Criteria the trials could not decide (inconclusive) (" in text
    models = [m["model"] for m in log.run["models"]]
    titles = [t.title for t in build_tables(log.scores, log.references, models) if "verdict" in t.headers]
    named = [t for t in titles if f"## {inert.markdown(t)}" in text or inert.markdown(t) in text.split("left out here for size: ")[-1]]
    assert named == titles  # each table with a verdict is there or named


def test_the_null_runs_figures_travel_in_the_run_log_and_are_said_under_their_table(tmp_path):
    """What agents that never read the game earned in a table is part of the run record: the report and
    the summary made from a saved run say it under the table, stale where the behaviour has changed."""
    document = three_verdicts_log()
    title = document["scores"][0]["table"]
    entry = {"agents": {"reference:random": {"cells": 3, "met_per_run": 0.05, "runs_with_met": 1, "runs": 20},
                        "reference:blind-at-0.75": {"cells": 3, "met_per_run": 1.0, "runs_with_met": 3, "runs": 3}},
             "stale": True}  # fmt: skip
    document["null_rates"] = {title: entry}
    path = tmp_path / "run.json"
    path.write_bytes(runlog.dumps(document, path))
    log = runlog.read(path)
    assert log.null_rates == {title: entry}
    said = ("met without reading the game, in seeded null runs: reference:random 0.05 a run (in 1 of 20 runs); "
            "of 1 blind agents, at most 1 a run (in 3 of 3 runs), blind-at-0.75; measured before this behaviour last changed")
    summary = report_markdown.render(log)
    assert inert.markdown(said) in summary
    damaged = {**document, "null_rates": {title: {**entry, "stale": "yes"}}}
    path.write_bytes(runlog.dumps(damaged, path))
    with pytest.raises(UnreadableFile, match="stale"):
        runlog.read(path)


@pytest.mark.parametrize(("p", "name", "said"), [(0.0004, "p", "p < 0.001"), (0.012, "p", "p = 0.012"),
                                                  (0.3, "one-sided p", "one-sided p = 0.300"), (math.nan, "p", "p = -")])
def test_a_p_value_in_a_sentence_reads_as_one(p, name, said):
    assert p_stated(p, name) == said


def test_no_behaviour_writes_an_equals_sign_before_a_bound():
    """``p = < 0.001`` is what ``p = {p_value_text(p)}`` prints for a small p; ``p_stated`` says it."""
    for path in sorted((ROOT / "behaviours").glob("test_*.py")):
        assert not re.search(r"= \{p_value_text\(", path.read_text()), path.name
