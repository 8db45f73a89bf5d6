"""The commons as an instrument: the reference societies land where theory says in every recorded
cell, the criteria tell societies apart, each villager sees only its own view, and nothing a model
answers stops a society."""

import importlib.util
import math
import re

import pytest
from conftest import ROOT
from hypothesis import given
from hypothesis import strategies as st

from pytest_gaamas import answers, stats
from pytest_gaamas.games.commons import MODULES, NAMES, Commons, gini
from pytest_gaamas.models.reference import ReferenceAgent
from pytest_gaamas.play import Reply, play_trial


def behaviour_module():
    """The behaviour file itself, under a name of its own (it shares this file's)."""
    spec = importlib.util.spec_from_file_location("commons_behaviour", ROOT / "behaviours" / "test_commons.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BEHAVIOUR = behaviour_module()
ABLATIONS, CELLS, DESIGNED_CLAIMS, SOCIETIES = BEHAVIOUR.ABLATIONS, BEHAVIOUR.CELLS, BEHAVIOUR.DESIGNED_CLAIMS, BEHAVIOUR.SOCIETIES


def societies(game: Commons, agent, count: int = SOCIETIES) -> list[dict]:
    return [play_trial(game, agent, t, seed=0, temperature=0.7).outcome for t in range(count)]


def cell_game(environment, personas, ablation) -> Commons:
    return Commons(environment=environment, personas=personas, modules=ABLATIONS[ablation])


@pytest.mark.parametrize("designed_cell", CELLS, ids=lambda c: "-".join(c))
def test_the_sustainable_society_lives_to_the_end_and_the_myopic_one_collapses_in_every_cell(designed_cell):
    game = cell_game(*designed_cell)
    sustainable = societies(game, ReferenceAgent("sustainable"))
    assert all(o["survived"] and o["survived_rounds"] == game.rounds for o in sustainable)
    assert all(0.9 <= o["harvest_ratio"] <= 1.0 for o in sustainable)  # its share, rounded down to whole fish
    myopic = societies(game, ReferenceAgent("rational"))
    assert all(o["survived_rounds"] == 0 and o["collapse"] == "the lake is exhausted" for o in myopic)
    assert all(o["harvest_ratio"] > 1.9 for o in myopic)
    random_ = societies(game, ReferenceAgent("random"))
    assert sum(o["survived"] for o in random_) <= 2  # chance play over-harvests: a rare society lives
    # the per-cell criterion tells them apart: the sustainable cell passes, the others miss
    rate = {name: stats.wilson(sum(o["survived"] for o in group), len(group)) for name, group in
            (("sustainable", sustainable), ("myopic", myopic), ("random", random_))}  # fmt: skip
    assert rate["sustainable"].low >= 0.5 and rate["myopic"].low < 0.5 and rate["random"].low < 0.5


class CapKeeper:
    """Keeps to the village's voted cap when there is one and proposes its sustainable share; takes
    all a boat holds when no cap is voted: a society that a group decision alone can save."""

    spec = "test:cap-keeper"

    def reply(self, request):
        situation, text = request.decision.situation, request.messages[-1]["content"]
        share = float(int(Commons().sustainable_total(situation["lake"]) / situation["villagers"]))
        if situation["phase"] == "cap":
            return answers.dump({"cap": share})
        if situation["phase"] == "punish":
            return answers.dump({"punish": "nobody"})
        cap = re.search(r"cap this round: (\d+) fish each", text)
        return answers.dump({"catch": float(cap.group(1)) if cap else 30.0, "strategy": "Keep to the cap."})


def test_each_claim_tells_societies_apart_and_finds_nothing_where_there_is_nothing():
    game = cell_game("harsh", "mixed", "all modules")
    living = [o["survived_rounds"] for o in societies(game, ReferenceAgent("sustainable"))]
    dying = [o["survived_rounds"] for o in societies(game, ReferenceAgent("rational"))]
    z, p = stats.survives_longer(living, dying, game.rounds)
    assert z > 0 and p < 0.001
    assert stats.survives_longer(dying, living, game.rounds)[1] > 0.5  # one-sided: the other way is no support
    assert stats.survives_longer(living, living, game.rounds) == (pytest.approx(math.nan, nan_ok=True), 1.0)
    assert stats.survives_longer(dying, dying, game.rounds)[1] == 1.0


def test_a_group_decision_alone_saves_a_society_that_keeps_to_its_cap():
    """Through the whole game, not only the test: with the cap voted, cap keepers live to the end;
    without it they empty the lake; the claim's test says so."""
    claim = "a group decision alone suffices"
    longer, shorter = DESIGNED_CLAIMS[claim]
    with_cap = [o["survived_rounds"] for o in societies(cell_game(*longer), CapKeeper())]
    without = [o["survived_rounds"] for o in societies(cell_game(*shorter), CapKeeper())]
    assert all(r == 10 for r in with_cap) and all(r == 0 for r in without)
    assert stats.survives_longer(with_cap, without, 10)[1] < 0.05


class Spy:
    """Answers with its own marker, and keeps every prompt it was sent, by villager."""

    spec = "test:spy"

    def __init__(self):
        self.prompts: dict[str, list[str]] = {}

    def reply(self, request):
        situation = request.decision.situation
        me = situation["me"]
        self.prompts.setdefault(me, []).append("\n".join(m["content"] for m in request.messages))
        if situation["phase"] == "cap":
            return answers.dump({"cap": 7})
        if situation["phase"] == "punish":
            return answers.dump({"punish": "nobody"})
        catch = 5 + NAMES.index(me)  # distinct stores: the largest is the last villager's
        return answers.dump({"catch": catch, "strategy": f"secret plan of {me}"})


@pytest.mark.parametrize("modules", [MODULES, ("punishment", "group decision")], ids=["with social learning", "without"])
def test_each_villager_sees_only_its_own_view(modules):
    spy = Spy()
    game = Commons(modules=modules)
    play_trial(game, spy, 0, seed=0, temperature=0.7)
    assert set(spy.prompts) == set(NAMES[: game.villagers])
    for me, prompts in spy.prompts.items():
        others = [n for n in NAMES[: game.villagers] if n != me]
        for prompt in prompts:
            assert prompt.startswith(f"You are {me},")
            assert prompt.count("Your store:") == 1 and "store:" not in prompt.replace("Your store:", "")
            leaked = [n for n in others if f"secret plan of {n}" in prompt]
            if "social learning" not in modules:
                assert leaked == [], (me, leaked)
            else:  # only the one strategy the module shows, of the one villager it names
                shown = re.findall(r"largest store now is (\w+), whose strategy", prompt)
                assert leaked == [n for n in shown if n != me]
    if "social learning" in modules:
        assert any("secret plan of Dev" in p for p in spy.prompts["Ana"])  # Dev catches most, so holds most


def test_the_game_is_a_pure_function_of_its_parameters():
    game = Commons(environment="rich", personas="selfish")
    first = [play_trial(game, ReferenceAgent("random"), t, seed=3, temperature=0.7) for t in range(3)]
    again = [play_trial(game, ReferenceAgent("random"), t, seed=3, temperature=0.7) for t in range(3)]
    assert [r.to_json() for r in first] == [r.to_json() for r in again]
    assert Commons().fingerprint() != Commons(environment="rich").fingerprint()
    with pytest.raises(ValueError):
        Commons(environment="desert")
    with pytest.raises(ValueError):
        Commons(modules=("telepathy",))


class Hostile:
    """Every kind of unusable answer a model gives, in turn."""

    spec = "test:hostile"
    replies = ('{"catch": -5, "strategy": "x"}', '{"catch": "lots"}', '{"catch": NaN}', "I will fish a lot.",
               '{"cap": 1e400}', '{"punish": "Zed"}', '{"catch": 31}', "```json\n{\"punish\": [\"Ana\"]}\n```", "")  # fmt: skip

    def __init__(self):
        self.count = 0

    def reply(self, request):
        self.count += 1
        return Reply(self.replies[self.count % len(self.replies)], truncated=self.count % 7 == 0)


def test_unusable_answers_are_counted_and_the_society_goes_on():
    agent = Hostile()
    record = play_trial(Commons(), agent, 0, seed=0, temperature=0.7)
    outcome = record.outcome
    assert not any(r.valid for r in record.rounds)
    assert sum(outcome["invalid"].values()) == len(record.rounds) == agent.count
    # nobody fishes: a store of 8 feeds two rounds of 4, and in the third the village empties
    assert outcome["collapse"] == "one villager or none is left" and outcome["survived_rounds"] == 2


@given(st.lists(st.floats(0, 1000), min_size=1, max_size=8), st.floats(0.1, 100))
def test_gini_is_a_measure_of_inequality(stores, scale):
    g = gini(stores)
    n = len(stores)
    assert -1e-9 <= g <= 1 - 1 / n + 1e-9
    assert gini([v * scale for v in stores]) == pytest.approx(g, abs=1e-9)
    assert gini([stores[0]] * n) == pytest.approx(0.0, abs=1e-12)
    if n > 1:
        assert gini([0.0] * (n - 1) + [5.0]) == pytest.approx(1 - 1 / n)
