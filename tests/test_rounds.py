"""Counting a repeated game's invalid answers in the unit of its cell's n."""

from pytest_gaamas import rounds


def answer(valid: bool, correct: bool = True) -> dict:
    return {"valid": valid, "correct": correct, "points": 1.0 if valid else None}


def test_a_trial_lost_whole_is_invalid_in_every_round_and_counts_as_an_invalid_trial():
    """An invalid strategy plays no round: its cell once said `invalid per cell 0` beside a finding
    that the strategy was invalid."""
    lost = []
    partly = [answer(True), answer(False), answer(True)]
    whole = [answer(True)] * 3
    played = [lost, partly, whole]
    assert rounds.invalid_trials(played) == 2
    assert rounds.invalid_rounds(played, rounds_per_trial=3) == 3 + 1
    per_round = rounds.series(played, rates=(("accuracy", "correct"),))
    assert [r.invalid for r in per_round] == [1, 2, 1]
    assert [r.measures["accuracy"].n for r in per_round] == [2, 1, 2]


def test_a_cell_of_invalid_strategies_counts_every_trial_invalid():
    played = [[] for _ in range(30)]
    assert rounds.invalid_trials(played) == 30
    assert rounds.invalid_rounds(played, rounds_per_trial=10) == 300
    assert rounds.series(played) == []
