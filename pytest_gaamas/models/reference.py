"""Scripted reference agents. They answer through the same parsing path as a model, so a behaviour
that a rational agent fails, or a random agent passes, shows itself as a broken test.

The *blind* agents never read the game: each answers from the request's surface alone, the form the
answer must take (its JSON schema) and the prompt's text, never from the game, its situation or its
history, by one rule (a place in a range, a place in a list, a label's spelling, what the text names
first or last, a coin). A criterion that one of them meets measures the rule, not the construct,
unless the construct is one a blind agent truly has (each such exception is named, with a positive
control, in ``tests/test_blind_agents.py``). They play every game, a user's too, without the game
saying how. ``first``, ``last`` and ``constant`` are three of them by name.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections import ChainMap
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import answers, play
from ..play import Request, fingerprint
from .base import Model

SCRIPTED = {
    "rational": "plays the game-theoretic (or utility-maximising) answer",
    "random": "chooses uniformly at random among the legal answers",
    "human": "answers with a real person's choice from the human data",
    "average": "always makes people's mean choice where the data have one (dictator, ultimatum proposer): plausible in aggregate, unfaithful in person",
    "sustainable": "takes its equal share of what a shared resource regrows, and proposes that share as the norm (the commons)",
}
#: The agents every game has; a game with others (the commons' sustainable agent) lists its own.
EVERY_GAME = ("rational", "random", "human")

#: How a blind agent is spelt: ``blind-RULE``, its one rule for options and numbers alike, or
#: ``blind-RULE-numbers-RULE``, one rule for options and another for numbers. Every spelling is a
#: valid file name and test id.
BLIND_PREFIX = "blind-"
NUMBERS_APART = "-numbers-"
_RULE = re.compile(
    r"(?P<kind>at|coin)-(?P<fraction>0(?:\.\d+)?|1(?:\.0+)?)"
    r"|option-(?P<place>[1-9]\d*)(?P<from_end>-from-end)?"
    r"|(?P<reading>sorts|named|number)-(?P<end>first|last)"
    r"|hash-(?P<salt>\d+)(?P<last_message>-last)?"
    r"|word-(?P<word>[a-z]+)(?P<word_last>-last)?"
    r"|cue-(?P<cue>\d+)"
)
#: The rules, as ``--help`` and the errors spell them.
RULES = (
    "at-Q, coin-P (0 <= Q, P <= 1), option-K, option-K-from-end, sorts-first|last, named-first|last, number-first|last, "
    "hash-S, hash-S-last (S a whole number), word-W, word-W-last (W a word in small letters), "
    "cue-K (K a cue of the cue audit's bank, python -m pytest_gaamas cue-audit --list)"
)
#: The words of a text, as ``word-W`` reads them: runs of small letters, digits and apostrophes, case folded.
_WORD = re.compile(r"[a-z0-9']+")
#: A number written in the prompt: digits, with a decimal part if it has one.
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Rule:
    """One way of answering without reading the game, for a list of options and for a numeric range.

    - ``at-Q``: the fraction Q of every range (0 its bottom, 1 its top); the option at place
      Q x (n - 1) of the n listed, to the nearest (halves up).
    - ``coin-P``: the first option listed with probability P, else one of the others at random; the
      bottom of a range with probability P, else its top.
    - ``option-K`` / ``option-K-from-end``: the K-th option listed, counted from the start or from the
      end (the last one where fewer are listed); the bottom, or the top, of a range.
    - ``sorts-first`` / ``sorts-last``: the option whose label sorts first, or last; the middle of a range.
    - ``named-first`` / ``named-last``: the option whose label the prompt writes first, or last (the
      first, or last, listed where it writes none); the first, or last, number the prompt writes,
      held inside the range (its bottom, or top, where it writes none).
    - ``number-first`` / ``number-last``: the option equal to the first, or last, number the prompt
      writes (the first, or last, listed where none is); numbers as ``named-``.
    - ``hash-S``: an answer the prompt's wording fixes and nothing else, a salted hash of its whole
      text (salt S): an option, or a place in a range, the same whenever the same prompt is asked, as
      a model at temperature 0 that never reads the game would give.
    - ``hash-S-last``: the same, of the last message's text alone: a model that heeds only the
      question it was just asked, never the rules told before it.
    - ``word-W`` / ``word-W-last``: the option whose label sorts first where the prompt (or its last
      message) holds the word W, else the one that sorts last; the bottom of a range, else its top:
      a habit keyed to one phrase, which rewordings of a prompt switch on and off.
    - ``cue-K``: the option the K-th cue of the cue audit's bank picks (``pytest_gaamas.cues``: a place
      in the listing, a label's spelling, what a message, line, sentence or clause names first, last
      or most recently, an echo of a listed history, the option beside the largest number), one at
      random where that cue reads nothing; the middle of a range: the audit's cues, played.
    """

    kind: str
    #: Q, P or K.
    value: float = 0.0
    #: Counts from the end: option-K-from-end, and the ``-last`` readings.
    from_end: bool = False
    #: ``hash-S-last``, ``word-W-last``: read the last message alone.
    last_message: bool = False
    #: ``word-W``: the word whose presence switches the answer.
    word: str = ""

    @classmethod
    def parse(cls, text: str) -> Rule | None:
        found = _RULE.fullmatch(text)
        if found is None:
            return None
        if found["kind"]:
            return cls(found["kind"], float(found["fraction"]))
        if found["place"]:
            return cls("option", int(found["place"]), bool(found["from_end"]))
        if found["salt"]:
            return cls("hash", int(found["salt"]), last_message=bool(found["last_message"]))
        if found["word"]:
            return cls("word", last_message=bool(found["word_last"]), word=found["word"])
        if found["cue"]:
            from ..cues import bank_names

            return cls("cue", int(found["cue"])) if int(found["cue"]) < len(bank_names()) else None
        return cls(found["reading"], from_end=found["end"] == "last")

    def option(self, options: Sequence[Any], surface: Surface, rng: random.Random, *, labels_sort: bool = True) -> Any:
        n = len(options)
        if self.kind == "cue":
            from ..cues import pick

            picked = pick(surface.messages or (surface.text,), tuple(map(str, options)), int(self.value))
            return rng.choice(list(options)) if picked is None else next(o for o in options if str(o) == picked)
        if self.kind == "hash":
            return options[surface.hashed(int(self.value), last_message=self.last_message) % n]
        if self.kind == "word":
            key = str if labels_sort else options.index
            return (min if surface.holds(self.word, last_message=self.last_message) else max)(options, key=key)
        if self.kind == "at":
            return options[math.floor(self.value * (n - 1) + 0.5)]
        if self.kind == "coin":
            return options[0] if n == 1 or rng.random() < self.value else rng.choice(options[1:])
        if self.kind == "option":
            place = min(int(self.value), n)
            return options[-place] if self.from_end else options[place - 1]
        if self.kind == "sorts":
            # Without an order of their own (true and false), the options keep the listed one.
            key = str if labels_sort else options.index
            return (max if self.from_end else min)(options, key=key)
        if self.kind == "named":
            return surface.named(options, last=self.from_end) or options[-1 if self.from_end else 0]
        number = surface.number(last=self.from_end)
        equal = [o for o in options if number is not None and _as_number(o) == number]
        return equal[0] if equal else options[-1 if self.from_end else 0]

    def number(self, low: float, high: float, surface: Surface, rng: random.Random) -> float:
        if self.kind == "hash":
            return low + (surface.hashed(int(self.value), last_message=self.last_message) % 1001) / 1000 * (high - low)
        if self.kind == "word":
            return low if surface.holds(self.word, last_message=self.last_message) else high
        if self.kind == "at":
            return low + self.value * (high - low)
        if self.kind == "coin":
            return low if rng.random() < self.value else high
        if self.kind == "option":
            return high if self.from_end else low
        if self.kind in ("sorts", "cue"):
            return (low + high) / 2
        number = surface.number(last=self.from_end)
        if number is None:
            return high if self.from_end else low
        return min(max(number, low), high)

    def count(self, fewest: int, most: int, surface: Surface, rng: random.Random) -> int:
        """How many items an array gets: a range like any other, but a count has no label to sort, so
        the label rules give the fewest the array needs."""
        return fewest if self.kind in ("sorts", "cue") else int(self.number(fewest, most, surface, rng))


def _as_number(label: Any) -> float | None:
    try:
        return float(label)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Surface:
    """What a blind agent may read of a request: the prompt's text, all its messages in order, and
    the last message's apart (the whole text where it is not given)."""

    text: str
    last: str | None = None
    #: The messages' texts apart, where known (what the cue audit's scopes read).
    messages: tuple[str, ...] = ()

    @classmethod
    def of(cls, request: Request) -> Surface:
        texts = [m["content"] for m in request.messages if isinstance(m.get("content"), str)]
        return cls("\n".join(texts), texts[-1] if texts else "", tuple(texts))  # every message of a game's request is text

    def named(self, options: Sequence[Any], *, last: bool) -> Any:
        """The option whose label the text writes first (or last), as a whole word; None if none."""
        places = {}
        for option in options:
            word = rf"(?<![A-Za-z0-9]){re.escape(str(option))}(?![A-Za-z0-9])"
            found = [m.start() for m in re.finditer(word, self.text)]
            if found:
                places[found[-1] if last else found[0]] = option
        return places[max(places) if last else min(places)] if places else None

    def read(self, *, last_message: bool = False) -> str:
        """The text a rule reads: the whole, or the last message's alone where it is given."""
        return self.text if not last_message or self.last is None else self.last

    def hashed(self, salt: int, *, last_message: bool = False) -> int:
        """A whole number the text (or the last message's alone) and the salt fix, and nothing else."""
        return int.from_bytes(hashlib.sha256(f"{salt}:{self.read(last_message=last_message)}".encode()).digest()[:8], "big")

    def words(self, *, last_message: bool = False) -> frozenset[str]:
        """The words of the text (or of the last message's alone), case folded, as ``word-W`` reads them."""
        return frozenset(_WORD.findall(self.read(last_message=last_message).lower()))

    def holds(self, word: str, *, last_message: bool = False) -> bool:
        """Whether the text (or the last message's alone) holds ``word``, case folded."""
        return word in self.words(last_message=last_message)

    def number(self, *, last: bool) -> float | None:
        numbers = _NUMBER.findall(self.text)
        return float(numbers[-1 if last else 0]) if numbers else None


@dataclass(frozen=True)
class Blind:
    """A blind agent: one rule for the options it picks, one for the numbers it gives."""

    options: Rule
    numbers: Rule

    @classmethod
    def parse(cls, name: str) -> Blind | None:
        """The agent ``blind-RULE`` or ``blind-RULE-numbers-RULE`` spells, or a named one; None if none."""
        name = NAMED_BLIND.get(name, name)
        if not name.startswith(BLIND_PREFIX):
            return None
        options, apart, numbers = name.removeprefix(BLIND_PREFIX).partition(NUMBERS_APART)
        options_rule, numbers_rule = Rule.parse(options), Rule.parse(numbers if apart else options)
        return None if options_rule is None or numbers_rule is None else cls(options_rule, numbers_rule)

    def answer(self, schema: Mapping[str, Any], surface: Surface, rng: random.Random) -> Any:
        """What this agent answers to a JSON schema: an option of an enum, a number of a range, every
        field of an object, an array's items, and the shortest free text, an empty string (so it
        writes no strategy, no reasoning and no message)."""
        if "enum" in schema:
            return self.options.option(list(schema["enum"]), surface, rng)
        kind_of = schema.get("type")
        if kind_of == "object":
            return {name: self.answer(spec, surface, rng) for name, spec in schema.get("properties", {}).items()}
        if kind_of == "array":
            fewest = schema.get("minItems", 0)
            count = self.numbers.count(fewest, schema.get("maxItems", fewest), surface, rng)
            return [self.answer(schema.get("items", {}), surface, rng) for _ in range(count)]
        if kind_of in ("number", "integer"):
            low = schema.get("minimum", 0)
            value = self.numbers.number(low, schema.get("maximum", low), surface, rng)
            return int(value) if kind_of == "integer" else value
        if kind_of == "boolean":
            return self.options.option([True, False], surface, rng, labels_sort=False)
        return ""


#: The blind agents known by name, and the rule each is.
NAMED_BLIND = {"first": "blind-option-1", "last": "blind-option-1-from-end", "constant": "blind-sorts-first"}


class BlindAgents(Mapping[str, str]):
    """The blind agents, each with its description: the named ones (``first``, ``last``, ``constant``,
    the only ones iterated) and every spelling ``Blind.parse`` reads."""

    NAMED: ClassVar[dict[str, str]] = {
        "first": "never reads the game: the first option its answer form lists, the bottom of every range",
        "last": "never reads the game: the last option its answer form lists, the top of every range",
        "constant": "never reads the game: the same answer every time, the middle of every range and the option whose name sorts first",
    }

    def __getitem__(self, kind: str) -> str:
        if kind in self.NAMED:
            return self.NAMED[kind]
        blind = Blind.parse(kind)
        if blind is None:
            raise KeyError(kind)
        rules = kind.removeprefix(BLIND_PREFIX).replace(NUMBERS_APART, ", numbers by ")
        return f"never reads the game: answers from the prompt's surface by {rules} (reference.Rule)"

    def __iter__(self) -> Iterator[str]:
        return iter(self.NAMED)

    def __len__(self) -> int:
        return len(self.NAMED)


#: Agents that answer from the request's surface without reading the game.
SHORTCUTS = BlindAgents()


def cell_seed(request: Request, cell: str | None = None) -> int:
    """The seed of a reference agent's draws for one request: the request's own seed (the run's, the
    trial's and the round's) mixed with its cell (the game's parameters, ``cell`` where already
    digested, and the temperature), so that two cells never replay the same draws."""
    return play.cell_seed(request.seed, fingerprint(request.game.fingerprint()) if cell is None else cell, request.temperature)


#: How a reader is spelt: ``reader-E``, E its error rate, from 0 to 1.
READER_PREFIX = "reader-"
_READER = re.compile(r"reader-(?P<error>0(?:\.\d+)?|1(?:\.0+)?)")
#: What a reader plays when it reads right, where the game defines it: the commons' rational agent is the
#: myopic tragedy, which no society survives, so there the villager that reads the game is the sustainable one.
READS_AS = ("sustainable", "rational")


@dataclass(frozen=True)
class Reader:
    """A reader that errs: it reads the game and plays the answer theory gives (``READS_AS``) with
    probability 1 - ``error``, and a uniformly random legal answer otherwise, drawn afresh for every
    request. Where a criterion names a rational benchmark, ``reader-0`` must meet it, a 90% reader
    nearly always, a 70% reader mostly: the positive controls beside the blind family. A strategy it
    writes errs the same way, call by call (``strategy``)."""

    error: float

    @classmethod
    def parse(cls, kind: str) -> Reader | None:
        found = _READER.fullmatch(kind)
        return None if found is None else cls(float(found["error"]))

    @staticmethod
    def right(kinds: Sequence[str]) -> str:
        """The reference agent whose answer reads the game, of those a game defines."""
        return next(kind for kind in READS_AS if kind in kinds)

    def kind(self, kinds: Sequence[str], rng: random.Random) -> str:
        """The agent this request is answered as: the right one, or by mistake the random one."""
        return "random" if self.error > 0 and rng.random() < self.error else self.right(kinds)

    def strategy(self, references: Mapping[str, str], function: str) -> str:
        """A strategy that errs call by call: the rational function, except with probability ``error``
        the random one, each as the game writes it, renamed apart."""
        parts = [f"import random as _reader_coin\n\n{references['rational'].strip()}\n\n_reader_right = {function}\n",
                 f"{references['random'].strip()}\n\n_reader_wrong = {function}\n"]
        call = (f"def {function}(*arguments):\n"
                f"    if _reader_coin.random() < {self.error!r}:\n        return _reader_wrong(*arguments)\n"
                "    return _reader_right(*arguments)\n")
        return "\n".join([*parts, call])


class Readers(Mapping[str, str]):
    """The readers that err, each with its description: every spelling ``Reader.parse`` reads, and
    three iterated (0, 0.1 and 0.3, the rates the suite's sensitivity is stated at)."""

    NAMED: ClassVar[tuple[str, ...]] = ("reader-0", "reader-0.1", "reader-0.3")

    def __getitem__(self, kind: str) -> str:
        reader = Reader.parse(kind) if isinstance(kind, str) else None
        if reader is None:
            raise KeyError(kind)
        return (f"reads the game and errs: the answer theory gives (the rational one; the sustainable one in the commons) "
                f"with probability {1 - reader.error:g}, else a uniformly random legal answer")

    def __iter__(self) -> Iterator[str]:
        return iter(self.NAMED)

    def __len__(self) -> int:
        return len(self.NAMED)


#: The readers that err: the positive controls.
READERS = Readers()
#: Every reference agent, with what it does: the scripted ones, then the blind ones, then the readers.
KINDS: Mapping[str, str] = ChainMap(SHORTCUTS, SCRIPTED, READERS)  # type: ignore[arg-type]  # read, never written


class ReferenceAgent(Model):
    uses_http = False

    def __init__(self, kind: str):
        super().__init__(f"reference:{kind}")
        self.kind = kind
        self.blind = Blind.parse(kind)
        self.reader = Reader.parse(kind)
        #: The last game played and its digest: a cell's requests come one game at a time.
        self._cell: tuple[Any, str] = (None, "")

    def reply(self, request: Request) -> str:
        game, cell = self._cell
        if game is not request.game:
            cell = fingerprint(request.game.fingerprint())
            self._cell = (request.game, cell)
        # Seeded by the request and its cell, so a reference agent is as reproducible as a replayed cassette.
        rng = random.Random(cell_seed(request, cell))
        if self.blind is not None:
            return answers.dump(self.blind.answer(request.schema, Surface.of(request), rng))
        if self.reader is not None:
            contract = getattr(request.game, "contract", None)
            if contract is not None:  # a strategy request: one piece of code, which errs as it plays
                return f"```python\n{self.reader.strategy(contract.references, contract.function)}```"
            kinds = getattr(request.game, "reference_kinds", EVERY_GAME)
            return request.game.reference_reply(self.reader.kind(kinds, rng), request.decision.situation, rng)
        return request.game.reference_reply(self.kind, request.decision.situation, rng)

    def provenance(self) -> dict:
        return {"model": self.spec, "server": None, "digest": None, "description": KINDS[self.kind]}


def shortcut_answer(schema: Mapping[str, Any], kind: str) -> Any:
    """What named blind agent ``kind`` (``first``, ``last``, ``constant``) answers to a JSON schema, from
    the schema alone (none of the three reads the prompt or draws)."""
    blind = Blind.parse(kind)
    assert blind is not None, f"no blind agent {kind!r}"
    return blind.answer(schema, Surface(""), random.Random(0))
