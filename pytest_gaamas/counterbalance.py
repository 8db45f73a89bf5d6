"""Counterbalancing: what an agent could answer without reading the game must not be what the game
rewards more often than chance.

An agent can answer by position (the first option listed, the last), by name (the same label every
time) or by the end of a range (nothing, everything). So wherever a game lists options, their order
varies across trials; where a label could carry the answer, which label names which action varies
too; where an end of a range would be the rewarded answer, the question is asked in both framings
(what you keep, what you give); and a hidden opponent's pattern takes each of its forms.

A trial's arrangement is a pure function of its index: the index written in a mixed radix, one digit
per factor. Over every whole cycle of the factors' levels each combination occurs equally often, so
no factor is confounded with another (a first-option agent facing a constant opponent wins as often
as chance, not always or never), and the paper's 30 trials are balanced to within one trial per
level. The arrangement is kept in each trial's record (``presented``), so the run log says what each
agent was shown.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import cache
from typing import TypeVar

T = TypeVar("T")


def factors(trial: int, *levels: int) -> tuple[int, ...]:
    """The level of each factor in trial ``trial``: the digits of ``trial`` in the radix ``levels``,
    the first factor changing fastest. ``factors(5, 2, 3) == (1, 2)``."""
    digits = []
    for count in levels:
        if count < 1:
            raise ValueError(f"a factor has at least one level, not {count}")
        digits.append(trial % count)
        trial //= count
    return tuple(digits)


def rotated(options: Sequence[T], shift: int) -> tuple[T, ...]:
    """``options`` rotated left by ``shift``: over ``len(options)`` consecutive shifts each option
    stands at each place once (a Latin square), so no option owns the first or the last place."""
    shift %= len(options)
    return tuple(options[shift:]) + tuple(options[:shift])


@cache
def _orderings(count: int) -> tuple[tuple[int, ...], ...]:
    return tuple(itertools.permutations(range(count)))


def ordering(index: int, count: int) -> tuple[int, ...]:
    """The ``index``-th order of ``count`` things (of ``count!``, cycling), the first the things in
    their own order: how a game writes the sentences or lines it could write in any order, so that
    trials alike in every factor that matters are still distinct prompts (a model that answers the
    same prompt the same way, at temperature 0, gives one draw a prompt, not one a trial)."""
    orders = _orderings(count)
    return orders[index % len(orders)]


class Wordings:
    """The ways of saying one text: a sequence of parts, each said in one of a few ways that mean the
    same, the first of each the text's own. Its ``index``-th wording is the index written in the
    parts' radix, the first part changing fastest, so wording 0 is the text itself and ``len`` of
    them are distinct (then they cycle: a game's trials repeat their prompts beyond ``len`` times its
    counterbalanced arrangements). A game asks trials alike in every factor that matters in distinct
    wordings, so that a model that answers the same prompt the same way answers each trial anew; one
    that heeds only some words of the text answers as many times as the wordings of those words."""

    def __init__(self, *parts: str | tuple[str, ...]):
        self.parts = tuple((part,) if isinstance(part, str) else part for part in parts)
        if len({self[index] for index in range(len(self))}) != len(self):
            raise ValueError(f"the wordings are not all distinct: {self.parts}")

    def __len__(self) -> int:
        return math.prod(len(ways) for ways in self.parts)

    def __getitem__(self, index: int) -> str:
        return "".join(ways[way] for ways, way in zip(self.parts, factors(index % len(self), *map(len, self.parts))))


@cache
def _latin_bases(count: int) -> tuple[tuple[int, ...], ...]:
    return tuple(order for order in _orderings(count) if order[0] == 0)


def latin_ordering(index: int, count: int) -> tuple[int, ...]:
    """The ``index``-th of ``count!`` orders of ``count`` things (cycling), the first the things in
    their own order, so that every ``count`` consecutive indices from a multiple of ``count`` put each
    thing in each place once: the rotations of one order, then of the next. Where a game's trials take
    a run of these, no thing stands first more often than the others (``ordering``'s first ``count!
    / count`` orders all begin with the same thing)."""
    bases = _latin_bases(count)
    return rotated(bases[(index // count) % len(bases)], index % count)
