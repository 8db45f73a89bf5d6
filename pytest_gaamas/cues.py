"""The cue audit: does any cue on the surface of the prompts pick the answer that reads the game more
often than chance, within a judged unit?

A blind agent answers from the surface: a place in the answer form's listing, a label's spelling, what
a message, its last line, sentence or clause names first, last, most or least recently, the k-th name
from either end (an echo of a history at lag k), the option beside the largest or smallest number, and
any of these switched by a word the prompt holds or lacks. This module reads the prompts the suite asks
(``cue_capture`` keeps them, with their answer forms and right answers) and, for every judged unit (a
test item) and every option of its answers, counts how often each cue of that bank agrees with the
right answer, against the share a uniformly random legal answer agrees with it. No model is needed, so
the bank is played whole over every prompt of every unit.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: A cue's answer where it reads nothing (the option it names is not written): credited at chance.
ABSTAINS = None
#: How far above chance a cue may agree with the right answer before the audit names it: a design
#: balanced to within a trial or two per level leaves every cue within a few points of chance.
TOLERANCE = 0.1
#: The answer fields each judged test rewards against the answer that reads the game, by the test's
#: name: where a blind agent's agreement with that answer is what a criterion counts. Strategy cells are
#: not audited: a blind agent writes no code, and a strategy reads the game's data, never its prompt.
JUDGED: dict[str, tuple[str, ...]] = {
    "test_first_order_rationality": ("action",),
    "test_second_order_rationality": ("action",),
    "test_belief_refinement": ("prediction", "move"),
    "test_belief_use": ("prediction", "move"),
    "test_coordination": ("prediction", "move"),
    "test_rational_vs_credible": ("action",),
    "test_payoff_sensitivity": ("action",),
    "test_preference_alignment": ("option",),
    "test_ultimatum": ("decision",),
}
#: How far back in a scope the echo cues read: the k-th name from its start and from its end.
ECHO_LAGS = 6
_SENTENCE = re.compile(r"(?<=[.?!])\s+|\n+")
_CLAUSE = re.compile(r"[,;:]\s*|\s+(?:or|and|but|if|then)\s+")
_NUMBER = re.compile(r"(?<![A-Za-z0-9.])-?\d+(?:\.\d+)?")
_WORD = re.compile(r"[a-z0-9']+")


@dataclass(frozen=True)
class Asked:
    """One option-valued answer asked in a unit: the prompt's messages, the options listed in the
    answer form, and the one that reads the game."""

    messages: tuple[str, ...]
    options: tuple[str, ...]
    right: str


SCOPES = ("prompt", "first message", "last message", "last line", "last sentence", "last clause",
          "last message but its last line")


def _scopes(messages: Sequence[str]) -> dict[str, str]:
    last = messages[-1] if messages else ""
    lines = [line for line in last.split("\n") if line.strip()]
    sentences = [s for s in _SENTENCE.split(last) if s.strip()]
    final = sentences[-1] if sentences else ""
    clauses = [c for c in _CLAUSE.split(final) if c.strip()]
    return {
        "prompt": "\n".join(messages),
        "first message": messages[0] if messages else "",
        "last message": last,
        "last line": lines[-1] if lines else "",
        "last sentence": final,
        "last clause": clauses[-1] if clauses else "",
        "last message but its last line": "\n".join(lines[:-1]),
    }


def _mentions(text: str, options: Sequence[str]) -> list[str]:
    """The options a text names, in the order it names them, each as often as it does (whole words)."""
    found = []
    for option in options:
        word = rf"(?<![A-Za-z0-9]){re.escape(option)}(?![A-Za-z0-9])"
        found += [(m.start(), option) for m in re.finditer(word, text)]
    return [option for _, option in sorted(found)]


def _only(candidates: Iterable[str]) -> str | None:
    distinct = set(candidates)
    return distinct.pop() if len(distinct) == 1 else ABSTAINS


def _extreme(scores: Mapping[str, float], *, most: bool) -> str | None:
    if not scores:
        return ABSTAINS
    best = (max if most else min)(scores.values())
    return _only(o for o, s in scores.items() if s == best)


def _beside_numbers(parts: Iterable[str], options: Sequence[str], *, most: bool, last_named: bool, signed: bool = True) -> str | None:
    """The option a part (a line, a sentence) names last (or first) where that part holds the largest
    (or smallest) number the text writes beside an option; ``signed`` False reads a number's digits
    alone, as a reader blind to the minus sign would (-3 as 3)."""
    scores: dict[str, float] = {}
    for part in parts:
        numbers = [abs(float(n)) if not signed else float(n) for n in _NUMBER.findall(part)]
        named = _mentions(part, options) if numbers else []
        if not named:
            continue
        value, option = (max if most else min)(numbers), named[-1 if last_named else 0]
        scores[option] = (max if most else min)(scores.get(option, value), value)
    return _extreme(scores, most=most)


class _Named:
    """What one scope of a prompt names, read when a cue first asks for it: a blind agent plays one
    cue, and reading all 220 for each of its requests cost four times what its game did."""

    def __init__(self, text: str, options: tuple[str, ...]) -> None:
        self.text, self.options = text, options

    @functools.cached_property
    def names(self) -> list[str]:
        return _mentions(self.text, self.options)

    @functools.cached_property
    def order(self) -> list[str]:
        return list(dict.fromkeys(self.names))

    @functools.cached_property
    def recency(self) -> list[str]:
        return list(dict.fromkeys(reversed(self.names)))

    def in_order(self, k: int) -> str | None:
        """The k-th option named (distinct, from the first; k < 0 from the last named first)."""
        return _at(self.order, k)

    def by_recency(self, k: int) -> str | None:
        """The k-th option named most recently (distinct; k < 0 from the least recently)."""
        return _at(self.recency, k)

    def listed_beside_most_recent(self, step: int) -> str | None:
        return self.options[(self.options.index(self.recency[0]) + step) % len(self.options)] if self.recency else ABSTAINS

    def most_often(self, most: bool) -> str | None:
        return _extreme({o: float(self.names.count(o)) for o in self.options}, most=most) if self.names else ABSTAINS

    def from_start(self, k: int) -> str | None:
        return _at(self.names, k)

    def from_end(self, k: int) -> str | None:
        return _at(self.names, -1 - k)

    def beside(self, *, lines: bool, most: bool, signed: bool = True) -> str | None:
        parts = self.text.split("\n") if lines else _SENTENCE.split(self.text)
        return _beside_numbers(parts, self.options, most=most, last_named=lines, signed=signed)


Cue = Callable[[], "str | None"]


def _cues(messages: tuple[str, ...], options: tuple[str, ...]) -> list[tuple[str, Cue]]:
    """Every cue of the bank for one prompt, in the bank's order: (the cue, what reads the option it
    picks, or ABSTAINS)."""
    cues: list[tuple[str, Cue]] = []
    for k in range(3):
        cues.append((f"option {k + 1} listed", functools.partial(_same, options[min(k, len(options) - 1)])))
        cues.append((f"option {k + 1} from the end of the listing", functools.partial(_same, options[-1 - min(k, len(options) - 1)])))
    lengths = {o: float(len(o)) for o in options}
    cues += [("the label that sorts first", functools.partial(min, options)), ("the label that sorts last", functools.partial(max, options)),
             ("the shortest label", functools.partial(_extreme, lengths, most=False)),
             ("the longest label", functools.partial(_extreme, lengths, most=True))]
    scopes = {scope: _Named(text, options) for scope, text in _scopes(messages).items()}
    for scope, named in scopes.items():
        within = f"in the {scope}"
        cues += [
            (f"named first {within}", functools.partial(named.in_order, 0)),
            (f"named second {within}", functools.partial(named.in_order, 1)),
            (f"named first last {within}", functools.partial(named.in_order, -1)),
            (f"named most recently {within}", functools.partial(named.by_recency, 0)),
            (f"named second most recently {within}", functools.partial(named.by_recency, 1)),
            (f"named least recently {within}", functools.partial(named.by_recency, -1)),
            (f"listed after the one named most recently {within}", functools.partial(named.listed_beside_most_recent, 1)),
            (f"listed before the one named most recently {within}", functools.partial(named.listed_beside_most_recent, -1)),
            (f"named most often {within}", functools.partial(named.most_often, True)),
            (f"named least often {within}", functools.partial(named.most_often, False)),
        ]
        for k in range(ECHO_LAGS):
            cues.append((f"name {k + 1} from the start of the {scope}", functools.partial(named.from_start, k)))
            cues.append((f"name {k + 1} from the end of the {scope}", functools.partial(named.from_end, k)))
        for most in (True, False):
            extreme = "largest" if most else "smallest"
            cues.append((f"named last on the line with the {extreme} number {within}", functools.partial(named.beside, lines=True, most=most)))
            cues.append((f"named first in the sentence with the {extreme} number {within}",
                         functools.partial(named.beside, lines=False, most=most)))
    for scope, named in scopes.items():  # after every other cue, so that blind-cue-K numbers stay
        for most in (True, False):
            extreme = "largest" if most else "smallest"
            cues.append((f"named last on the line with the {extreme} number, its sign unread, in the {scope}",
                         functools.partial(named.beside, lines=True, most=most, signed=False)))
            cues.append((f"named first in the sentence with the {extreme} number, its sign unread, in the {scope}",
                         functools.partial(named.beside, lines=False, most=most, signed=False)))
    return cues


def _same(option: str) -> str:
    return option


def _at(names: Sequence[str], k: int) -> str | None:
    return names[k] if -len(names) <= k < len(names) else ABSTAINS


def _read(messages: tuple[str, ...], options: tuple[str, ...]) -> tuple[tuple[str, str | None], ...]:
    """Every cue of the bank read off one prompt: (the cue, the option it picks or ABSTAINS)."""
    return tuple((name, read()) for name, read in _cues(messages, options))


@functools.cache
def bank_names() -> tuple[str, ...]:
    """The cues of the bank, in its order: ``reference:blind-cue-K`` plays the K-th."""
    return tuple(name for name, _ in _cues(("x",), ("x", "y")))


def pick(messages: Sequence[str], options: tuple[str, ...], index: int) -> str | None:
    """The option the ``index``-th cue of the bank picks in a prompt (``ABSTAINS`` where it reads nothing)."""
    return _cues(tuple(messages), options)[index][1]()


@dataclass
class Bank:
    """The base cues, read once per distinct prompt and answer form."""

    names: tuple[str, ...] = ()
    _read: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str | None, ...]] = field(default_factory=dict)

    @classmethod
    def full(cls) -> Bank:
        return cls(bank_names())

    def picks(self, asked: Asked) -> tuple[str | None, ...]:
        key = (asked.messages, asked.options)
        if key not in self._read:
            self._read[key] = tuple(pick for _, pick in _read(*key))
        return self._read[key]

    def habits(self) -> list[int]:
        """The cues that read the answer form alone (a place in its listing, a label's spelling): what a
        habit keyed to a word switches between."""
        return [i for i, name in enumerate(self.names) if name.startswith(("option ", "the "))]

    def agreement(self, asked: Sequence[Asked]) -> np.ndarray:
        """For each prompt (rows) and cue (columns): 1 where the cue picks the right answer, 0 where it
        picks another, and chance (1/k) where it abstains."""
        table = np.zeros((len(asked), len(self.names)))
        for row, one in enumerate(asked):
            chance = 1 / len(one.options)
            table[row] = [chance if picked is ABSTAINS else float(picked == one.right) for picked in self.picks(one)]
        return table


@functools.lru_cache(maxsize=1 << 16)
def words_of(messages: tuple[str, ...]) -> frozenset[str]:
    """The words and adjacent word pairs of a prompt, case folded: what a habit keyed to a phrase reads."""
    words = _WORD.findall("\n".join(messages).lower())
    return frozenset(words) | frozenset(f"{a} {b}" for a, b in itertools.pairwise(words))


@dataclass(frozen=True)
class Finding:
    """A cue that agrees with the right answer in a unit more often than chance."""

    unit: str
    field: str
    cue: str
    agreed: float
    chance: float
    n: int

    def as_json(self) -> dict[str, Any]:
        return {"unit": self.unit, "field": self.field, "cue": self.cue, "agreed": round(self.agreed, 4),
                "chance": round(self.chance, 4), "n": self.n}


@dataclass
class Unit:
    """The option-valued answers one judged unit asked, field by field."""

    name: str
    fields: dict[str, list[Asked]] = field(default_factory=dict)


def audit(units: Iterable[Unit], bank: Bank, *, tolerance: float = TOLERANCE, words: bool = False) -> list[Finding]:
    """Every cue of the bank that agrees with the right answer in a unit's field by more than
    ``tolerance`` above chance; with ``words``, also every habit keyed to a word: a pair of the cues
    that read the answer form alone (a place in the listing, a label's spelling), one where the prompt
    holds the word (or the pair of adjacent words), the other where it does not, that agrees more than
    any of those cues alone."""
    found = []
    for unit in units:
        for name, asked in unit.fields.items():
            if not asked:
                continue
            table = bank.agreement(asked)
            chance = float(np.mean([1 / len(a.options) for a in asked]))
            n = len(asked)
            agreed = table.mean(axis=0)
            for column in np.flatnonzero(agreed > chance + tolerance):
                found.append(Finding(unit.name, name, bank.names[column], float(agreed[column]), chance, n))
            if words:
                found += _switched(unit.name, name, asked, table, bank, chance, tolerance)
    return found


def _switched(unit: str, name: str, asked: Sequence[Asked], table: np.ndarray, bank: Bank, chance: float,
              tolerance: float) -> list[Finding]:
    vocabulary: dict[str, list[int]] = {}
    for row, one in enumerate(asked):
        for word in words_of(one.messages):
            vocabulary.setdefault(word, []).append(row)
    n = len(asked)
    habits = bank.habits()
    table = table[:, habits]
    totals = table.sum(axis=0)
    best_alone = totals.max()
    found = []
    for word, rows in vocabulary.items():
        if len(rows) in (0, n):
            continue
        present = table[rows].sum(axis=0)
        absent = totals - present
        i, j = habits[int(present.argmax())], habits[int(absent.argmax())]
        present_best, absent_best = present.max(), absent.max()
        agreed = (present_best + absent_best) / n
        if agreed > chance + tolerance and present_best + absent_best > best_alone:
            found.append(Finding(unit, name, f"with '{word}': {bank.names[i]}; without: {bank.names[j]}", float(agreed), chance, n))
    return found


def summary(found: Sequence[Finding], *, shown: int = 2) -> list[str]:
    """One line per unit and field that a cue predicts: its strongest cues, with chance beside them."""
    by_unit: dict[tuple[str, str], list[Finding]] = {}
    for finding in found:
        by_unit.setdefault((finding.unit, finding.field), []).append(finding)
    lines = []
    for (unit, name), findings in sorted(by_unit.items()):
        findings.sort(key=lambda f: -f.agreed)
        best = "; ".join(f"{f.cue} {f.agreed:.2f}" for f in findings[:shown])
        more = f" (+{len(findings) - shown} more)" if len(findings) > shown else ""
        lines.append(f"{unit} {name}: chance {findings[0].chance:.2f}, n {findings[0].n}: {best}{more}")
    return lines
