"""No cue of the prompt predicts the answer: the cue audit (``pytest_gaamas.cues``) reads every prompt the
judged actions cells ask, with the answer that reads the game, and counts how often each cue of its bank
picks that answer. Outside the named EXCEPTIONS (a construct a blind agent truly has, with its positive
control) and the OPEN_DEFECTS (a design known to leak, with what fixes it, kept honest: once fixed, the
entry must go), no cue agrees more than ``cues.TOLERANCE`` above chance in any judged unit.

The bank's own tests come first: each kind of cue is found where a design plants it, and nothing is
found in a design balanced against it.
"""

import fcntl
import json
import random
import re

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_gaamas import cue_capture, cues
from pytest_gaamas.cues import Asked, Bank, Unit, audit

BANK = Bank.full()


def unit(*asked: Asked) -> list[Unit]:
    return [Unit("behaviours/test_x.py::test_x[cell]", {"action": list(asked)})]


def cues_found(*asked: Asked, words: bool = False) -> set[str]:
    return {finding.cue for finding in audit(unit(*asked), BANK, words=words)}


def test_a_balanced_listing_leaves_every_cue_at_chance():
    # the right answer stands first in half the prompts and second in the other half, named alike
    asked = [Asked((f"Choose {a} or {b}. Answer {a} or {b}.",), (a, b), right) for a, b in (("P", "Q"), ("Q", "P"))
             for right in ("P", "Q")]
    assert cues_found(*asked * 5) == set()


def test_the_right_answer_always_listed_first_is_found():
    asked = [Asked((f"Choose {a} or {b}.",), (a, b), a) for a, b in (("P", "Q"), ("Q", "P"))]
    found = cues_found(*asked * 5)
    assert {"option 1 listed", "named first in the prompt"} <= found
    assert "the label that sorts first" not in found  # P and Q are each right half the time


def test_the_right_answer_on_the_line_of_the_largest_number_is_found():
    def prompt(right: str, other: str, big: int) -> Asked:
        lines = [f"If you play {right} you get {big} points.", f"If you play {other} you get 3 points."]
        return Asked(("\n".join(lines if big % 2 else lines[::-1]),), ("P", "Q"), right)

    asked = [prompt(r, o, big) for r, o in (("P", "Q"), ("Q", "P")) for big in (8, 9)]
    assert "named last on the line with the largest number in the prompt" in cues_found(*asked * 5)


def test_an_echo_of_the_history_at_a_lag_is_found():
    # an opponent that alternates: the move two rounds back is the next one
    history = ["P", "Q", "P", "Q", "P", "Q"]
    asked = [Asked((f"Moves so far: {', '.join(history[:k])}.",), ("P", "Q"), history[k]) for k in range(2, 6)]
    found = cues_found(*asked * 5)
    assert "name 2 from the end of the prompt" in found
    assert "name 1 from the end of the prompt" not in found  # the last move is always wrong here


def test_a_word_that_switches_the_answer_is_found_only_by_the_word_search():
    asked = [Asked((f"{polite}Choose {a} or {b}.",), (a, b), a if polite else b) for a, b in (("P", "Q"), ("Q", "P"))
             for polite in ("Please. ", "")]
    assert cues_found(*asked * 5) == set()
    switched = cues_found(*asked * 5, words=True)
    assert any(cue.startswith("with 'please': option 1 listed; without: option 1 from the end") for cue in switched)


def test_a_cue_that_reads_nothing_is_credited_at_chance():
    # no option is written in the prompt: every cue that reads the text abstains, and counts at chance
    asked = [Asked(("Choose.",), ("P", "Q"), right) for right in ("P", "Q")]
    table = BANK.agreement(asked)
    reads_text = [i for i, name in enumerate(BANK.names) if not name.startswith(("option ", "the "))]
    assert reads_text and (table[:, reads_text] == 0.5).all()


@given(st.lists(st.sampled_from(["Rock", "Paper", "A", "B", "-3", "2", "15", "and", "\n", ". ", ", "]), max_size=30),
       st.lists(st.sampled_from(["Rock", "Paper", "A", "B"]), min_size=2, max_size=4, unique=True))
@settings(max_examples=200, deadline=None)
def test_a_blind_cue_agent_picks_what_the_audit_reads(words, options):
    """``reference:blind-cue-K`` reads its one cue alone; it picks what the audit reads of the whole bank."""
    messages = ("Rules: " + " ".join(words[:10]), " ".join(words[10:]))
    read = cues._read(messages, tuple(options))
    assert [cues.pick(messages, tuple(options), k) for k in range(len(read))] == [picked for _, picked in read]


def test_only_the_judged_fields_of_actions_cells_are_audited():
    assert cue_capture.judged_fields({"test_id": "b.py::test_first_order_rationality[m-given-actions]", "variant": {"generation": "actions"}}) == ("action",)
    assert cue_capture.judged_fields({"test_id": "b.py::test_first_order_rationality[m-given-strategy]", "variant": {"generation": "strategy"}}) == ()
    assert cue_capture.judged_fields({"test_id": "b.py::test_commons[m-x]", "variant": {}}) == ()


# -- the shipped behaviours ---------------------------------------------------------------------------

#: What a blind agent truly has, by construct: (the units, the cues, why, the positive control).
EXCEPTIONS = {
    "accepting every offer": (
        r"::test_ultimatum\[.*-responder-",
        r".",
        "the responder's criterion asks that $40 be accepted, which is the answer whatever is offered: any cue that names "
        "'accept' is right in every trial, as an agent that accepts everything is",
        "tests/test_blind_agents.py::test_a_blind_agent_accepts_whatever_is_offered",
    ),
    "the meaning of a named label": (
        r"::test_(rational_vs_credible|payoff_sensitivity)\[(?!.*\+ ano)",
        r"^with '",
        "the named labels come in two pairs crossed with their order (Cooperate / Defect, Trust / Betray), so no place or "
        "spelling is defection more often than chance; but a word of the pair says which pair it is, and within a pair "
        "the spelling says which label is defection: a habit keyed to 'trust' defects every time. So does any agent "
        "that reads what a named label means, which is what the named cells keep (the paper's framing); what an agent "
        "does without a label's meaning is what the anonymised (Foo / Bar) cells ask, where the audit finds nothing",
        "tests/test_cue_audit.py::test_nothing_predicts_defection_where_the_labels_mean_nothing",
    ),
    "the preferred split's own amount": (
        r"::test_preference_alignment\[",
        lambda finding: _keyed_to_own_amount(finding),
        "the words that close a split's line (the other person's amount, then the next option's letter or the "
        "question) say where that split stands; a habit keyed to the amount of the split the preference picks knows "
        "the answer's content, which is the construct (following the instructed preference), and it is right in half "
        "the trials of that preference's cell alone",
        "tests/test_cue_audit.py::test_a_habit_of_preference_alignment_holds_the_preferred_split_s_own_amount",
    ),
}

EXCEPTIONS["the moves a patterned opponent repeats"] = (
    r"::test_(belief_refinement|belief_use|coordination)\[",
    lambda finding: _reads_the_history(finding),
    "a hidden cycle of period p is its moves repeating every p rounds: against it the move k rounds back is the next "
    "move for every multiple k of p, and the best response to that move is the right move, so every cue that reads "
    "the opponent's moves (the name k from the end of the history, the one named most recently or most often, a habit "
    "keyed to a move's name or to the last round's result) finds the pattern where the period divides "
    "its lag, which is the construct (prediction from the history); no mix of cycles of periods 1 to 3 puts every "
    "echo at chance (the echo at lag 6 repeats them all). What reads no move of the history (a place in the listing, "
    "a label's spelling, a word of the rules) is held to chance; the listing takes every order of the moves, as a "
    "listing of rotations led the move after the last one named to the 3-loop's next",
    "tests/test_cue_audit.py::test_no_cue_knows_the_next_move_of_an_opponent_that_does_not_repeat",
)

#: Designs the audit shows leaking, with what fixes each. Not exceptions: each is a cue a blind agent could
#: earn a verdict with. Once fixed, its test below fails until the entry goes.
OPEN_DEFECTS = {
    "the smallest number beside defection (cooperation loss)": (
        r"::test_(rational_vs_credible|payoff_sensitivity)\[",
        r"smallest number, its sign unread",
        "in the cooperation-loss payoffs (6, -3, 8, 2), read without the minus sign, the smallest number is mutual "
        "defection's 2, and its sentence names defection first (read with the sign, -3 sits in one sentence naming "
        "each action first): a payoff written with each action first in its sentence equally often, or the sucker's "
        "payoff at a magnitude above the punishment's, fixes it",
    ),
}


@pytest.fixture(scope="session")
def audited(shared_folder) -> list[dict]:
    """The audit of the shipped behaviours, habits keyed to a word included, run once for the whole
    session (about a minute)."""
    kept = shared_folder / "cue-audit.json"
    with open(shared_folder / "cue-audit.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not kept.exists():
            folder = shared_folder / "cue-audit"
            folder.mkdir(exist_ok=True)
            units, found = cue_capture.audit_files(cue_capture.judged_files(ROOT / "behaviours"), folder, words=True)
            kept.write_text(json.dumps({"units": {u.name: {f: len(a) for f, a in u.fields.items()} for u in units},
                                        "found": [f.as_json() for f in found]}))
    return json.loads(kept.read_text())


def named(finding: dict, entries: dict) -> str | None:
    return next((name for name, (units, cue, *_) in entries.items()
                 if re.search(units, finding["unit"]) and (cue(finding) if callable(cue) else re.search(cue, finding["cue"]))), None)


def _keyed_to_own_amount(finding: dict) -> bool:
    """A habit keyed to the amount the other person gets in the split the cell's preference picks."""
    from pytest_gaamas.games.dictator import LOSSY_OPTIONS

    word = re.match(r"with '(\d+) (?:option|which)'", finding["cue"])
    preference = next((p for p in LOSSY_OPTIONS if f"-{p}-" in finding["unit"]), None)
    return bool(word and preference and int(word[1]) == LOSSY_OPTIONS[preference][1])


#: The cues that read no move of a history: a place in the answer form's listing, a label's spelling.
_FORM_CUES = re.compile(r"^(option \d+ (listed|from the end of the listing)|the label that sorts (first|last)|the (shortest|longest) label)$")
#: The words of a history: the moves' names, and what a round's result says of the last prediction.
_HISTORY_WORDS = {"head", "tail", "rock", "paper", "scissors", "a", "b", "right", "wrong", "none"}
#: The points that close a round's result, before the next round's line ("...: +2.\nRound 6/10").
_RESULT_POINTS = re.compile(r"^\d+ round$")


def _reads_the_history(finding: dict) -> bool:
    """Whether a cue reads the opponent's moves or the last round's result: a word habit keyed to a
    history's word, or a cue of names in a scope that holds the history (every scope but the rules,
    the first message)."""
    habit = re.match(r"with '([^']+)': ", finding["cue"])
    if habit:
        return bool(set(habit[1].split()) & _HISTORY_WORDS) or bool(_RESULT_POINTS.match(habit[1]))
    return not _FORM_CUES.match(finding["cue"]) and not finding["cue"].endswith("in the first message")


def test_no_cue_knows_the_next_move_of_an_opponent_that_does_not_repeat():
    """The control of the patterned opponents' exception: the same games against an opponent whose ten
    moves are drawn at random (seeded) and never cycle leave every cue of the bank, habits keyed to a word
    included, at chance, so what the echoes know of the patterned opponents is the pattern."""
    from pytest_gaamas.cue_capture import option_fields
    from pytest_gaamas.games.repeated import (
        BATTLE_OF_THE_SEXES,
        MATCHING_PENNIES,
        RPS_PREDICTION,
        RPS_WIN_DRAW_LOSS,
        HiddenPatternGame,
    )
    from pytest_gaamas.play import Answer

    draw = random.Random(45)
    units = []
    for rules in (MATCHING_PENNIES, RPS_PREDICTION, RPS_WIN_DRAW_LOSS, BATTLE_OF_THE_SEXES):
        game = HiddenPatternGame(rules, tuple(tuple(draw.choice(rules.moves) for _ in range(10)) for _ in range(60)))
        asked: dict[str, list[Asked]] = {}
        for trial in range(60):
            pattern, _ = game.arrangement(trial)
            play = game.play(trial)
            decision = next(play)
            for round_ in range(game.rounds):
                messages = tuple(m["content"] for m in decision.messages)
                right = {"prediction": pattern[round_], "move": rules.best_response(pattern[round_])}
                for field, options in option_fields(decision.schema).items():
                    asked.setdefault(field, []).append(Asked(messages, options, right[field]))
                reply = {field: draw.choice(options) for field, options in option_fields(decision.schema).items()}
                try:
                    decision = play.send(Answer(True, (reply["prediction"], reply.get("move")), text=json.dumps(reply)))
                except StopIteration:
                    break
        units.append(Unit(f"behaviours/test_control.py::test_control[{rules.name}]", asked))
    assert sum(len(a) for u in units for a in u.fields.values()) == 4 * 60 * 10 + 3 * 60 * 10
    assert audit(units, BANK, words=True) == []


def test_the_audit_reads_every_judged_unit_whole(audited):
    names = [name.partition("::")[2].partition("[")[0] for name in audited["units"]]
    assert set(names) == set(cues.JUDGED), f"judged tests the audit never read: {set(cues.JUDGED) - set(names)}"
    thin = {name: fields for name, fields in audited["units"].items() if min(fields.values()) < 30}
    assert not thin, f"units the audit read fewer than 30 prompts of: {thin}"


def test_no_cue_predicts_the_right_answer_outside_the_exceptions_and_the_open_defects(audited):
    unexplained = [f for f in audited["found"] if named(f, EXCEPTIONS) is None and named(f, OPEN_DEFECTS) is None]
    shown = "\n".join(f"{f['unit']} {f['field']}: {f['cue']} {f['agreed']} (chance {f['chance']}, n {f['n']})" for f in unexplained[:20])
    assert not unexplained, f"{len(unexplained)} cues predict the right answer:\n{shown}"


def test_nothing_predicts_defection_where_the_labels_mean_nothing(audited):
    """The control of the named labels' exception: the anonymised cells (Foo / Bar) are read, and no
    habit keyed to a word predicts defection there (nor any cue, but the cooperation-loss payoffs' open
    defect)."""
    anonymised = [name for name in audited["units"] if "::test_rational_vs_credible[" in name and "+ ano" in name]
    assert len(anonymised) >= 12
    there = [f for f in audited["found"] if f["unit"] in anonymised]
    assert not [f for f in there if f["cue"].startswith("with '")]
    assert all(named(f, OPEN_DEFECTS) for f in there)  # the cooperation-loss payoffs' own, open


def test_a_habit_of_preference_alignment_holds_the_preferred_split_s_own_amount(audited):
    """The control of that exception: in every preference's cell a habit keyed to the amount of that
    preference's own split is found (the answer's content, beside the word that marks its place)."""
    cells = [name for name in audited["units"] if "::test_preference_alignment[" in name]
    assert len(cells) == 4
    for name in cells:
        assert any(f["unit"] == name and _keyed_to_own_amount(f) for f in audited["found"]), name


def test_every_exception_and_open_defect_is_still_needed(audited):
    used = {named(f, EXCEPTIONS) for f in audited["found"]} | {named(f, OPEN_DEFECTS) for f in audited["found"]}
    unused = (set(EXCEPTIONS) | set(OPEN_DEFECTS)) - used
    assert not unused, f"named but no longer found (a fixed defect: remove its entry): {unused}"


def test_every_exception_names_a_positive_control_that_exists():
    for name, (_, _, _, control) in EXCEPTIONS.items():
        path, _, test = control.partition("::")
        assert f"def {test}(" in (ROOT / path).read_text(), f"{name}: no positive control {control}"


def test_the_cue_audit_command_says_what_it_found(tmp_path):
    from pytest_gaamas.__main__ import main

    assert main(["cue-audit", "--tolerance", "2"]) == 2
    assert main(["cue-audit", str(tmp_path / "nothing.py")]) == 2
