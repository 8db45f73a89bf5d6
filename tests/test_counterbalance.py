"""Counterbalancing, tested as a property of every game that lists options: an agent that answers by
position or by rote scores what chance gives it, never what reading the game gives."""

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_gaamas.counterbalance import Wordings, factors, latin_ordering, ordering, rotated
from pytest_gaamas.games.bos_agents import PLAYERS, AgentCoordinationGame
from pytest_gaamas.games.dictator import DictatorGame, UltimatumGame
from pytest_gaamas.games.prisoners import VERSIONS, PrisonersDilemma
from pytest_gaamas.games.repeated import MATCHING_PENNIES, RPS_WIN_DRAW_LOSS, HiddenPatternGame
from pytest_gaamas.models.reference import ReferenceAgent, shortcut_answer
from pytest_gaamas.play import play_trial


@given(st.lists(st.integers(1, 5), min_size=1, max_size=4))
def test_every_combination_of_levels_occurs_once_in_a_whole_cycle(levels):
    cycle = 1
    for count in levels:
        cycle *= count
    combinations = [factors(trial, *levels) for trial in range(cycle)]
    assert len(set(combinations)) == cycle
    assert all(0 <= digit < count for combination in combinations for digit, count in zip(combination, levels))


@given(st.lists(st.integers(), min_size=1, max_size=6, unique=True), st.integers(0, 50))
def test_a_rotation_puts_each_option_at_each_place_once(options, start):
    places = [rotated(options, start + shift) for shift in range(len(options))]
    for place in range(len(options)):
        assert sorted(p[place] for p in places) == sorted(options)


def test_factors_refuses_a_factor_without_levels():
    with pytest.raises(ValueError, match="at least one level"):
        factors(3, 2, 0)


def shortcut_play(game, kind: str, trials: int) -> list[dict]:
    agent = ReferenceAgent(kind)
    return [play_trial(game, agent, t, seed=0, temperature=0.7).outcome for t in range(trials)]


@pytest.mark.parametrize("kind", ["first", "last", "constant", "blind-sorts-last", "blind-sorts-first"])
@pytest.mark.parametrize("labels", ["named", "anonymised"])
def test_no_position_and_no_spelling_cooperates_more_than_half_the_time(kind, labels):
    """A label's spelling is counterbalanced like its place: "Defect" sorts after "Cooperate",
    "Betray" before "Trust", so the label that sorts last (or first) cooperates in half the trials."""
    outcomes = shortcut_play(PrisonersDilemma("Classic", "Rational", labels), kind, 120)
    assert sum(o["cooperated"] for o in outcomes) == 60, (kind, labels)
    listed = {tuple(o["presented"]["listed"]) for o in outcomes}
    pairs = {"named": {("Cooperate", "Defect"), ("Trust", "Betray")}, "anonymised": {("Foo", "Bar")}}[labels]
    assert listed == pairs | {(second, first) for first, second in pairs}


def test_a_strategy_plays_one_pair_of_labels_in_both_orders():
    game = PrisonersDilemma("Classic", "Rational", "Cooperate / Defect")
    assert {tuple(game.listed(t)) for t in range(4)} == {("Cooperate", "Defect"), ("Defect", "Cooperate")}
    assert "Cooperate" in game.strategy().rules
    with pytest.raises(ValueError, match="one pair of labels"):
        PrisonersDilemma("Classic", "Rational", "named").strategy()


@pytest.mark.parametrize("game", [DictatorGame("assistant"), UltimatumGame("proposer")], ids=["dictator", "proposer"])
@pytest.mark.parametrize("kind", ["first", "last", "constant"])
def test_an_end_of_the_range_keeps_half_the_pie_on_average(game, kind):
    kept = [o["my_share"] for o in shortcut_play(game, kind, 30)]
    assert sum(kept) / len(kept) == 50
    if kind != "constant":
        assert sorted(set(kept)) == [0, 100]  # both framings: the bottom of "keep" and of "give"


@pytest.mark.parametrize("kind", ["first", "last"])
def test_the_responder_s_first_answer_is_accept_in_half_the_trials(kind):
    outcomes = shortcut_play(UltimatumGame("responder"), kind, 30)
    assert sum(o["accepted"] for o in outcomes) == 15


@pytest.mark.parametrize("kind", ["first", "last", "constant"])
@pytest.mark.parametrize(("rules", "patterns"), [
    (MATCHING_PENNIES, (("Head",), ("Tail",))),
    (RPS_WIN_DRAW_LOSS, (("Rock",), ("Paper",), ("Scissors",))),
    (RPS_WIN_DRAW_LOSS, (("Rock", "Paper"), ("Paper", "Scissors"), ("Scissors", "Rock"))),
], ids=["pennies", "rps constant", "rps 2-loop"])
def test_a_move_by_rote_predicts_a_hidden_pattern_at_chance(kind, rules, patterns):
    game = HiddenPatternGame(rules, patterns)
    cycle = len(patterns) * len(rules.moves)
    outcomes = shortcut_play(game, kind, cycle)
    correct = sum(r["correct"] for o in outcomes for r in o["rounds"])
    assert correct * len(rules.moves) == cycle * game.rounds


@pytest.mark.parametrize("kind", ["first", "last"])
def test_two_copies_answering_by_position_meet_as_two_coins_do(kind):
    game = AgentCoordinationGame(0)
    outcomes = shortcut_play(game, kind, 8)
    met = [all(r["moves"]["Y"] == r["moves"]["Z"] for r in o["rounds"]) for o in outcomes]
    assert sum(met) == 4  # their orders agree in half the games, independently of who opens
    assert {o["initiator"] for o in outcomes} == set(PLAYERS)


def test_the_script_s_form_lists_each_player_in_that_player_s_order():
    game = AgentCoordinationGame(1, simulation="script")
    schema = game.script_schema(2)["properties"]["rounds"]["items"]["properties"]
    assert schema["Y"]["properties"]["move"]["enum"] == list(game.listed(2, "Y"))
    assert schema["Z"]["properties"]["move"]["enum"] == list(game.listed(2, "Z"))
    assert game.listed(2, "Y") != game.listed(2, "Z")


def test_a_shortcut_answers_from_the_form_alone():
    form = {"type": "object", "properties": {
        "pick": {"type": "string", "enum": ["b", "a", "c"]}, "amount": {"type": "number", "minimum": 10, "maximum": 20},
        "count": {"type": "integer", "minimum": 0, "maximum": 5}, "note": {"type": "string"},
        "turns": {"type": "array", "items": {"type": "boolean"}, "minItems": 2, "maxItems": 3}}}
    assert shortcut_answer(form, "first") == {"pick": "b", "amount": 10, "count": 0, "note": "", "turns": [True, True]}
    assert shortcut_answer(form, "last") == {"pick": "c", "amount": 20, "count": 5, "note": "", "turns": [False] * 3}
    assert shortcut_answer(form, "constant") == {"pick": "a", "amount": 15, "count": 2, "note": "", "turns": [True, True]}
    assert shortcut_answer({}, "first") == ""  # a request for code: no form to answer


def test_every_version_is_counterbalanced_alike():
    for version in VERSIONS:
        game = PrisonersDilemma(version, "Neutral", "anonymised")
        arrangements = {(game.listed(t), game.actions(t)) for t in range(4)}
        assert len(arrangements) == 4, version
        rng = random.Random(0)
        trial = rng.randrange(120)
        c, d = game.actions(trial)
        text = game.messages(trial)[-1]["content"]
        r, s, t, p = game.rstp
        assert f"If both choose {c}, each gets {r:g} points" in text and f"If both choose {d}, each gets {p:g} points" in text


def test_wordings_say_the_text_first_then_every_combination_of_its_parts_once():
    wordings = Wordings("You have", (" $100", " 100 dollars"), (" to split.", " to divide."))
    assert [wordings[i] for i in range(len(wordings))] == [
        "You have $100 to split.", "You have 100 dollars to split.", "You have $100 to divide.", "You have 100 dollars to divide."]
    assert wordings[4] == wordings[0]  # they cycle past their number
    with pytest.raises(ValueError, match="not all distinct"):
        Wordings(("a", "ab"), ("b", ""))  # "ab" + "" is "a" + "b"


@pytest.mark.parametrize("count", [2, 3, 4])
def test_a_latin_ordering_puts_each_thing_in_each_place_once_in_every_run_of_count(count):
    orders = [latin_ordering(index, count) for index in range(math.factorial(count))]
    assert orders[0] == tuple(range(count)) and len(set(orders)) == len(orders)
    for start in range(0, len(orders), count):
        for place in range(count):
            assert sorted(order[place] for order in orders[start:start + count]) == list(range(count))
    assert ordering(0, count) == tuple(range(count)) and len({ordering(i, count) for i in range(math.factorial(count))}) == math.factorial(count)
