"""The "met" verdicts agents that never read the game earn, measured: the shipped figures describe the
shipped behaviours as they are, cover every table that judges and travel in the run record; no
blind agent meets what it cannot have; each table holds its level against a coin played at 20
seeds of its own; and the docs say the suite-wide figure as it was measured."""

import pytest
from conftest import ROOT, SHIPPED
from test_blind_agents import DRAWS, EXCEPTIONS, OPEN_DEFECTS, at_blind_nulls, beyond_chance, by_chance, explained  # noqa: F401 (a fixture)

from pytest_gaamas import null_runs

MEASURE_AGAIN = "measure again: python -m pytest_gaamas null-rates -o pytest_gaamas/data/null_met.json"


@pytest.fixture(scope="module")
def rates() -> null_runs.NullRates:
    shipped = null_runs.shipped()
    assert shipped is not None, f"pytest_gaamas/data/null_met.json is missing; {MEASURE_AGAIN}"
    return shipped


def unexplained(test_ids: list[str]) -> list[str]:
    return [t for t in test_ids if explained(t, EXCEPTIONS) is None and explained(t, OPEN_DEFECTS) is None]


def test_the_shipped_figures_are_those_of_the_shipped_behaviours_as_they_are(rates):
    digests = null_runs.behaviour_digests(ROOT / "behaviours" / f"test_{name}.py" for name in SHIPPED)
    stale = sorted(name for name, digest in digests.items() if rates.stale(name, digest))
    assert not stale, f"behaviours changed since their null runs: {stale}; {MEASURE_AGAIN}"
    assert rates.met_in_runs["reference:random"] and len(rates.met_in_runs["reference:random"]) == 20


def test_a_behaviour_s_figures_go_stale_when_a_game_it_plays_changes_not_only_its_file(tmp_path, monkeypatch):
    """The digest holds the behaviour file and the source of each game module it imports: a game told
    otherwise (a prompt reworded) is measured again, as a file changed is; a module it does not
    import changes nothing."""
    game = tmp_path / "dictator.py"
    game.write_text("PROMPT = 'Share $100.'\n")
    other = tmp_path / "ring.py"
    other.write_text("PROMPT = 'Choose.'\n")
    behaviour = tmp_path / "test_gifts.py"
    behaviour.write_text("from pytest_gaamas.games.dictator import PROMPT\nfrom pytest_gaamas import stats\n")
    found = {"pytest_gaamas.games.dictator": game, "pytest_gaamas.games.ring": other}
    monkeypatch.setattr(null_runs.importlib.util, "find_spec",
                        lambda name: type("Spec", (), {"origin": str(found[name])})() if name in found else None)  # fmt: skip
    assert null_runs.games_imported(behaviour) == ["pytest_gaamas.games.dictator"]
    before = null_runs.file_digest(behaviour)
    other.write_text("PROMPT = 'Choose one.'\n")
    assert null_runs.file_digest(behaviour) == before
    game.write_text("PROMPT = 'Share $100 as you like.'\n")
    assert null_runs.file_digest(behaviour) != before
    both = tmp_path / "test_both.py"
    both.write_text("import pytest_gaamas.games.ring\nfrom pytest_gaamas.games import dictator, ring\n")
    assert null_runs.games_imported(both) == ["pytest_gaamas.games.dictator", "pytest_gaamas.games.ring"]
    broken = tmp_path / "test_broken.py"
    broken.write_text("def (:\n")
    assert null_runs.games_imported(broken) == [] and len(null_runs.file_digest(broken)) == 16


def coin_runs_outside(rates) -> list[list[str]]:
    """For each of the coin's runs, what it met that no exception or open defect explains."""
    return [unexplained(met) for met in rates.met_in_runs["reference:random"]]


def test_each_table_holds_its_level_against_the_coin(rates):
    """A table's cells are one family at 5%: if a table let the coin through 5% of the time, 4 or more
    of 20 runs would happen 1.6% of the time; more than 3 says the table's own correction fails."""
    per_function: dict[str, int] = {}
    for met in coin_runs_outside(rates):
        for function in {test_id.split("::")[1].split("[")[0] for test_id in met}:
            per_function[function] = per_function.get(function, 0) + 1
    assert all(count <= 3 for count in per_function.values()), per_function


def test_the_statistics_page_says_in_how_many_runs_the_coin_met_what_it_cannot_have(rates):
    """The suite-wide figure is said as measured: each table holds its level, and the families whose
    null a blind agent sits at share the 5% (verdicts.BLIND_NULLS)."""
    runs = coin_runs_outside(rates)
    said = f"in {sum(1 for met in runs if met)} of {len(runs)} whole-suite runs"
    assert said in " ".join((ROOT / "docs" / "statistics.md").read_text().split()), f"docs/statistics.md should say {said!r}"


def test_no_blind_agent_of_the_null_runs_meets_what_it_cannot_have(rates, at_blind_nulls):
    """The null runs' blind agents, at their own seeds, beside the property test's grid at one seed:
    nothing outside the exceptions, but what a draw meets by chance at a blind null while it looks
    like chance (a coin draws anew each run, so each of its runs is a draw; a hash of the wording
    draws the same at every seed: one draw)."""
    found, chance, draws = {}, [], 0
    for agent, runs in rates.met_in_runs.items():
        if agent == "reference:random":
            continue
        name = agent.removeprefix("reference:")
        seeded = [set(unexplained(met)) for met in runs]
        drawn = [{t for t in met if by_chance(agent, t, at_blind_nulls)} for met in seeded]
        found[agent] = sorted(set().union(*seeded) - set().union(*drawn))
        anew = name.startswith("blind-coin-")
        chance += [(agent, t) for met in (drawn if anew else [set().union(*drawn)]) for t in met]
        draws += (len(runs) if anew else 1) if DRAWS.match(name) else 0
    assert not any(found.values()), {agent: ids for agent, ids in found.items() if ids}
    assert not beyond_chance(chance, draws, at_blind_nulls)


def test_every_table_that_judges_has_its_figures_and_the_replay_says_them_under_it(rates, smollm2_replay):
    judged = {s["table"] for s in smollm2_replay.document["scores"] if s.get("verdict")}
    assert judged <= set(rates.tables), f"tables without null runs: {sorted(judged - set(rates.tables))}; {MEASURE_AGAIN}"
    kept = smollm2_replay.document["null_rates"]
    assert judged <= set(kept) and not any(entry["stale"] for entry in kept.values())
    # The whole suite's tables fill many screens, so the terminal counts their verdicts a line each; the
    # report holds every table whole, each with its figures under it.
    report = " ".join((smollm2_replay.folder / "report.html").read_text(encoding="utf-8").split())
    assert report.count("met without reading the game, in seeded null runs: reference:random") >= len(
        [t for t in judged if "reference:random" in rates.tables[t]]
    ) > 0
    assert "tables judge a criterion" in smollm2_replay.output


def test_a_tally_counts_each_agent_s_runs_and_met_cells_per_table():
    def score(model, table, verdict, test_id="t"):
        return {"model": model, "table": table, "verdict": verdict, "behaviour": "b", "test_id": test_id}

    runs = [
        {"scores": [score("coin", "T", "met", "a"), score("coin", "T", "missed"), score("blind", "T", "missed")]},
        {"scores": [score("coin", "T", "missed"), score("coin", "T", "inconclusive")]},
    ]
    tables, owner = null_runs.tally(runs)
    assert tables["T"]["coin"] == null_runs.TableNull(cells=2, met_per_run=0.5, runs_with_met=1, runs=2)
    assert tables["T"]["blind"] == null_runs.TableNull(cells=1, met_per_run=0.0, runs_with_met=0, runs=1)
    assert owner == {"T": "b"}
    assert null_runs.met_in_runs(runs) == {"coin": [["a"], []], "blind": [[]]}
    entry = {"agents": {a: vars(f) for a, f in tables["T"].items()}, "stale": False}
    assert null_runs.note(entry) == ("met without reading the game, in seeded null runs: of 2 blind agents, at most 0.5 a run "
                                     "(in 1 of 2 runs), coin")  # fmt: skip


def test_an_update_replaces_only_the_measured_behaviours_tables_and_verdicts_per_run():
    """One behaviour measured again alone, at the plan of the whole: its tables, its digest and, run by
    run, what each agent met in it are replaced; every other behaviour's stay as they were measured."""
    def rates(tables, behaviours, runs, drawn_by=None):
        figures = {title: {"coin": null_runs.TableNull(1, 0.0, 0, 2)} for title in tables}
        return null_runs.NullRates(("coin",), (1, 2), figures, behaviours, dict(tables), {"coin": runs}, drawn_by or {})

    a, b = "behaviours/test_a.py::test_a[coin]", "behaviours/test_b.py::test_b[coin]"
    before = rates({"A": "a", "B": "b", "AB": "a"}, {"a": "1", "b": "1"}, [[a, b], []], {"AB": ("a", "b")})
    again = rates({"B": "b", "AB": "b"}, {"b": "2"}, [[], [b]], {"AB": ("b",)})
    with pytest.raises(ValueError, match="measure them together"):  # table AB is drawn by a too
        before.updated(again)
    assert before.sharing({"b"}) == {"a", "b"}
    apart = rates({"A": "a", "B": "b"}, {"a": "1", "b": "1"}, [[a, b], []])
    merged = apart.updated(rates({"B2": "b"}, {"b": "2"}, [[], [b]]))
    assert set(merged.tables) == {"A", "B2"} and merged.behaviours == {"a": "1", "b": "2"}
    assert merged.met_in_runs["coin"] == [[a], [b]] and merged.drawn_by("A") == ("a",)
    assert null_runs.NullRates.from_json(merged.to_json()) == merged
    other_seeds = null_runs.NullRates(("coin",), (1, 2, 3), {}, {"b": "2"}, {}, {"coin": [[], [], []]})
    with pytest.raises(ValueError, match="same plan"):
        apart.updated(other_seeds)


def test_the_command_s_update_refuses_what_it_cannot_merge_before_playing_anything(tmp_path, capsys):
    from pytest_gaamas.__main__ import main

    behaviour = str(ROOT / "behaviours" / "test_coordination.py")
    assert main(["null-rates", "--update", "-o", str(tmp_path / "none.json"), behaviour]) == 2
    assert "cannot be read" in capsys.readouterr().err
    figures = tmp_path / "null_met.json"
    figures.write_text((ROOT / "pytest_gaamas" / "data" / "null_met.json").read_text())
    assert main(["null-rates", "--update", "-o", str(figures), "--agent", "reference:random", "--seeds", "3", behaviour]) == 2
    assert "plays the plan" in capsys.readouterr().err
