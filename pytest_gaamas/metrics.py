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

import numpy as np

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
