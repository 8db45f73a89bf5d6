"""SCRIPT against AGENTS as an instrument: the omniscient script is scored exactly as the agents'
play, information leakage is what its definition says (and zero for agents whatever they write),
the criterion tells a perfect script from agents who cannot know, and no script a model writes
stops a game."""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_gaamas import answers, metrics, stats, verdicts
from pytest_gaamas.games import bos_agents
from pytest_gaamas.games.bos_agents import FAVOURITE, INFORMATION, PLAYERS, AgentCoordinationGame, reveals_preference
from pytest_gaamas.games.commons import NAMES, NOBODY, PERSONAS, Commons, villager_catches
from pytest_gaamas.models.reference import ReferenceAgent
from pytest_gaamas.play import play_trial

LEAKING_MESSAGE = {"Y": "Z, you prefer B because it gives you 3 points.", "Z": "Y, I know you prefer A."}


class Writer:
    """Replies with ``write(decision)``: a planted agent or script writer."""

    spec = "planted"

    def __init__(self, write):
        self.write = write
        self.seen = []

    def reply(self, request):
        self.seen.append(request.decision)
        return self.write(request.decision)


def leaky_agent(decision):
    """Says the other's payoffs in every message and gives way at once: what an agent may guess."""
    situation = decision.situation
    if situation["phase"] == "message":
        return answers.dump({"message": LEAKING_MESSAGE[situation["player"]]})
    yielded = FAVOURITE[bos_agents.other(situation["player"])]
    return answers.dump({"prediction": yielded, "move": yielded})


def leaky_script(decision):
    """The same acts, written by an omniscient writer."""
    situation = decision.situation
    talk = [LEAKING_MESSAGE[p] for p in bos_agents.speakers(situation["messages"], situation["initiator"])]
    turns = [{p: {"prediction": FAVOURITE[bos_agents.other(p)], "move": FAVOURITE[bos_agents.other(p)]} for p in PLAYERS}] * situation["rounds"]
    return answers.dump({"messages": talk, "rounds": turns} if talk else {"rounds": turns})


@pytest.mark.parametrize(
    ("message", "writer", "reveals"),
    [
        ("Z, you prefer B because it gives you 3 points.", "Y", True),
        ("I think your favourite is B", "Y", True),
        ("Z wants B. Fine.", "Y", True),
        ("I prefer A.", "Y", False),  # its own preference: its own to say
        ("Let us meet at B.", "Y", False),  # a proposal, no payoff of the other's in it
        ("You prefer A, I bet.", "Y", False),  # the wrong meeting: Z's favourite is B
        ("A good plan: you pick, I like it.", "Z", False),  # "A" opens the sentence: no meeting named
        ("Y, you would rather meet at A", "Z", True),
        ("you want. B is", "Y", False),  # the preference and the meeting in two sentences
    ],
)
def test_a_message_reveals_the_others_preference_only_as_the_rule_says(message, writer, reveals):
    assert reveals_preference(message, writer) is reveals


@pytest.mark.parametrize("messages", [0, 1, 3])
def test_leakage_is_zero_for_agents_whatever_they_write_and_counted_for_the_script(messages):
    agents = [play_trial(AgentCoordinationGame(messages), Writer(leaky_agent), t, seed=0, temperature=0.7).outcome for t in range(4)]
    script = [play_trial(AgentCoordinationGame(messages, simulation="script"), Writer(leaky_script), t, seed=0, temperature=0.7).outcome
              for t in range(4)]  # fmt: skip
    assert all(o["leakage"]["leaks"] == 0 and not o["leakage"]["exposed"] for o in agents)
    for outcome in script:
        leakage = outcome["leakage"]
        assert leakage["exposed"] and len(leakage["acts"]) == messages + 2
        message_leaks = [a["leaks"] for a in leakage["acts"] if a["act"] == "message"]
        # each player's first message leaks; a later one too, as long as the other has not named its meeting
        assert message_leaks[:2] == [True] * min(messages, 2)
        moves = [a["leaks"] for a in leakage["acts"] if a["act"] == "round 1 move"]
        # a concession to a meeting some message named follows the talk; to one nobody named, a secret
        named = {m for message in outcome["messages"] for m in "AB" if bos_agents.names_meeting(message["text"], m)}
        assert moves == [FAVOURITE[bos_agents.other(p)] not in named for p in PLAYERS]
        assert leakage["rate"] == leakage["leaks"] / len(leakage["acts"]) > 0


def test_no_agent_prompt_holds_the_others_payoffs_and_the_scripts_holds_both():
    watcher = Writer(leaky_agent)
    play_trial(AgentCoordinationGame(3), watcher, 0, seed=0, temperature=0.7)
    for decision in watcher.seen:
        me = decision.situation["player"]
        text = json.dumps(decision.messages)
        assert bos_agents.system_prompt(bos_agents.other(me), bos_agents.ROUNDS) not in text
        assert "private" not in text
    script = AgentCoordinationGame(3, simulation="script").script_prompt(0)
    assert "Y's private payoffs" in script[0]["content"] and "Z's private payoffs" in script[0]["content"]


def test_the_script_is_scored_exactly_as_the_agents_play():
    """Agents play; their moves, written as a script, score the same rounds, points and accuracy."""
    for trial in range(6):
        agents = play_trial(AgentCoordinationGame(2), ReferenceAgent("random"), trial, seed=5, temperature=0.7).outcome
        turns = [{p: {k: agents["players"][p][r][k] for k in ("prediction", "move")} for p in PLAYERS} for r in range(bos_agents.ROUNDS)]
        talk = [m["text"] for m in agents["messages"]]
        script = play_trial(AgentCoordinationGame(2, simulation="script"), Writer(lambda d: answers.dump({"messages": talk, "rounds": turns})),
                            trial, seed=5, temperature=0.7).outcome  # fmt: skip
        assert script["rounds"] == agents["rounds"] and script["players"] == agents["players"]
        assert script["messages"] == agents["messages"]


@pytest.mark.parametrize(
    "reply",
    [
        "not json at all", "[]", "{}", '{"rounds": 3}', '{"rounds": []}', '{"rounds": [1, "x", null]}',
        '{"messages": "hi", "rounds": []}', '{"messages": [1, "' + "x" * 500 + '"], "rounds": [{"Y": {"prediction": "A"}}]}',
        json.dumps({"rounds": [{"Y": {"prediction": "A", "move": "A"}, "Z": {"prediction": "B", "move": "C"}}] * 30}),
        "```json\n" + json.dumps({"rounds": [{"Y": {"prediction": "A", "move": "A"}, "Z": {"prediction": "A", "move": "A"}}]}) + "\n```",
    ],
)
def test_a_broken_script_costs_its_rounds_and_stops_nothing(reply):
    outcome = play_trial(AgentCoordinationGame(2, simulation="script"), Writer(lambda d: reply), 0, seed=0, temperature=0.7).outcome
    assert len(outcome["rounds"]) == bos_agents.ROUNDS and len(outcome["messages"]) == 2
    for player in PLAYERS:
        for entry in outcome["players"][player]:
            assert entry["valid"] or entry["reason"]  # every unusable answer says why
    assert 0.0 <= outcome["leakage"]["rate"] <= 1.0


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                    lambda inner: st.lists(inner, max_size=12) | st.dictionaries(st.sampled_from(["rounds", "messages", "Y", "Z", "move", "prediction"]), inner, max_size=4),
                    max_leaves=40))  # fmt: skip
def test_any_json_a_script_writer_returns_makes_a_whole_game(value):
    game = AgentCoordinationGame(1, simulation="script")
    outcome = play_trial(game, Writer(lambda d: json.dumps(value)), 0, seed=0, temperature=0.7).outcome
    assert len(outcome["rounds"]) == game.rounds
    assert sum(r["valid"] for r in outcome["rounds"]) <= game.rounds


def test_the_criterion_tells_a_perfect_script_from_agents_who_cannot_know():
    """Without talk, rational agents meet only as well as the mixed equilibrium lets them; the
    rational script meets every round: the script overstates success. With talk they tie."""
    def rates(messages, simulation, kind):
        game = AgentCoordinationGame(messages, simulation=simulation)
        outcomes = [play_trial(game, ReferenceAgent(kind), t, seed=0, temperature=0.7).outcome for t in range(30)]
        return [sum(r["coordinated"] for r in o["rounds"]) / len(o["rounds"]) for o in outcomes]

    assert stats.stochastically_greater(rates(0, "script", "rational"), rates(0, "agents", "rational")) < 0.05
    assert stats.stochastically_greater(rates(0, "agents", "rational"), rates(0, "script", "rational")) > 0.5
    assert stats.stochastically_greater(rates(2, "script", "rational"), rates(2, "agents", "rational")) == 1.0
    assert stats.stochastically_greater(rates(2, "script", "random"), rates(2, "agents", "random")) > 0.05
    first_round = [r[0] for r in (play_trial(AgentCoordinationGame(0), ReferenceAgent("rational"), t, seed=0, temperature=0.7).outcome["rounds"]
                                  for t in range(400))]  # fmt: skip
    assert abs(sum(r["coordinated"] for r in first_round) / 400 - 12 / 25) < 0.07  # the mixed equilibrium meets 12/25 of the time


def test_the_seeds_game_tells_each_agent_both_payoffs_and_the_private_game_only_its_own():
    for information, knows_other in (("common", True), ("private", False)):
        watcher = Writer(leaky_agent)
        play_trial(AgentCoordinationGame(1, information=information), watcher, 0, seed=0, temperature=0.7)
        for decision in watcher.seen:
            me = decision.situation["player"]
            told = decision.messages[0]["content"]
            others = f"{bos_agents.other(me)} gets 3 points if both choose {FAVOURITE[bos_agents.other(me)]}"
            assert (others in told) is knows_other, (information, told)
    common = AgentCoordinationGame(1, simulation="script", information="common")
    assert "private" not in json.dumps(common.script_prompt(0)) and "Both players know all these payoffs" in common.script_prompt(0)[0]["content"]
    # nothing is private in the seed's game: the same revealing acts leak nothing there
    outcome = play_trial(common, Writer(leaky_script), 0, seed=0, temperature=0.7).outcome
    assert outcome["leakage"]["leaks"] == 0 and bos_agents.revealing_rate(outcome) > 0
    with pytest.raises(ValueError, match="information is one of common, private"):
        AgentCoordinationGame(1, information="partial")


def guessing_writer(rng):
    """Writes the script as an agent that cannot read the other's side would play: its concessions
    and messages are coin flips, the same acts the separate random agents make."""
    def write(decision):
        situation = decision.situation
        talk = [rng.choice(("Let us meet at A.", "Let us meet at B.")) for _ in range(situation["messages"])]
        turns = [{p: {"prediction": rng.choice("AB"), "move": rng.choice("AB")} for p in PLAYERS} for _ in range(situation["rounds"])]
        return answers.dump({"messages": talk, "rounds": turns} if talk else {"rounds": turns})
    return write


def leakage_claims(write_script, agent, seed=1):
    """The claim "the script leaks beyond chance" at each message count, Holm over the family, with 30 games a side."""
    from pytest_gaamas import verdicts

    rates = {}
    for messages in (0, 1, 2, 3):
        script_game, agents_game = (AgentCoordinationGame(messages, simulation=s, information="private") for s in ("script", "agents"))
        script = [bos_agents.revealing_rate(play_trial(script_game, Writer(write_script), t, seed=seed, temperature=0.7).outcome) for t in range(30)]
        agents = [bos_agents.revealing_rate(play_trial(agents_game, agent, t, seed=seed, temperature=0.7).outcome) for t in range(30)]
        rates[messages] = (stats.stochastically_greater(script, agents), stats.stochastically_greater(agents, script))
    return {m: claim.verdict for m, claim in verdicts.family(rates, verdicts.blind_null("the script leaks beyond chance")).items()}


def test_a_script_that_guesses_shows_no_leakage_beyond_chance_and_one_that_reads_the_other_does():
    """Planted writers against separate agents that concede and name meetings at random: a writer
    that guesses as they do is shown to leak no more often than the family's 5% allows (over 20
    seeds, a test whose false alarms ran at 20% would show 4 or more with probability 0.59); one
    that writes the other's private favourite into every message and concedes to it at once is
    shown to leak at every message count."""
    import random

    from pytest_gaamas import verdicts

    false_alarms = [seed for seed in range(20)
                    if verdicts.MET in leakage_claims(guessing_writer(random.Random(seed)), ReferenceAgent("random"), seed).values()]  # fmt: skip
    assert len(false_alarms) <= 2, false_alarms
    reading = leakage_claims(leaky_script, ReferenceAgent("random"))
    assert set(reading.values()) == {verdicts.MET}, reading
    # and the contrary: agents that concede at once, against a writer that never does, contradict it
    stubborn = lambda d: answers.dump({"rounds": [{p: {"prediction": FAVOURITE[p], "move": FAVOURITE[p]} for p in PLAYERS}] * d.situation["rounds"],  # noqa: E731
                                       **({"messages": ["Let us meet."] * d.situation["messages"]} if d.situation["messages"] else {})})
    assert leakage_claims(stubborn, Writer(leaky_agent))[0] == verdicts.MISSED


@pytest.mark.parametrize(("first", "second", "small"), [([1.0] * 10, [0.0] * 10, True), ([0.5] * 10, [0.5] * 10, False), ([], [1.0], False)])
def test_the_one_sided_test_of_two_samples(first, second, small):
    p = stats.stochastically_greater(first, second)
    assert (p < 0.05) is small and 0.0 <= p <= 1.0


# -- coordination beyond the players' own habits, and what omniscience adds ----------------------------


def pairs(game, agent, games=30, seed=0):
    """Each game's moves of Y and of Z, round by round, over ``games`` games of ``game``, and how
    each game was presented: the arguments of ``metrics.coordination_excess`` as the behaviour gives them."""
    outcomes = [play_trial(game, agent, t, seed=seed, temperature=0.7).outcome for t in range(games)]
    moves = [bos_agents.moves(o, "Y") for o in outcomes], [bos_agents.moves(o, "Z") for o in outcomes]
    return moves, {"strata": [bos_agents.presentation(o) for o in outcomes]}


def excess(game, agent, seed, games=30):
    moves, presented = pairs(game, agent, games, seed)
    return metrics.coordination_excess(*moves, seed=seed, **presented)


def always(label):
    """Both copies name ``label`` in every move, and the script writes it for both: a shared habit."""
    def write(decision):
        situation = decision.situation
        if situation["phase"] == "message":
            return answers.dump({"message": f"Let us meet at {label}."})
        move = {"prediction": label, "move": label}
        if situation["phase"] == "script":
            talk = {"messages": [f"Let us meet at {label}."] * situation["messages"]} if situation["messages"] else {}
            return answers.dump({**talk, "rounds": [{p: move for p in PLAYERS}] * situation["rounds"]})
        return answers.dump(move)
    return write


def follows_y(seed):
    """Round 1: a coin. Then both play what Y played in round 1: Z reads Y's history, so the pair
    meets from round 2 on, wherever Y's coin sent it."""
    import random

    rng = random.Random(seed)

    def write(decision):
        situation = decision.situation
        if situation["phase"] == "message":
            return answers.dump({"message": "Watch what Y does."})
        history = situation["history"]["Y"]
        move = history[0] if history and history[0] else rng.choice("AB")
        return answers.dump({"prediction": move, "move": move})
    return write


@pytest.mark.parametrize(("simulation", "messages"), [("agents", 0), ("agents", 2), ("script", 0), ("script", 3)])
@pytest.mark.parametrize("label", ["A", "B"])
def test_two_copies_with_one_label_habit_meet_every_round_and_show_no_excess(simulation, messages, label):
    """The label both always name, or the one the script's rules name first, for both players: real
    pairs meet every round, and so does Y of one game with Z of any other. The interval is [0, 0],
    the permutation test cannot reject, and the criterion is missed, where the coordination rate
    alone (1.0) would have met it."""
    beyond = excess(AgentCoordinationGame(messages, simulation=simulation), Writer(always(label)), seed=1)
    assert beyond.observed == beyond.baseline == 1.0
    assert (beyond.excess.value, beyond.excess.low, beyond.excess.high) == (0.0, 0.0, 0.0)
    assert beyond.p == 1.0


@pytest.mark.parametrize("agent", ["first", "last"])
def test_copies_that_answer_by_position_meet_no_more_than_shuffled_pairs(agent):
    """Each player is shown the meetings in its own order: copies answering by position meet about
    half the time, and exactly as often as a stranger shown the same orders: no excess."""
    for simulation in ("agents", "script"):
        beyond = excess(AgentCoordinationGame(1, simulation=simulation), ReferenceAgent(agent), seed=2)
        assert abs(beyond.observed - 0.5) < 0.2 and beyond.excess.value == 0.0 and beyond.p == 1.0


def last_in_the_form(decision):
    """One author, blind: writes for both players the meeting its form names last (Z's second)."""
    situation = decision.situation
    label = decision.schema["properties"]["rounds"]["items"]["properties"]["Z"]["properties"]["move"]["enum"][-1]
    talk = {"messages": ["Hi."] * situation["messages"]} if situation["messages"] else {}
    return answers.dump({**talk, "rounds": [{p: {"prediction": label, "move": label} for p in PLAYERS}] * situation["rounds"]})


def test_one_author_who_writes_both_players_from_the_form_meets_a_stranger_presented_alike_as_often():
    """The meeting the script's form names last changes from game to game with Z's order, and the
    blind author writes it for both players: they meet every round, a Y of a game presented otherwise
    only half the time, a Y of a game presented alike every time. Paired across presentations, the
    author would show an excess it does not have."""
    game = AgentCoordinationGame(2, simulation="script")
    alike = excess(game, Writer(last_in_the_form), seed=6)
    assert alike.observed == alike.baseline == 1.0 and alike.p == 1.0
    moves, _ = pairs(game, Writer(last_in_the_form))
    across = metrics.coordination_excess(*moves, seed=6)
    assert across.excess.value > 0.4 and across.p < 0.001


def test_a_pair_that_reads_each_other_shows_an_excess_over_its_habits():
    """Z reads Y's first move from the history and both keep it: they meet in rounds 2-10 wherever
    Y's coin sent it, which a Y of another game matches only half the time. The rational agents
    (a convention that begins with the opener's favourite, read from the talk; without talk, the
    first meeting found, kept) and the rational script show it too. Two coins show an excess no
    more often than the test's level allows: at most 3 of 20 seeds at p < 0.05 (a test whose false
    alarms ran at 20% would pass that with probability 0.41)."""
    game = AgentCoordinationGame(0)
    reading = excess(game, Writer(follows_y(3)), seed=3)
    assert reading.observed >= 0.9 and 0.3 < reading.excess.value and reading.excess.low > 0.2 and reading.p < 0.001
    for messages, simulation in ((0, "agents"), (2, "agents"), (1, "script"), (0, "script")):
        rational = excess(AgentCoordinationGame(messages, simulation=simulation), ReferenceAgent("rational"), seed=4)
        # Without talk the rational pair meets in round 1 by the mixed equilibrium's chance (12/25) and
        # then stays: how far the interval's low end stands above 0 depends on those draws.
        assert rational.observed > 0.8 and rational.excess.low > 0.1 and rational.p < 0.05 / 16, (messages, simulation, rational)
    false_alarms = [seed for seed in range(20) if excess(game, ReferenceAgent("random"), seed).p < 0.05]
    assert len(false_alarms) <= 3, false_alarms


def test_the_permutation_test_of_a_pairing_is_exact_for_a_few_games():
    """Five games whose two players always name the same label, A, B, A, B, A: a re-pairing meets as
    well as the real one when it sends A's to A's (3! 2! = 12 of 5! = 120): p = 0.1, exactly; and
    the shuffled pairs meet in 8 of the 20 pairs of distinct games."""
    labels = "ABABA"
    first = second = [[label] * 10 for label in labels]
    beyond = metrics.coordination_excess(first, second, seed=0)
    assert beyond.pairings == 120 and beyond.p == pytest.approx(12 / 120) and beyond.contrary_p == 1.0
    assert beyond.observed == 1.0 and beyond.baseline == pytest.approx(8 / 20) and beyond.excess.value == pytest.approx(0.6)
    # a pair that avoids each other: Z names the other label, and meets less than shuffled pairs do
    avoiding = metrics.coordination_excess(first, [["B" if label == "A" else "A"] * 10 for label in labels], seed=0)
    assert avoiding.observed == 0.0 and avoiding.excess.value < 0 and avoiding.p == 1.0 and avoiding.contrary_p == pytest.approx(12 / 120)


def test_an_unusable_move_meets_nothing_not_even_another_unusable_one():
    meetings = metrics.pair_meetings([["A", None], [None, None]], [["A", None], ["B", None]])
    assert meetings.tolist() == [[0.5, 0.0], [0.0, 0.0]]
    with pytest.raises(ValueError, match="as many games"):
        metrics.pair_meetings([["A"]], [])


def half(decision):
    """Y stays at A, Z alternates: they meet in every other round, whatever they are told or hear."""
    situation = decision.situation
    if situation["phase"] == "message":
        return answers.dump({"message": f"Let us meet at {FAVOURITE[situation['player']]}."})
    move = "A" if situation["player"] == "Y" or situation["round"] % 2 == 0 else "B"
    return answers.dump({"prediction": move, "move": move})


def told_both(decision):
    """Told the other's payoffs (the seed's game), both go where the talk's opener proposed, its own
    favourite: a convention knowing both payoffs makes, which changes with who opens; else ``half``."""
    talk = decision.situation.get("talk")
    if decision.situation["phase"] == "round" and talk and "Both of you know all these payoffs" in decision.messages[0]["content"]:
        meeting = talk[0].removeprefix("Let us meet at ").rstrip(".")
        return answers.dump({"prediction": meeting, "move": meeting})
    return half(decision)


def shared_label_when_told_both(decision):
    """Told the other's payoffs, both go to Y's favourite, in every game: a label both copies share
    when told a sentence, which is what a habit keyed to one of its words does; else ``half``."""
    if decision.situation["phase"] == "round" and "Both of you know all these payoffs" in decision.messages[0]["content"]:
        return answers.dump({"prediction": FAVOURITE["Y"], "move": FAVOURITE["Y"]})
    return half(decision)


def test_one_author_overstates_success_without_omniscience_and_the_difference_in_differences_tells_them_apart():
    """Played with one message, as the behaviour judges it: each cell's coordination beyond its
    players' own habits. The rational script writes a convention that begins with the opener's
    favourite in both conditions. Agents that meet every other round whatever they are told: the
    script leads in both, and adds nothing by knowing the other's payoffs. Agents that, told both
    payoffs, meet where the opener proposed: the script's lead exists only with private payoffs, and
    the difference in differences shows it. Agents that go to Y's favourite when told both payoffs
    meet every round then too, but as shuffled pairs do: what the raw rates would read as omniscience
    (0.5), the excess reads as nothing."""
    def beyond(information, simulation, agent, seed):
        return excess(AgentCoordinationGame(1, simulation=simulation, information=information), agent, seed)

    script = {i: beyond(i, "script", ReferenceAgent("rational"), seed) for seed, i in enumerate(INFORMATION)}
    assert all(script[i].excess.value > 0.3 and script[i].p < 0.001 for i in INFORMATION)

    def gained(agent):
        agents = {i: beyond(i, "agents", Writer(agent), seed) for seed, i in enumerate(INFORMATION, start=2)}
        return metrics.excess_contrast([(1.0, script["private"]), (-1.0, agents["private"]),
                                        (-1.0, script["common"]), (1.0, agents["common"])]), agents  # fmt: skip

    author, separate = gained(half)
    assert all(separate[i].excess.value == 0.0 for i in INFORMATION)
    assert metrics.excess_contrast([(1.0, script["private"]), (-1.0, separate["private"])]).p < 0.001  # one author vs two
    assert abs(author.estimate.value) < 0.1 and author.p > 0.05 and author.contrary_p > 0.05
    informed, agents = gained(told_both)
    assert agents["common"].observed == 1.0 and agents["common"].excess.low > 0.3
    assert informed.estimate.value > 0.3 and informed.p < 0.001 and informed.contrary_p > 0.99
    shared, agents = gained(shared_label_when_told_both)
    assert agents["common"].observed == 1.0 and agents["common"].excess.value == 0.0
    assert abs(shared.estimate.value) < 0.1 and shared.p > 0.05
    raw = {i: [sum(r["coordinated"] for r in o["rounds"]) / 10 for o in outcomes]
           for i, outcomes in ((i, [play_trial(AgentCoordinationGame(1, information=i), Writer(shared_label_when_told_both), t, seed=0,
                                               temperature=0.7).outcome for t in range(30)]) for i in INFORMATION)}  # fmt: skip
    assert stats.mean(raw["common"]).value - stats.mean(raw["private"]).value == 0.5  # the rates' reading: a gain it is not


def alternates_when_told_both(decision):
    """Told the other's payoffs, both take turns from Y's favourite, A, B, A, ...: the convention the
    mirrored payoffs invite, the same in every game; else ``half``."""
    if decision.situation["phase"] == "round" and "Both of you know all these payoffs" in decision.messages[0]["content"]:
        move = "AB"[decision.situation["round"] % 2]
        return answers.dump({"prediction": move, "move": move})
    return half(decision)


def test_a_convention_the_same_in_every_game_is_what_the_excess_cannot_see():
    """The price of judging omniscience beyond habits: agents that alternate from A when told both
    payoffs meet every round, and so do shuffled pairs, so the excess reads no gain where the raw
    rates read 0.5. Y prefers A in every game; while it does, such a convention is a habit to this
    design, and "not shown" is no evidence either way."""
    script = {i: excess(AgentCoordinationGame(1, simulation="script", information=i), ReferenceAgent("rational"), seed)
              for seed, i in enumerate(INFORMATION)}  # fmt: skip
    agents = {i: excess(AgentCoordinationGame(1, information=i), Writer(alternates_when_told_both), seed)
              for seed, i in enumerate(INFORMATION, start=2)}  # fmt: skip
    assert agents["common"].observed == agents["common"].baseline == 1.0
    gained = metrics.excess_contrast([(1.0, script["private"]), (-1.0, agents["private"]), (-1.0, script["common"]), (1.0, agents["common"])])
    assert abs(gained.estimate.value) < 0.1 and gained.p > 0.05
    raw = {i: stats.mean([sum(r["coordinated"] for r in o["rounds"]) / 10 for o in
                          (play_trial(AgentCoordinationGame(1, information=i), Writer(alternates_when_told_both), t, seed=0,
                                      temperature=0.7).outcome for t in range(30))]).value for i in INFORMATION}  # fmt: skip
    assert raw["common"] - raw["private"] == 0.5


def test_the_contrast_of_excesses_judges_cells_by_their_own_resamples():
    """A signed sum of cells' excesses takes each cell's own resampled games: no difference between a
    cell and itself re-seeded is shown, a cell whose pairs read each other leads a shared habit (and
    the contrary is not shown), two habits differ by nothing with no spread (p 1 both ways), and a
    cell with nothing to pair gives no contrast at all."""
    reading = excess(AgentCoordinationGame(0), Writer(follows_y(3)), seed=3)
    habit = excess(AgentCoordinationGame(0), Writer(always("A")), seed=4)
    lead = metrics.excess_contrast([(1.0, reading), (-1.0, habit)])
    assert lead.estimate.value == reading.excess.value and lead.estimate.low > 0.2 and lead.p < 0.001 and lead.contrary_p > 0.99
    again = metrics.excess_contrast([(1.0, reading), (-1.0, excess(AgentCoordinationGame(0), Writer(follows_y(3)), seed=5))])
    assert again.estimate.value == 0.0 and again.estimate.low < 0 < again.estimate.high and again.p > 0.05
    still = metrics.excess_contrast([(1.0, habit), (-1.0, excess(AgentCoordinationGame(0), Writer(always("B")), seed=6))])
    assert (still.estimate.value, still.p, still.contrary_p) == (0.0, 1.0, 1.0)  # no difference and no spread
    alone = metrics.coordination_excess([["A"]], [["A"]], seed=0)
    assert math.isnan(metrics.excess_contrast([(1.0, alone), (-1.0, habit)]).estimate.value)


# -- the commons ------------------------------------------------------------------------------------


def telling_villager(decision):
    """A villager that names each other villager's store and persona in its strategy."""
    situation = decision.situation
    if situation["phase"] == "cap":
        return answers.dump({"cap": 5})
    if situation["phase"] == "catch":
        return answers.dump({"catch": 5, "strategy": "Ben has 8 fish and is selfish, so I take 5."})
    return answers.dump({"punish": NOBODY})


def telling_script(decision):
    situation = decision.situation
    written = {}
    for name in situation["alive"]:
        other = next(n for n in situation["alive"] if n != name)
        written[name] = {"cap": 5, "catch": 5, "strategy": f"{other} has {situation['stores'][other]:g} fish, so I take 5.", "punish": NOBODY}
    return answers.dump(written)


def test_commons_leakage_is_zero_for_villagers_and_counted_for_the_script():
    villagers = [play_trial(Commons(), Writer(telling_villager), t, seed=0, temperature=0.7).outcome for t in range(3)]
    assert all(o["leakage"]["leaks"] == 0 and o["leakage"]["acts"] > 0 and not o["leakage"]["exposed"] for o in villagers)
    script = [play_trial(Commons(simulation="script"), Writer(telling_script), t, seed=0, temperature=0.7).outcome for t in range(3)]
    for outcome in script:
        assert outcome["leakage"]["exposed"] and outcome["leakage"]["rate"] == 1.0  # every strategy names another's store
        assert all(r["leaks"] == r["alive"] for r in outcome["rounds"])


def test_a_strategy_that_names_a_wrong_store_or_nobody_does_not_leak():
    game = Commons(simulation="script")
    stores = {n: 8.0 for n in NAMES[:4]}
    personas = {"Ana": "selfish", "Ben": "altruistic", "Cleo": "selfish", "Dev": "altruistic"}
    assert game.leaks({"Ana": "Ben has 9 fish."}, stores, personas, exposed=True) == []
    assert game.leaks({"Ana": "I have 8 fish."}, stores, personas, exposed=True) == []
    assert game.leaks({"Ana": "Ben is altruistic."}, stores, personas, exposed=True) == ["Ana"]  # Ben's persona
    assert game.leaks({"Ana": "Ben is selfish."}, stores, personas, exposed=True) == []  # not Ben's
    assert game.leaks({"Ana": "Ben has 8 fish."}, stores, personas, exposed=False) == []


def test_the_commons_script_sees_every_store_and_each_villager_only_its_own():
    game = Commons(simulation="script", scales=(1.0,))
    watcher = Writer(telling_script)
    play_trial(game, watcher, 0, seed=0, temperature=0.7)
    first = watcher.seen[0]
    assert "Ana 8 fish, Ben 8 fish, Cleo 8 fish, Dev 8 fish" in first.messages[1]["content"]
    assert all(n in first.messages[0]["content"] for n in NAMES[:4])
    assert len(watcher.seen) == game.rounds  # one request a round


@pytest.mark.parametrize(
    "reply",
    ["nonsense", "{}", '{"Ana": 3}', '{"Ana": {"cap": 99, "catch": -1, "strategy": 7, "punish": "Ana"}}',
     json.dumps({n: {"cap": 5, "catch": 5, "strategy": "x", "punish": "Eli"} for n in NAMES[:4]}),
     json.dumps({n: {"cap": "five", "catch": 5, "strategy": "x\n" * 400, "punish": NOBODY} for n in NAMES[:4]})],
)
def test_a_broken_commons_script_costs_answers_and_stops_nothing(reply):
    outcome = play_trial(Commons(simulation="script"), Writer(lambda d: reply), 0, seed=0, temperature=0.7).outcome
    assert outcome["valid"] and 0 <= outcome["survived_rounds"] <= 10
    assert sum(outcome["invalid"].values()) > 0 or all(len(s) <= 160 for r in outcome["rounds"] for s in r["strategies"].values())


def test_the_rational_script_plans_for_the_village_and_the_myopic_agents_do_not():
    game = Commons(simulation="script")
    planned = [play_trial(game, ReferenceAgent("rational"), t, seed=0, temperature=0.7).outcome for t in range(10)]
    myopic = [play_trial(Commons(), ReferenceAgent("rational"), t, seed=0, temperature=0.7).outcome for t in range(10)]
    assert all(o["survived"] for o in planned) and not any(o["survived"] for o in myopic)
    _, p = stats.survives_longer([o["survived_rounds"] for o in planned], [o["survived_rounds"] for o in myopic], game.rounds)
    assert p < 0.001


def persona_villager(selfish: float, altruistic: float):
    """A villager that asks ``selfish`` times its share of the regrowth when told it is selfish, and
    ``altruistic`` times it when told it is altruistic (1.5 and 0.5: it acts as its persona)."""
    def write(decision):
        situation = decision.situation
        game = Commons()
        share = game.sustainable_total(situation["lake"]) / situation["villagers"]
        factor = selfish if PERSONAS["selfish"] in decision.messages[0]["content"] else altruistic
        if situation["phase"] == "catch":
            return answers.dump({"catch": float(int(share * factor)), "strategy": "As I am told I am."})
        if situation["phase"] == "cap":
            return answers.dump({"cap": float(int(share))})
        return answers.dump({"punish": NOBODY})
    return write


def fidelity(agent) -> tuple[float, float, float]:
    """Over 10 societies of the harsh lake with mixed personas: the share that survive, and the
    one-sided p that the selfish villagers ask more than the altruistic (and that they ask less),
    personas exchanged among each society's villagers, as the commons' paradox tests it."""
    outcomes = [play_trial(Commons(), agent, t, seed=0, temperature=0.7).outcome for t in range(10)]
    strata = [(c["selfish"], c["altruistic"]) for c in map(villager_catches, outcomes)]
    greater, less = stats.exchanged_within_greater(strata), stats.exchanged_within_greater([(a, s) for s, a in strata])
    return sum(o["survived"] for o in outcomes) / 10, greater, less


#: The strictest step of the paradox's Holm family: its level (a blind agent's null, 0.05 / 14) over the
#: 7 mixed cells of the separate villagers and their contraries.
PARADOX_FIRST_STEP = verdicts.blind_null("the commons' selfish ask more (separate villagers)") / 14


def test_the_paradox_tells_villagers_who_act_as_their_personas_from_a_society_that_survives_without_them():
    """Seed 000's paradox where cooperation happens: villagers that follow their personas show it
    beyond the strictest step of the family's Holm correction (a sign-flip over 10 societies, at
    p >= 1/1024, never could); the sustainable villagers, who all take the same share whatever they
    were told to be, keep every society alive with no fidelity at all, which is what the commons
    flags as collective cooperation without individual fidelity."""
    _, faithful, contrary = fidelity(Writer(persona_villager(1.5, 0.5)))
    assert faithful < PARADOX_FIRST_STEP and contrary == 1.0
    survived, blind, blind_contrary = fidelity(ReferenceAgent("sustainable"))
    assert survived == 1.0 and blind == blind_contrary == 1.0
    _, against, reversed_contrary = fidelity(Writer(persona_villager(0.5, 1.5)))
    assert against == 1.0 and reversed_contrary < PARADOX_FIRST_STEP  # the contrary shows: the selfish ask less
