"""The portfolio game: parsing, the budget tolerance, and the reference agents' replies."""

import random

import pytest

from pytest_gaamas.games.portfolio import PortfolioGame, parse_allocation, sample_subjects
from pytest_gaamas.models.reference import ReferenceAgent
from pytest_gaamas.play import play_trial


@pytest.mark.parametrize(
    "reply, points",
    [
        ('{"asset_a": 60, "asset_b": 40}', (60.0, 40.0)),
        (' {"asset_b": 0.5, "asset_a": 99.5}\n', (99.5, 0.5)),
        ('```json\n{"asset_a": 30, "asset_b": 70.4}\n```', (30.0, 70.4)),
        ('{"asset_a": 50.5, "asset_b": 50.5}', (50.5, 50.5)),  # 101: inside the 1-point tolerance
    ],
)
def test_valid_allocations(reply, points):
    answer = parse_allocation(reply)
    assert answer.valid and answer.value == points


@pytest.mark.parametrize(
    "reply, kind",
    [
        ("", "empty reply"),
        ("I would invest 60 in A", "not JSON"),
        ("[60, 40]", "not a JSON object"),
        ('{"asset_a": 60}', "missing field"),
        ('{"asset_a": "60", "asset_b": 40}', "not a number"),
        ('{"asset_a": true, "asset_b": 40}', "not a number"),
        ('{"asset_a": 10, "asset_b": 2}', "off the budget line"),
        ('{"asset_a": 120, "asset_b": -20}', "negative allocation"),
        ('{"asset_a": NaN, "asset_b": 40}', "not JSON"),
        ('{"asset_a": 1e400, "asset_b": 40}', "not JSON"),
        ('{"asset_a": 60, "asset_a": 50, "asset_b": 40}', "not JSON"),
    ],
)
def test_invalid_allocations_say_why(reply, kind):
    answer = parse_allocation(reply)
    assert not answer.valid
    assert answer.reason.split(":")[0] == kind


def test_subject_sampling_is_seeded_and_distinct():
    assert sample_subjects(30, 0) == sample_subjects(30, 0)
    assert sample_subjects(30, 0) != sample_subjects(30, 1)
    assert len({s.subject for s in sample_subjects(30, 0)}) == 30


def test_a_trial_asks_the_25_budgets_of_its_subject():
    game = PortfolioGame(sample_subjects(2, 0))
    record = play_trial(game, ReferenceAgent("rational"), 1, seed=0, temperature=0.0)
    assert len(record.rounds) == 25
    assert record.outcome["subject"] == game.subjects[1].subject
    assert record.outcome["ccei"] == 1.0
    assert len({r.seed for r in record.rounds}) == 25  # every request distinct


def test_the_human_reference_replays_the_subjects_own_choices():
    subjects = sample_subjects(5, 3)
    game = PortfolioGame(subjects)
    for trial, subject in enumerate(subjects):
        record = play_trial(game, ReferenceAgent("human"), trial, seed=0, temperature=0.0)
        assert record.valid
        assert record.outcome["ccei"] == pytest.approx(subject.authors_ccei, abs=0.03)


def test_a_trial_stops_at_its_first_invalid_answer():
    class Babbler:
        spec = "test:babbler"

        def reply(self, request):
            return "no idea"

    record = play_trial(PortfolioGame(sample_subjects(1, 0)), Babbler(), 0, seed=0, temperature=0.0)
    assert not record.valid and len(record.rounds) == 1
    assert record.outcome["reason"].startswith("not JSON")


def test_unknown_reference_agent():
    game = PortfolioGame(sample_subjects(1, 0))
    with pytest.raises(ValueError, match="no reference agent"):
        game.reference_reply("oracle", {}, random.Random(0))
