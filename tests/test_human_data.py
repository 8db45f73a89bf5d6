"""The shipped CKMS (2014) data: read the right way round, and our CCEI agrees with the authors'."""

import json

import numpy as np
import pytest

from pytest_gaamas.data import ckms2014_subjects
from pytest_gaamas.metrics import ccei

ROUNDING = 0.05  # the published coordinates and intercepts are rounded to 0.1 token


@pytest.fixture(scope="module")
def subjects():
    return ckms2014_subjects()


@pytest.fixture(scope="module")
def recomputed(subjects):
    return np.array([ccei(s.prices, s.choices) for s in subjects])


def test_all_subjects_with_25_budgets(subjects):
    assert len(subjects) == 1182
    assert all(s.intercepts.shape == (25, 2) and s.choices.shape == (25, 2) for s in subjects)


def test_choices_lie_on_their_budget_lines(subjects):
    residual = np.concatenate([(s.choices / s.intercepts).sum(axis=1) - 1 for s in subjects])
    assert np.abs(residual).max() < 0.01


def rounding_bound(subject) -> float:
    """Largest relative change of any ratio p_t.x_s / p_t.x_t that moving each published number by
    up to half a rounding step can cause (first order)."""
    a, b = subject.intercepts[:, 0], subject.intercepts[:, 1]
    x = subject.choices
    num = x[None, :, 0] / a[:, None] + x[None, :, 1] / b[:, None]
    dnum = ROUNDING * (1 / a[:, None] + 1 / b[:, None] + x[None, :, 0] / a[:, None] ** 2 + x[None, :, 1] / b[:, None] ** 2)
    own, down = np.diag(num), np.diag(dnum)
    return float((dnum / np.maximum(num, 1e-12) + (down / own)[:, None]).max())


def test_every_subject_agrees_with_the_authors_within_rounding(subjects, recomputed):
    """The CCEI moves by at most about twice the largest relative error of the ratios (GARP_e is
    sandwiched between GARP_e(1-d) and GARP_e(1+d)). Every one of the 1,182 differences from the
    authors' column lies inside that bound: the differences come from the rounding of the published
    data, not from the algorithm."""
    for subject, ours in zip(subjects, recomputed):
        allowed = 2 * rounding_bound(subject) * ours + 5e-5  # the column itself has 4 decimals
        assert abs(ours - subject.authors_ccei) <= allowed, subject.subject


def test_the_distribution_matches_the_published_one(subjects, recomputed):
    authors = np.array([s.authors_ccei for s in subjects])
    assert recomputed.mean() == pytest.approx(0.881, abs=5e-4)
    assert recomputed.mean() == pytest.approx(authors.mean(), abs=1e-3)
    assert np.median(np.abs(recomputed - authors)) < 1e-3
    assert np.corrcoef(recomputed, authors)[0, 1] > 0.9999


def test_peoples_means_are_precomputed_and_current():
    """The shipped figures are what the shipped data give today; a changed data file would be
    computed at run time, never answered from a stale entry."""
    from pytest_gaamas import people

    assert json.loads(people.CACHE.read_text()) == people.computed()
    for name in people.SOURCES:
        assert people.mean(name).n == people._cached()[name]["n"]


# FHSS (1994) and MobLab's ultimatum figures, each recomputed here from the data file itself, with the
# standard library only, so that a wrong loader and a wrong row cannot agree by sharing code.

import ast  # noqa: E402
import csv  # noqa: E402
import importlib.util  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402

from conftest import ROOT  # noqa: E402

from pytest_gaamas.data import fhss1994_cells  # noqa: E402

DATA = ROOT / "pytest_gaamas" / "data"
STATUSES = {"verified from data", "verified", "computed", "secondary", "unverified"}  # the human-data README's
THIRD_DECIMAL = 5e-4 + 1e-12  # the summary rounds its figures to 3 decimals, half up


def behaviour(name: str):
    """A behaviour file as a module under a name of its own (its test names would clash with these)."""
    spec = importlib.util.spec_from_file_location(f"{name}_behaviour", ROOT / "behaviours" / f"test_{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fhss_summary():
    return json.loads((DATA / "fhss_1994_summary.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ultimatum_first_rounds():
    """MobLab's first-round ultimatum strategies of $100 in which the player set both an offer and a
    threshold (-1 marks a choice not made)."""
    with (DATA / "moblab_ultimatum_strategy.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["Total"] for r in rows} == {"100"} and {r["Role"] for r in rows} == {"player"}
    return [r for r in rows if r["Round"] == "1" and float(r["propose"]) >= 0 and float(r["accept"]) >= 0]


def test_fhss_cells_hold_every_person_of_the_summary(fhss_summary):
    cells = {(c.game, c.pie, c.paid): c for c in fhss1994_cells()}
    assert len(cells) == 6
    for key, figures in fhss_summary.items():
        match = re.fullmatch(r"(DG|UG)-(P|NP)-\$(\d+)", key)
        if match is None:
            assert key == "moblab_ultimatum_round1"  # not FHSS: see the next tests
            continue
        cell = cells.pop(("dictator" if match[1] == "DG" else "ultimatum", float(match[3]), match[2] == "P"))
        assert len(cell.offers) == figures["n"] == sum(figures["hist_offer_counts"].values())
        assert statistics.fmean(cell.offers) == pytest.approx(figures["mean_offer"], abs=THIRD_DECIMAL)
        assert 100 - statistics.fmean(cell.percent_kept) == pytest.approx(100 * figures["mean_share"], abs=0.05)
        if cell.game == "ultimatum":  # every offer was answered, and the rejections add up to the overall rate
            made = sum(int(f.split("/")[1]) for f in figures["rejections_by_offer_share"].values())
            rejected = sum(int(f.split("/")[0]) for f in figures["rejections_by_offer_share"].values())
            assert made == figures["n"]
            assert rejected / made == pytest.approx(figures["overall_rejection_rate"], abs=THIRD_DECIMAL)
    assert not cells


def test_fhss_acceptance_of_40_percent_offers_is_read_from_the_offers_of_40_percent(fhss_summary):
    for cell in fhss1994_cells():
        if cell.game == "dictator":
            assert cell.accepted(0.4) == (0, 0)  # a dictator's recipient has no choice
            continue
        key = f"UG-{'P' if cell.paid else 'NP'}-${cell.pie:g}"
        rejected, made = map(int, fhss_summary[key]["rejections_by_offer_share"]["0.40"].split("/"))
        assert cell.accepted(0.4) == cell.accepted(40 / 100) == (made - rejected, made)
    assert {(c.pie, c.paid): c.accepted(0.4) for c in fhss1994_cells() if c.game == "ultimatum"} == {
        (5.0, True): (9, 10), (10.0, True): (3, 4), (5.0, False): (11, 14),
    }
    assert [c.accepted(0.33) for c in fhss1994_cells()] == [(0, 0)] * 6  # no such offer: nothing, not a guess


def test_the_ultimatum_rows_show_acceptance_at_40_dollars_from_the_data(ultimatum_first_rounds):
    """MobLab's responders accept $40 when their smallest accepted offer is at most 40; the share is
    what the row shows, and it is not Oosterbeek et al.'s overall rate (0.84 accepted over all offers)."""
    accepting = sum(float(r["accept"]) <= 40 for r in ultimatum_first_rounds)
    assert (accepting, len(ultimatum_first_rounds)) == (3580, 5993)
    ultimatum = behaviour("ultimatum")
    assert ultimatum.people_accepting() == pytest.approx(accepting / len(ultimatum_first_rounds))
    row = ultimatum.humans_row()
    assert row["status"] == "verified from data" and row["label"] == "humans, MobLab (n = 5993)"
    assert row["cells"][ultimatum.COLUMNS[3]].startswith(f"{accepting / len(ultimatum_first_rounds):.2f} [")
    meta = ultimatum.META_ANALYSIS_ROW
    assert meta["status"] == "verified" and "Oosterbeek" in meta["source"]
    assert "0.84" not in json.dumps(meta) and meta["cells"][ultimatum.COLUMNS[3]].startswith("not at $40")


def test_the_responders_thresholds_are_moblab_s_accept_column_of_the_same_players(ultimatum_first_rounds):
    """Fidelity in person compares a model's thresholds with `accept`, the smallest offer each player
    would accept (the strategy method), of the first-round $100 players whose offers the proposer's
    test uses; their mean is what reference:average names."""
    from pytest_gaamas import fidelity, people

    thresholds = fidelity.ultimatum_thresholds()
    assert thresholds.values == tuple(float(r["accept"]) for r in ultimatum_first_rounds)
    assert fidelity.ultimatum_kept().values == tuple(100 - float(r["propose"]) for r in ultimatum_first_rounds)
    assert statistics.fmean(thresholds.values) == pytest.approx(34.30, abs=0.005)
    assert people.mean("MobLab ultimatum responders: smallest offer accepted").value == pytest.approx(statistics.fmean(thresholds.values))
    assert thresholds.discrete and thresholds.unit == "$" and "strategy method" in thresholds.source


def test_the_fhss_rows_say_the_pie_the_pay_and_show_shares_of_the_pie():
    ultimatum, dictator = behaviour("ultimatum"), behaviour("dictator_preferences")
    rows = {r["label"]: r for r in (*ultimatum.fhss_rows(), *dictator.fhss_rows())}
    assert len(rows) == 6
    for label, row in rows.items():
        assert re.search(r"\$(5|10) pie, (paid|no pay) \(n = \d+\)", label) and "% of the pie" in label, label
        assert row["status"] == "verified from data" and "Forsythe, Horowitz, Savin & Sefton (1994)" in row["source"]
    kept = {label: row["cells"]["mean [95% CI]"].split()[0] for label, row in rows.items()}
    assert kept["humans, FHSS 1994, $5 pie, paid (n = 45): % of the pie kept"] == "77.8"  # gifts 22.2% of the pie
    assert kept["humans, FHSS 1994, $5 pie, no pay (n = 46): % of the pie kept"] == "61.7"
    assert kept["humans, FHSS 1994, $10 pie, paid (n = 24): % of the pie"] == "53.3"
    accepts = rows["humans, FHSS 1994, $5 pie, paid (n = 43): % of the pie"]["cells"][ultimatum.COLUMNS[3]]
    assert accepts.startswith("0.90 [") and accepts.endswith("9 of 10 offers of 40%")


def test_the_dictator_figure_draws_fhss_means_of_the_5_dollar_pie_beside_moblabs():
    dictator = behaviour("dictator_preferences")
    against_temperature = dictator.figures("assistant", 0.0)[0]
    lines = against_temperature.references
    assert lines["people, FHSS 1994 $5 pie, paid (78% kept)"] == pytest.approx(700 / 9)
    assert lines["people, FHSS 1994 $5 pie, no pay (62% kept)"] == pytest.approx(100 * (1 - 1.913 / 5), abs=0.01)
    assert "verified from data" in against_temperature.note and "$5 pie" in against_temperature.note


def test_moblab_first_rounds_of_longer_sessions_barely_move_the_figures(ultimatum_first_rounds):
    """SOURCES.md keeps the first rounds of sessions that went on (Mei et al.'s filter) because
    leaving them out changes little: the figures it quotes, recomputed."""

    def single_round(rows, index):
        following = rows[index + 1] if index + 1 < len(rows) else None
        return not (following and following["UserID"] == rows[index]["UserID"] and following["Round"] == "2")

    with (DATA / "moblab_dictator.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    first = [i for i, r in enumerate(rows) if r["Total"] == "100" and r["Round"] == "1" and r["move"] != ""]
    alone = [i for i in first if single_round(rows, i)]
    assert (len(first), len(first) - len(alone)) == (13232, 3210)
    assert statistics.fmean(100 - float(rows[i]["move"]) for i in first) == pytest.approx(74.14, abs=0.005)
    assert statistics.fmean(100 - float(rows[i]["move"]) for i in alone) == pytest.approx(74.72, abs=0.005)
    assert len({rows[i]["UserID"] for i in first}) == 10335

    with (DATA / "moblab_ultimatum_strategy.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    kept = [i for i, r in enumerate(rows) if r["Round"] == "1" and float(r["propose"]) >= 0 and float(r["accept"]) >= 0]
    alone = [i for i in kept if single_round(rows, i)]
    assert (len(kept), len(kept) - len(alone)) == (len(ultimatum_first_rounds), 37)
    assert sum(float(rows[i]["accept"]) <= 40 for i in alone) / len(alone) == pytest.approx(0.600, abs=5e-4)
    assert len({rows[i]["UserID"] for i in kept}) == 5291


def test_the_summarys_moblab_block_counts_players_who_made_no_choice(fhss_summary):
    """Why the plugin reads MobLab's ultimatum from the CSV, not from the summary's block: the
    block's figures are those of the first rounds with the -1 markers counted as choices."""
    block = fhss_summary["moblab_ultimatum_round1"]
    with (DATA / "moblab_ultimatum_strategy.csv").open(newline="") as handle:
        first_rounds = [r for r in csv.DictReader(handle) if r["Round"] == "1"]
    assert block["n"] == len(first_rounds) == 6296
    assert block["mean_min_acceptable"] == pytest.approx(statistics.fmean(float(r["accept"]) for r in first_rounds), abs=0.05)
    rejecting = sum(float(r["accept"]) > 40 for r in first_rounds) / len(first_rounds)
    assert block["implied_rejection_rate_at_offer"]["40"] == pytest.approx(rejecting, abs=THIRD_DECIMAL)
    assert sum(float(r["accept"]) < 0 for r in first_rounds) == 303  # counted above as accepting every offer


def test_every_peoples_row_and_note_names_a_status_the_human_data_readme_uses():
    """Each reference row's status, and each figure note that speaks of people, in every behaviour."""
    checked = {"status": 0, "note": 0}
    for path in sorted((ROOT / "behaviours").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                     for target in node.targets if isinstance(target, ast.Name)}  # fmt: skip
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "status" or isinstance(node, ast.Dict) and "status" in _texts(node.keys, {}):
                value = node.value if isinstance(node, ast.keyword) else node.values[_texts(node.keys, {}).index("status")]
                assert isinstance(value, ast.Constant) and value.value in STATUSES, f"{path.name}:{value.lineno}: status {ast.unparse(value)}"
                checked["status"] += 1
            if isinstance(node, ast.keyword) and node.arg == "note":
                note = " ".join(_texts([node.value], constants))
                if "people" in note:
                    assert any(status in note for status in STATUSES) or "not in the shipped data" in note, f"{path.name}: {note}"
                    checked["note"] += 1
    assert checked["status"] >= 15 and checked["note"] >= 10, checked  # the scan saw the rows and notes it is about


def _texts(nodes, constants) -> list[str]:
    """The strings an expression is built of, following the module's own constants by name."""
    texts = []
    for node in nodes:
        for part in ast.walk(node) if node is not None else ():
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                texts.append(part.value)
            elif isinstance(part, ast.Name) and part.id in constants:
                texts += _texts([constants[part.id]], {})
    return texts
