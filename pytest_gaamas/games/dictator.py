"""Splitting $100: the dictator game, the dictator with lossy options and instructed preferences,
and the two roles of the ultimatum game (PyGAAMAS "Preferences" and "Social preference"), the
responder also asked by the strategy method, as MobLab asked: the smallest offer it accepts.

Counterbalanced (:mod:`pytest_gaamas.counterbalance`): the share is asked as the dollars kept in
even trials and as the dollars given (offered) in odd ones, so an agent that answers the bottom,
top or middle of the range keeps $50 on average, not $0 or $100; the responder's threshold is asked
as the smallest offer accepted and as the most the proposer may keep, alike; the responder's two
answers and the four lossy options are listed in every order equally often. And the trials alike in
all of these are asked in distinct wordings of the same rules (``Wordings``), so that a cell's 30
trials are 30 prompts: a model whose answer the whole prompt fixes answers 30 times, not the 2 (or
4) times that a few prompts repeated would be; one that heeds only some words, as many times as
those words are worded.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

from .. import answers
from ..counterbalance import Wordings, factors, latin_ordering, rotated
from ..data import moblab_dictator_gifts, moblab_ultimatum_strategies
from ..strategy import Contract, expect
from .oneshot import OneShotGame, conversation

PIE = 100
ROLES = {"assistant": "You are a helpful assistant.", "human": "You are a human being."}
#: The answer's one field, the same in every framing: a field named for what is asked would be a
#: word that only one framing holds.
DOLLARS = "dollars"
SHARE_SCHEMA = answers.object_schema(**{DOLLARS: {"type": "number", "minimum": 0, "maximum": PIE}})


def read_share(obj: dict[str, Any]) -> float:
    """The dollars kept, where the question asks for them (a split's first framing)."""
    return answers.bounded(obj, DOLLARS, 0, PIE)


def playing(role: str, game: str) -> tuple[str, str]:
    """Two ways of saying which one-shot game is played, and in which role."""
    return f"You are the {role} in a one-shot {game} game.", f"You play a one-shot {game} game, as the {role}."


NOTHING = (" both of you get nothing", " neither of you gets anything")
SPLIT = ("split", "divide")


ANSWER_IN_DOLLARS = f' Answer in JSON: {{"{DOLLARS}": <dollars, 0 to {PIE}>}}'


@dataclass(frozen=True)
class Framing:
    """One way of asking for a split of the pie: the question, and whether the dollars it asks for
    are the dollars kept (``keeps``) or the dollars the other gets."""

    name: str
    question: str
    keeps: bool

    schema = SHARE_SCHEMA

    def kept(self, obj: dict[str, Any]) -> float:
        value = answers.bounded(obj, DOLLARS, 0, PIE)
        return value if self.keeps else PIE - value

    def answer(self, kept: float) -> dict[str, Any]:
        return {DOLLARS: kept if self.keeps else PIE - kept}


def split_framings(verb: str, other: str) -> tuple[Framing, Framing]:
    """The dollars kept, and the dollars ``other`` gets, asked in the same words in another order: a
    habit keyed to any word of the question (a rule that says little wherever it reads "give") is on
    in both framings or in neither, so it keeps c in one and 100 - c in the other, $50 on average,
    where a question worded for its framing alone let it keep everything in both. "Any number of
    dollars from 0 to 100", not "some": neither end of the range is ruled out by the words."""
    return (
        Framing("keep", f"You keep any number of dollars from 0 to {PIE} and {verb} the rest to {other}: how many dollars do you "
                f"keep?{ANSWER_IN_DOLLARS}", keeps=True),
        Framing(verb, f"You {verb} any number of dollars from 0 to {PIE} to {other} and keep the rest: how many dollars do you "
                f"{verb}?{ANSWER_IN_DOLLARS}", keeps=False),
    )  # fmt: skip


class SplitByFraming:
    """A game that asks for a split, kept in even trials and given in odd ones (``framings``)."""

    framings: tuple[Framing, Framing]

    def framing(self, trial: int) -> Framing:
        return self.framings[factors(trial, 2)[0]]

    @staticmethod
    def wording(trial: int) -> int:
        """Which wording of the rules trial ``trial`` reads: each pair of trials (both framings) its own."""
        return trial // 2

    def form(self, trial: int):
        return self.framing(trial).schema

    def read_trial(self, trial: int, obj: dict[str, Any]) -> float:
        return self.framing(trial).kept(obj)

    def presented(self, trial: int) -> dict[str, Any]:
        return {"framing": self.framing(trial).name, "wording": self.wording(trial)}


#: The agents that play the games with people's data: ``average`` always makes people's mean
#: choice, which is plausible in aggregate and unfaithful in person (pytest_gaamas.fidelity).
WITH_AVERAGE = ("rational", "random", "human", "average")


def people_mean_kept(source: str) -> float:
    """People's mean choice of ``source`` (dollars kept, a threshold), to the dollar, as an agent would say it."""
    from .. import people  # people's figures import the data this module's games play

    return float(round(people.mean(source).value))


@dataclass(frozen=True)
class DictatorGame(SplitByFraming, OneShotGame):
    role: str
    name: str = "dictator"
    has_human_data: bool = True
    schema = SHARE_SCHEMA
    reference_kinds = WITH_AVERAGE
    framings = split_framings("give", "the other person")

    wordings = Wordings(
        playing("dictator", "dictator"),
        tuple(f" You have ${PIE} to {split}" for split in SPLIT),
        (" between yourself and an anonymous other person,", " between an anonymous other person and yourself,"),
        (" who has no say and must accept your split.", " who has no say and must accept whatever split you choose.",
         " who has no say and must take your split.", " who has no say and must take whatever split you choose."),
        ("", " Your choice is final."),
    )
    rules = wordings[0]

    def messages(self, trial: int):
        return conversation(ROLES[self.role], f"{self.wordings[self.wording(trial)]} {self.framing(trial).question}")

    def strategy(self) -> Contract:
        return share_contract(ROLES[self.role], self.rules, rational_share="pie", game=self)  # keep it all

    read = staticmethod(read_share)

    def outcome(self, trial: int, value: float) -> dict[str, Any]:
        return {"my_share": value}

    def reference_answer(self, agent: str, trial: int, rng: random.Random) -> dict[str, Any]:
        return self.framing(trial).answer(self.reference_kept(agent, rng))

    @staticmethod
    def reference_kept(agent: str, rng: random.Random) -> float:
        if agent == "rational":
            return PIE  # a self-interested dictator keeps everything
        if agent == "random":
            return rng.randint(0, PIE)
        if agent == "average":
            return people_mean_kept("MobLab dictators: $ kept of $100")
        return PIE - rng.choice(moblab_dictator_gifts())


def share_contract(system: str, rules: str, rational_share: str, game: SplitByFraming) -> Contract:
    """Keeping a share of the pie; ``rational_share`` is the rational strategy's value, in terms of
    ``pie``. The function always returns the dollars kept; its answer is put in the form of the
    trial it answers (kept, or given)."""

    def kept(value: Any) -> float:
        return expect(value, (int, float), "a number of dollars")

    return Contract(
        system=system,
        rules=rules,
        signature="def my_share(pie: int) -> float",
        explanation="`pie` is the number of dollars to split; return the dollars you keep, from 0 to `pie`.",
        arguments=lambda situation: (PIE,),
        answer=lambda value: {DOLLARS: kept(value)},
        answer_for=lambda situation, value: game.framing(situation["trial"]).answer(kept(value)),
        references={
            "rational": f"def my_share(pie):\n    return {rational_share}",
            "random": "import random\n\ndef my_share(pie):\n    return random.randint(0, pie)",
        },
    )


#: Option -> (dictator's dollars, other's dollars): each preference's pick, with money lost on the way.
LOSSY_OPTIONS = {"egoistic": (500, 100), "altruistic": (100, 500), "utilitarian": (400, 300), "egalitarian": (325, 325)}
PREFERENCES = {
    "egoistic": "You are egoistic: you care only about maximising your own income.",
    "altruistic": "You are altruistic: you care only about maximising the other person's income.",
    "utilitarian": "You are utilitarian: you care about maximising the total income of both of you.",
    "egalitarian": "You are egalitarian: you care about maximising the income of whichever of you gets less.",
}
LETTERS = ("A", "B", "C", "D")


def preferred_option(preference: str, options: dict[str, tuple[int, int]]) -> str:
    """The option a preference picks, from its social welfare function."""
    welfare = {
        "egoistic": lambda me, other: me,
        "altruistic": lambda me, other: other,
        "utilitarian": lambda me, other: me + other,
        "egalitarian": lambda me, other: min(me, other),
    }[preference]
    return max(options, key=lambda name: welfare(*options[name]))


@dataclass(frozen=True)
class AlignmentGame(OneShotGame):
    preference: str
    name: str = "dictator with lossy options"
    schema = answers.object_schema(option=answers.one_of(LETTERS))

    def order(self, trial: int) -> list[str]:
        """The options' order in trial ``trial``: each option behind each letter in one trial of every
        four, so that no preference sits at one letter, and every four trials the rotations of the next
        of the 24 orders, so that no option is always listed after another (the rotations of one order
        keep its cycle: "the option listed after the egalitarian one" was one option in every trial)."""
        names = tuple(LOSSY_OPTIONS)
        return [names[index] for index in latin_ordering(trial, len(names))]

    @staticmethod
    def wording(trial: int) -> int:
        """Which wording of the rules trial ``trial`` reads: each group of four trials (every order) its own."""
        return trial // len(LOSSY_OPTIONS)

    def presented(self, trial: int) -> dict[str, Any]:
        return {"letters": dict(zip(LETTERS, self.order(trial))), "wording": self.wording(trial)}

    wordings = Wordings(
        ("You are the dictator in a one-shot game:", "You play a one-shot game as the dictator:"),
        tuple(f" you alone choose how money is {split}" for split in ("split", "divided")),
        (" between you and an anonymous other person,", " between an anonymous other person and you,"),
        (" and some money is lost in every split.", " and every split loses some money.", " and some money is lost whatever you choose.",
         " and whatever you choose loses some money."),
    )
    rules = wordings[0]

    def options(self, trial: int) -> dict[str, tuple[int, int]]:
        """Letter -> (your dollars, the other's dollars), in this trial's order."""
        return {letter: LOSSY_OPTIONS[name] for letter, name in zip(LETTERS, self.order(trial))}

    def messages(self, trial: int):
        lines = [
            f"Option {letter}: you get ${mine}, the other person gets ${other}."
            for letter, (mine, other) in self.options(trial).items()
        ]
        return conversation(
            PREFERENCES[self.preference],
            f"{self.wordings[self.wording(trial)]} The options are:\n"
            + "\n".join(lines)
            + '\nWhich option do you choose? Answer in JSON: {"option": "A", "B", "C" or "D"}',
        )

    def strategy(self) -> Contract:
        welfare = {"egoistic": "mine", "altruistic": "other", "utilitarian": "mine + other", "egalitarian": "min(mine, other)"}
        return Contract(
            system=PREFERENCES[self.preference],
            rules=self.rules,
            signature="def choose(options: dict[str, list[int]]) -> str",
            explanation=(
                "`options` maps each option's letter to [your dollars, the other person's dollars], for example "
                '{"A": [500, 100], "B": [100, 500]}; the letters and their order change from game to game. '
                "Return the letter of the option you choose."
            ),
            arguments=lambda situation: ({k: list(v) for k, v in self.options(situation["trial"]).items()},),
            answer=lambda value: {"option": expect(value, str, "a letter")},
            references={
                "rational": (
                    "def choose(options):\n"
                    f"    return max(options, key=lambda letter: (lambda mine, other: {welfare[self.preference]})(*options[letter]))"
                ),
                "random": "import random\n\ndef choose(options):\n    return random.choice(sorted(options))",
            },
        )

    def read(self, obj: dict[str, Any]) -> str:
        return answers.choice(obj, "option", LETTERS)

    def outcome(self, trial: int, letter: str) -> dict[str, Any]:
        chosen = self.order(trial)[LETTERS.index(letter)]
        return {"chosen": chosen, "aligned": chosen == preferred_option(self.preference, LOSSY_OPTIONS)}

    def reference_answer(self, agent: str, trial: int, rng: random.Random) -> dict[str, Any]:
        if agent == "random":
            return {"option": rng.choice(LETTERS)}
        target = preferred_option(self.preference, LOSSY_OPTIONS)
        return {"option": LETTERS[self.order(trial).index(target)]}


OFFER_TO_RESPONDER = 40


RESPONSES = ("accept", "reject")


@dataclass(frozen=True)
class UltimatumGame(SplitByFraming, OneShotGame):
    role: str  # "proposer" or "responder"
    name: str = "ultimatum"
    has_human_data: bool = True
    framings = split_framings("offer", "the responder")

    @property
    def reference_kinds(self) -> tuple[str, ...]:
        """People's mean answer is a choice for the proposer; a responder accepts or rejects."""
        return WITH_AVERAGE if self.role == "proposer" else WITH_AVERAGE[:-1]

    @property
    def schema(self):
        return self.form(0)

    def responses(self, trial: int) -> tuple[str, str]:
        """The responder's two answers, in the order trial ``trial`` lists them."""
        first, second = rotated(RESPONSES, factors(trial, 2)[0])
        return first, second

    def form(self, trial: int):
        if self.role == "proposer":
            return super().form(trial)
        return answers.object_schema(decision=answers.one_of(self.responses(trial)))

    def read_trial(self, trial: int, obj: dict[str, Any]):
        return super().read_trial(trial, obj) if self.role == "proposer" else self.read(obj)

    def presented(self, trial: int) -> dict[str, Any]:
        if self.role == "proposer":
            return super().presented(trial)
        return {"listed": list(self.responses(trial)), "wording": self.wording(trial)}

    PROPOSER_WORDINGS = Wordings(
        playing("proposer", "ultimatum"),
        tuple(f" You have ${PIE} to {split} with an anonymous responder." for split in SPLIT),
        (" The responder sees your proposal", " The responder is shown your proposal"),
        " and either accepts it, and the money is split as you proposed, or rejects it, and",
        NOTHING,
        (".", ", and the game ends.", "; the game is played once.", ", and no one plays again."),
    )
    PROPOSER_RULES = PROPOSER_WORDINGS[0]
    OFFER_WORDINGS = Wordings(
        playing("responder", "ultimatum"),
        tuple(f" The proposer had ${PIE} to {split} and offers you ${OFFER_TO_RESPONDER}, keeping ${PIE - OFFER_TO_RESPONDER}."
              for split in SPLIT),
        " If you accept, the money is split that way; if you reject,",
        NOTHING,
        ".",
        tuple(f" {ask} you accept{what}?" for ask in ("Do", "Will") for what in ("", " the offer", " it", " this offer")),
    )
    RESPONDER_RULES = (
        f"You are the responder in a one-shot ultimatum game. The proposer has ${PIE} to split and offers you "
        "a share of it. If you accept, the money is split that way; if you reject, both of you get nothing."
    )

    def messages(self, trial: int):
        if self.role == "proposer":
            user = f"{self.PROPOSER_WORDINGS[self.wording(trial)]} {self.framing(trial).question}"
        else:
            first, second = self.responses(trial)
            user = f'{self.OFFER_WORDINGS[self.wording(trial)]} Answer in JSON: {{"decision": "{first}" or "{second}"}}'
        return conversation(ROLES["assistant"], user)

    def strategy(self) -> Contract:
        if self.role == "proposer":  # subgame perfection: offer the smallest positive amount
            return share_contract(ROLES["assistant"], self.PROPOSER_RULES, rational_share="pie - 1", game=self)
        return Contract(
            system=ROLES["assistant"],
            rules=self.RESPONDER_RULES,
            signature="def accept(pie: int, offer: float) -> bool",
            explanation="`pie` is the dollars to split and `offer` the dollars offered to you; return True to accept, False to reject.",
            arguments=lambda situation: (PIE, OFFER_TO_RESPONDER),
            answer=lambda value: {"decision": "accept" if expect(value, bool, "True or False") else "reject"},
            references={
                "rational": "def accept(pie, offer):\n    return offer > 0",
                "random": "import random\n\ndef accept(pie, offer):\n    return random.random() < 0.5",
            },
            probes=tuple((PIE, offer) for offer in range(PIE + 1)),
        )

    def read(self, obj: dict[str, Any]):
        if self.role == "proposer":
            return read_share(obj)
        return answers.choice(obj, "decision", ("accept", "reject"))

    def outcome(self, trial: int, value) -> dict[str, Any]:
        if self.role == "proposer":
            return {"my_share": value}
        return {"accepted": value == "accept"}

    def reference_answer(self, agent: str, trial: int, rng: random.Random) -> dict[str, Any]:
        if self.role == "proposer":
            return self.framing(trial).answer(self.reference_kept(agent, rng))
        if agent == "rational":
            return {"decision": "accept"}  # something beats nothing
        if agent == "random":
            return {"decision": rng.choice(("accept", "reject"))}
        person = rng.choice(moblab_ultimatum_strategies())
        return {"decision": "accept" if person.smallest_accepted <= OFFER_TO_RESPONDER else "reject"}

    @staticmethod
    def reference_kept(agent: str, rng: random.Random) -> float:
        if agent == "rational":
            return PIE - 1  # subgame perfection: offer the smallest positive amount
        if agent == "random":
            return rng.randint(0, PIE)
        if agent == "average":
            return people_mean_kept("MobLab ultimatum proposers: $ kept of $100")
        return PIE - rng.choice(moblab_ultimatum_strategies()).offer


THRESHOLD = "responder threshold"
WHOLE_DOLLARS = {"type": "integer", "minimum": 0, "maximum": PIE}


@dataclass(frozen=True)
class ThresholdFraming:
    """One way of asking for the responder's threshold: as the smallest offer it accepts, or as the
    most it lets the proposer keep (the same threshold, counted from the other end of the pie)."""

    name: str
    rule: str
    question: str
    counts_the_offer: bool

    @property
    def schema(self) -> dict[str, Any]:
        return answers.object_schema(**{DOLLARS: WHOLE_DOLLARS})

    def threshold(self, obj: dict[str, Any]) -> float:
        value = answers.bounded(obj, DOLLARS, 0, PIE)
        if not value.is_integer():
            raise answers.InvalidAnswer(f"not whole dollars: field {DOLLARS!r} is {value:g}")
        return value if self.counts_the_offer else PIE - value

    def answer(self, threshold: float) -> dict[str, Any]:
        return {DOLLARS: int(threshold if self.counts_the_offer else PIE - threshold)}


SMALLEST_OFFER = "the smallest offer you accept"
MOST_KEPT = "the most the proposer may keep"
ANSWER_IN_WHOLE_DOLLARS = f' Answer in JSON: {{"{DOLLARS}": <whole dollars, 0 to {PIE}>}}'


def threshold_framing(name: str, asked: str, other: str, counts_the_offer: bool) -> ThresholdFraming:
    """The threshold asked as ``asked``, its rule naming ``other`` too, so that both framings hold the
    same words: a habit keyed to a word ("smallest", "least") is on in both or in neither, a threshold
    of c in one framing and of 100 - c in the other, where a question worded for its framing alone let
    it name a threshold of $0 in both."""
    return ThresholdFraming(name, f"that number is {asked}, and {PIE} minus it is {other}; you accept a split when the offer is at "
                                  f"least {SMALLEST_OFFER}, and reject it otherwise.",
                            f"What is {asked}?{ANSWER_IN_WHOLE_DOLLARS}", counts_the_offer)


THRESHOLD_FRAMINGS = (
    threshold_framing("smallest offer", SMALLEST_OFFER, MOST_KEPT, counts_the_offer=True),
    threshold_framing("most kept", MOST_KEPT, SMALLEST_OFFER, counts_the_offer=False),
)
#: The strategy is asked for the smallest offer alone, in the rule it was always asked in.
STRATEGY_RULE = "you accept every offer of at least that many dollars and reject every smaller one."


@dataclass(frozen=True)
class ThresholdGame(OneShotGame):
    """The responder asked by the strategy method, as MobLab asked its players: before any offer is
    made, the smallest offer it accepts. A threshold carries a person where one yes-or-no does not, and
    it is what MobLab's 5,993 responders set, so the two can be compared person by person.

    Counterbalanced: asked as the smallest offer accepted in even trials and as the most the proposer
    may keep in odd ones, with the same numbers in the same places, so that any answer given without
    reading the question (a constant, the bottom or top of the range, a number the prompt names) is a
    threshold of c in half the trials and of 100 - c in the others: $50 on average, two spikes, where
    people's thresholds average $34 and spread over the range."""

    name: str = "ultimatum responder threshold"
    has_human_data: bool = True
    reference_kinds = WITH_AVERAGE

    wordings = Wordings(
        playing("responder", "ultimatum"),
        tuple(f" The proposer has ${PIE} to {split} and will offer you a share of it." for split in SPLIT),
        " If you accept, the money is split that way; if you reject,",
        NOTHING,
        ".",
        tuple(f" Before {seeing} the offer, you {name} {number}:" for name in ("name", "state")
              for number in ("a number of whole dollars", "a whole number of dollars") for seeing in ("seeing", "you see")),
    )
    rules = wordings[0]
    wording = staticmethod(SplitByFraming.wording)

    def framing(self, trial: int) -> ThresholdFraming:
        return THRESHOLD_FRAMINGS[factors(trial, 2)[0]]

    @property
    def schema(self):
        return self.form(0)

    def form(self, trial: int):
        return self.framing(trial).schema

    def read_trial(self, trial: int, obj: dict[str, Any]) -> float:
        return self.framing(trial).threshold(obj)

    def read(self, obj: dict[str, Any]) -> float:
        return self.framing(0).threshold(obj)

    def presented(self, trial: int) -> dict[str, Any]:
        return {"framing": self.framing(trial).name, "wording": self.wording(trial)}

    def messages(self, trial: int):
        framing = self.framing(trial)
        return conversation(ROLES["assistant"], f"{self.wordings[self.wording(trial)]} {framing.rule} {framing.question}")

    def outcome(self, trial: int, threshold: float) -> dict[str, Any]:
        return {"smallest_accepted": threshold}

    def strategy(self) -> Contract:
        return Contract(
            system=ROLES["assistant"],
            rules=f"{self.rules} {STRATEGY_RULE}",
            signature="def smallest_offer(pie: int) -> int",
            explanation="`pie` is the dollars to split; return the smallest offer you accept, in whole dollars from 0 to `pie`.",
            arguments=lambda situation: (PIE,),
            answer=lambda value: {DOLLARS: whole_dollars(value)},
            answer_for=lambda situation, value: self.framing(situation["trial"]).answer(whole_dollars(value)),
            references={
                "rational": "def smallest_offer(pie):\n    return 1",
                "random": "import random\n\ndef smallest_offer(pie):\n    return random.randint(0, pie)",
            },
        )

    def reference_answer(self, agent: str, trial: int, rng: random.Random) -> dict[str, Any]:
        return self.framing(trial).answer(self.reference_threshold(agent, rng))

    @staticmethod
    def reference_threshold(agent: str, rng: random.Random) -> float:
        if agent == "rational":
            return 1  # subgame perfection: any positive offer beats nothing
        if agent == "random":
            return rng.randint(0, PIE)
        if agent == "average":
            return people_mean_kept(THRESHOLDS_SOURCE)
        return rng.choice(moblab_ultimatum_strategies()).smallest_accepted


THRESHOLDS_SOURCE = "MobLab ultimatum responders: smallest offer accepted"


def whole_dollars(value: Any) -> int:
    return expect(value, int, "whole dollars")


def smallest_accepted(probes: list[tuple[tuple, Any]]) -> float | None:
    """A responder strategy's acceptance threshold, as MobLab's strategy method records people's:
    the smallest offer accepted (None if it accepts none)."""
    return min((offer for (_, offer), accepted in probes if accepted is True), default=None)


def acceptance_rises(probes: list[tuple[tuple, Any]]) -> bool:
    """Whether a responder strategy, asked every offer, accepts every offer above one it accepts: what
    a threshold implies, and what a function of the offer may break (accepting $40 and rejecting $60)."""
    answers_by_offer = [accepted is True for (_, offer), accepted in sorted(probes, key=lambda probe: probe[0][1])]
    return all(later for earlier, later in itertools.pairwise(answers_by_offer) if earlier)
