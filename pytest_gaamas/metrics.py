"""Revealed-preference metrics: GARP and Afriat's critical cost efficiency index (CCEI).

Observation t is a price vector p_t and the bundle x_t chosen at those prices. Write
r[t, s] = p_t.x_s / p_t.x_t. With efficiency e, x_t is *directly revealed preferred* to x_s when
r[t, s] <= e, and *strictly* so when r[t, s] < e. The data satisfy GARP_e when no bundle is revealed
preferred, through any chain, to a bundle strictly directly revealed preferred to it. The CCEI is the
supremum of the e in [0, 1] for which GARP_e holds (Afriat 1972; Varian 1990).

For e < 1 a violation is a cycle of the graph {t -> s : r[t, s] <= e} with a strict edge on it. Take
m = the smallest, over all cycles, of the largest ratio on the cycle. Above m that cycle has every
edge strict, so GARP_e fails; below m the graph has no cycle at all, so it holds. Hence
CCEI = min(1, m): the exact value is one of the ratios r[t, s], or 1.

Two exact ways to find m are implemented: a bottleneck (min-max) Floyd-Warshall, fastest for the
25 budgets of an experiment, and a bisection over the sorted ratios with a strongly-connected-
components test, which scales to thousands of observations. The tests check that they agree.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .stats import Estimate, influence_sample

#: Relative tolerance under which two expenditures count as equal, so that a true tie computed in
#: floating point never turns into a strict preference.
TIE_TOLERANCE = 1e-9

#: Up to this many observations the cubic Floyd-Warshall beats the bisection.
_FLOYD_WARSHALL_MAX_T = 120


def expenditure_ratios(prices, choices) -> np.ndarray:
    """r[t, s] = p_t.x_s / p_t.x_t, after checking the inputs."""
    p = np.asarray(prices, dtype=float)
    x = np.asarray(choices, dtype=float)
    if p.ndim != 2 or p.shape != x.shape:
        raise ValueError(f"prices and choices must be T x K arrays of the same shape, got {p.shape} and {x.shape}")
    if not (np.isfinite(p).all() and np.isfinite(x).all()):
        raise ValueError("prices and choices must be finite")
    if (p < 0).any() or (x < 0).any():
        raise ValueError("prices and choices must be non-negative")
    cost = p @ x.T
    own = np.diag(cost).copy()
    if (own <= 0).any():
        bad = int(np.flatnonzero(own <= 0)[0])
        raise ValueError(f"observation {bad} has zero expenditure p_t.x_t; the CCEI is undefined there")
    return cost / own[:, None]


def garp(prices, choices, e: float = 1.0) -> bool:
    """Whether the choices satisfy GARP_e (plain GARP at e = 1)."""
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"e must lie in [0, 1], got {e}")
    ratios = expenditure_ratios(prices, choices)
    weak = ratios <= e * (1 + TIE_TOLERANCE)
    strict = ratios < e * (1 - TIE_TOLERANCE)
    np.fill_diagonal(strict, False)
    if not strict.any():
        return True
    _, component = _strong_components(weak)
    t, s = np.nonzero(strict)
    # x_t R x_s and x_s P0 x_t with s -> t strict: a strict edge inside a strong component.
    return not (component[t] == component[s]).any()


def ccei(prices, choices) -> float:
    """Afriat's critical cost efficiency index: the supremum of e in [0, 1] with GARP_e, exactly.

    ``prices`` and ``choices`` are T x K arrays: row t holds the prices faced and the bundle chosen
    in observation t.
    """
    ratios = expenditure_ratios(prices, choices)
    if len(ratios) <= _FLOYD_WARSHALL_MAX_T:
        cycle_value = _min_max_cycle_floyd_warshall(ratios)
    else:
        cycle_value = _min_max_cycle_bisection(ratios)
    return 1.0 if cycle_value >= 1 - TIE_TOLERANCE else float(cycle_value)


def _min_max_cycle_floyd_warshall(ratios: np.ndarray) -> float:
    bottleneck = ratios.copy()
    np.fill_diagonal(bottleneck, np.inf)  # a cycle needs two distinct observations
    for k in range(len(bottleneck)):
        np.minimum(bottleneck, np.maximum.outer(bottleneck[:, k], bottleneck[k, :]), out=bottleneck)
    return float(np.min(np.diagonal(bottleneck), initial=np.inf))


def _has_cycle(edges: np.ndarray) -> bool:
    n_components, _ = _strong_components(edges)
    return n_components < len(edges)


def _min_max_cycle_bisection(ratios: np.ndarray) -> float:
    off_diagonal = ~np.eye(len(ratios), dtype=bool)
    candidates = np.unique(ratios[off_diagonal & (ratios < 1)])
    if candidates.size == 0 or not _has_cycle(off_diagonal & (ratios <= candidates[-1])):
        return np.inf
    lo, hi = 0, len(candidates) - 1  # the smallest candidate whose graph has a cycle is in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        if _has_cycle(off_diagonal & (ratios <= candidates[mid])):
            hi = mid
        else:
            lo = mid + 1
    return float(candidates[lo])


def _strong_components(adjacency: np.ndarray) -> tuple[int, np.ndarray]:
    """The strongly connected components of a directed graph: how many, and each node's. scipy's
    graph routines are imported here, when a portfolio is scored, not by every process that loads
    the plugin."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    return connected_components(csr_matrix(adjacency), directed=True, connection="strong")


# -- coordination beyond the players' own habits -----------------------------------------------------

#: The permutation test of a pair's excess takes every pairing up to one more than this many, else this many seeded draws.
PAIRINGS = 9_999
PAIR_RESAMPLES = 9_999


@dataclass(frozen=True)
class CoordinationExcess:
    """How much more two players meet than their own habits make them meet by chance.

    ``observed``: the share of rounds the real pairs met. ``baseline``: the share met by player 1 of
    one game and player 2 of *another* game of the same cell presented alike, round by round: the
    meeting that each player's habits alone give (a label both always name, the option each is shown
    first), with no reading of this game's other player. ``excess``: observed - baseline, with its bootstrap
    interval over games. ``p``: the one-sided permutation p that the real pairing meets more than a
    random re-pairing of the same games (``contrary_p``: less). ``resampled``: the excess in each of
    the interval's resamples (NaN where a resample drew no pair of distinct games), so that excesses
    of independent cells can be compared (``excess_contrast``)."""

    observed: float
    baseline: float
    excess: Estimate
    p: float
    contrary_p: float
    pairings: int
    resampled: np.ndarray = field(default_factory=lambda: np.full(PAIR_RESAMPLES, math.nan), repr=False, compare=False)


def pair_meetings(first: Sequence[Sequence[str | None]], second: Sequence[Sequence[str | None]]) -> np.ndarray:
    """M[i, j]: the share of rounds in which player 1 of game i and player 2 of game j choose the
    same action, round by round; a missing move (None, an unusable answer) meets nothing."""
    if len(first) != len(second):
        raise ValueError(f"as many games for each player, got {len(first)} and {len(second)}")
    rounds = {len(moves) for moves in (*first, *second)}
    if len(rounds) > 1:
        raise ValueError(f"every game has the same number of rounds, got {sorted(rounds)}")
    codes: dict[str, int] = {}

    def coded(games, missing: int) -> np.ndarray:
        coded_games = [[missing if m is None else codes.setdefault(m, len(codes)) for m in moves] for moves in games]
        return np.array(coded_games, dtype=int)

    a, b = coded(first, -1), coded(second, -2)  # two missing moves differ: they do not meet
    if a.size == 0:
        return np.zeros((len(first), len(second)))
    return (a[:, None, :] == b[None, :, :]).mean(axis=-1)


def coordination_excess(first, second, *, seed: int, strata: Sequence[Any] | None = None,
                        confidence: float = 0.95) -> CoordinationExcess:
    """The excess of the real pairs' meetings over the shuffled pairs' (``CoordinationExcess``).
    ``first`` and ``second``: each game's moves of player 1 and of player 2, round by round (None for
    an unusable answer). A habit both players share (the same label every time, the option the
    question names first where both are shown the same first) meets as often in shuffled pairs as in
    real ones: no excess. ``strata``: each game's presentation (what a habit could follow: the order
    each player is shown the options in); games are then paired only with games presented alike, so
    that a habit that follows the presentation, which both players of one game share where one
    author writes both, meets a stranger as often as its partner. A game alone in its stratum is left
    out. The permutation test re-pairs games within their strata: exact up to ``PAIRINGS`` + 1
    pairings, else ``PAIRINGS`` seeded draws; the interval resamples games within their strata
    (``PAIR_RESAMPLES``, seeded), each resample's baseline over pairs of distinct games."""
    meetings = pair_meetings(first, second)
    labels = [0] * len(meetings) if strata is None else list(strata)
    if len(labels) != len(meetings):
        raise ValueError(f"one stratum a game, got {len(labels)} for {len(meetings)} games")
    groups = [np.flatnonzero([label == value for label in labels]) for value in dict.fromkeys(labels)]
    groups = [g for g in groups if len(g) >= 2]
    if not groups:
        nothing = Estimate(math.nan, math.nan, math.nan, 0)
        return CoordinationExcess(math.nan, math.nan, nothing, math.nan, math.nan, 0)
    used = np.concatenate(groups)
    rng = np.random.default_rng(seed)
    diagonal = np.diag(meetings)
    observed = float(diagonal[used].mean())
    baseline = float(sum(len(g) * _across(meetings[np.ix_(g, g)]) for g in groups) / len(used))
    orders = math.prod(math.factorial(len(g)) for g in groups)
    if orders <= PAIRINGS + 1:
        pairings = np.array([np.concatenate(p) for p in itertools.product(*(itertools.permutations(g) for g in groups))])
    else:
        pairings = np.vstack([used, np.hstack([rng.permuted(np.tile(g, (PAIRINGS, 1)), axis=1) for g in groups])])
    met = meetings[used, pairings].mean(axis=1)
    tolerance = 1e-12
    p = float(np.mean(met >= observed - tolerance))
    contrary = float(np.mean(met <= observed + tolerance))
    real, shuffled, weight = np.zeros(PAIR_RESAMPLES), np.zeros(PAIR_RESAMPLES), np.zeros(PAIR_RESAMPLES)
    for g in groups:
        n = len(g)
        drawn = rng.integers(0, n, (PAIR_RESAMPLES, n)) + n * np.arange(PAIR_RESAMPLES)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=PAIR_RESAMPLES * n).reshape(PAIR_RESAMPLES, n).astype(float)
        block, own = meetings[np.ix_(g, g)], diagonal[g]
        # pairs of two draws of distinct games: all pairs of draws, less those of one game with itself
        distinct = n * n - (counts**2).sum(axis=1)
        across = ((counts @ block) * counts).sum(axis=1) - (counts**2) @ own
        kept = distinct > 0  # a resample that drew one game only has no pair: it weighs nothing
        real[kept] += (counts @ own)[kept]
        shuffled[kept] += n * across[kept] / distinct[kept]
        weight[kept] += n
    resampled = np.divide(real - shuffled, weight, out=np.full(PAIR_RESAMPLES, math.nan), where=weight > 0)
    low, high = np.nanquantile(resampled, [(1 - confidence) / 2, (1 + confidence) / 2])
    excess = observed - baseline
    sample = tuple(float(x) for x in excess + _influence(meetings, groups, observed))
    interval = Estimate(excess, min(float(low), excess), max(float(high), excess), len(used), "mean", sample)
    return CoordinationExcess(observed, baseline, interval, p, contrary, len(pairings), resampled)


def _across(block: np.ndarray) -> float:
    """The mean of a square block of meetings off its diagonal: pairs of two distinct games."""
    n = len(block)
    return float((block.sum() - np.trace(block)) / (n * (n - 1)))


def _influence(meetings: np.ndarray, groups: Sequence[np.ndarray], observed: float) -> np.ndarray:
    """Each game's influence on the excess, in the order of ``groups``: its own pair's meeting less the
    mean of the real pairs, less twice its part in its stratum's shuffled pairs less their mean (the
    first-order term of the pairs it belongs to, as of any mean over pairs). They sum to 0, and the
    excess plus each is the game's share of the excess: the sample a later run's excess is compared
    with (``stats.change_test``)."""
    parts = []
    for g in groups:
        block, n = meetings[np.ix_(g, g)], len(g)
        own = np.diag(block)
        with_others = (block.sum(axis=0) + block.sum(axis=1) - 2 * own) / (2 * (n - 1))
        parts.append(own - observed - 2 * (with_others - _across(block)))
    return np.concatenate(parts)


@dataclass(frozen=True)
class Contrast:
    """A signed sum of independent cells' estimates (one cell's lead over another; (a - b) under one
    condition minus (a - b) under another): its value and bootstrap interval, and the one-sided p
    that it exceeds 0 (``contrary_p``: that it falls below), from the bootstrap distribution centred
    on the estimate."""

    estimate: Estimate
    p: float
    contrary_p: float


def excess_contrast(terms: Sequence[tuple[float, CoordinationExcess]], *, confidence: float = 0.95) -> Contrast:
    """A signed sum of independent cells' excesses over their own habits (``coordination_excess``),
    as (sign, excess) terms: one cell's lead over another, or a difference in differences, with the
    interval of the same sum over each cell's own resamples of its games (resamples where a cell drew
    no pair of distinct games are left out) and Hall and Wilson's bootstrap test: the resampled sums'
    spread about the estimate against the estimate, so a zero contrast with no spread has p 1, and a
    nonzero one with no spread p 1 / (resamples + 1)."""
    if not terms or any(math.isnan(excess.excess.value) for _, excess in terms):
        return Contrast(Estimate(math.nan, math.nan, math.nan, 0), math.nan, math.nan)
    value = float(sum(sign * excess.excess.value for sign, excess in terms))
    summed = sum(sign * excess.resampled for sign, excess in terms)
    resampled = np.asarray(summed)[~np.isnan(summed)]
    low, high = np.quantile(resampled, [(1 - confidence) / 2, (1 + confidence) / 2])
    spread = resampled - value
    tolerance = 1e-12
    p = (1 + np.count_nonzero(spread >= value - tolerance)) / (len(resampled) + 1)
    contrary = (1 + np.count_nonzero(spread <= value + tolerance)) / (len(resampled) + 1)
    sample = influence_sample(value, [(sign, excess.excess.sample) for sign, excess in terms])
    estimate = Estimate(value, min(float(low), value), max(float(high), value), sum(excess.excess.n for _, excess in terms), "mean", sample)
    return Contrast(estimate, float(p), float(contrary))
