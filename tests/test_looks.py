"""A cell that cannot decide plays more trials: the sequential design (``Experiment.run_looks``), its
level spent across the looks (``verdicts.look_shares``), the looks before the last taken out of the
record, and a replay that stops at the last look its cassettes hold."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats
from conftest import ROOT
from test_readme_example import example_behaviour

from pytest_gaamas import runlog, stats, verdicts
from pytest_gaamas.experiment import looks
from pytest_gaamas.report import ReferenceRow


def test_the_design_doubles_the_paper_s_count_up_to_its_cap():
    assert looks(30) == (30, 60, 120) and looks(10) == (10, 20, 40)
    assert looks(30, 30) == (30,) and looks(30, 59) == (30,) and looks(30, 60) == (30, 60) and looks(30, 1000) == (30, 60, 120, 240, 480, 960)


@pytest.mark.parametrize("count", [1, 2, 3, 6])
def test_the_looks_spend_the_level_once(count):
    shares = verdicts.look_shares(count)
    assert len(shares) == count and sum(shares) == pytest.approx(1.0) and shares[0] == (1.0 if count == 1 else 0.5)
    with pytest.raises(ValueError, match="at least one look"):
        verdicts.look_shares(0)


def test_a_coin_at_the_threshold_meets_no_more_often_than_the_level_whatever_look_it_stops_at():
    """The stopping rule at its worst: a coin at the criterion's null (0.5 against "at least 0.5") looks
    again at 60 and 120 tosses whenever 30 cannot decide, and stops at the first look that meets. Over
    4,000 seeded coins, judged as a table of one cell, it meets at most at the level."""
    rng = np.random.default_rng(7)
    met = 0
    for _ in range(4000):
        tosses = rng.integers(0, 2, 120)
        for look, (count, share) in enumerate(zip(looks(30), verdicts.look_shares(3))):
            with verdicts.table_family(1) as family:
                family.share = share
                verdict = verdicts.at_least(stats.wilson(int(tosses[:count].sum()), count), 0.5)
            if verdict is not verdicts.INCONCLUSIVE or look == 2:
                met += verdict is verdicts.MET
                break
    assert scipy.stats.binomtest(met, 4000, 0.05, alternative="greater").pvalue > 0.01, met / 4000


def test_a_look_taken_out_of_the_record_goes_back_whole():
    collector = runlog.Collector()
    collector.reference(ReferenceRow(table="T", label="before", cells={}, source="", status=""))
    mark = collector.mark("t::a")
    collector.reference(ReferenceRow(table="T", label="look 1", cells={}, source="", status=""))
    collector.play(runlog.ItemLog("t::a", "b", "m", {}), runlog.Play.from_json(play_json("p1")))
    taken = collector.take("t::a", mark)
    assert [r.label for r in collector.references] == ["before"] and not collector.plays and "t::a" not in collector.items
    collector.restore("t::a", taken)
    assert [r.label for r in collector.references] == ["before", "look 1"] and list(collector.plays) == ["p1"]
    assert collector.items["t::a"].plays == ["p1"]


def play_json(key: str) -> dict:
    return {"id": key, "behaviour": "b", "model": "m", "game": "g", "game_fingerprint": "f", "generation": "actions", "seed": 0,
            "temperature": 0.0, "trials": [], "strategy": None}  # fmt: skip


READING_CELL = example_behaviour().replace('threshold = gaamas.threshold("min_rate", 0.8)', 'threshold = gaamas.threshold("min_rate", 0.7)')


def scores_of(path) -> list[dict]:
    return [s for s in json.loads(path.read_text())["scores"] if s.get("verdict")]


def test_a_reader_that_errs_is_decided_at_a_later_look_and_only_its_last_look_is_recorded(pytester):
    """A reader right 85% of the time against "at least 0.7": 30 trials cannot decide it; the cell
    looks again, and the run log keeps the one score of the look that decided, with its trials."""
    pytester.makepyfile(test_more_or_less=READING_CELL)
    result = pytester.runpytest("--gaamas-model=reference:reader-0.3", "-p", "no:cacheprovider", "--gaamas-json=run.json")
    (score,) = scores_of(pytester.path / "run.json")
    assert score["verdict"] == "met" and score["n"] in (60, 120), score
    fixed = pytester.runpytest("--gaamas-model=reference:reader-0.3", "-p", "no:cacheprovider", "--gaamas-json=fixed.json", "--gaamas-trials=30")
    (once,) = scores_of(pytester.path / "fixed.json")
    assert once["verdict"] == "inconclusive" and once["n"] == 30, once
    assert "30 passed" not in fixed.stdout.str() and result.ret == fixed.ret == 0


def test_a_cap_of_the_paper_s_count_is_one_look(pytester):
    pytester.makepyfile(test_more_or_less=READING_CELL)
    pytester.runpytest("--gaamas-model=reference:reader-0.3", "-p", "no:cacheprovider", "--gaamas-json=run.json", "--gaamas-max-trials=30")
    (score,) = scores_of(pytester.path / "run.json")
    assert score["verdict"] == "inconclusive" and score["n"] == 30


def test_a_replay_stops_at_the_last_look_its_cassettes_hold_and_says_what_more_would_need(tmp_path):
    """SmolLM2's second-order cells with conditional reasoning are recorded at 30 trials: an inconclusive
    one would look again at 60, which no cassette holds, so its verdict stays the first look's and the
    finding says so, where replay-only mode would otherwise fail on the missing answers."""
    item = "behaviours/test_second_order_rationality.py::test_second_order_rationality[embedded-smollm2-a-given-actions + CR]"
    done = subprocess.run([sys.executable, "-m", "pytest", item, "-p", "no:cacheprovider", "-v", f"--gaamas-json={tmp_path / 'run.json'}",
                           f"--gaamas-journal-dir={tmp_path / 'journal'}"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "CI": "true", "COLUMNS": "200"}, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    (score,) = scores_of(tmp_path / "run.json")
    assert score["verdict"] == "inconclusive" and score["n"] == 30
    said = " ".join(done.stdout.split())
    assert "60 trials would decide more, and a replay holds 30: record them with --gaamas-record=new_episodes" in said
