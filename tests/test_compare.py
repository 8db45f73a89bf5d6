"""Saved runs and their comparison: a planted regression is caught, a replay never is."""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_gaamas import compare, inert, report, report_markdown, runlog, stats
from pytest_gaamas.report import Score

ROOT = Path(__file__).resolve().parents[1]


def score(estimate: stats.Estimate, *, model="embedded:smollm2", behaviour="ultimatum", worse="down", row=None) -> Score:
    return Score(
        behaviour=behaviour, test_id=f"behaviours/test_{behaviour}.py::test_{behaviour}[{model}-responder-actions]",
        model=model, variant={"generation": "actions", "role": "responder"}, metric="acceptance rate",
        score=estimate.value, ci=(estimate.low, estimate.high), n=estimate.n, invalid=0, passed=True, criterion="",
        table="t", columns=("c",), cells={}, row=row or {}, kind=estimate.kind, sample=estimate.sample, worse=worse,
        unit="rate" if estimate.kind == "rate" else "dollars",
    )  # fmt: skip


def test_a_significant_drop_beyond_the_allowed_one_is_caught():
    (change,) = compare.compare([score(stats.wilson(29, 30))], [score(stats.wilson(12, 30))], {"rate": 0.2})
    assert change.dropped and change.worse_by == pytest.approx(17 / 30)
    assert change.p_value == change.p_adjusted < 0.001


def test_a_drop_within_the_allowance_or_without_evidence_is_not():
    assert not compare.compare([score(stats.wilson(29, 30))], [score(stats.wilson(12, 30))], {"rate": 0.6})[0].dropped
    assert not compare.compare([score(stats.wilson(20, 30))], [score(stats.wilson(17, 30))], {"rate": 0.0})[0].dropped
    assert not compare.compare([score(stats.wilson(29, 30))], [score(stats.wilson(12, 30))], {})[0].dropped


def test_the_direction_that_counts_as_worse_is_the_cells_own():
    old, new = stats.wilson(2, 30), stats.wilson(25, 30)
    assert not compare.compare([score(old)], [score(new)], {"rate": 0})[0].dropped
    assert compare.compare([score(old, worse="up")], [score(new, worse="up")], {"rate": 0})[0].dropped
    assert compare.compare([score(new, worse="both")], [score(old, worse="both")], {"rate": 0})[0].dropped


def test_an_allowance_applies_to_its_own_unit_only():
    old, new = [score(stats.wilson(30, 30))], [score(stats.wilson(13, 30))]  # acceptance 1 -> 0.43
    assert not compare.compare(old, new, {"dollars": 10})[0].dropped
    assert compare.compare(old, new, {"dollars": 10, "rate": 0.2})[0].dropped


def test_a_behaviours_own_allowance_overrides_the_general_one():
    old, new = [score(stats.wilson(29, 30))], [score(stats.wilson(12, 30))]
    assert not compare.compare(old, new, {"rate": 0.1, "ultimatum": 0.9})[0].dropped
    assert compare.compare(old, new, {"dictator_preferences": 0.9, "rate": 0.1})[0].dropped


def test_many_cells_are_corrected_together():
    # One cell alone would be significant (p ~ 0.02); among 20 unchanged cells, Holm's correction says no.
    old = [score(stats.wilson(25, 30), row={"r": str(i)}) for i in range(21)]
    new = [score(stats.wilson(25 if i else 17, 30), row={"r": str(i)}) for i in range(21)]
    changes = compare.compare(old, new, {"rate": 0.0})
    moved = next(c for c in changes if c.new.row == {"r": "0"})
    assert moved.p_value < 0.05 < moved.p_adjusted and not moved.dropped


def test_means_are_compared_with_a_permutation_test():
    old = score(stats.mean([60.0, 62, 58, 61, 59, 63] * 5))
    new = score(stats.mean([40.0, 45, 38, 41, 44, 39] * 5))
    (change,) = compare.compare([old], [new], {"dollars": 5})
    assert change.dropped and change.p_value == 1 / (stats.PERMUTATIONS + 1)  # no relabelling reaches it: the least p it can say


def test_two_different_models_pair_cell_by_cell_and_ambiguity_is_refused():
    (change,) = compare.compare([score(stats.wilson(20, 30))], [score(stats.wilson(20, 30), model="embedded:gemma3-270m")], {})
    assert change.models == "embedded:smollm2 -> embedded:gemma3-270m" and change.p_value == 1.0
    two = [score(stats.wilson(1, 3), model=m) for m in ("a:x", "a:y")]
    with pytest.raises(compare.CompareError, match="cannot be paired"):
        compare.compare(two, [score(stats.wilson(1, 3), model="a:z")], {})


def test_saved_cells_that_find_no_partner_though_their_behaviour_ran_are_said():
    """A cell given a parameter since the run was saved (the two-agent game's simulation) is not
    gated on; the comparison says so instead of looking greener than it is."""
    saved = [score(stats.wilson(20, 30)), score(stats.wilson(20, 30), behaviour="commons", row={"cell": "harsh"}),
             score(stats.wilson(20, 30), behaviour="dictator_preferences")]  # fmt: skip
    now = [score(stats.wilson(20, 30)), score(stats.wilson(20, 30), behaviour="commons", row={"cell": "harsh", "simulation": "agents"})]
    (note,) = compare.unpaired(saved, now)
    assert note.startswith("1 cell of the saved run found no cell") and "(commons 1)" in note and "dictator" not in note  # not run: not counted
    assert compare.unpaired(saved[:1], now[:1]) == []
    assert "renamed or re-parametrized since the run was saved, so not gated on" in note


def test_saved_cells_whose_items_this_run_deselected_are_said_deselected_not_renamed():
    """-k, -m or --deselect left an item out (pytest's ``pytest_deselected``), or node ids named
    other items: its saved cells are deselected; a cell whose item ran, or is named and no longer
    exists, was renamed or re-parametrized."""
    proposer = dataclasses.replace(score(stats.wilson(20, 30)), variant={"generation": "actions", "role": "proposer"},
                                   test_id="behaviours/test_ultimatum.py::test_ultimatum[embedded:smollm2-proposer-actions]")  # fmt: skip
    responder = score(stats.wilson(20, 30))
    saved, now = [proposer, responder], [responder]
    (renamed,) = compare.unpaired(saved, now)
    assert "renamed or re-parametrized" in renamed and "deselected" not in renamed
    by_k = compare.Selection(frozenset({("embedded:smollm2", "behaviours/test_ultimatum.py::test_ultimatum",
                                         frozenset({("role", "proposer")}))}))  # fmt: skip
    (deselected,) = compare.unpaired(saved, now, selection=by_k)
    assert deselected.startswith("1 cell of the saved run deselected in this run (ultimatum 1)") and "renamed" not in deselected
    other_model = compare.Selection(frozenset({("embedded:gemma3-270m", *next(iter(by_k.deselected))[1:])}))
    assert "renamed" in compare.unpaired(saved, now, selection=other_model)[0]  # another model's item was deselected, not this one's
    by_node_id = compare.Selection(arguments=(responder.test_id,))
    assert "deselected in this run" in compare.unpaired(saved, now, selection=by_node_id)[0]
    for whole in ("behaviours/test_ultimatum.py", "behaviours/test_ultimatum.py::test_ultimatum", "behaviours", ""):
        assert "renamed" in compare.unpaired(saved, now, selection=compare.Selection(arguments=(whole, responder.test_id)))[0], whole


def test_a_model_whose_weights_changed_under_its_name_is_noticed():
    old = {"models": [{"model": "embedded:smollm2", "recorded_digest": "sha256:aaa"}]}
    new = {"models": [{"model": "embedded:smollm2", "digest": "sha256:bbb"}]}
    (note,) = compare.digest_changes(old, new)
    assert "sha256:aaa -> sha256:bbb" in note and "embedded:smollm2" in note
    assert compare.digest_changes(old, old) == []


def test_unknown_or_broken_saved_runs_say_what_to_do(tmp_path):
    with pytest.raises(compare.CompareError, match="no runs are saved.*--gaamas-save"):
        compare.load_run("baseline", tmp_path)
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(compare.CompareError, match="not a run log"):
        compare.load_run("broken", tmp_path)
    with pytest.raises(compare.CompareError, match="letters, digits"):
        compare.saved_path("../escape", tmp_path)


# -- end to end, on the recorded SmolLM2 cassettes ---------------------------------------------------

REPLAYED = ["behaviours/test_ultimatum.py", "behaviours/test_dictator_preferences.py", "behaviours/test_first_order_rationality.py"]


def replay(tmp: Path, *options: str, select: tuple[str, ...] = ()) -> tuple[int, str, dict]:
    report = tmp / f"run-{len(list(tmp.glob('run-*.json')))}.json"
    command = [
        sys.executable, "-m", "pytest", *(select or REPLAYED), "-q", "-p", "no:cacheprovider", "--gaamas-model=embedded:smollm2",
        "--gaamas-record=none", f"--gaamas-runs-dir={tmp / 'runs'}", f"--gaamas-journal-dir={tmp / 'journal'}",
        f"--gaamas-json={report}", *options,
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "CI": "true", "COLUMNS": "300"}, timeout=600)
    return done.returncode, done.stdout + done.stderr, json.loads(report.read_text())


def test_a_regression_planted_in_a_saved_run_fails_the_session(tmp_path):
    passing = ("behaviours/test_ultimatum.py::test_ultimatum[embedded-smollm2-responder-actions]",)
    code, _, _ = replay(tmp_path, "--gaamas-save=good", select=passing)
    assert code == 0
    saved = tmp_path / "runs" / "good.json"
    document = json.loads(saved.read_text())
    (cell,) = [s for s in document["scores"] if s["metric"] == "acceptance rate"]
    replayed = cell["score"]  # what SmolLM2's cassette accepts (18 of 30), well below every time
    assert replayed < 0.8
    cell["sample"], cell["score"] = [1.0] * 30, 1.0  # the old run accepted every time
    cell["passed"], cell["verdict"] = True, "met"  # and so met the criterion, which the gate is on
    saved.write_text(json.dumps(document))

    code, output, report = replay(tmp_path, "--gaamas-compare=good", "--gaamas-compare-fail=rate=0.2", select=passing)
    assert code == 1 and "DROP ultimatum" in output
    closing = output.strip().splitlines()[-1]
    assert "1 of 1 gated cell regressed: comparison with good FAILED (1 dropped, 0 lost) in" in closing, closing
    (dropped,) = [c for c in report["comparison"]["cells"] if c["dropped"]]
    assert dropped["old"] == 1.0 and dropped["new"] == pytest.approx(replayed)
    code, output, _ = replay(tmp_path, "--gaamas-compare=good", "--gaamas-compare-fail=rate=0.2", "--gaamas-compare-fail=ultimatum=0.5", select=passing)
    assert code == 0 and "DROP" not in output and "FAILED" not in output  # the behaviour's allowance wins
    assert "1 gated cell held: comparison with good passed in" in output.strip().splitlines()[-1]
    code, output, _ = replay(tmp_path, "--gaamas-compare=good", "--gaamas-compare-fail=dollars=0", select=passing)
    assert code == 0 and "DROP" not in output  # a fall in a rate is not judged by an allowance in dollars


# -- verdicts that changed --------------------------------------------------------------------------


def judged(estimate: stats.Estimate, verdict: str, **where) -> Score:
    return dataclasses.replace(score(estimate, **where), passed=None, verdict=verdict)


def test_met_then_inconclusive_is_shown_and_explained_but_is_no_regression_by_itself():
    # 23 of 30 accepted (met: [0.59, 0.88] above 0.5), then 16 of 30 ([0.36, 0.70]: inconclusive);
    # worse by 0.23, more than the allowed 0.2, but not significantly (one-sided Fisher p = 0.052).
    (change,) = compare.compare([judged(stats.wilson(23, 30), "met")], [judged(stats.wilson(16, 30), "inconclusive")], {"rate": 0.2})
    assert change.gated and 0.05 < change.p_value < 0.06
    assert not change.dropped and change.worse_by > 0.2 and change.verdict_change == "met -> inconclusive"
    assert (change.to_json()["old_verdict"], change.to_json()["new_verdict"]) == ("met", "inconclusive")
    (note,) = compare.verdict_changes([change])
    assert note.startswith("1 cell met -> inconclusive (ultimatum ") and "no regression by itself (only a significant drop is one)" in note
    assert "met -> inconclusive" in compare.render([change], width=300)


def test_a_verdict_change_is_said_once_per_kind_and_an_unchanged_one_not_at_all():
    old = [judged(stats.wilson(25, 30), "met", row={"r": str(i)}) for i in range(8)]
    new = [judged(stats.wilson(18, 30), "inconclusive" if i < 7 else "met", row={"r": str(i)}) for i in range(8)]
    notes = compare.verdict_changes(compare.compare(old, new, {}))
    assert len(notes) == 1 and notes[0].startswith("7 cells met -> inconclusive") and "and 2 more" in notes[0]
    unchanged = compare.compare([score(stats.wilson(25, 30))], [score(stats.wilson(25, 30))], {})
    assert compare.verdict_changes(unchanged) == [] and unchanged[0].verdict_change == ""
    descriptive = dataclasses.replace(score(stats.wilson(25, 30)), passed=None)
    assert compare.compare([descriptive], [score(stats.wilson(25, 30))], {})[0].verdict_change == ""  # no verdict before: nothing changed


def test_a_saved_run_whose_verdict_differs_is_said_under_the_comparison_and_passes(tmp_path):
    # SmolLM2 accepts $40 16 of 30 times, listed in both orders: [0.36, 0.70] straddles 0.5.
    inconclusive = ("behaviours/test_ultimatum.py::test_ultimatum[embedded-smollm2-responder-actions]",)
    assert replay(tmp_path, "--gaamas-save=before", select=inconclusive)[0] == 0
    saved = tmp_path / "runs" / "before.json"
    document = json.loads(saved.read_text())
    (cell,) = [s for s in document["scores"] if s["metric"] == "acceptance rate"]
    assert cell["verdict"] == "inconclusive"
    cell["verdict"], cell["passed"] = "met", True
    saved.write_text(json.dumps(document))
    code, output, report = replay(tmp_path, "--gaamas-compare=before", "--gaamas-compare-fail=rate=0", select=inconclusive)
    assert code == 0 and "DROP" not in output, output[-3000:]
    assert "gaamas: 1 cell met -> inconclusive (ultimatum " in output and "met -> inconclusive" in " ".join(report["comparison"]["notes"])


# -- a long model name ------------------------------------------------------------------------------


def test_a_long_model_name_is_compared_in_a_few_renders_of_the_table(monkeypatch):
    """A 6 KB model name once took a minute: the comparison's table was rendered again for every
    character its widest column gave up, each render as long as the name. Now the widths no render
    could fit are skipped: how many renders it takes depends on the words of the table (a wrapped
    line is at most a word shorter than its column; a cell's label keeps its parentheses whole), not
    on the name's length."""
    renders = []
    tabulate = report._tabulate_unpadded
    monkeypatch.setattr(report, "_tabulate_unpadded", lambda *args: renders.append(args) or tabulate(*args))

    def renders_for(words: int) -> int:
        renders.clear()
        name = "ollama:" + " ".join(["a-long-name"] * words)
        old, new = score(stats.wilson(29, 30), model=name), score(stats.wilson(12, 30), model=name)
        table = compare.render(compare.compare([old], [new], {"rate": 0.2}))
        assert max(len(line) for line in table.splitlines()) <= report.TABLE_WIDTH
        assert table.count("long") == words and "DROP" in table  # the whole name, wrapped
        return len(renders), table.count("\n\n") + 1

    (short, parts), (long, _) = renders_for(50), renders_for(500)  # 600 bytes, and 6 KB: one render a character would be 6,000
    label = compare.label(score(stats.wilson(29, 30)))
    assert long == short <= parts * (len(label) + 2)  # a table too wide for its words is printed in parts, each fitted


def _fitted_one_character_at_a_time(rows, headers, width: int) -> str:
    """How tables were fitted before: the widest columns one character narrower, rendered again,
    until the table fits or no column can wrap further. Slow, and what the fitting must agree with."""
    longest = lambda values, split=False: max((len(part) for v in values for line in v.splitlines()  # noqa: E731
                                               for part in (line.split(" ") if split else [line])), default=0)  # fmt: skip
    values = [longest(row[i] for row in rows) for i in range(len(headers))]
    floors = [max(longest([h], True), longest((row[i] for row in rows), True), report.MIN_COLUMN_WIDTH) for i, h in enumerate(headers)]
    cells = [None] * len(values)
    text = report._tabulate_unpadded(rows, headers, cells, [max(v, f) for v, f in zip(values, floors)])
    while report._width(text) > width and any(v > f for v, f in zip(values, floors)):
        widest = max(v for v, f in zip(values, floors) if v > f)
        for i in range(len(values)):
            if values[i] > floors[i] and values[i] == widest:
                values[i] -= 1
                cells[i] = values[i]
        text = report._tabulate_unpadded(rows, headers, cells, [max(v, f) for v, f in zip(values, floors)])
    return text


WORDS = st.text(alphabet="ab-", min_size=1, max_size=7)
CELLS = st.lists(st.tuples(WORDS, st.sampled_from([" ", " ", "  "])), min_size=1, max_size=12).map(lambda ws: "".join(w + s for w, s in ws).strip())


@given(st.integers(1, 4).flatmap(lambda n: st.tuples(st.lists(CELLS, min_size=n, max_size=n), st.lists(st.lists(CELLS, min_size=n, max_size=n), min_size=1, max_size=3))),
       st.integers(8, 90))  # fmt: skip
@settings(max_examples=150)
def test_a_table_is_fitted_as_it_was_one_character_at_a_time(table, width):
    headers, rows = table
    assert report._fitted(rows, headers, width) == _fitted_one_character_at_a_time(rows, headers, width)


def test_a_saved_run_damaged_in_its_types_is_refused_before_the_run_in_one_line(behaviour_project):
    """It was an INTERNALERROR at the end of the session, once every item had run."""
    args = ("--gaamas-model=reference:rational", "--gaamas-trials=3", "--gaamas-runs-dir=runs")
    behaviour_project.runpytest(*args, "--gaamas-save=base").assert_outcomes(passed=1)
    saved = behaviour_project.path / "runs" / "base.json"
    document = json.loads(saved.read_text())
    document["scores"][0]["score"] = "1.0"
    saved.write_text(json.dumps(document))
    result = behaviour_project.runpytest(*args, "--gaamas-compare=base")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    (line,) = [line for line in output.splitlines() if "base.json" in line]
    assert 'scores[0].score is the text "1.0", where a number or null belongs' in line and "INTERNALERROR" not in output


def rate_cell(index: int, accepted: int, *, met: bool | None, n: int = 30) -> Score:
    sample = tuple([1.0] * accepted + [0.0] * (n - accepted))
    return Score(
        behaviour="ultimatum", test_id=f"behaviours/test_ultimatum.py::test_ultimatum[m-cell{index}]", model="m",
        variant={"cell": str(index)}, metric="acceptance rate", score=accepted / n, ci=(0.0, 1.0), n=n, invalid=0,
        passed=met, criterion="" if met is None else "accepts $40", table="t", columns=(), cells={}, kind="rate",
        sample=sample, worse="down", unit="rate", verdict=None if met is None else ("met" if met else "missed"),
    )  # fmt: skip


def suite_sized(planted: int | None = None) -> tuple[list[Score], list[Score]]:
    """A saved run of 736 cells (30 criteria met, 100 missed, the rest descriptive) and a new run
    that is the same but for ``planted``, a met cell whose acceptance fell from 1.00 to 0.70."""
    verdicts = [True] * 30 + [False] * 100 + [None] * 606
    old = [rate_cell(i, 30 if met else 15, met=met) for i, met in enumerate(verdicts)]
    new = [rate_cell(i, 21 if i == planted else old[i].sample.count(1.0), met=met) for i, met in enumerate(verdicts)]
    return old, new


def test_the_gate_catches_one_real_regression_among_the_cells_of_a_whole_suite():
    old, new = suite_sized(planted=3)
    changes = compare.compare(old, new, {"rate": 0.1})
    (dropped,) = [c for c in changes if c.dropped]
    assert dropped.gated and dropped.old.score == 1.0 and dropped.new.score == pytest.approx(0.7)
    assert dropped.p_value < 0.002 and dropped.p_adjusted < 0.05  # Holm over the 30 met, not the 736
    assert stats.holm([dropped.p_value] + [1.0] * 735)[0] > 0.05  # over every cell, it would be missed
    assert sum(c.gated for c in changes) == 30


def test_an_unchanged_comparison_prints_nothing_and_a_change_prints_only_itself():
    old, new = suite_sized()
    assert compare.render(compare.compare(old, new, {"rate": 0.1})) == ""
    old, new = suite_sized(planted=3)
    table = compare.render(compare.compare(old, new, {"rate": 0.1}))
    assert "DROP" in table and table.count("test_ultimatum (cell") == 1
    assert "test_ultimatum (cell 3): acceptance rate [gated]" in " ".join(table.split())


def test_a_cell_not_met_before_is_shown_when_it_changes_and_never_gated():
    old, new = suite_sized()
    new[40] = rate_cell(40, 0, met=False)  # a missed criterion, and it fell as far as it can
    changes = compare.compare(old, new, {"rate": 0.1})
    moved = compare.shown(changes)
    assert [c.new.test_id for c in moved] == [new[40].test_id]
    assert not moved[0].gated and not moved[0].dropped


# -- answers lost: a cell with nothing left to test is no pass ----------------------------------------


def answered(estimate: stats.Estimate, *, invalid: int, met: bool = True) -> Score:
    """A cell of ``estimate`` over its valid answers, with ``invalid`` more that were unusable."""
    return dataclasses.replace(
        score(estimate), n=estimate.n + invalid, invalid=invalid, passed=None, verdict="met" if met else "missed",
        score=None if estimate.n == 0 else estimate.value, ci=(None, None) if estimate.n == 0 else (estimate.low, estimate.high),
    )  # fmt: skip


def test_a_met_cell_whose_answers_are_all_invalid_now_is_lost_and_fails_the_gate():
    old, new = answered(stats.wilson(29, 30), invalid=0), answered(stats.wilson(0, 0), invalid=30)
    (change,) = compare.compare([old], [new], {"rate": 0.2})
    assert change.lost and compare.failed([change])
    assert compare.shown([change]) == [change] and "LOST" in compare.render([change])
    (line,) = compare.regressions([change])
    assert line.startswith("LOST ultimatum test_ultimatum (generation actions, role responder): acceptance rate: 0 of 30 answers usable, 30 invalid")
    assert line.endswith(": a cell that no longer answers is a regression whatever its score")
    assert "0 of 30 answers usable, 30 invalid, where the saved run had 30 of 30 answers usable, 0 invalid" in line
    assert "nan" not in line.lower() and change.to_json()["lost"] is True


def test_answers_lost_in_part_are_lost_when_significantly_fewer_whatever_the_score():
    old = answered(stats.wilson(30, 30), invalid=0)
    kept_its_score = answered(stats.wilson(18, 18), invalid=12)  # every usable answer as good as before
    (change,) = compare.compare([old], [kept_its_score], {"rate": 0.2})
    assert not change.dropped and change.lost and compare.failed([change])
    (change,) = compare.compare([old], [answered(stats.wilson(28, 28), invalid=2)], {"rate": 0.2})
    assert not change.lost and not compare.failed([change])  # 2 of 30 invalid: no evidence of a loss


def test_a_lost_cell_fails_only_where_the_gate_is_on():
    old, new = answered(stats.wilson(29, 30), invalid=0), answered(stats.wilson(0, 0), invalid=30)
    assert not compare.failed(compare.compare([old], [new], {}))  # no allowance: the comparison only reports
    assert not compare.failed(compare.compare([answered(stats.wilson(29, 30), invalid=0, met=False)], [new], {"rate": 0.2}))
    assert compare.compare([answered(stats.wilson(0, 0), invalid=30)], [new], {"rate": 0.2})[0].lost is False  # nothing to lose


def test_no_nan_passes_silently():
    old = answered(stats.wilson(29, 30), invalid=0)
    with pytest.raises(compare.CompareError, match="allowed drop"):
        compare.compare([old], [old], {"rate": float("nan")})  # a NaN allowance would allow every drop
    unkept = dataclasses.replace(answered(stats.wilson(12, 30), invalid=0), sample=())  # no observations to test
    (change,) = compare.compare([old], [unkept], {"rate": 0.2})
    assert change.untested and compare.shown([change]) == [change]
    (line,) = compare.regressions([change])
    assert line.startswith("untested ultimatum test_ultimatum (generation actions, role responder): acceptance rate: gated, but its change "
                           "cannot be tested (0.967 -> 0.4): 30 and 0 observations kept; save the baseline again")  # fmt: skip


def test_a_model_that_stops_answering_fails_the_session(tmp_path):
    nothing_usable = ("behaviours/test_first_order_rationality.py::test_first_order_rationality[embedded-smollm2-explicit-strategy]",)
    code, _, _ = replay(tmp_path, "--gaamas-save=good", select=nothing_usable)
    saved = tmp_path / "runs" / "good.json"
    document = json.loads(saved.read_text())
    (cell,) = [s for s in document["scores"] if s["metric"] == "rate of the dominant action"]
    assert cell["score"] is None and cell["invalid"] == cell["n"] == 30  # SmolLM2's strategies are all invalid
    cell |= {"sample": [1.0] * 30, "score": 1.0, "ci": [0.89, 1.0], "invalid": 0, "passed": True, "verdict": "met"}
    saved.write_text(json.dumps(document))

    code, output, report = replay(tmp_path, "--gaamas-compare=good", "--gaamas-compare-fail=rate=0.2", select=nothing_usable)
    assert code == 1, output[-3000:]
    assert "gaamas: LOST first_order_rationality test_first_order_rationality (" in output  # the cell first: the numbers may be cut at the screen's edge
    assert any(note.startswith("LOST first_order_rationality test_first_order_rationality (") and "0 of 30 answers usable, 30 invalid" in note
               for note in report["comparison"]["notes"])  # fmt: skip
    assert "regressed: comparison with good FAILED (0 dropped, 1 lost) in" in output.strip().splitlines()[-1]  # the closing line says the gate failed
    (lost,) = [c for c in report["comparison"]["cells"] if c["lost"]]
    assert lost["old_usable"] == 30 and lost["new_usable"] == 0
    log = runlog.read(tmp_path / "run-1.json")
    assert log.comparison["cells"][0]["lost"]  # the run log with its losses reads back
    summary = report_markdown.render(log)  # the summary says it failed first, and why
    assert summary.split("\n")[2] == f"**Comparison with good FAILED**: {inert.markdown('0 cells dropped, 1 lost its answers (of the 1 gated)')}."


def test_a_saved_run_holding_a_cell_twice_is_refused_not_read_as_its_last_copy():
    """Two copies of one cell in a baseline (an edited or merged file) would let the last one win unseen:
    a regression hidden behind a planted copy."""
    saved = [score(stats.wilson(29, 30)), score(stats.wilson(12, 30))]
    with pytest.raises(compare.CompareError, match="twice.*--gaamas-save"):
        compare.compare(saved, [score(stats.wilson(12, 30))], {"rate": 0.2})
