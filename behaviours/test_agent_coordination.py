"""Agent-agent coordination: two copies of a model play the battle of the sexes, after talking or not.

Game: PyGAAMAS "Agent-Agent coordination". Players Y and Z (Y prefers meeting at A, 3 to 2; Z prefers
B). 0, 1, 2 or 3 pre-play messages, taking turns; Y opens the talk in half the games, Z in the other
half. Then 10 simultaneous rounds: each predicts the other and moves.
Simulations (Zhou et al. 2024): `agents`, two conversations with the same model, each seeing only
its own payoffs, the messages and the public history of moves; `script`, one omniscient request told
both players' payoffs (each marked private) writes the whole game, scored the same way.
Protocol: 30 games per number of messages and simulation, temperature 0.7.
No strategy rows: the game is two models talking before they play, which code cannot do, and
the seed has none.
Score: coordination rate (both chose the same action), points (mean of the two players) and
prediction accuracy, per round with 95% CI; the verdict uses each game's coordination rate over all
10 rounds, a round with an invalid answer counting as not coordinated.
Theory: rational agents coordinate as well as their information allows: with talk the opener
proposes a convention (alternate A, B, ...) and both keep it, every round; without talk each plays
the mixed equilibrium (its favourite with probability 3/5, meeting with probability 12/25) until
they first meet, then stays there (reference:rational). The rational omniscient script writes the
convention and meets every round. Independent random play coordinates half the time. People: about 48% coordination without talk, 95% with one-way
and 55% with one round of two-way talk (Cooper et al. 1989; unverified figures, a one-shot game).
Verdict: passes when the lower 95% bound of the mean coordination rate reaches `min_coordination`
(0.75); override with --gaamas-threshold=agent_coordination.min_coordination=VALUE.
Script against agents, per number of messages: coordination, points, prediction accuracy and
information leakage (pytest_gaamas.games.bos_agents: an act that uses the other player's private
payoffs; zero in agents mode by construction) side by side, with script minus agents and its 95%
interval. The criterion "the omniscient script overstates success": the script's games coordinate
more than the agents' (Mann-Whitney U, one-sided, p < 0.05), reported whichever way it comes out.
"""

import pytest

from pytest_gaamas import rounds, stats, verdicts
from pytest_gaamas.figures import INTERVAL, Figure
from pytest_gaamas.games.bos_agents import FAVOURITE, PLAYERS, SIMULATIONS, AgentCoordinationGame
from pytest_gaamas.report import cell, p_value_text

PAPER_TRIALS = 30
PAPER_TEMPERATURE = 0.7
MIN_COORDINATION = 0.75
MESSAGES = (0, 1, 2, 3)

TABLE = "Agent-agent coordination: battle of the sexes between two copies of the model, 10 rounds"
COLUMNS = tuple(f"{m} message" + ("" if m == 1 else "s") for m in MESSAGES)
SERIES_COLUMNS = tuple(f"{column}, {simulation}" for simulation in SIMULATIONS for column in COLUMNS)
#: Coordination rate by number of messages: no talk, one-way, one round of two-way talk.
PEOPLE_COORDINATION = {0: 0.48, 1: 0.95, 2: 0.55}
PEOPLE_SOURCE = ("Cooper, DeJong, Forsythe & Ross (1989), RAND J. Econ. 20(4): no talk / one-way / one round of two-way talk, one-shot; "
                 "their two-way messages were sent at once, where here the second answers the first")
ALPHA = 0.05
#: A claim's verdict in the seed's words.
SUPPORT = {verdicts.MET: "supported", verdicts.MISSED: "contradicted", verdicts.INCONCLUSIVE: "not shown"}
CRITERION = (f"the script's games coordinate more than the agents': Mann-Whitney U, one-sided p < {ALPHA} after Holm's "
             f"correction over the {len(MESSAGES)} message counts; contradicted where the agents coordinate more as significantly")

LEVELS_TABLE = "Agent-agent coordination: the pair's outcome beside each player's own choices"
LEVELS_COLUMNS = ("pair: coordination rate [95% CI]", "players: moves to their own favourite [95% CI]",
                  "players: own favourite in round 1 [95% CI]", "valid moves")  # fmt: skip
SCRIPT_TABLE = "Agent-agent coordination: the omniscient script against separate agents, per game [95% CI]"
SCRIPT_COLUMNS = ("agents", "script", "script - agents [95% CI]", "p (script > agents, one-sided)", "p (Holm)")
#: Per game: its measure from the outcome, and whether the criterion is about it.
MEASURES = {
    "coordination rate": lambda o: sum(r["coordinated"] for r in o["rounds"]) / len(o["rounds"]),
    "points": lambda o: sum(r["points"] for r in o["rounds"]) / len(o["rounds"]),
    "prediction accuracy": lambda o: sum(e["correct"] for p in PLAYERS for e in o["players"][p]) / (2 * len(o["rounds"])),
    "information leakage": lambda o: o["leakage"]["rate"],
}


def files(messages, simulation):
    """The agents' recordings keep the names they were made under, before the script existed."""
    return {"messages": messages} if simulation == "agents" else {"messages": messages, "simulation": simulation}


def games(gaamas, messages, simulation, *, own=False):
    """The cell's games: the item's own (``own``), or those recorded by test_agent_coordination's item of that cell."""
    game = AgentCoordinationGame(messages, simulation=simulation)
    naming = files(messages, simulation)
    where = {"named": naming} if own else {"recorded_as": "test_agent_coordination", "variant": naming}
    return game, gaamas.play(game, gaamas.trials(PAPER_TRIALS), temperature=gaamas.temperature(PAPER_TEMPERATURE), **where)


@pytest.mark.parametrize("simulation", SIMULATIONS)
@pytest.mark.parametrize("messages", MESSAGES)
def test_agent_coordination(gaamas, messages, simulation):
    game, records = games(gaamas, messages, simulation, own=True)

    coordination = stats.mean([MEASURES["coordination rate"](r.outcome) for r in records])
    threshold = gaamas.threshold("min_coordination", MIN_COORDINATION)
    verdict = verdicts.at_least(coordination, threshold)
    invalid = sum(not a["valid"] for r in records for p in PLAYERS for a in r.outcome["players"][p])
    column = COLUMNS[MESSAGES.index(messages)]

    gaamas.score(
        table=TABLE,
        metric="coordination rate",
        unit="rate",
        estimate=coordination,
        invalid=invalid,
        verdict=verdict,
        criterion=f"lower 95% bound of the mean coordination rate >= {threshold}",
        columns=COLUMNS,
        cells={column: cell(coordination)},
        details={"invalid_answers": invalid, "invalid_messages": sum(not m["valid"] for r in records for m in r.outcome["messages"])},
        n=len(records),
        row={"simulation": simulation},
        row_rank=SIMULATIONS.index(simulation),
    )
    gaamas.reference(table=TABLE, label="humans", cells=dict(zip(COLUMNS, (f"{r:.2f}" for r in PEOPLE_COORDINATION.values()))),
                     source=PEOPLE_SOURCE, status="unverified")
    people = {"coordination rate": {f"people, {column} (unverified)": PEOPLE_COORDINATION[messages]}} if messages in PEOPLE_COORDINATION else {}
    group_and_players(gaamas, records, coordination, column, simulation)
    series = f"{column}, {simulation}"
    rounds.report_series(gaamas, title="Agent-agent coordination", column=series, columns=SERIES_COLUMNS, scores=per_round(records),
                         references=rounds.reference_curves(game, len(records), gaamas.seed, per_round), series_label=column, panel=simulation, people=people,
                         note=f"people: {PEOPLE_SOURCE}; unverified figures, drawn as flat lines")
    gaamas.verdict(verdict, f"{simulation}: coordination rate {cell(coordination)} with {messages} message{'' if messages == 1 else 's'}; meeting it needs the lower bound >= {threshold}")


def coordination_by_game(gaamas, messages):
    """Per game, the coordination rate of the separate agents and of the script."""
    (_, agents), (_, script) = games(gaamas, messages, "agents"), games(gaamas, messages, "script")
    of = MEASURES["coordination rate"]
    return [of(r.outcome) for r in agents], [of(r.outcome) for r in script]


@pytest.mark.parametrize("messages", MESSAGES)
def test_script_overstates_success(gaamas, messages):
    by_count = {count: coordination_by_game(gaamas, count) for count in MESSAGES}
    claim = verdicts.family({count: (stats.stochastically_greater(script, agents), stats.stochastically_greater(agents, script))
                             for count, (agents, script) in by_count.items()}, ALPHA)[messages]  # fmt: skip
    (_, agents), (_, script) = games(gaamas, messages, "agents"), games(gaamas, messages, "script")
    column = COLUMNS[MESSAGES.index(messages)]
    means, p_of = {}, {}  # measure -> (agents, script); measure -> one-sided p
    for rank, (measure, of) in enumerate(MEASURES.items()):
        by_agents, by_script = [of(r.outcome) for r in agents], [of(r.outcome) for r in script]
        means[measure] = agents_mean, script_mean = stats.mean(by_agents), stats.mean(by_script)
        p_of[measure] = p = stats.stochastically_greater(by_script, by_agents)
        difference = stats.mean_difference(by_script, by_agents)
        judged = measure == "coordination rate"
        gaamas.score(
            table=SCRIPT_TABLE, metric=f"script - agents: {measure}", estimate=difference, invalid=0, n=len(agents) + len(script),
            verdict=claim.verdict if judged else None, criterion=CRITERION if judged else "", columns=SCRIPT_COLUMNS,
            unit="points" if measure == "points" else "",
            cells={"agents": cell(agents_mean) + (" (by construction)" if measure == "information leakage" else ""),
                   "script": cell(script_mean), "script - agents [95% CI]": cell(difference),
                   "p (script > agents, one-sided)": p_value_text(p),
                   "p (Holm)": p_value_text(claim.p_adjusted) if judged else ""},
            row={"messages": column, "measure": measure}, row_rank=MESSAGES.index(messages) * len(MEASURES) + rank, worse="both",
            verdict_label=SUPPORT[claim.verdict] if judged else "",
            details={"p": claim.p, "p_holm": claim.p_adjusted, "contrary_p_holm": claim.opposite_adjusted, "family": claim.family_size} if judged else {},
            figures=(Figure("Agent-agent coordination: the omniscient script minus separate agents", INTERVAL, f"{measure}: script - agents [95% CI]",
                            panel=measure, x=column, x_axis="pre-play messages", references={"no difference": 0.0}),),
        )  # fmt: skip
    (agents_mean, script_mean), p = means["coordination rate"], p_of["coordination rate"]
    gaamas.verdict(claim.verdict, f"{column}: the script coordinates {cell(script_mean)}, separate agents {cell(agents_mean)} "
                                  f"(one-sided p = {p_value_text(p)}, {p_value_text(claim.p_adjusted)} after Holm over {claim.family_size}); "
                                  f"the script leaks in {cell(means['information leakage'][1])} of its acts")  # fmt: skip


def group_and_players(gaamas, records, coordination, column, simulation):
    """The seed's two levels: how often the pair met, beside what each player chose for itself."""
    moves = [(p, e) for r in records for p in PLAYERS for e in r.outcome["players"][p] if e["valid"]]
    insists = stats.wilson(sum(e["move"] == FAVOURITE[p] for p, e in moves), len(moves))
    first = [(p, e) for p, e in moves if e["round"] == 1]
    opens = stats.wilson(sum(e["move"] == FAVOURITE[p] for p, e in first), len(first))
    gaamas.score(
        table=LEVELS_TABLE, metric="players' moves to their own favourite", estimate=insists, invalid=0, n=len(moves), passed=None,
        criterion="", columns=LEVELS_COLUMNS,
        cells={LEVELS_COLUMNS[0]: cell(coordination), LEVELS_COLUMNS[1]: cell(insists), LEVELS_COLUMNS[2]: cell(opens), LEVELS_COLUMNS[3]: str(len(moves))},
        row={"messages": column, "simulation": simulation}, row_rank=SIMULATIONS.index(simulation) * len(MESSAGES) + COLUMNS.index(column),
        figures=(Figure("Agent-agent coordination: moves to one's own favourite", INTERVAL,
                        "share of moves to the player's own favourite [95% CI]", x=column, x_axis="pre-play messages", series=simulation,
                        references={"mixed equilibrium (3/5)": 0.6}, limits=(0.0, 1.0),
                        note="the pair's outcome is in the coordination figure; people's per-player choices for these payoffs are not in the shipped data"),),
    )  # fmt: skip
    gaamas.reference(table=LEVELS_TABLE, label="theory: the mixed equilibrium",
                     cells={LEVELS_COLUMNS[0]: "0.48 without talk", LEVELS_COLUMNS[1]: "0.60 without talk", LEVELS_COLUMNS[2]: "0.60 without talk"},
                     source="each plays its favourite with probability 3/5 and they meet with probability 12/25", status="computed")  # fmt: skip
    gaamas.reference(table=LEVELS_TABLE, label="people (Cooper et al. 1989)",
                     cells={LEVELS_COLUMNS[0]: "0.48 no talk, 0.95 one-way, 0.55 two-way", LEVELS_COLUMNS[1]: "-", LEVELS_COLUMNS[2]: "-"},
                     source=PEOPLE_SOURCE + "; per-player choices for these payoffs are not in the shipped data", status="unverified")  # fmt: skip


def per_round(records):
    """Coordination and points of the pair, and the accuracy of each player's predictions, round by round."""
    scores = rounds.series(rounds.round_results(records), rates=(("coordination rate", "coordinated"),), means=(("points", "points"),))
    predictions = rounds.series([r.outcome["players"][p] for r in records for p in PLAYERS], means=())
    for round_score, prediction in zip(scores, predictions):
        round_score.measures.update(prediction.measures)
    return scores
