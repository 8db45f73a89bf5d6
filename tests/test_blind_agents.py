"""No blind agent earns a verdict: agents that answer from the prompt's surface, never from the game,
play every shipped behaviour, and none meets a criterion but where its construct is one a blind agent
truly has (EXCEPTIONS, each with its reason and a positive control below) or where the design is
known to be broken and its fix is owed (OPEN_DEFECTS, which a test keeps honest: once fixed, the
entry must go).

The family is ``reference.Blind``: a rule for options and one for numbers, each a place in a range
(``at-Q``), a place in the list (``option-K``, from the start or the end), a label's spelling
(``sorts-``), what the prompt writes first or last (``named-``, ``number-``), a coin (``coin-P``), or
an answer the prompt's whole wording fixes (``hash-S``, what a model at temperature 0 that never reads
the game gives), or the last message's alone (``hash-S-last``, a model that heeds only the question it
was just asked).
The panel below is its grid, small enough to play whole: the constant swept across the range, every
kind of rule at both ends, coins of three biases, and a rule for options paired with another for
numbers. Its cost: one run of the suite, about 7 s of CPU an agent.
"""

import collections
import json
import random
import re

import pytest
import scipy.stats
from conftest import BEHAVIOURS, run_behaviours_once
from hypothesis import given, settings
from hypothesis import strategies as st
from test_behaviours import credibility_cell, label_blind_robustness, reference_run
from test_games import Watching

from pytest_gaamas.verdicts import ALPHA, BLIND_NULLS
from pytest_gaamas.games.dictator import UltimatumGame
from pytest_gaamas.games.portfolio import PortfolioGame, sample_subjects
from pytest_gaamas.games.prisoners import VERSIONS, PrisonersDilemma
from pytest_gaamas.models import canonical_spec, resolve
from pytest_gaamas.models.base import slug
from pytest_gaamas.models.reference import Blind, ReferenceAgent, Surface
from pytest_gaamas.play import Decision, Request, play_trial

#: Cues of the cue audit's bank (python -m pytest_gaamas cue-audit --list) played as blind agents
#: (``blind-cue-K``): the option on the line of the largest number, which the ring games put on the
#: rational line in every trial until the audit found it, and the name six from the end of the last
#: line, an echo of a listed history at lag two (the answer form names the options four times after
#: it), which is right against a pattern whose period divides its lag (an exception, below).
CUES_PLAYED = {32: "named last on the line with the largest number in the prompt", 109: "name 6 from the end of the last line"}
#: The blind agents played here, beside ``first``, ``last`` and ``constant`` (tests/test_behaviours.py
#: plays those three): the constant at 0.1, 0.25 and 0.75 of every range (with first's 0, constant's
#: middle and last's 1), the second option listed, the label that sorts last (constant's sorts
#: first), what the prompt names first and last and the first number it writes, two coins, and the
#: first option with a quarter of every range, three salts of an answer the wording fixes and two of
#: one the last message fixes, and three habits keyed to a word ("and", in the common-knowledge
#: sentence; "they", in some wordings of the two-agent script's rules and in the commons' script;
#: "offer", which the ultimatum proposer's two framings hold alike, as tests/test_games.py holds every
#: word of every split's), and two cues of the cue audit's bank: 21 agents, about 170 s of CPU in one run.
PANEL = (
    "blind-at-0.1", "blind-at-0.25", "blind-at-0.75", "blind-option-2", "blind-sorts-last",
    "blind-named-first", "blind-named-last", "blind-number-first", "blind-coin-0.5", "blind-coin-0.75",
    "blind-option-1-numbers-at-0.25", "blind-hash-1", "blind-hash-4", "blind-hash-5", "blind-hash-2-last",
    "blind-hash-5-last", "blind-word-and", "blind-word-they", "blind-word-offer", *(f"blind-cue-{k}" for k in CUES_PLAYED),
)  # fmt: skip
NAMED = ("first", "last", "constant")


#: What any blind agent truly has, by construct: (which criteria, why a blind agent has the
#: construct, the test below that shows it has it).
EXCEPTIONS = {
    "a human-like average": (
        credibility_cell,
        "the prisoner's dilemma's Human prompt asks for cooperation inside people's 30-60%; an agent that answers by "
        "place, by coin or by a label whose meaning is counterbalanced cooperates in about half the trials: an average "
        "cannot tell a credible human from a coin, which is what role fidelity and payoff sensitivity are for",
        "test_a_blind_agent_cooperates_at_people_s_average",
    ),
    "label-blindness": (
        label_blind_robustness,
        "semantic robustness asks that named and anonymised labels give the same cooperation; an agent that never reads "
        "a label cannot be moved by one",
        "test_a_blind_agent_cooperates_alike_under_named_and_anonymised_labels",
    ),
    "a constant split": (
        lambda test_id: "::test_garp_consistency[" in test_id,
        "half the points on each asset on every budget (numbers at the middle of their range) is a consistent choice "
        "(CCEI 1): GARP asks for consistency, not for a response to prices",
        "test_a_constant_split_is_garp_consistent",
    ),
    "accepting every offer": (
        lambda test_id: "::test_ultimatum[" in test_id and "-responder-" in test_id,
        "the responder's criterion asks that $40 be accepted, which an agent that accepts whatever is offered does",
        "test_a_blind_agent_accepts_whatever_is_offered",
    ),
    "one author for both sides": (
        lambda test_id: "::test_script_overstates_success[" in test_id
        or ("::test_agent_coordination[" in test_id and WORD_AGENT_SCRIPT_CELL.search(test_id) is not None),
        "the claim is that one author writing both players coordinates them better than two separate agents; a script "
        "naming the same option for both sides (named-first, named-last) is exactly one author applying one rule to "
        "both. One author also knows what it wrote for the other side, so a choice it shares across both that changes "
        "from game to game (a habit keyed to a word its wording holds in some games) meets beyond what the same rule "
        "pairs across games give: the script's own coordination carries no evidence of reading the game. What "
        "omniscience adds is judged apart, by the difference between common and private information of the excess "
        "over shuffled pairs, which a rule one author applies to both conditions alike leaves at nothing",
        "tests/test_simulations.py::test_one_author_overstates_success_without_omniscience_and_the_difference_in_differences_tells_them_apart",
    ),
    "the methods ask other words": (
        lambda test_id: "::test_commons_script_overstates_success[" in test_id and "[reference-blind-word-" in test_id,
        "the commons' script and its villagers are asked other words (the script's form holds words no villager's does), "
        "so an agent whose answer the words move answers otherwise in the two: 'the script outlives the villagers' is a "
        "claim about the method, true of any agent the words move, and a 'supported' does not attribute the gap to "
        "authorship or omniscience",
        "test_a_script_asked_other_words_than_its_villagers_outlives_them",
    ),
    "the moves a patterned opponent repeats": (
        lambda test_id: re.search(r"::test_(belief_refinement|coordination)\[reference-blind-cue-\d+-", test_id) is not None,
        "a hidden cycle is its moves repeating, so an echo of the history listed at a lag its period divides predicts "
        "it every round: blind-cue-109 (the name six from the end of the last line: the move two rounds back where the "
        "answer form names two moves twice after it, three back where it names three once) meets belief refinement "
        "against four of its five patterns (all but rock-paper-scissors' 2-loop) and coordination against the "
        "alternating partner, which is prediction from the history, the construct. No mix of cycles of periods 1 to 3 "
        "puts every echo at chance (the echo at lag 6 repeats them all); the cue audit holds every cue that reads no "
        "move of the history at chance there (tests/test_cue_audit.py)",
        "test_an_echo_predicts_a_pattern_whose_period_divides_its_lag_and_nothing_else",
    ),
}
#: A script cell of the two-agent game played by a habit keyed to a word.
WORD_AGENT_SCRIPT_CELL = re.compile(r"\[reference-blind-word-[a-z]+(?:-last)?-\d-script-(?:common|private)\]$")

#: Criteria a blind agent meets because the design is broken, with what the agent does and what fixes
#: it. Not exceptions: each is a verdict the suite cannot yet give. Once fixed, its test fails here.
#: The last closed, repeated prompts: a cell's trials repeated a few distinct prompts, so an answer
#: fixed by the prompt's wording (blind-hash-S) was one draw per prompt counted as one a trial. Every
#: cell now asks each trial a prompt, or a game, of its own (tests/test_games.py), and the commons'
#: lake test counts distinct prompts (tests/test_commons.py). Its kin, the last message alone
#: (blind-hash-S-last), is closed in the two-agent game, which words every question per game as it
#: words the rules (tests/test_games.py), and in the commons, where every question a villager is
#: asked opens with its name and persona (the test of that below). Closed with them: a split's
#: framing word (a habit keyed to "give" kept everything in both framings; the two questions now
#: hold the same words, tests/test_games.py), and what omniscience adds read from raw coordination
#: (two copies keyed to a word of the common-knowledge sentence met whenever told it; the claim now
#: takes each cell's excess over shuffled pairs, tests/test_simulations.py).
OPEN_DEFECTS: dict[str, tuple] = {}


def explained(test_id: str, table: dict) -> str | None:
    return next((name for name, (applies, *_) in table.items() if applies(test_id)), None)


def panel_run(shared_folder) -> dict:
    """The panel's one run of the suite, played once for the whole test session."""
    return run_behaviours_once(shared_folder, "blind-agents", *(f"--gaamas-model=reference:{a}" for a in PANEL))[1]


@pytest.fixture(scope="module")
def played(shared_folder) -> dict[str, dict[str, bool]]:
    """Every blind agent's verdicts, by agent: the panel in one run of the suite (models in one run
    are judged each as in a run of its own), and the three named ones from tests/test_behaviours.py's."""
    document = panel_run(shared_folder)
    runs = {agent: document for agent in PANEL} | {agent: reference_run(agent, shared_folder) for agent in NAMED}
    return {agent: verdicts(run, agent) for agent, run in runs.items()}


def verdicts(document: dict, agent: str) -> dict[str, bool]:
    return {s["test_id"]: s["passed"] for s in document["scores"] if s["model"] == f"reference:{agent}" and s["passed"] is not None}


def met(played: dict[str, dict[str, bool]]) -> dict[str, list[str]]:
    return {agent: sorted(test_id for test_id, passed in results.items() if passed) for agent, results in played.items()}


#: An agent that draws its answers (a coin, or a hash of the wording, which draws a new answer for each
#: prompt) sits at the null of the criteria judged at a blind agent's null (verdicts.BLIND_NULLS), and
#: meets one by chance at that family's level, 0.05 / 14 a cell at most
#: (test_a_drawn_threshold_is_judged_faithful_by_chance_at_the_level). Such meetings are excused as
#: chance while they look like chance: in each behaviour no more than the binomial bound (99.9%) of
#: the draws played there, and never two in one cell. A rule that draws nothing is never excused, and
#: a defect shows as more than that: a hash whose prompts repeat turns constant and meets a
#: behaviour's cells together, and draws that share a cue meet one cell together.
DRAWS = re.compile(r"^blind-(?:coin-[\d.]+|hash-\d+(?:-last)?)$")
AT_A_BLIND_NULL = "a blind agent sits at this criterion's null"
LEVEL_AT_A_BLIND_NULL = ALPHA / len(BLIND_NULLS)


def cell(test_id: str, model: str) -> str:
    """A test id without its model: the same cell, whichever agent played it."""
    return test_id.replace(f"[{slug(model)}-", "[", 1)


def behaviour_of(test_id: str) -> str:
    return test_id.split("::")[0]


@pytest.fixture(scope="module")
def at_blind_nulls(shared_folder) -> set[str]:
    """The cells whose criterion is judged at a blind agent's null, as the panel's scores say."""
    return {cell(s["test_id"], s["model"]) for s in panel_run(shared_folder)["scores"] if AT_A_BLIND_NULL in s["criterion"]}


def by_chance(agent: str, test_id: str, at_blind_nulls: set[str]) -> bool:
    """Whether ``agent`` draws its answers and ``test_id`` is a cell judged at a blind agent's null."""
    name = agent.removeprefix("reference:")
    return DRAWS.match(name) is not None and cell(test_id, f"reference:{name}") in at_blind_nulls


def beyond_chance(meetings: list[tuple[str, str]], draws_per_cell: int, at_blind_nulls: set[str]) -> list[str]:
    """What in ``meetings`` (agent, test id: a draw's meeting at a blind null, one for each draw that
    met) is more than chance: a behaviour met more often than the binomial bound of its cells times
    ``draws_per_cell`` at the family's level, or a cell met twice. Empty when they look like chance."""
    cells = [cell(test_id, "reference:" + agent.removeprefix("reference:")) for agent, test_id in meetings]
    found = [f"{c}: met by {n} draws" for c, n in collections.Counter(cells).items() if n > 1]
    for behaviour, n in collections.Counter(map(behaviour_of, cells)).items():
        bound = int(scipy.stats.binom.ppf(0.999, draws_per_cell * sum(behaviour_of(c) == behaviour for c in at_blind_nulls), LEVEL_AT_A_BLIND_NULL))
        if n > bound:
            found.append(f"{behaviour}: {n} meetings by draws, where chance gives at most {bound}")
    return found


def test_no_blind_agent_meets_a_criterion_outside_the_exceptions_and_the_open_defects(played, at_blind_nulls):
    """Outside the exceptions and the open defects, a blind agent meets nothing, but for what a draw
    meets by chance where the criterion is judged at a blind agent's null, while it looks like chance."""
    unexplained, chance = {}, []
    for agent, results in played.items():
        assert {test_id.split("/")[1].split(".py")[0].removeprefix("test_") for test_id in results} == set(BEHAVIOURS), agent
        found = [t for t in met(played)[agent] if explained(t, EXCEPTIONS) is None and explained(t, OPEN_DEFECTS) is None]
        drawn = [t for t in found if by_chance(agent, t, at_blind_nulls)]
        chance += [(agent, t) for t in drawn]
        if rest := sorted(set(found) - set(drawn)):
            unexplained[agent] = rest
    assert not unexplained, "blind agents meet criteria they cannot have:\n" + json.dumps(unexplained, indent=1)
    assert not beyond_chance(chance, sum(DRAWS.match(agent) is not None for agent in played), at_blind_nulls)


def test_a_drawn_threshold_is_judged_faithful_by_chance_at_the_level():
    """The responder's thresholds, drawn by the wording's hash (a new draw each prompt, about uniform
    over the range, $15.7 from people's, at the tolerance), are judged faithful to people's at about
    the family's level: 2 of 600 salts (whole and last message), where 0.05 / 14 is 2.1 of 600; with
    the questions' earlier words, 3 of 600, one of them a salt the panel plays."""
    from pytest_gaamas import fidelity
    from pytest_gaamas.games.dictator import ThresholdGame

    game, humans = ThresholdGame(), fidelity.ultimatum_thresholds()
    faithful = [(salt, last) for salt in range(1, 301) for last in ("", "-last")
                if str(fidelity.compare([play_trial(game, ReferenceAgent(f"blind-hash-{salt}{last}"), t, seed=0, temperature=0.7).outcome["smallest_accepted"]
                                     for t in range(30)], humans).verdict) == "faithful"]  # fmt: skip
    assert len(faithful) <= scipy.stats.binom.ppf(0.999, 600, LEVEL_AT_A_BLIND_NULL), faithful


def test_every_exception_is_met_by_some_blind_agent(played):
    """A stale exception would hide a criterion a blind agent meets."""
    used = {explained(t, EXCEPTIONS) for tests in met(played).values() for t in tests}
    assert set(EXCEPTIONS) <= used, f"exceptions no blind agent needs: {set(EXCEPTIONS) - used}"


def test_the_open_defects_are_still_open(played):
    """Each open defect is still met by some blind agent; one that is not has been fixed, and its entry goes."""
    open_now = {explained(t, OPEN_DEFECTS) for tests in met(played).values() for t in tests}
    assert set(OPEN_DEFECTS) <= open_now, f"fixed: remove from OPEN_DEFECTS {set(OPEN_DEFECTS) - open_now}"


# The positive controls: each exception's construct, shown in the game itself.


def test_an_echo_predicts_a_pattern_whose_period_divides_its_lag_and_nothing_else():
    """The echo of the panel (blind-cue-109, three moves back in rock-paper-scissors' prediction) predicts
    the constant and the 3-loop every late round, the 2-loop never, and an opponent whose ten moves are
    drawn at random about a third of the time: it knows the pattern only where its lag repeats it."""
    from pytest_gaamas import rounds, stats
    from pytest_gaamas.games.repeated import RPS_PREDICTION, HiddenPatternGame

    draw = random.Random(109)
    opponents = {
        "constant": (("Rock",), ("Paper",), ("Scissors",)),
        "3-loop": (("Rock", "Paper", "Scissors"), ("Paper", "Scissors", "Rock"), ("Scissors", "Rock", "Paper")),
        "2-loop": (("Rock", "Paper"), ("Paper", "Scissors"), ("Scissors", "Rock")),
        "drawn": tuple(tuple(draw.choice(RPS_PREDICTION.moves) for _ in range(10)) for _ in range(60)),
    }
    accuracy = {}
    for name, patterns in opponents.items():
        game = HiddenPatternGame(RPS_PREDICTION, patterns)
        played = rounds.round_results([play_trial(game, ReferenceAgent("blind-cue-109"), t, seed=0, temperature=0.7) for t in range(60)])
        accuracy[name] = stats.mean(rounds.late_means(played, "correct", 6)).value
    assert accuracy["constant"] == accuracy["3-loop"] == 1.0, accuracy
    assert accuracy["2-loop"] == 0.0, accuracy
    assert 0.2 < accuracy["drawn"] < 0.47, accuracy


def cooperation(game: PrisonersDilemma, agent: str, trials: int = 120) -> list[bool]:
    return [play_trial(game, ReferenceAgent(agent), t, seed=0, temperature=0.7).outcome["cooperated"] for t in range(trials)]


@pytest.mark.parametrize("agent", ["first", "blind-option-2", "blind-named-first"])
def test_a_blind_agent_cooperates_at_people_s_average(agent):
    for version in VERSIONS:
        cooperated = cooperation(PrisonersDilemma(version, "Human", "named"), agent)
        assert sum(cooperated) / len(cooperated) == 0.5, version  # the order is counterbalanced: inside 0.30-0.60


@pytest.mark.parametrize("agent", ["first", "last", "blind-at-0.75", "blind-coin-0.75"])
def test_a_blind_agent_cooperates_alike_under_named_and_anonymised_labels(agent):
    for version in VERSIONS:
        named, anonymised = (cooperation(PrisonersDilemma(version, "Human", labels), agent) for labels in ("named", "anonymised"))
        assert abs(sum(named) - sum(anonymised)) / len(named) < 0.2, version  # the criterion's margin; a coin's draws differ


def test_a_constant_split_is_garp_consistent():
    game = PortfolioGame(sample_subjects(5, 0))
    for trial in range(5):
        outcome = play_trial(game, ReferenceAgent("blind-at-0.5"), trial, seed=0, temperature=0.0).outcome
        assert outcome["valid"] and outcome["ccei"] == 1.0  # half the points on each asset, every budget


def test_a_blind_agent_accepts_whatever_is_offered():
    game = UltimatumGame("responder")
    accepted = [play_trial(game, ReferenceAgent("constant"), t, seed=0, temperature=0.7).outcome["accepted"] for t in range(30)]
    assert all(accepted)  # "accept" sorts before "reject", whichever is listed first
    decision = game.play(0).send(None)
    for offer in (1, 40, 99):  # whatever the text offers
        surface = Surface(decision.messages[-1]["content"].replace("$40", f"${offer}"))
        assert Blind.parse("constant").answer(decision.schema, surface, random.Random(0)) == {"decision": "accept"}


# The family itself.

RULES = st.one_of(
    st.builds(lambda q: f"at-{q}", st.sampled_from(["0", "0.1", "0.25", "0.333", "0.5", "0.75", "1"])),
    st.builds(lambda p: f"coin-{p}", st.sampled_from(["0", "0.25", "0.5", "0.9", "1"])),
    st.builds(lambda k, end: f"option-{k}{end}", st.integers(1, 5), st.sampled_from(["", "-from-end"])),
    st.builds(lambda reading, end: f"{reading}-{end}", st.sampled_from(["sorts", "named", "number"]), st.sampled_from(["first", "last"])),
    st.builds(lambda salt, part: f"hash-{salt}{part}", st.integers(0, 10_000), st.sampled_from(["", "-last"])),
    st.builds(lambda word, part: f"word-{word}{part}", st.sampled_from(["until", "reply", "options", "the", "you", "split", "last"]),
              st.sampled_from(["", "-last"])),
)
SPECS = st.one_of(
    st.builds(lambda rule: f"blind-{rule}", RULES),
    st.builds(lambda options, numbers: f"blind-{options}-numbers-{numbers}", RULES, RULES),
    st.sampled_from(NAMED),
)


def old_shortcut_answer(schema, kind):
    """The three shortcut agents as they were before the family: first, last, constant."""
    if "enum" in schema:
        options = list(schema["enum"])
        return {"first": options[0], "last": options[-1], "constant": min(options, key=str)}[kind]
    kind_of = schema.get("type")
    if kind_of == "object":
        return {name: old_shortcut_answer(spec, kind) for name, spec in schema.get("properties", {}).items()}
    if kind_of == "array":
        count = schema.get("minItems", 0) if kind != "last" else schema.get("maxItems", schema.get("minItems", 0))
        return [old_shortcut_answer(schema.get("items", {}), kind) for _ in range(count)]
    if kind_of in ("number", "integer"):
        low = schema.get("minimum", 0)
        high = schema.get("maximum", low)
        value = {"first": low, "last": high, "constant": (low + high) / 2}[kind]
        return int(value) if kind_of == "integer" else value
    if kind_of == "boolean":
        return kind != "last"
    return ""


LABELS = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij0123456789 ", min_size=1, max_size=8)
LEAVES = st.one_of(
    st.builds(lambda options: {"type": "string", "enum": options}, st.lists(LABELS, min_size=1, max_size=5, unique=True)),
    st.builds(lambda kind, low, span: {"type": kind, "minimum": low, "maximum": low + span},
              st.sampled_from(["number", "integer"]), st.integers(-5, 50), st.integers(0, 100)),
    st.just({"type": "boolean"}),
    st.just({"type": "string", "maxLength": 80}),
)
SCHEMAS = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.dictionaries(st.sampled_from("abcde"), inner, max_size=3).map(lambda fields: {"type": "object", "properties": fields}),
        st.tuples(inner, st.integers(0, 3), st.integers(0, 2)).map(
            lambda drawn: {"type": "array", "items": drawn[0], "minItems": drawn[1], "maxItems": drawn[1] + drawn[2]}),
    ),
    max_leaves=6,
)  # fmt: skip


@settings(max_examples=200, derandomize=True, deadline=None)
@given(SCHEMAS, st.sampled_from(NAMED))
def test_first_last_and_constant_answer_as_before_the_family(schema, kind):
    assert Blind.parse(kind).answer(schema, Surface("any text, 3 and 7"), random.Random(1)) == old_shortcut_answer(schema, kind)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(SPECS, SCHEMAS, st.text(max_size=60), st.integers(0, 2**32))
def test_a_blind_agent_answers_any_form_within_it_from_the_surface_alone(spec, schema, text, seed):
    """Every spelling is a reference agent whose name is its own file name and test id; its answer is
    one the form allows, and the same for the same surface and draws, whatever else differs."""
    assert canonical_spec(f"reference:{spec}") == f"reference:{spec}"
    assert resolve(f"reference:{spec}").test_id == slug(f"reference-{spec}") == f"reference-{spec}"
    blind = Blind.parse(spec)
    answer = blind.answer(schema, Surface(text), random.Random(seed))
    assert answer == blind.answer(schema, Surface(text), random.Random(seed))
    assert allowed(answer, schema), (answer, schema)


def allowed(answer, schema) -> bool:
    if "enum" in schema:
        return answer in schema["enum"]
    kind = schema.get("type")
    if kind == "object":
        return set(answer) == set(schema["properties"]) and all(allowed(answer[k], s) for k, s in schema["properties"].items())
    if kind == "array":
        return schema["minItems"] <= len(answer) <= schema["maxItems"] and all(allowed(a, schema["items"]) for a in answer)
    if kind in ("number", "integer"):
        return schema["minimum"] <= answer <= schema["maximum"] and (kind == "number" or isinstance(answer, int))
    if kind == "boolean":
        return isinstance(answer, bool)
    return answer == ""


def test_the_cues_played_are_the_bank_s_cues_of_those_numbers():
    from pytest_gaamas.cues import bank_names

    assert {k: bank_names()[k] for k in CUES_PLAYED} == CUES_PLAYED


def test_a_cue_agent_answers_what_its_cue_picks_and_at_random_where_it_reads_nothing():
    from pytest_gaamas.cues import bank_names

    largest = Blind.parse(f"blind-cue-{bank_names().index('named last on the line with the largest number in the prompt')}")
    echo = Blind.parse(f"blind-cue-{bank_names().index('name 2 from the end of the last message')}")
    schema = {"enum": ["P", "Q"]}
    lines = ("If you play Q you get 3 points.\nIf you play P you get 9 points.",)
    assert largest.answer(schema, Surface(lines[0], lines[0], lines), random.Random(0)) == "P"
    history = ("Moves so far: P, Q, Q.",)
    assert echo.answer(schema, Surface(history[0], history[0], history), random.Random(0)) == "Q"
    silent = ("Choose.",)
    assert {largest.answer(schema, Surface(silent[0], silent[0], silent), random.Random(seed)) for seed in range(20)} == {"P", "Q"}
    assert largest.answer({"type": "integer", "minimum": 0, "maximum": 10}, Surface("x"), random.Random(0)) == 5


@pytest.mark.parametrize("spec", ["blind-at-1.5", "blind-option-0", "blind-coin", "blind-sorts-middle", "blind-at-0.5-numbers-", "blind-", "blind-cue-9999", "blind-cue-x"])
def test_a_misspelt_blind_agent_is_refused(spec):
    from pytest_gaamas.models import SpecError

    with pytest.raises(SpecError, match="blind-RULE"):
        canonical_spec(f"reference:{spec}")


def test_the_surface_rules_read_the_prompt():
    surface = Surface("Choose Bar or Foo: Foo pays 3, Bar pays 12.5; say Foo.")
    options = ["Foo", "Bar", "Baz"]
    assert Blind.parse("blind-named-first").options.option(options, surface, random.Random(0)) == "Bar"
    assert Blind.parse("blind-named-last").options.option(options, surface, random.Random(0)) == "Foo"
    assert Blind.parse("blind-number-first").numbers.number(0, 10, surface, random.Random(0)) == 3
    assert Blind.parse("blind-number-last").numbers.number(0, 10, surface, random.Random(0)) == 10  # 12.5, held in the range
    assert Blind.parse("blind-number-last").options.option(["3", "12.5"], surface, random.Random(0)) == "12.5"
    assert Blind.parse("blind-at-0.5").options.option(options, surface, random.Random(0)) == "Bar"
    assert Blind.parse("blind-option-2-from-end").options.option(options, surface, random.Random(0)) == "Bar"
    assert Blind.parse("blind-sorts-last").options.option(options, surface, random.Random(0)) == "Foo"
    coin = Blind.parse("blind-coin-0.75").options
    firsts = sum(coin.option(options, surface, rng) == "Foo" for rng in map(random.Random, range(2000)))
    assert 0.72 < firsts / 2000 < 0.78


def test_a_word_keyed_agent_switches_with_its_word_alone():
    """blind-word-W names the label that sorts first where the text holds the word W (case folded, as a
    whole word), else the one that sorts last, and the bottom or top of a range; -last reads the last
    message alone."""
    schema = {"type": "object", "properties": {"m": {"type": "string", "enum": ["Foo", "Bar"]}, "x": {"type": "number", "minimum": 2, "maximum": 9}}}

    def answer(spec: str, surface: Surface) -> tuple[str, float]:
        reply = Blind.parse(spec).answer(schema, surface, random.Random(0))
        return reply["m"], reply["x"]

    assert answer("blind-word-until", Surface("Your moves Until now.", "Round 2.")) == ("Bar", 2)
    assert answer("blind-word-until", Surface("Your moves so far, untiled.", "Round 2.")) == ("Foo", 9)
    assert answer("blind-word-until-last", Surface("Your moves until now.", "Round 2.")) == ("Foo", 9)
    assert answer("blind-word-until-last", Surface("Rules.\nUntil now: A.", "Until now: A.")) == ("Bar", 2)
    assert Blind.parse("blind-word-last") == Blind.parse("blind-word-last-numbers-word-last")
    assert Blind.parse("blind-word-last-last").options.last_message and Blind.parse("blind-word-Until") is None


def test_one_author_keyed_to_a_word_coordinates_the_pair_it_writes():
    """One author keyed to a word its wording holds in some games writes the same label for both
    players: the pair meets every round, and the same rule paired across games 0.44 of them."""
    from pytest_gaamas import metrics
    from pytest_gaamas.games.bos_agents import AgentCoordinationGame, moves, presentation

    games = [play_trial(AgentCoordinationGame(1, simulation="script"), ReferenceAgent("blind-word-they"), t, seed=0, temperature=0.7).outcome
             for t in range(30)]  # fmt: skip
    excess = metrics.coordination_excess([moves(g, "Y") for g in games], [moves(g, "Z") for g in games], seed=0,
                                         strata=[presentation(g) for g in games])  # fmt: skip
    assert excess.observed == 1.0 and round(excess.baseline, 2) == 0.44 and excess.p < 0.001


def test_a_script_asked_other_words_than_its_villagers_outlives_them():
    """The commons' script is asked words its villagers are not ("they", in its form): a habit keyed
    to one writes every villager the bottom of the range and its societies live a round, where the
    villagers, asked without it, take the top and collapse at once."""
    from pytest_gaamas.games.commons import Commons

    agent = ReferenceAgent("blind-word-they")
    lived = {simulation: [play_trial(Commons(simulation=simulation), agent, t, seed=0, temperature=0.7).outcome["survived_rounds"]
                          for t in range(10)] for simulation in ("script", "agents")}  # fmt: skip
    assert min(lived["script"]) > max(lived["agents"]) == 0


def test_reference_draws_differ_between_cells_that_share_a_trial():
    """Two cells whose requests share the run's, the trial's and the round's seed draw apart: the
    cell is in the seed, for reference:random and for a blind agent's coin."""
    games = [PrisonersDilemma(version, "Human", "named") for version in VERSIONS]
    random_agent = ReferenceAgent("random")
    draws = {tuple(play_trial(game, random_agent, t, seed=0, temperature=0.7).outcome["cooperated"] for t in range(60)) for game in games}
    assert len(draws) == len(games)
    coin = ReferenceAgent("blind-coin-0.5")
    decision = Decision(({"role": "user", "content": "a or b?"},), {"type": "object", "properties": {"x": {"enum": ["a", "b"]}}},
                        lambda reply: reply, {})  # fmt: skip
    tosses = {tuple(coin.reply(Request(decision, game, seed, 0.7)) for seed in range(60)) for game in games}
    assert len(tosses) == len(games)


def test_an_answer_the_wording_fixes_is_the_same_for_the_same_prompt_whatever_the_draws_and_moves_with_a_word():
    """blind-hash-S reads the whole prompt and nothing of the game: the same text gives the same answer
    under any seed; another salt, or one word changed, is another draw."""
    schema = {"type": "object", "properties": {"choice": {"type": "string", "enum": list("ABCDEFGH")},
                                               "amount": {"type": "number", "minimum": 0, "maximum": 100}}}  # fmt: skip
    texts = [f"Round {k}: choose A, B, C, D, E, F, G or H, and an amount." for k in range(40)]

    def answers_of(spec, seed):
        return [Blind.parse(spec).answer(schema, Surface(text), random.Random(seed)) for text in texts]

    assert answers_of("blind-hash-1", 0) == answers_of("blind-hash-1", 99)
    assert answers_of("blind-hash-1", 0) != answers_of("blind-hash-2", 0)
    assert len({a["choice"] for a in answers_of("blind-hash-1", 0)}) > 4 and len({a["amount"] for a in answers_of("blind-hash-1", 0)}) > 30


def test_an_answer_the_last_message_fixes_ignores_every_message_before_it():
    """blind-hash-S-last reads the last message alone, for options and numbers: rules told in other
    words before it, and earlier turns of the conversation, change nothing; the last message changed
    is another draw; and the whole-text hash tells them apart."""
    schema = {"type": "object", "properties": {"choice": {"type": "string", "enum": list("ABCDEFGH")},
                                               "amount": {"type": "number", "minimum": 0, "maximum": 100}}}  # fmt: skip

    def answer(spec: str, rules: str, earlier: str, question: str) -> tuple[str, float]:
        messages = ({"role": "system", "content": rules}, {"role": "user", "content": earlier},
                    {"role": "assistant", "content": "{}"}, {"role": "user", "content": question})  # fmt: skip
        reply = json.loads(ReferenceAgent(spec).reply(Request(Decision(messages, schema, lambda r: r, {}), None, 0, 0.7)))
        return reply["choice"], reply["amount"]

    told = [(f"You are villager {k}: the lake holds {k} tons.", f"Round {k} was played.") for k in range(30)]
    assert len({answer("blind-hash-3-last", rules, earlier, "How much do you catch?") for rules, earlier in told}) == 1
    whole = {answer("blind-hash-3", rules, earlier, "How much do you catch?") for rules, earlier in told}
    assert len({c for c, _ in whole}) > 4 and len({a for _, a in whole}) > 25
    asked = {answer("blind-hash-3-last", *told[0], f"Round {k}: how much do you catch?") for k in range(30)}
    assert len({c for c, _ in asked}) > 4 and len({a for _, a in asked}) > 25


def test_each_villager_is_asked_a_round_one_question_of_its_own():
    """The commons' lake test counts a villager's name, persona and scale as one unit: its round-one
    question, the last message alone, is then one prompt a unit, so an answer that message fixes is
    one draw a unit, never one draw counted as several (it was one question a scale, and three draws
    in rising order read as a catch that follows the lake in 13 of 40 salts)."""
    from pytest_gaamas.games.commons import Commons

    game, asked = Commons(personas="mixed"), {}
    for trial in range(12):
        agent = Watching()
        outcome = play_trial(game, agent, trial, seed=0, temperature=0.7).outcome
        for decision in agent.seen[: game.villagers]:
            name = decision.situation["me"]
            asked.setdefault((name, outcome["personas"][name], game.scale_of(trial)), set()).add(decision.messages[-1]["content"])
    assert all(len(questions) == 1 for questions in asked.values())
    assert len({q for questions in asked.values() for q in questions}) == len(asked) == 2 * game.villagers * len(game.scales)
