"""The behaviours, tested as instruments: the reference agents land where theory says, and the
recorded SmolLM2 runs replay offline into every table."""

from functools import cache
from pathlib import Path

import pytest
import scipy.stats
from conftest import BEHAVIOURS, PAPER_TRIALS, ROOT, SHIPPED, TRIALS_PER_CELL, run_behaviours_once


#: The reference agents, in two runs of the whole suite: the two that write strategies (whose
#: trials each start a sandboxed process), and the rest. Models in one run are judged each as in a
#: run of its own (tests/test_plugin.py), and share the run's start and its reference curves.
REFERENCE_RUNS = {
    "reference-rational-random": ("rational", "random"),
    "reference-others": ("first", "last", "constant", "sustainable", "human", "average"),
}


@cache
def _played_by(run: str, shared: Path) -> dict:
    """One of REFERENCE_RUNS, once for the test session, whatever worker asks."""
    return run_behaviours_once(shared, run, *(f"--gaamas-model=reference:{agent}" for agent in REFERENCE_RUNS[run]))[1]


def reference_run(agent: str, shared: Path) -> dict:
    """The whole suite played by ``reference:agent``: its scores, from the run that played it."""
    run = next(name for name, agents in REFERENCE_RUNS.items() if agent in agents)
    document = _played_by(run, shared)
    return {**document, "scores": [s for s in document["scores"] if s["model"] == f"reference:{agent}"]}


def verdicts(document: dict) -> dict[str, bool]:
    return {s["test_id"]: s["passed"] for s in document["scores"] if s["passed"] is not None}


def credibility_cell(test_id: str) -> bool:
    """The prisoner's dilemma under the Human prompt asks for human-like, not rational, play."""
    return "::test_rational_vs_credible[" in test_id and "-Human-" in test_id


def tragedy(test_id: str) -> bool:
    """The commons asks for a society that lasts; theory's myopic, selfish villagers empty the lake in
    the first round (the tragedy of the commons), and reference:sustainable is the one that lasts.
    The rational script, which plans for the whole village, keeps it: the script overstates success.
    Selfish and altruistic alike take all they can, so no villager acts as its persona (the paradox),
    and all a boat holds whatever the lake holds, so the catch does not follow the lake."""
    return (any(f"/test_commons.py::{test}[" in test_id and test_id.endswith("-agents]") for test in ("test_commons", "test_commons_catch_follows_the_lake"))
            or "::test_commons_claim[" in test_id or "::test_commons_paradox[" in test_id)


def talk_informs(test_id: str) -> bool:
    """With a message before play, rational agents agree on a convention and meet every round, as
    the rational script does: the script has nothing to overstate, and the criterion is rightly not
    supported. Without talk it is (the agents cannot know where the other will go), whether or not
    they know each other's payoffs."""
    return "::test_script_overstates_success[" in test_id and not test_id.endswith(("-0-common]", "-0-private]"))


def leakage_claim(test_id: str) -> bool:
    """Whether the script leaks beyond chance is a finding about a writer, not a criterion theory
    answers: the rational script writes a convention and names nobody's payoffs, so it is rightly
    not shown to leak."""
    return "::test_script_leaks_beyond_chance[" in test_id


def omniscience_claim(test_id: str) -> bool:
    """What knowing the other's payoffs adds to the script's lead: the rational agents play the same
    whatever they are told of the other's payoffs, so theory gives no gain to show (the planted pair of
    tests/test_simulations.py is the positive control)."""
    return "::test_omniscience_adds_success[" in test_id


def label_blind_robustness(test_id: str) -> bool:
    """Semantic robustness asks that the named and the anonymised labels give the same cooperation:
    an agent that never reads a label (a coin, the first or last option listed) has exactly that."""
    return "::test_semantic_robustness[" in test_id


# What a blind agent (first, last, constant and the rest of reference.Blind) truly has, and what it
# meets only because a design is broken, are named per construct in tests/test_blind_agents.py,
# which holds the three played here to them.


def human_likeness(test_id: str) -> bool:
    """Criteria that ask for people's behaviour: choices distributed as theirs, play that changes with
    the role and moves with the payoffs as theirs does. Theory's agent plays the same whatever."""
    return any(name in test_id for name in ("_fidelity[", "::test_role_fidelity[", "::test_payoff_sensitivity["))


@pytest.fixture(scope="module")
def workspace(shared_folder) -> Path:
    return shared_folder


def test_every_shipped_behaviour_is_a_file_with_its_cassettes():
    for name in SHIPPED:
        assert (ROOT / "behaviours" / f"test_{name}.py").is_file(), name
        assert (ROOT / "cassettes" / "embedded-smollm2" / name).is_dir(), name


def test_every_behaviour_reports_a_verdict_for_the_reference_agents(workspace):
    for agent in ("rational", "random"):
        reported = {s["behaviour"] for s in reference_run(agent, workspace)["scores"]}
        assert reported == set(BEHAVIOURS), agent


def test_the_rational_agent_passes_wherever_theory_defines_the_rational_answer(workspace):
    results = verdicts(reference_run("rational", workspace))
    assert results
    for test_id, passed in results.items():
        assert passed != (credibility_cell(test_id) or human_likeness(test_id) or tragedy(test_id) or talk_informs(test_id)
                          or leakage_claim(test_id) or omniscience_claim(test_id)), test_id


def test_the_random_agent_fails_at_chance(workspace):
    results = verdicts(reference_run("random", workspace))
    assert results
    for test_id, passed in results.items():
        # Coin flips cooperate half the time, inside the human range: an average cannot tell them
        # apart; and a coin never reads a label, so the labels cannot change its cooperation.
        assert not passed or credibility_cell(test_id) or label_blind_robustness(test_id), test_id
    # Where a behaviour names its chance level, the coin is found there: at chance, not merely unproven.
    at_chance = {s["behaviour"] for s in reference_run("random", workspace)["scores"] if s.get("verdict") == "at chance"}
    assert {"first_order_rationality", "second_order_rationality"} <= at_chance, at_chance


def test_the_sustainable_agent_keeps_every_commons_alive_and_plays_nothing_else(workspace):
    document = reference_run("sustainable", workspace)
    assert {s["behaviour"] for s in document["scores"]} == {"commons"}  # the other games skip it
    cells = [s for s in document["scores"] if "::test_commons[" in s["test_id"] and s["passed"] is not None]
    recorded = list((ROOT / "cassettes" / "embedded-smollm2" / "commons").glob("test_commons-*.yaml.gz"))
    # Every catch within the regrowth, and every society alive at round 10, agents and script alike.
    assert cells and len(cells) == len(recorded) and all(s["passed"] and s["score"] == 1.0 for s in cells)
    survival = [s for s in document["scores"] if "survival to round 10 (GovSim's number)" in s["table"]]
    assert len(survival) == len(recorded) and all(s["score"] == 1.0 for s in survival)
    assert "agents" in {s["variant"]["simulation"] for s in cells} <= {"agents", "script"}  # the script where recorded
    claims = [s for s in document["scores"] if "::test_commons_claim[" in s["test_id"]]
    assert claims and not any(s["passed"] for s in claims)  # every cell alike: no claim can be supported
    # Its first catch is its share of the lake it is shown, so it follows the lake in every run of the
    # design at once: the criterion can be met where it is judged, villagers apart and the script's societies.
    lake = [s for s in document["scores"] if "::test_commons_catch_follows_the_lake[" in s["test_id"] and s["passed"] is not None]
    assert len(lake) == 2 and all(s["passed"] for s in lake), [(s["test_id"], s["details"]["p_holm"]) for s in lake]


#: The behaviours without a strategy row in the seed: a portfolio of 25 budgets, and two models talking.
NO_STRATEGY = {"garp_consistency", "agent_coordination", "commons"}


def strategy_scores(document: dict) -> list[dict]:
    return [s for s in document["scores"] if s["variant"].get("generation") == "strategy" and "strategy" in s["details"]]


def test_the_reference_agents_write_valid_strategies_for_every_game_the_seed_asks_for(workspace):
    for agent in ("rational", "random"):
        scores = strategy_scores(reference_run(agent, workspace))
        assert {s["behaviour"] for s in scores} == set(BEHAVIOURS) - NO_STRATEGY, agent
        for score in scores:
            assert score["details"]["strategy"]["valid"], (score["test_id"], score["details"]["strategy"]["reason"])
            assert score["invalid"] == 0, score["test_id"]


#: How often 30 of people's own choices are judged faithful to people's, by kind of cell: measured over
#: 1,000 samples (200 for the CCEI) by fidelity.judged (python -m pytest_gaamas.fidelity, the table of docs/statistics.md).
FAITHFUL_TO_PEOPLE = {
    "dictator": (lambda test_id: "::test_dictator_fidelity[" in test_id, 0.924),
    "ultimatum proposer": (lambda test_id: "::test_ultimatum_fidelity[" in test_id and "-proposer-" in test_id, 0.927),
    "ultimatum threshold": (lambda test_id: "::test_ultimatum_fidelity[" in test_id and "-responder threshold-" in test_id, 0.747),
    "portfolio": (lambda test_id: "::test_garp_fidelity[" in test_id, 0.940),
}
#: How often 30 of people's own choices are flagged plausible in aggregate and unfaithful in person: at
#: most 4.1% of samples of any kind (the same table).
FLAGGED_IN_PEOPLE = 0.041


def test_the_human_agent_replays_people_where_there_are_data(workspace):
    document = reference_run("human", workspace)
    assert {s["behaviour"] for s in document["scores"]} == {"garp_consistency", "dictator_preferences", "ultimatum"}
    dictator = [s for s in document["scores"] if s["behaviour"] == "dictator_preferences" and s["metric"] == "mean share kept"]
    assert dictator and all(60 <= s["score"] <= 90 for s in dictator)  # MobLab dictators keep $74 on average
    fidelity = [s for s in document["scores"] if "_fidelity[" in s["test_id"]]
    assert {s["behaviour"] for s in fidelity} == {"garp_consistency", "dictator_preferences", "ultimatum"}
    # 30 choices drawn from people's are faithful to people as often as the test's power allows: a cell
    # may miss by chance at its kind's measured rate, and the misses over all the cells stay within the
    # binomial bound of those rates pooled; the paradox's flag, within its own.
    kinds = [next(kind for kind, (applies, _) in FAITHFUL_TO_PEOPLE.items() if applies(s["test_id"])) for s in fidelity]
    missed = [s["test_id"] for s in fidelity if not s["passed"]]  # the verdict, faithful in person, whose rate was measured
    flagged = [s["test_id"] for s in fidelity if s["details"]["paradox"]]
    miss_rate = sum(1 - FAITHFUL_TO_PEOPLE[kind][1] for kind in kinds) / len(kinds)
    assert len(missed) <= scipy.stats.binom.ppf(0.999, len(kinds), miss_rate), missed
    assert len(flagged) <= scipy.stats.binom.ppf(0.999, len(kinds), FLAGGED_IN_PEOPLE), flagged


def test_people_s_average_every_time_is_plausible_in_aggregate_and_unfaithful_in_person(workspace):
    """The seed's paradox, planted: an agent that always keeps people's mean amount is flagged."""
    document = reference_run("average", workspace)
    fidelity = [s for s in document["scores"] if "_fidelity[" in s["test_id"]]
    assert {s["test_id"].split("::")[1].split("[")[0] for s in fidelity} == {"test_dictator_fidelity", "test_ultimatum_fidelity"}
    for score in fidelity:
        assert score["details"]["aggregate"] == "plausible" and score["details"]["verdict"] == "unfaithful", score["test_id"]
        assert score["details"]["paradox"] and score["cells"]["two levels"].startswith("FLAG"), score["test_id"]
        assert not score["passed"]


def test_the_recorded_smollm2_runs_replay_offline_into_every_table(smollm2_replay):
    code, document, output = smollm2_replay.code, smollm2_replay.document, smollm2_replay.output
    assert code == 0, output[-3000:]  # verdicts missed are findings, reported; an error would fail
    assert "there is no cassette" not in output and "no recorded answer" not in output and "MissingCassette" not in output
    shipped = sum(1 for path in (ROOT / "cassettes" / "embedded-smollm2").rglob("*.yaml*") if path.is_file() and path.suffix != ".lock")
    assert "used by no item" not in output and f"embedded:smollm2: {shipped} of {shipped} cassettes used" in output
    assert {s["behaviour"] for s in document["scores"]} == set(BEHAVIOURS)
    for score in document["scores"]:  # a cell has 30 trials; a criterion over cells, 30 per cell
        if score["passed"] is not None:
            assert score["n"] > 0 and score["n"] % TRIALS_PER_CELL.get(score["behaviour"], PAPER_TRIALS) == 0, score["test_id"]
    strategies = strategy_scores(document)
    assert {s["behaviour"] for s in strategies} == set(BEHAVIOURS) - NO_STRATEGY
    for score in strategies:  # valid or not, every strategy carries its code or the reason there is none
        strategy = score["details"]["strategy"]
        assert strategy["valid"] == (strategy["reason"] is None) and (strategy["code"] or strategy["reason"])


def test_the_replayed_verdicts_are_those_recorded(smollm2_replay):
    """SmolLM2-135M plays badly; the replay must say so the same way every time."""
    document = smollm2_replay.document
    garp = [s for s in document["scores"] if s["behaviour"] == "garp_consistency"]
    assert garp and not garp[0]["passed"] and garp[0]["invalid"] == PAPER_TRIALS


def test_the_random_agent_s_strategies_draw_apart_in_every_cell(workspace):
    """A strategy that draws is seeded by its cell as well as by the run: the coin's strategy rows of
    one table do not replay one sample in every cell."""
    scores = [s for s in strategy_scores(reference_run("random", workspace)) if s["behaviour"] == "second_order_rationality"]
    samples = {tuple(s["sample"]) for s in scores}
    assert len(scores) == 12 and len(samples) > 6, len(samples)
