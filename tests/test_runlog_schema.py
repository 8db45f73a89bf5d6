"""A run log read back is checked against the types of what it is read into (pydantic, strict) before
anything is built from it: a value of the wrong type anywhere, however deep, is one line naming the
file, the field's place and what belongs there."""

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_gaamas import runlog
from pytest_gaamas.errors import UnreadableFile


@pytest.fixture(scope="module")
def document(smollm2_replay) -> dict:
    """A real run log, cut to a few scores and plays (every field a run log holds is in it)."""
    document = json.loads(json.dumps(smollm2_replay.document))
    plays = dict(list(document["plays"].items())[:6])
    # Kept whatever the plays' order (their keys are digests of the games): a strategy, and a trial
    # of two rounds or more, which the damage below reaches into.
    strategy = next(key for key, play in document["plays"].items() if play.get("strategy"))
    rounds, _ = _play(document)
    document["plays"] = {**plays, strategy: document["plays"][strategy], rounds: document["plays"][rounds]}
    with_figures = [s for s in document["scores"] if s["figures"]][:3]
    document["scores"] = document["scores"][:5] + with_figures
    return document


def _said(document: dict) -> str:
    with pytest.raises(UnreadableFile) as error:
        runlog.parse(json.dumps(document))
    return str(error.value)


def _play(document: dict) -> tuple[str, dict]:
    """The first play with a trial of two rounds or more."""
    return next((key, p) for key, p in document["plays"].items() if p["trials"] and len(p["trials"][0]["rounds"]) > 1)


DEEP = {  # a field deep in a run log, damaged, and what the one line says of it
    'plays["{play}"].trials[0].rounds[1].messages[0].content is 5, where text belongs':
        lambda d, play: d["plays"][play]["trials"][0]["rounds"][1]["messages"].insert(0, {"role": "user", "content": 5}),
    'plays["{play}"].trials[0].rounds[1].shared[1] is the text "2", where an integer belongs':
        lambda d, play: d["plays"][play]["trials"][0]["rounds"][1].update(shared=[0, "2"]),
    'plays["{play}"].trials[0].rounds[0].valid is 1, where true or false belongs':
        lambda d, play: d["plays"][play]["trials"][0]["rounds"][0].update(valid=1),
    'plays["{play}"].trials[0].outcome.valid is null, where true or false belongs':
        lambda d, play: d["plays"][play]["trials"][0]["outcome"].update(valid=None),
    "scores[5].figures[0].curve[1] is a list of 3, where a list of 2 belongs":
        lambda d, play: d["scores"][5]["figures"][0].update(curve=[[0, 1], [1, 2, 3]]),
    'scores[5].figures[0].curve[0][1] is the text "1", where a number belongs':
        lambda d, play: d["scores"][5]["figures"][0].update(curve=[[0, "1"]]),
    'scores[5].figures[0].references["rational"] is true, where a number belongs':
        lambda d, play: d["scores"][5]["figures"][0].update(references={"rational": True}),
    "scores[5].figures[0] has a field \"colour\" that no run log this pytest-gaamas wrote has":
        lambda d, play: d["scores"][5]["figures"][0].update(colour="red"),
    "scores[0].ci[1] is the text \"0.9\", where a number or null belongs":
        lambda d, play: d["scores"][0].update(ci=[0.1, "0.9"]),
    'scores[0].verdict is the text "passed", where "met" or "missed" or "at chance" or "inconclusive" belongs':
        lambda d, play: d["scores"][0].update(verdict="passed"),
    'run.models[0].usage.retries["timeout"] is 1.5, where an integer belongs':
        lambda d, play: d["run"]["models"][0].update(usage={"requests": 1, "retries": {"timeout": 1.5}}),
    'run.temperature is false, where a number or "paper" belongs': lambda d, play: d["run"].update(temperature=False),
    'null_rates["a table"].agents["random"].cells is 2.0, where an integer belongs':
        lambda d, play: d.update(null_rates={"a table": {"stale": False, "agents": {"random": {
            "cells": 2.0, "met_per_run": 0.1, "runs_with_met": 1, "runs": 10}}}}),
    'null_rates["a table"] has no stale (true or false)':
        lambda d, play: d.update(null_rates={"a table": {"agents": {}}}),
    "comparison.cells[0].old_ci[0] is the text \"low\", where a number or null belongs":
        lambda d, play: d.update(comparison={"cells": [{"behaviour": "b", "cell": "c", "models": "m", "old_ci": ["low", 1]}]}),
}  # fmt: skip


@pytest.mark.parametrize("said", DEEP)
def test_a_field_damaged_at_depth_is_one_line_naming_its_place(document, said):
    damaged = json.loads(json.dumps(document))
    play, _ = _play(damaged)
    DEEP[said](damaged, play)
    line = _said(damaged)
    assert line == f"run log: a damaged run log ({said.format(play=play)}); {runlog.REMEDY}"


def _leaves(value, here: tuple = ()) -> list[tuple]:
    """Every place in ``value`` that holds text, a number, true, false or null."""
    if isinstance(value, dict):
        return [place for key, child in value.items() for place in _leaves(child, (*here, key))]
    if isinstance(value, list):
        return [place for index, child in enumerate(value) for place in _leaves(child, (*here, index))]
    return [here]


def _pattern(place: tuple) -> str:
    """A place as the one line writes it: a key is a field's (.name) or a dict's (["name"]), which
    only its type says."""
    pattern = ""
    for key in place:
        if isinstance(key, int):
            pattern += rf"\[{key}\]"
        else:
            key = re.escape(key[:40] + ("..." if len(key) > 40 else ""))
            pattern += rf'(\.{key}|\["{key}"\])'
    return pattern


def test_a_list_where_any_checked_value_was_is_one_line_naming_exactly_that_place(document):
    """A real run log's value replaced anywhere by a list: a field whose type is any value (a round's
    decision, a score's details) takes it; any other is refused in one line naming its place, the
    list, and what belongs there. The places are drawn by their shape, so that a field held once is
    drawn as often as one held thousands of times (a message's content)."""
    by_shape: dict[tuple, list[tuple]] = {}
    for place in _leaves(document):
        if place[:1] != ("format",):
            shape = tuple("*" if isinstance(k, int) or (place[0] == "plays" and i == 1) else k for i, k in enumerate(place))
            by_shape.setdefault(shape, []).append(place)
    refused = []

    @settings(max_examples=300, suppress_health_check=list(HealthCheck), database=None, deadline=None)
    @given(st.sampled_from(sorted(by_shape, key=str)).flatmap(lambda shape: st.sampled_from(by_shape[shape])))
    def check(place):
        damaged = json.loads(json.dumps(document))
        parent = damaged
        for key in place[:-1]:
            parent = parent[key]
        parent[place[-1]] = ["x"]
        try:
            runlog.parse(json.dumps(damaged))
        except UnreadableFile as error:
            line = str(error)
            assert "\n" not in line and line.startswith("run log: a damaged run log (") and line.endswith(f"); {runlog.REMEDY}"), line
            said = "." + line.removeprefix("run log: a damaged run log (")
            assert re.match(rf"{_pattern(place)} is a list of 1, where [a-z\"]", said), (place, line)
            refused.append(place)

    check()
    assert len(refused) > 100  # most places are checked
