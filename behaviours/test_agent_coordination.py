"""Agent-agent coordination: two copies of a model play the battle of the sexes, after talking or not.

Game: PyGAAMAS "Agent-Agent coordination". Players Y and Z (Y prefers meeting at A, 3 to 2; Z prefers
B). 0, 1, 2 or 3 pre-play messages, taking turns; Y opens the talk in half the games, Z in the other
half. Then 10 simultaneous rounds: each predicts the other and moves.
Information: `common`, the seed's game, both players know the whole matrix (as Cooper et al.'s
subjects did); `private`, each knows only its own payoffs, where an omniscient writer has
something to leak.
Simulations (Zhou et al. 2024): `agents`, two conversations with the same model, each seeing only
what its player is told, the messages and the public history of moves; `script`, one omniscient
request told both players' payoffs (in `private`, each marked private) writes the whole game,
scored the same way.
Protocol: 30 games per number of messages, information and simulation, temperature 0.7.
No strategy rows: the game is two models talking before they play, which code cannot do, and
the seed has none.
Score: coordination rate (both chose the same action), points (mean of the two players) and
prediction accuracy, per round with 95% CI; the verdict uses each game's coordination rate over all
10 rounds, a round with an invalid answer counting as not coordinated.
Beyond habits: two players meet by chance as often as their own habits make them choose the same
label (two copies that always name A meet every round without reading anything). The baseline is
player Y of one game paired with player Z of every *other* game of the cell that showed each player
the meetings in the same order, round by round: the meeting the players' own habits give, shuffled
pairs. Pairing only games presented alike keeps one author's habit from passing for coordination:
a script that writes, for both players, the meeting its form names last meets every round, and so
does a stranger shown the same form. The excess is the real pairs' coordination minus the baseline,
with its bootstrap interval over games, and a one-sided permutation test of the pairing within
presentations (9,999 re-pairings seeded by the cell). What the game counterbalances across games:
the order each player sees the meetings in (the agents' prompts and forms; the script's form, but
not its rules, which say "A or B"), and which player opens the talk, which the shuffled pairs leave
free: a convention read from who opens counts as reading the game. Each player is told its rules
and asked every question in a wording of its own (the same numbers and letters in the same order;
the two players' wordings independent digit by digit among games presented alike, so that a phrase
both are told is no signal they share), and the script its game's, so each begins each of a cell's
30 games from a prompt of its own, even without talk. Which meeting
each label names and which player prefers which are the same in every game (Y prefers A), so a
pair that always meets at Y's favourite shows no excess, whether it read the payoffs or only the
letter.
Theory: rational agents coordinate as well as their information allows: with talk the opener
proposes a convention (alternate A, B, ...) and both keep it, every round; without talk each plays
the mixed equilibrium (its favourite with probability 3/5, meeting with probability 12/25) until
they first meet, then stays there (reference:rational). The rational omniscient script writes the
convention and meets every round. Independent random play coordinates half the time. People: about
48% coordination without talk, 95% with one-way and 55% with one round of two-way talk (Cooper et
al. 1989; unverified figures, a one-shot game).
Verdict: met when the lower 95% bound of the mean coordination rate reaches `min_coordination`
(0.65, chance's 0.5 and a rate's margin of 0.15; override with
--gaamas-threshold=agent_coordination.min_coordination=VALUE) and the excess over
shuffled pairs is above 0 (permutation p < 0.05 over the 16 cells of the test, Bonferroni); missed
when the rate's upper bound is below the threshold or the excess's interval reaches no higher than 0.
The same for the script's two players, whose "met" is no evidence of reading the game: one author
knows what it wrote for the other side, so any choice it shares across both that changes from game
to game meets beyond the shuffled pairs (tests/test_blind_agents.py, "one author for both sides").
Script against agents, per information and number of messages: coordination, points and
prediction accuracy side by side, with script minus agents and its 95% interval. The claim "one
author overstates what two achieve": the script's games coordinate more than the agents'
(Mann-Whitney U, one-sided, Holm over the message counts), reported whichever way it comes out. It
compares one writer applying one rule to both sides with two separate conversations, and says
nothing of what knowing the other's payoffs adds: in the common game the agents know them too.
Omniscience: what the script gains from knowing what the agents do not is the difference in
differences, (script - agents) with private payoffs minus (script - agents) with both known, of
each cell's coordination beyond the players' own habits (the excess its table shows), with the
bootstrap interval of the four cells' resampled games; the claim "omniscience adds success" is its
one-sided bootstrap test (Holm over the message counts). Raw coordination would not do: two copies
keyed to a word of the sentence that tells each agent the other's payoffs meet whenever told it
(both name A), which a difference in differences of raw rates reads as what knowing the payoffs
adds; a label they share meets shuffled pairs as often, and scores nothing. What it can show is a
convention that changes with the game: meeting at the favourite of whoever opens the talk (who
changes from game to game outside the presentations the pairs are shuffled within), or one read
from the first rounds' history. What it cannot show is a convention the same in every game, such
as alternating A, B, A, ... from round 1, which knowing both (mirrored) payoffs invites: it meets
shuffled pairs as often as a shared label does. Y prefers A in every game, so such a convention
cannot be told from a habit here; counterbalancing which player prefers which label from game to
game would tell them apart, and needs the cells recorded again. Read "not shown" as no evidence
either way, not as no gain. It holds the writer, the rule and the prompts'
frame fixed up to the one thing that differs, but the script's own prompt differs between the two
conditions too (payoffs marked private or known to both): the difference in differences measures
the information condition's effect on the gap, not a script that does not see the other side.
Leakage against chance (private game): the acts that would reveal the other's payoffs
(pytest_gaamas.games.bos_agents) as the script makes them beside the same acts by the agents, who
could not have known: the baseline. The claim "the script leaks beyond chance": its games' share
of such acts exceeds the agents' (Mann-Whitney U, one-sided, Holm over the message counts);
concessions in round 1 (which chance makes) and messages that name the other's favourite first are
shown apart.
A coin sits at the null of the last two claims: a random script leads random agents by nothing with
the payoffs private or known, and makes the revealing acts as often as they guess them. Each is one
of the suite's families judged at 0.05 divided by their number (pytest_gaamas.verdicts.BLIND_NULLS),
before Holm's correction within it. The claim that one author overstates is not: one author writing
both sides is a construct a blind script truly has.
"""

import math
import zlib

import pytest

from pytest_gaamas import metrics, rounds, stats, verdicts
from pytest_gaamas.figures import INTERVAL, Figure
from pytest_gaamas.games.bos_agents import FAVOURITE, INFORMATION, PLAYERS, SIMULATIONS, AgentCoordinationGame, moves, presentation, revealing_rate
from pytest_gaamas.report import cell, p_stated, p_value_text

PAPER_TRIALS = 30
PAPER_TEMPERATURE = 0.7
#: Better than chance by a margin: independent random play meets half the time, and the margin is a
#: rate's (verdicts.RATE_CHANCE_MARGIN). Two players who each read the game seven times in ten meet
#: about 0.75 of the rounds, so a threshold there (the paper's) would ask for more than reading it.
MIN_COORDINATION = 0.65
MESSAGES = (0, 1, 2, 3)

TABLE = {
    "common": "Agent-agent coordination: battle of the sexes between two copies of the model, both payoffs known to both, 10 rounds",
    "private": "Agent-agent coordination, private payoffs: each copy of the model knows only its own, 10 rounds",
}
COLUMNS = tuple(f"{m} message" + ("" if m == 1 else "s") for m in MESSAGES)
SERIES_COLUMNS = tuple(f"{column}, {simulation}" for simulation in SIMULATIONS for column in COLUMNS)
#: Coordination rate by number of messages: no talk, one-way, one round of two-way talk.
PEOPLE_COORDINATION = {0: 0.48, 1: 0.95, 2: 0.55}
PEOPLE_SOURCE = ("Cooper, DeJong, Forsythe & Ross (1989), RAND J. Econ. 20(4): no talk / one-way / one round of two-way talk, one-shot; "
                 "their two-way messages were sent at once, where here the second answers the first")
ALPHA = 0.05
#: The cells of test_agent_coordination, one family: the excess is judged at ALPHA over them (Bonferroni).
CELLS = len(MESSAGES) * len(SIMULATIONS) * len(INFORMATION)
#: A claim's verdict in the seed's words.
SUPPORT = {verdicts.MET: "supported", verdicts.MISSED: "contradicted", verdicts.INCONCLUSIVE: "not shown"}
CRITERION = (f"one author's games (the script) coordinate more than two agents': Mann-Whitney U, one-sided p < {ALPHA} after Holm's "
             f"correction over the {len(MESSAGES)} message counts and their contraries; contradicted where the agents coordinate more as significantly")
OMNISCIENCE_TABLE = ("Agent-agent coordination: what knowing the other's payoffs adds to the script, (script - agents) with private "
                     "payoffs minus (script - agents) with both known, coordination beyond the players' own habits")
OMNISCIENCE_COLUMNS = ("script - agents, private [95% CI]", "script - agents, common [95% CI]", "difference in differences [95% CI]",
                       "p (omniscience adds, one-sided)", "p (Holm)")
#: The claims a coin sits at the null of: judged at the suite's share of 5% for such families.
OMNISCIENCE, LEAKAGE = "omniscience adds success", "the script leaks beyond chance"
OMNISCIENCE_CRITERION = (f"the script's lead over the agents in coordination beyond their own habits is larger where only it knows both "
                         f"payoffs: difference in differences, "
                         f"one-sided bootstrap p < {verdicts.blind_null(OMNISCIENCE):.3g} after Holm's correction over the "
                         f"{len(MESSAGES)} message counts and their contraries ({verdicts.blind_null_words(OMNISCIENCE)}); contradicted where it is "
                         "smaller as significantly")

LEVELS_TABLE = {information: f"{title}: the pair's outcome beside each player's own choices" for information, title in TABLE.items()}
LEVELS_COLUMNS = ("pair: coordination rate [95% CI]", "players: moves to their own favourite [95% CI]",
                  "players: own favourite in round 1 [95% CI]", "valid moves")  # fmt: skip
EXCESS_TABLE = {information: f"{title}: coordination beyond the players' own habits, real pairs against shuffled pairs" for information, title in TABLE.items()}
EXCESS_COLUMNS = ("coordination rate [95% CI]", "shuffled pairs (own habits)", "excess [95% CI]", "p (excess > 0, permutation)")
EXCESS_CRITERION = (f"the real pairs meet more than the same players paired across games: permutation p < {ALPHA} / {CELLS} cells; "
                    "judged with the coordination rate in the cell's verdict")
SCRIPT_TABLE = {information: f"{title}: one author writing both players (the script) against two separate agents, per game [95% CI]"
                for information, title in TABLE.items()}  # fmt: skip
SCRIPT_COLUMNS = ("agents", "script", "script - agents [95% CI]", "p (script > agents, one-sided)", "p (Holm)")
#: Per game: its measure from the outcome.
MEASURES = {
    "coordination rate": lambda o: sum(r["coordinated"] for r in o["rounds"]) / len(o["rounds"]),
    "points": lambda o: sum(r["points"] for r in o["rounds"]) / len(o["rounds"]),
    "prediction accuracy": lambda o: sum(e["correct"] for p in PLAYERS for e in o["players"][p]) / (2 * len(o["rounds"])),
}
LEAKAGE_TABLE = "Agent-agent coordination, private payoffs: leakage against chance, acts that would reveal the other's payoffs per game [95% CI]"
LEAKAGE_COLUMNS = ("agents (chance: they could not know)", "script", "script - agents [95% CI]", "p (script > agents, one-sided)", "p (Holm)")
#: The acts measured against chance: all of them (the claim), then each kind apart.
LEAKAGE_ACTS = {"all acts": None, "concessions in round 1": "round 1 move", "messages naming the other's favourite first": "message"}
LEAKAGE_CRITERION = (f"the script's games make more of the acts that would reveal the other's payoffs than the agents', who could not know: "
                     f"Mann-Whitney U, one-sided p < {verdicts.blind_null(LEAKAGE):.3g} after Holm's correction over the "
                     f"{len(MESSAGES)} message counts and their contraries ({verdicts.blind_null_words(LEAKAGE)}); contradicted where the agents make "
                     "more as significantly")


def files(messages, simulation, information):
    """The private game's recordings keep the names they were made under, before the script and the
    common-knowledge game existed."""
    named = {"messages": messages} if simulation == "agents" else {"messages": messages, "simulation": simulation}
    return named if information == "private" else {**named, "information": information}


def games(gaamas, messages, simulation, information, *, own=False):
    """The cell's games: the item's own (``own``), or those recorded by test_agent_coordination's item of that cell."""
    game = AgentCoordinationGame(messages, simulation=simulation, information=information)
    naming = files(messages, simulation, information)
    where = {"named": naming} if own else {"recorded_as": "test_agent_coordination", "variant": naming}
    return game, gaamas.play(game, gaamas.trials(PAPER_TRIALS), temperature=gaamas.temperature(PAPER_TEMPERATURE), **where)


@pytest.mark.parametrize("information", INFORMATION)
@pytest.mark.parametrize("simulation", SIMULATIONS)
@pytest.mark.parametrize("messages", MESSAGES)
def test_agent_coordination(gaamas, messages, simulation, information):
    game, records = games(gaamas, messages, simulation, information, own=True)

    coordination = stats.mean([MEASURES["coordination rate"](r.outcome) for r in records])
    threshold = gaamas.threshold("min_coordination", MIN_COORDINATION)
    beyond = beyond_habits(records, cell_seed(gaamas.seed, messages, simulation, information))
    verdict = both(verdicts.at_least(coordination, threshold), excess_verdict(beyond))
    invalid = sum(not a["valid"] for r in records for p in PLAYERS for a in r.outcome["players"][p])
    column = COLUMNS[MESSAGES.index(messages)]

    gaamas.score(
        table=TABLE[information],
        metric="coordination rate",
        unit="rate",
        estimate=coordination,
        invalid=invalid,
        verdict=verdict,
        criterion=f"lower 95% bound of the mean coordination rate >= {threshold}, and an excess over shuffled pairs "
                  f"(permutation p < {ALPHA} / {CELLS})",
        columns=COLUMNS,
        cells={column: cell(coordination)},
        details={"invalid_answers": invalid, "invalid_messages": sum(not m["valid"] for r in records for m in r.outcome["messages"]),
                 "shuffled_pairs": beyond.baseline, "excess": beyond.excess.as_json(), "excess_p": beyond.p,
                 "excess_contrary_p": beyond.contrary_p, "pairings": beyond.pairings},
        n=len(records),
        row={"simulation": simulation},
        row_rank=SIMULATIONS.index(simulation),
    )
    people = {}
    if information == "common":  # people played the game where both knew the whole matrix
        gaamas.reference(table=TABLE[information], label="humans", cells=dict(zip(COLUMNS, (f"{r:.2f}" for r in PEOPLE_COORDINATION.values()))),
                         source=PEOPLE_SOURCE, status="unverified")
        if messages in PEOPLE_COORDINATION:
            people = {"coordination rate": {f"people, {column} (unverified)": PEOPLE_COORDINATION[messages]}}
    report_excess(gaamas, coordination, beyond, column, simulation, information)
    group_and_players(gaamas, records, coordination, column, simulation, information)
    series = f"{column}, {simulation}"
    title = "Agent-agent coordination" + ("" if information == "common" else ", private payoffs")
    rounds.report_series(gaamas, title=title, column=series, columns=SERIES_COLUMNS, scores=per_round(records),
                         references=rounds.reference_curves(game, len(records), gaamas.seed, per_round), series_label=column, panel=simulation, people=people,
                         note=f"people: {PEOPLE_SOURCE}; unverified figures, drawn as flat lines" if people else "")
    gaamas.verdict(verdict, f"{simulation}, {information} payoffs: coordination rate {cell(coordination)} with {messages} message{'' if messages == 1 else 's'}, "
                            f"shuffled pairs {beyond.baseline:.2f}, excess {cell(beyond.excess)} ({p_stated(beyond.p)}); meeting it needs "
                            f"the lower bound >= {threshold} and an excess (p < {ALPHA} / {CELLS})")  # fmt: skip


def cell_seed(seed, *cell) -> int:
    """The session's seed and the cell's parameters as one seed: each cell's resampling its own."""
    return zlib.crc32("-".join(map(str, (seed, *cell))).encode())


def beyond_habits(records, seed) -> metrics.CoordinationExcess:
    """The real pairs' meetings against the same players paired across the cell's games that showed
    each player the meetings in the same order as theirs: one author writing both players from what
    it is shown meets a stranger presented alike as often as its partner."""
    outcomes = [r.outcome for r in records]
    return metrics.coordination_excess([moves(o, "Y") for o in outcomes], [moves(o, "Z") for o in outcomes], seed=seed,
                                       strata=[presentation(o) for o in outcomes])  # fmt: skip


def excess_verdict(beyond) -> verdicts.Verdict:
    """Met when the permutation test shows an excess over the family; missed where the interval
    leaves no room for one (none, as a shared habit has, or a deficit)."""
    if math.isnan(beyond.p):  # fewer than two games presented alike: nothing to pair
        return verdicts.MISSED
    if beyond.p < ALPHA / CELLS * verdicts.look_share():  # a later look spends its share of the level
        return verdicts.MET
    return verdicts.MISSED if beyond.excess.high <= 0 else verdicts.INCONCLUSIVE


def both(*judged) -> verdicts.Verdict:
    """A criterion of several parts: met when every part is, missed when one is, else inconclusive."""
    if all(v is verdicts.MET for v in judged):
        return verdicts.MET
    return verdicts.MISSED if verdicts.MISSED in judged else verdicts.INCONCLUSIVE


def report_excess(gaamas, coordination, beyond, column, simulation, information):
    """The cell's coordination beside the shuffled pairs' and the excess, as a row of its own table."""
    gaamas.score(
        table=EXCESS_TABLE[information], metric="excess over shuffled pairs", estimate=beyond.excess, invalid=0, verdict=None,
        criterion=EXCESS_CRITERION, columns=EXCESS_COLUMNS,
        cells={EXCESS_COLUMNS[0]: cell(coordination), EXCESS_COLUMNS[1]: f"{beyond.baseline:.2f}", EXCESS_COLUMNS[2]: cell(beyond.excess),
               EXCESS_COLUMNS[3]: p_value_text(beyond.p)},
        details={"p": beyond.p, "contrary_p": beyond.contrary_p, "shuffled_pairs": beyond.baseline, "pairings": beyond.pairings},
        row={"messages": column, "simulation": simulation}, row_rank=SIMULATIONS.index(simulation) * len(MESSAGES) + COLUMNS.index(column),
        figures=(Figure(f"Agent-agent coordination ({information} payoffs): coordination beyond the players' own habits", INTERVAL,
                        "real pairs - shuffled pairs [95% CI]", x=column, x_axis="pre-play messages", series=simulation,
                        references={"own habits: no excess": 0.0}),),
    )  # fmt: skip


def by_game(gaamas, messages, information, of):
    """Per game, ``of`` its outcome for the separate agents and for the script (games where it is None left out)."""
    (_, agents), (_, script) = games(gaamas, messages, "agents", information), games(gaamas, messages, "script", information)
    measured = lambda records: [x for x in (of(r.outcome) for r in records) if x is not None]  # noqa: E731
    return measured(agents), measured(script)


def script_claim(gaamas, messages, information, of, alpha=ALPHA):
    """The claim that the script's games score more by ``of`` than the agents', in the family of the message counts."""
    by_count = {count: by_game(gaamas, count, information, of) for count in MESSAGES}
    return verdicts.family({count: (stats.stochastically_greater(script, agents), stats.stochastically_greater(agents, script))
                            for count, (agents, script) in by_count.items()}, alpha)[messages]  # fmt: skip


@pytest.mark.parametrize("information", INFORMATION)
@pytest.mark.parametrize("messages", MESSAGES)
def test_script_overstates_success(gaamas, messages, information):
    claim = script_claim(gaamas, messages, information, MEASURES["coordination rate"])
    (_, agents), (_, script) = games(gaamas, messages, "agents", information), games(gaamas, messages, "script", information)
    column = COLUMNS[MESSAGES.index(messages)]
    means, p_of = {}, {}  # measure -> (agents, script); measure -> one-sided p
    for rank, (measure, of) in enumerate(MEASURES.items()):
        by_agents, by_script = [of(r.outcome) for r in agents], [of(r.outcome) for r in script]
        means[measure] = agents_mean, script_mean = stats.mean(by_agents), stats.mean(by_script)
        p_of[measure] = p = stats.stochastically_greater(by_script, by_agents)
        difference = stats.mean_difference(by_script, by_agents)
        judged = measure == "coordination rate"
        gaamas.score(
            table=SCRIPT_TABLE[information], metric=f"script - agents: {measure}", estimate=difference, invalid=0, n=len(agents) + len(script),
            verdict=claim.verdict if judged else None, criterion=CRITERION if judged else "", columns=SCRIPT_COLUMNS,
            unit="points" if measure == "points" else "",
            cells={"agents": cell(agents_mean), "script": cell(script_mean), "script - agents [95% CI]": cell(difference),
                   "p (script > agents, one-sided)": p_value_text(p),
                   "p (Holm)": p_value_text(claim.p_adjusted) if judged else ""},
            row={"messages": column, "measure": measure}, row_rank=MESSAGES.index(messages) * len(MEASURES) + rank, worse="both",
            verdict_label=SUPPORT[claim.verdict] if judged else "",
            details={"p": claim.p, "p_holm": claim.p_adjusted, "contrary_p_holm": claim.opposite_adjusted, "family": claim.family_size} if judged else {},
            figures=(Figure(f"Agent-agent coordination ({information} payoffs): the omniscient script minus separate agents", INTERVAL, f"{measure}: script - agents [95% CI]",
                            panel=measure, x=column, x_axis="pre-play messages", references={"no difference": 0.0}),),
        )  # fmt: skip
    (agents_mean, script_mean), p = means["coordination rate"], p_of["coordination rate"]
    gaamas.verdict(claim.verdict, f"{column}, {information} payoffs: the script coordinates {cell(script_mean)}, separate agents "
                                  f"{cell(agents_mean)} ({p_stated(p, 'one-sided p')}, {p_value_text(claim.p_adjusted)} after Holm over {claim.family_size} p-values)")  # fmt: skip


def omniscience(gaamas, messages):
    """The difference in differences of the cells' coordination beyond the players' own habits at
    ``messages``, and the two gaps it is made of (script - agents, private and common): each cell's
    excess is the one its own table shows, with the same resamples."""
    beyond = {(simulation, information): beyond_habits(games(gaamas, messages, simulation, information)[1],
                                                       cell_seed(gaamas.seed, messages, simulation, information))
              for simulation in SIMULATIONS for information in INFORMATION}  # fmt: skip
    gap = {information: [(1.0, beyond["script", information]), (-1.0, beyond["agents", information])] for information in INFORMATION}
    gained = metrics.excess_contrast(gap["private"] + [(-sign, excess) for sign, excess in gap["common"]])
    return gained, metrics.excess_contrast(gap["private"]).estimate, metrics.excess_contrast(gap["common"]).estimate


@pytest.mark.parametrize("messages", MESSAGES)
def test_omniscience_adds_success(gaamas, messages):
    """What the script gains from knowing what the agents do not: its lead over them in coordination
    beyond their own habits where only it knows both payoffs, less its lead where both agents know
    them too. One author's shared rule leads as much in both conditions, and cancels; a label two
    copies share when told both payoffs meets shuffled pairs as often, and scores nothing."""
    gains = {count: omniscience(gaamas, count) for count in MESSAGES}
    claim = verdicts.family({count: (gained.p, gained.contrary_p) for count, (gained, _, _) in gains.items()},
                            verdicts.blind_null(OMNISCIENCE))[messages]
    gained, private, common = gains[messages]
    column = COLUMNS[MESSAGES.index(messages)]
    gaamas.score(
        table=OMNISCIENCE_TABLE, metric="difference in differences: excess over shuffled pairs", estimate=gained.estimate, invalid=0,
        n=gained.estimate.n, verdict=claim.verdict, criterion=OMNISCIENCE_CRITERION, columns=OMNISCIENCE_COLUMNS, worse="both",
        cells={OMNISCIENCE_COLUMNS[0]: cell(private), OMNISCIENCE_COLUMNS[1]: cell(common), OMNISCIENCE_COLUMNS[2]: cell(gained.estimate),
               OMNISCIENCE_COLUMNS[3]: p_value_text(gained.p), OMNISCIENCE_COLUMNS[4]: p_value_text(claim.p_adjusted)},
        row={"messages": column}, row_rank=MESSAGES.index(messages), verdict_label=SUPPORT[claim.verdict],
        details={"p": claim.p, "p_holm": claim.p_adjusted, "contrary_p": gained.contrary_p, "contrary_p_holm": claim.opposite_adjusted,
                 "family": claim.family_size, "private_gap": private.as_json(), "common_gap": common.as_json()},
        figures=(Figure("Agent-agent coordination: what knowing the other's payoffs adds to the script", INTERVAL,
                        "excess over shuffled pairs: (script - agents) private - (script - agents) common [95% CI]", x=column,
                        x_axis="pre-play messages",
                        references={"nothing added": 0.0}),),
    )  # fmt: skip
    gaamas.verdict(claim.verdict, f"{column}: beyond their own habits, the script leads the agents by {cell(private)} with private payoffs "
                                  f"and by {cell(common)} with both known: omniscience adds {cell(gained.estimate)} ({p_stated(gained.p, 'one-sided p')}, "
                                  f"{p_value_text(claim.p_adjusted)} after Holm over {claim.family_size} p-values)")  # fmt: skip


@pytest.mark.parametrize("messages", MESSAGES)
def test_script_leaks_beyond_chance(gaamas, messages):
    """Leakage against its chance baseline, in the private game: the acts that would reveal the
    other's payoffs, by the script that saw them and by the agents that could only guess."""
    claim = script_claim(gaamas, messages, "private", revealing_rate, verdicts.blind_null(LEAKAGE))
    column = COLUMNS[MESSAGES.index(messages)]
    shown = {}
    for rank, (acts, kind) in enumerate(LEAKAGE_ACTS.items()):
        agents, script = by_game(gaamas, messages, "private", lambda o: revealing_rate(o, kind))  # noqa: B023
        if not agents or not script:
            continue  # no message without talk
        judged = kind is None
        difference, p = stats.mean_difference(script, agents), stats.stochastically_greater(script, agents)
        shown[acts] = stats.mean(agents), stats.mean(script), difference
        gaamas.score(
            table=LEAKAGE_TABLE, metric=f"script - agents: {acts}", estimate=difference, invalid=0, n=len(agents) + len(script),
            verdict=claim.verdict if judged else None, criterion=LEAKAGE_CRITERION if judged else "", columns=LEAKAGE_COLUMNS,
            cells={LEAKAGE_COLUMNS[0]: cell(shown[acts][0]), "script": cell(shown[acts][1]), "script - agents [95% CI]": cell(difference),
                   "p (script > agents, one-sided)": p_value_text(p), "p (Holm)": p_value_text(claim.p_adjusted) if judged else ""},
            row={"messages": column, "acts": acts}, row_rank=MESSAGES.index(messages) * len(LEAKAGE_ACTS) + rank, worse="up",
            verdict_label=SUPPORT[claim.verdict] if judged else "",
            details={"p": claim.p, "p_holm": claim.p_adjusted, "contrary_p_holm": claim.opposite_adjusted, "family": claim.family_size} if judged else {},
            figures=(Figure("Agent-agent coordination (private payoffs): revealing acts, script minus agents (chance)", INTERVAL,
                            "share of a game's acts: script - agents [95% CI]", panel=acts, x=column, x_axis="pre-play messages",
                            references={"chance: no excess": 0.0}),),
        )  # fmt: skip
    agents_all, script_all, excess = shown["all acts"]
    gaamas.verdict(claim.verdict, f"{column}: the script makes revealing acts in {cell(script_all)} of a game's acts, the agents, who could not "
                                  f"know, in {cell(agents_all)}: excess {cell(excess)} ({p_stated(claim.p, 'one-sided p')}, "
                                  f"{p_value_text(claim.p_adjusted)} after Holm over {claim.family_size} p-values)")  # fmt: skip


def group_and_players(gaamas, records, coordination, column, simulation, information):
    """The seed's two levels: how often the pair met, beside what each player chose for itself."""
    moves = [(p, e) for r in records for p in PLAYERS for e in r.outcome["players"][p] if e["valid"]]
    insists = stats.wilson(sum(e["move"] == FAVOURITE[p] for p, e in moves), len(moves))
    first = [(p, e) for p, e in moves if e["round"] == 1]
    opens = stats.wilson(sum(e["move"] == FAVOURITE[p] for p, e in first), len(first))
    gaamas.score(
        table=LEVELS_TABLE[information], metric="players' moves to their own favourite", estimate=insists, invalid=0, n=len(moves), passed=None,
        criterion="", columns=LEVELS_COLUMNS,
        cells={LEVELS_COLUMNS[0]: cell(coordination), LEVELS_COLUMNS[1]: cell(insists), LEVELS_COLUMNS[2]: cell(opens), LEVELS_COLUMNS[3]: str(len(moves))},
        row={"messages": column, "simulation": simulation}, row_rank=SIMULATIONS.index(simulation) * len(MESSAGES) + COLUMNS.index(column),
        figures=(Figure(f"Agent-agent coordination ({information} payoffs): moves to one's own favourite", INTERVAL,
                        "share of moves to the player's own favourite [95% CI]", x=column, x_axis="pre-play messages", series=simulation,
                        references={"mixed equilibrium (3/5)": 0.6} if information == "common" else {}, limits=(0.0, 1.0),
                        note="the pair's outcome is in the coordination figure; people's per-player choices for these payoffs are not in the shipped data"),),
    )  # fmt: skip
    if information != "common":
        return  # the mixed equilibrium and people's rates are those of the game where both know the matrix
    gaamas.reference(table=LEVELS_TABLE[information], label="theory: the mixed equilibrium",
                     cells={LEVELS_COLUMNS[0]: "0.48 without talk", LEVELS_COLUMNS[1]: "0.60 without talk", LEVELS_COLUMNS[2]: "0.60 without talk"},
                     source="each plays its favourite with probability 3/5 and they meet with probability 12/25", status="computed")  # fmt: skip
    gaamas.reference(table=LEVELS_TABLE[information], label="people (Cooper et al. 1989)",
                     cells={LEVELS_COLUMNS[0]: "0.48 no talk, 0.95 one-way, 0.55 two-way", LEVELS_COLUMNS[1]: "-", LEVELS_COLUMNS[2]: "-"},
                     source=PEOPLE_SOURCE + "; per-player choices for these payoffs are not in the shipped data", status="unverified")  # fmt: skip


def per_round(records, intervals=True):
    """Coordination and points of the pair, and the accuracy of each player's predictions, round by round."""
    scores = rounds.series(rounds.round_results(records), rates=(("coordination rate", "coordinated"),), means=(("points", "points"),),
                           intervals=intervals)  # fmt: skip
    predictions = rounds.series([r.outcome["players"][p] for r in records for p in PLAYERS], means=(), intervals=intervals)
    for round_score, prediction in zip(scores, predictions):
        round_score.measures.update(prediction.measures)
    return scores
