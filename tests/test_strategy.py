"""Strategy mode's contract: finding the code in a reply, and what makes a strategy invalid."""

import pytest

from pytest_gaamas.games.dictator import AlignmentGame, DictatorGame, UltimatumGame, smallest_accepted
from pytest_gaamas.games.prisoners import PrisonersDilemma
from pytest_gaamas.games.repeated import MATCHING_PENNIES, RPS_PREDICTION, RPS_WIN_DRAW_LOSS, HiddenPatternGame
from pytest_gaamas.games.ring import RingGame
from pytest_gaamas.strategy import extract_code
from pytest_gaamas.strategy_run import run_strategy

GAMES = {
    "dictator": DictatorGame("assistant"),
    "alignment": AlignmentGame("utilitarian"),
    "proposer": UltimatumGame("proposer"),
    "responder": UltimatumGame("responder"),
    "ring, player 2": RingGame(player=2, belief="implicit"),
    "ring, player 1, CR": RingGame(player=1, belief="given", conditional_reasoning=True),
    "prisoner's dilemma": PrisonersDilemma("High", "Neutral", "anonymised"),
    "matching pennies": HiddenPatternGame(MATCHING_PENNIES, (("Head", "Tail"),)),
    "rock-paper-scissors": HiddenPatternGame(RPS_PREDICTION, (("Rock", "Paper", "Scissors"),)),
}


def test_code_comes_from_the_fenced_block_that_defines_the_function():
    reply = "Here is a helper:\n```python\ndef helper():\n    pass\n```\nand the strategy:\n```python\ndef my_share(pie):\n    return 50\n```"
    assert extract_code(reply, "my_share").value == "def my_share(pie):\n    return 50\n"


def test_a_block_left_open_at_the_end_of_the_reply_is_still_the_code():
    reply = "Sure.\n```python\ndef my_share(pie):\n    return 50\n"
    assert extract_code(reply, "my_share").value == "def my_share(pie):\n    return 50\n"


def test_code_comes_from_a_json_code_field_or_a_bare_function():
    assert extract_code('{"code": "def f(x):\\n    return 1"}', "f").value == "def f(x):\n    return 1\n"
    assert extract_code("def f(x):\n    return 1", "f").valid


def test_a_reply_without_code_is_no_strategy():
    answer = extract_code("I would keep half of the money.", "my_share")
    assert not answer.valid and answer.reason.startswith("no code")


@pytest.mark.parametrize("game", GAMES.values(), ids=GAMES)
def test_each_contract_names_its_signature_and_the_reference_strategies_play_it(game):
    contract = game.strategy()
    prompt = contract.messages()[-1]["content"]
    assert contract.signature in prompt and "```python" in prompt
    for agent in ("rational", "random"):
        result = run_strategy(game, contract, contract.references[agent], 6, seed=3)
        assert result.valid, (agent, result.failure)
        assert all(r.valid for r in result.records)


def test_a_value_the_game_rejects_makes_the_whole_strategy_invalid():
    game = DictatorGame("assistant")
    result = run_strategy(game, game.strategy(), "def my_share(pie):\n    return pie + 50\n", 5, seed=1)
    assert result.failure.kind == "illegal action" and "out of range" in result.failure.reason
    assert len(result.records) == 5 and not any(r.valid for r in result.records)


@pytest.mark.parametrize(
    ("game", "code"),
    [
        (DictatorGame("assistant"), "def my_share(pie):\n    return '50'\n"),
        (DictatorGame("assistant"), "def my_share(pie):\n    return True\n"),
        (UltimatumGame("responder"), "def accept(pie, offer):\n    return 'accept'\n"),
        (HiddenPatternGame(MATCHING_PENNIES, (("Head",),)), "def play(opponent_moves):\n    return 'Head'\n"),
        (HiddenPatternGame(MATCHING_PENNIES, (("Head",),)), "def play(opponent_moves):\n    return ['Head']\n"),
    ],
)
def test_a_value_of_the_wrong_type_is_a_wrong_return_type(game, code):
    assert run_strategy(game, game.strategy(), code, 3, seed=1).failure.kind == "wrong return type"


def test_a_strategy_that_fails_in_a_late_round_fails_whole():
    game = HiddenPatternGame(RPS_PREDICTION, (("Rock",),))
    code = "def predict(opponent_moves):\n    if len(opponent_moves) == 7:\n        raise KeyError('round 8')\n    return 'Paper'\n"
    result = run_strategy(game, game.strategy(), code, 4, seed=1)
    assert result.failure.kind == "raised" and "round 8" in result.failure.reason
    assert result.calls == 8


def test_a_responder_strategy_is_read_whole_for_its_smallest_accepted_offer():
    game = UltimatumGame("responder")
    result = run_strategy(game, game.strategy(), "def accept(pie, offer):\n    return offer >= 0.3 * pie\n", 3, seed=1)
    assert smallest_accepted(result.probes) == 30
    assert len(result.probes) == 101 and result.to_json()["probes"][30] == [[100, 30], True]
    never = run_strategy(game, game.strategy(), "def accept(pie, offer):\n    return False\n", 3, seed=1)
    assert smallest_accepted(never.probes) is None


def test_a_strategy_that_plays_from_a_set_scores_the_same_in_every_replay():
    """A recorded strategy once scored 24 or 33 points from one replay to the next: it played the
    moves of a set of strings in the set's order, which each process salted at random."""
    game = HiddenPatternGame(RPS_WIN_DRAW_LOSS, (("Rock", "Rock", "Paper"),))
    code = (
        "def play(opponent_moves):\n"
        "    moves = list({'Rock', 'Paper', 'Scissors'} | set(opponent_moves))\n"
        "    return [moves[len(opponent_moves) % 3], moves[0]]\n"
    )
    replays = [run_strategy(game, game.strategy(), code, 2, seed=1) for _ in range(5)]
    assert all(replay.valid for replay in replays)
    points = [[[r["points"] for r in record.outcome["rounds"]] for record in replay.records] for replay in replays]
    assert all(p == points[0] for p in points), points
