"""The commons as an instrument: the reference societies land where theory says in every recorded
cell, the criteria tell societies apart, each villager sees only its own view, and nothing a model
answers stops a society."""

import importlib.util
import json
import math
import re

import pytest
from conftest import ROOT
from hypothesis import given
from hypothesis import strategies as st

from pytest_gaamas import answers, stats, verdicts
from pytest_gaamas.games.commons import (
    MODULES,
    NAMES,
    NOBODY,
    SCALES,
    Commons,
    adoptions,
    first_amounts,
    gini,
    plurality,
    similarity,
)
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
    return BEHAVIOUR.game_of(environment, personas, ablation)


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


class FixedCatch:
    """Asks the same catch every round and proposes it as the cap, votes the first cap listed, punishes
    nobody: a society that never reads the lake."""

    spec = "test:fixed-catch"

    def __init__(self, catch: float):
        self.catch = catch

    def reply(self, request):
        phase, options = request.decision.situation["phase"], request.decision.situation["options"]
        fields = {"cap": {"cap": self.catch}, "vote": {"vote": options[0] if options else ""}, "punish": {"punish": "nobody"},
                  "catch": {"catch": self.catch, "strategy": "The same every round."}}  # fmt: skip
        return answers.dump(fields[phase])


@pytest.mark.parametrize("environment", ["harsh", "rich"])
def test_no_fixed_catch_keeps_societies_alive_at_more_than_one_scale(environment):
    """The lake's scale is counterbalanced so that survival is earned by reading the lake: whatever
    fixed number a villager asks, its societies live at one scale at most, never the 5 of 10 the
    criterion's lower bound needs; the sustainable share lives at all three (the test above)."""
    game = cell_game(environment, "mixed", "all modules")
    alive_at = {}
    for catch in (0.5, 1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 20, 25, 30, 33, 40, 50, 60, 120):
        outcomes = societies(game, FixedCatch(catch))
        alive_at[catch] = {o["scale"] for o in outcomes if o["survived"]}
        assert len(alive_at[catch]) <= 1, (catch, alive_at[catch])
        assert stats.wilson(sum(o["survived"] for o in outcomes), len(outcomes)).low < BEHAVIOUR.MIN_SURVIVAL
    assert {s for scales in alive_at.values() for s in scales} == set(SCALES)  # each scale has its own window


class CapKeeper:
    """Keeps to the village's voted cap when there is one and proposes its sustainable share; takes
    all a boat holds when no cap is voted: a society that a group decision alone can save."""

    spec = "test:cap-keeper"

    def reply(self, request):
        situation, text = request.decision.situation, request.messages[-1]["content"]
        share = float(int(Commons().sustainable_total(situation["lake"]) / situation["villagers"]))
        if situation["phase"] == "cap":
            return answers.dump({"cap": share})
        if situation["phase"] == "vote":
            return answers.dump({"vote": min(situation["options"], key=float)})
        if situation["phase"] == "punish":
            return answers.dump({"punish": "nobody"})
        cap = re.search(r"cap this round: ([\d.]+) fish each", text)
        return answers.dump({"catch": float(cap.group(1)) if cap else float(Commons().max_catch), "strategy": "Keep to the cap."})


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
    game = Commons(modules=modules, scales=(1.0,))  # a lake of 100: the spies' catches let it live to round 2
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
            else:  # only the strategies the module shows, of the villagers it names
                shown = re.findall(r"(\w+), who caught \d+ fish last round", prompt)
                assert len(shown) <= 2 and me not in shown
                assert leaked == [n for n in others if n in shown]
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
               '{"cap": 1e400}', '{"punish": "Zed"}', '{"catch": 121}', "```json\n{\"punish\": [\"Ana\"]}\n```", "")  # fmt: skip

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


def test_the_vote_takes_the_most_voted_cap_and_the_lowest_on_a_tie():
    assert plurality({"Ana": "9", "Ben": "14", "Cleo": "9", "Dev": "14"}, ["9", "14"]) == 9.0
    assert plurality({"Ana": "14", "Ben": "14", "Cleo": "9"}, ["9", "14"]) == 14.0
    assert plurality({}, ["7"]) == 7.0  # one cap proposed: it wins without a vote
    assert plurality({}, ["7", "8"]) is None  # no readable vote: no cap
    assert plurality({}, []) is None


class Voter:
    """Proposes a cap of its own (its position among the villagers) and answers every vote with
    the ballot's first option: a shortcut the ballot's order must not turn into one fixed cap."""

    spec = "test:first-on-the-ballot"

    def __init__(self):
        self.ballots: list[list[str]] = []

    def reply(self, request):
        situation = request.decision.situation
        if situation["phase"] == "cap":
            return answers.dump({"cap": 2 + NAMES.index(situation["me"])})
        if situation["phase"] == "vote":
            self.ballots.append(situation["options"])
            return answers.dump({"vote": situation["options"][0]})
        if situation["phase"] == "punish":
            return answers.dump({"punish": NOBODY})
        return answers.dump({"catch": 3, "strategy": "Take three."})


def test_the_ballot_order_alternates_so_the_first_option_is_not_always_the_low_cap():
    caps = {}
    for trial in (0, 1):
        voter = Voter()
        outcome = play_trial(Commons(), voter, trial, seed=0, temperature=0.7).outcome
        caps[trial] = outcome["rounds"][0]["cap"]
        assert voter.ballots[0] == sorted(voter.ballots[0], key=float, reverse=trial == 1)
    assert caps == {0: 2.0, 1: 5.0}


def cell_of(situation) -> tuple:
    return situation["environment"], situation["personas"], tuple(situation["modules"]), situation["punish_strength"] / situation["scale"]


class Planted:
    """A villager that keeps the lake (its share, the lowest cap, no punishment) in the cells for
    which ``keeps`` is true, and takes all its boat holds elsewhere."""

    spec = "test:planted-society"

    def __init__(self, keeps):
        self.keeps = keeps

    def reply(self, request):
        situation = request.decision.situation
        keeping = self.keeps(cell_of(situation))
        share = float(int(Commons(environment=situation["environment"]).sustainable_total(situation["lake"]) / situation["villagers"]))
        if situation["phase"] == "cap":
            return answers.dump({"cap": share if keeping else Commons().max_catch})
        if situation["phase"] == "vote":
            return answers.dump({"vote": min(situation["options"], key=float) if keeping else situation["options"][-1]})
        if situation["phase"] == "punish":
            return answers.dump({"punish": NOBODY})
        return answers.dump({"catch": share if keeping else Commons().max_catch, "strategy": "Keep the lake." if keeping else "Take all."})


def claim_verdicts(agent) -> dict[str, verdicts.Verdict]:
    """Every designed claim judged as test_commons_claim judges it: log-rank, Holm over the family."""
    lived = {c: [o["survived_rounds"] for o in societies(cell_game(*c), agent)] for c in CELLS}
    tests = {}
    for claim, (longer, shorter) in DESIGNED_CLAIMS.items():
        tests[claim] = (stats.survives_longer(lived[longer], lived[shorter], 10)[1], stats.survives_longer(lived[shorter], lived[longer], 10)[1])
    return {claim: judged.verdict for claim, judged in verdicts.family(tests, BEHAVIOUR.ALPHA).items()}


def key_of(designed_cell) -> tuple:
    game = cell_game(*designed_cell)
    return game.environment, game.personas, game.modules, game.punish_strength


@pytest.mark.parametrize("claim", DESIGNED_CLAIMS)
def test_each_claim_comes_out_supported_and_contradicted_by_planted_societies(claim):
    """Nine claims, a family of nine: a society planted to live in the claim's first cell only
    supports it after Holm's correction; one planted to live in the second cell only contradicts it."""
    longer, shorter = DESIGNED_CLAIMS[claim]
    assert cell_game(*longer) != cell_game(*shorter)  # each claim's pair differs in the one thing it names
    assert claim_verdicts(Planted(lambda cell: cell == key_of(longer)))[claim] is verdicts.MET
    assert claim_verdicts(Planted(lambda cell: cell == key_of(shorter)))[claim] is verdicts.MISSED
    everywhere = claim_verdicts(Planted(lambda cell: True))
    assert everywhere[claim] is verdicts.INCONCLUSIVE  # societies alike in both cells support nothing


def test_each_claims_pair_differs_in_one_thing():
    def design(game: Commons) -> dict:  # a punishment's strength is no difference where nobody can punish
        strength = game.punish_strength if "punishment" in game.modules else None
        return {"environment": game.environment, "personas": game.personas, "modules": game.modules, "strength": strength}

    for claim, (longer, shorter) in DESIGNED_CLAIMS.items():
        a, b = design(cell_game(*longer)), design(cell_game(*shorter))
        differing = [f for f in a if a[f] != b[f]]
        assert len(differing) == 1 or (claim.startswith("punishment") and differing == ["modules", "strength"]), (claim, differing)


class Learner:
    """States a strategy of its own in round 1; later copies the first strategy it is shown
    (``copies``) or restates its own in other words."""

    spec = "test:learner"

    def __init__(self, copies: bool):
        self.copies = copies

    def reply(self, request):
        situation, text = request.decision.situation, request.messages[-1]["content"]
        if situation["phase"] != "catch":
            return answers.dump({"cap": 5} if situation["phase"] == "cap" else {"punish": NOBODY} if situation["phase"] == "punish"
                                else {"vote": situation["options"][0]})  # fmt: skip
        me, shown = situation["me"], re.findall(r'fish last round: "([^"]*)"', text)
        own = f"{me} takes {2 + NAMES.index(me)} fish in round {situation['round']} and watches {me.lower()}-lake"
        return answers.dump({"catch": 2 + NAMES.index(me), "strategy": shown[0] if self.copies and shown else own})


@pytest.mark.parametrize("modules", [MODULES, ("punishment", "group decision")], ids=["shown", "not shown"])
def test_adoption_counts_a_villager_who_copies_what_it_was_shown_and_not_one_who_writes_its_own(modules):
    game = Commons(modules=modules, environment="rich")
    copier = [adoptions(o) for o in societies(game, Learner(copies=True), 3)]
    independent = [adoptions(o) for o in societies(game, Learner(copies=False), 3)]
    adopted, chances = map(sum, zip(*copier, strict=True))
    assert chances > 0 and sum(a for a, _ in independent) == 0
    if "social learning" in modules:
        assert adopted / chances > 0.5
    else:  # nothing shown, nothing to copy: the baseline the module's adoption is read against
        assert adopted == 0


def test_a_strategy_that_repeats_the_forms_placeholder_states_nothing():
    class Placeholder:
        spec = "test:placeholder"

        def reply(self, request):
            phase = request.decision.situation["phase"]
            if phase == "catch":
                return answers.dump({"catch": 3, "strategy": "Your strategy, in one sentence."})
            return answers.dump({"cap": 3} if phase == "cap" else {"punish": NOBODY})

    outcome = play_trial(Commons(), Placeholder(), 0, seed=0, temperature=0.7).outcome
    assert all(r["strategies"] == {} for r in outcome["rounds"]) and outcome["leakage"]["acts"] == 0
    assert similarity("Catch five fish.", "catch five fish") == 1.0 and similarity("", "x") == 0.0


def test_the_first_amount_is_the_cap_proposed_where_the_village_votes_first_else_the_catch():
    """Before anyone has spoken: with a vote, the caps proposed (readable ones only); without, the
    catches asked, an unreadable one naming none."""
    voted = {"rounds": [{"proposals": {"Ana": 5, "Bo": 30.0}, "wanted": {"Ana": 9.0, "Bo": 0.0, "Cy": 1.0}, "unreadable": ["Bo"]}]}
    assert first_amounts(voted) == {"Ana": 5.0, "Bo": 30.0}
    unvoted = {"rounds": [{"wanted": {"Ana": 9, "Bo": 0.0, "Cy": 1.0}, "unreadable": ["Bo"]}, {"wanted": {"Ana": 50.0}, "unreadable": []}]}
    assert first_amounts(unvoted) == {"Ana": 9.0, "Cy": 1.0}


class FirstPrompts:
    """Keeps each villager's first prompt of a society (the cap's where the village votes first, else
    the catch's) and asks for one fish."""

    spec = "test:first-prompts"

    def __init__(self):
        self.seen: list[tuple[str, str]] = []

    def reply(self, request):
        situation = request.decision.situation
        phase = situation["phase"]
        if situation["round"] == 1 and phase == ("cap" if "group decision" in situation["modules"] else "catch"):
            self.seen.append((situation["me"], json.dumps(request.messages)))
        return answers.dump({"cap": {"cap": 1}, "catch": {"catch": 1, "strategy": "One fish."}, "punish": {"punish": NOBODY}}.get(
            phase, {"vote": (situation["options"] or [NOBODY])[0]}))


@pytest.mark.parametrize("designed_cell", CELLS, ids=lambda c: "-".join(c))
def test_a_villager_s_first_prompt_is_its_name_persona_and_scale_and_nothing_else(designed_cell):
    """The lake test's unit: in a cell, villagers with one name, persona and scale read the same first
    prompt whatever their society, and no two of those read the same one."""
    game, agent, prompts = cell_game(*designed_cell), FirstPrompts(), {}
    for t in range(SOCIETIES):
        agent.seen = []
        outcome = play_trial(game, agent, t, seed=0, temperature=0.7).outcome
        for name, text in agent.seen:
            prompts.setdefault((name, outcome["personas"][name], outcome["scale"]), set()).add(text)
    assert len(agent.seen) == 4 and all(len(texts) == 1 for texts in prompts.values()), designed_cell
    assert len({text for texts in prompts.values() for text in texts}) == len(prompts) == (24 if designed_cell[1] == "mixed" else 12)


def test_an_answer_fixed_by_the_prompt_does_not_follow_the_lake_once_a_distinct_prompt_is_the_unit():
    """Ten societies of four read twelve distinct first prompts in an altruistic cell: counted as forty
    villagers, a prompt's fixed answer (blind-hash-S, a model at temperature 0 that never reads the
    lake) is three or four draws, and the lake test calls 9 of 100 salts "rising" at p < 0.01; counted
    as the twelve prompts they are, 1, its level."""
    game = BEHAVIOUR.game_of("harsh", "altruistic", "all modules", "agents")
    by_prompt, by_villager = [], []
    for salt in range(100):
        agent = ReferenceAgent(f"blind-hash-{salt}")
        records = [play_trial(game, agent, t, seed=0, temperature=0.7) for t in range(SOCIETIES)]
        units, asked, unreadable = BEHAVIOUR.first_units(records, "agents", "cell")
        strata = BEHAVIOUR.by_stratum(units)
        assert (asked, unreadable, sum(len(v) for by_scale in strata.values() for v in by_scale.values())) == (40, 0, 12)
        by_prompt.append(stats.ordered_groups_greater_within([[by_scale[s] for s in SCALES] for by_scale in strata.values()])[1])
        villagers = {s: [first_amounts(r.outcome)[n] for r in records if r.outcome["scale"] == s for n in r.outcome["personas"]] for s in SCALES}
        by_villager.append(stats.ordered_groups_greater([villagers[s] for s in SCALES])[1])
    assert sum(p < 0.01 for p in by_prompt) <= 4  # binomial(100, 0.01) reaches 5 in 0.3% of draws
    assert sum(p < 0.01 for p in by_villager) >= 5  # what the villagers' count would have called it


def test_cells_that_ask_the_same_first_questions_pool_them_as_one_unit_each():
    """The lake test pools every cell of a simulation: cells whose first round is worded alike (the same
    order of business and personas) would count one prompt's fixed answer once a cell, and two draws of
    a hash met the pooled test by that; keyed by the question's text, each is one unit."""
    agent, cells = ReferenceAgent("blind-hash-3"), [("harsh", "mixed", "all modules"), ("harsh", "mixed", "light punishment")]
    pooled, texts = {}, set()
    for designed in cells:
        records = [play_trial(BEHAVIOUR.game_of(*designed, "agents"), agent, t, seed=0, temperature=0.7) for t in range(SOCIETIES)]
        units, _, _ = BEHAVIOUR.first_units(records, "agents", designed)
        texts |= {text for record in records for text in BEHAVIOUR.round_one_questions(record).values()}
        for key, values in units.items():
            pooled.setdefault(key, []).extend(values)
    assert len(pooled) == len(texts) == 24  # the two cells ask the same 24 questions
