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
import re
from pathlib import Path

import pytest
from conftest import ROOT

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

#: Designs the audit shows leaking, with what fixes each. Not exceptions: each is a cue a blind agent could
#: earn a verdict with. Once fixed, its test below fails until the entry goes.
OPEN_DEFECTS = {
    "an echo of a fixed pattern": (
        r"::test_(belief_refinement|belief_use|coordination)\[",
        r".",
        "against a hidden opponent of one fixed pattern (constant, alternating, a 2- or 3-loop) a fixed echo of the history "
        "(the name k from the end of the moves listed, the one named most often) is right every round: the patterns must "
        "be mixed within a cell so that no one lag is right throughout, or the behaviour met only where all are",
    ),
    "rotations of the lossy options (preference alignment)": (
        r"::test_preference_alignment\[",
        r"^with '",
        "the four lossy splits are listed in the four rotations of one cyclic order, so the words that close one "
        "split's line (its other amount, the next letter) say which rotation it is, and with it where another split "
        "stands: a habit keyed to such a pair is right in half the trials of a cell whose split it does not name, "
        "where chance is a quarter. Listing the splits in all 24 orders (counterbalance.latin_ordering) leaves only "
        "the exception's own-amount habits (measured), and asks preference alignment to be recorded again",
    ),
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
