"""People's reference figures, computed once. The shipped data never change within a release, so
neither do their means and intervals: a bootstrap over 13,232 dictators in every process of every
run would cost seconds for the same numbers. They are kept in ``data/people_means.json``, each with
the digest of the data it came from; ``python -m pytest_gaamas.people`` computes them again, and
``tests/test_human_data.py`` checks that the file is current. Data whose digest does not match (a
changed file) are computed at run time, never answered from a stale entry.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from pathlib import Path

from . import stats
from .data import FhssCell, ckms2014_subjects, fhss1994_cells, moblab_dictator_gifts, moblab_ultimatum_strategies
from .stats import Estimate

CACHE = Path(__file__).with_name("data") / "people_means.json"
FHSS_SOURCE = "Forsythe, Horowitz, Savin & Sefton (1994), Games and Economic Behavior 6(3):347-369, from their individual data"


def fhss_name(cell: FhssCell) -> str:
    """The name of an FHSS cell's shares of the pie kept, as ``SOURCES`` holds them."""
    role = "dictators" if cell.game == "dictator" else "ultimatum proposers"
    return f"FHSS 1994 {role}, ${cell.pie:g} pie, {cell.payment}: % of the pie kept"


def _percent_kept(cell: FhssCell) -> list[float]:
    return list(cell.percent_kept)


def fhss(game: str) -> list[tuple[str, FhssCell]]:
    """FHSS (1994)'s cells of ``game`` ("dictator" or "ultimatum"), each with its name in ``SOURCES``."""
    return [(fhss_name(cell), cell) for cell in fhss1994_cells() if cell.game == game]


#: People's choices by name: each figure's mean is precomputed; the report draws their distributions.
SOURCES: dict[str, Callable[[], Sequence[float]]] = {
    "MobLab dictators: $ kept of $100": lambda: [100 - gift for gift in moblab_dictator_gifts()],
    "MobLab ultimatum proposers: $ kept of $100": lambda: [100 - p.offer for p in moblab_ultimatum_strategies()],
    "CKMS 2014: the authors' CCEI": lambda: [s.authors_ccei for s in ckms2014_subjects()],
    "MobLab ultimatum responders: smallest offer accepted": lambda: [p.smallest_accepted for p in moblab_ultimatum_strategies()],
    # FHSS played for $5 and $10, so their choices are shares of the pie, comparable with $ of $100
    **{fhss_name(cell): partial(_percent_kept, cell) for cell in fhss1994_cells()},
}


def mean(name: str) -> Estimate:
    """The mean of source ``name`` with its bootstrap interval, as ``stats.mean`` gives it."""
    values = SOURCES[name]()
    entry = _cached().get(name)
    if entry is not None and entry["digest"] == digest(values):
        return Estimate(entry["value"], entry["low"], entry["high"], entry["n"], "mean")
    return stats.mean(values)


def digest(values: Sequence[float]) -> str:
    return hashlib.sha256(json.dumps([float(v) for v in values]).encode()).hexdigest()


def computed() -> dict[str, dict]:
    """Every figure computed afresh, as the cache file holds it."""
    figures = {}
    for name, source in SOURCES.items():
        values = source()
        estimate = stats.mean(values)
        figures[name] = {"digest": digest(values), "value": estimate.value, "low": estimate.low, "high": estimate.high, "n": estimate.n}
    return figures


@lru_cache(maxsize=1)
def _cached() -> dict[str, dict]:
    try:
        return json.loads(CACHE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # computed at run time instead


if __name__ == "__main__":
    CACHE.write_text(json.dumps(computed(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {CACHE}")
