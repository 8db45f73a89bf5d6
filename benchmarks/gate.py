"""How often the comparison gate fails a model upgrade that changed nothing, and how often it catches
one that did. Prints figures; asserts nothing.

    python benchmarks/gate.py                 # from SmolLM2's shipped cassettes, replayed (about a minute)
    python benchmarks/gate.py RUN_LOG.json    # from any saved run

A saved run gives each cell its answers (its sample) and its verdict. Two runs of a model that did not
change are two draws of each cell's answers with replacement from that sample (a bootstrap); the
gate (``compare.compare``, the allowance ``rate=0.1``, the default for every other unit none) should
fail at most 5% of such pairs. Then one met rate cell at a time is made worse by drawing its new run
from the rate minus a planted drop; the share of pairs in which the gate names that cell is its power
at its trials. The gate's family is the cells the saved run met; the verdicts are held as saved.
Only those cells are drawn: the others are a family of their own and never fail a session.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_gaamas import compare, runlog  # noqa: E402
from pytest_gaamas.report import Score  # noqa: E402
from pytest_gaamas.verdicts import Verdict  # noqa: E402

PAIRS = 2000
PLANTED_DROPS = (0.1, 0.2, 0.3, 0.5)
ALLOWED = {"rate": 0.1}


def saved_run(argv: list[str]) -> list[Score]:
    if argv:
        return list(runlog.read(Path(argv[0])).scores)
    folder = Path(tempfile.mkdtemp(prefix="gaamas-gate-"))
    log = folder / "smollm2.json"
    subprocess.run(
        [sys.executable, "-m", "pytest", "behaviours", "-q", "-p", "no:cacheprovider", "-n", "2", "--gaamas-model=embedded:smollm2",
         "--gaamas-record=none", f"--gaamas-json={log}"],
        cwd=ROOT, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return list(runlog.read(log).scores)


def redrawn(score: Score, rng: np.random.Generator, rate: float | None = None) -> Score:
    """The cell played again: its answers drawn anew from the saved ones, or at ``rate`` for a rate."""
    n = len(score.sample)
    sample = rng.random(n) < rate if rate is not None else rng.choice(np.asarray(score.sample, dtype=float), size=n)
    sample = tuple(float(x) for x in sample)
    return dataclasses.replace(score, sample=sample, score=sum(sample) / n)


def main(argv: list[str]) -> None:
    rng = np.random.default_rng(20261124)
    answered = [s for s in saved_run(argv) if s.sample and s.score is not None]
    cells = [s for s in answered if s.verdict is Verdict.MET and s.unit in ALLOWED]
    print(f"{len(answered)} cells with answers, {len(cells)} gated (met in the saved run, a unit with an allowance: {ALLOWED})")
    false_alarms = 0
    for _ in range(PAIRS):
        old, new = [redrawn(s, rng) for s in cells], [redrawn(s, rng) for s in cells]
        false_alarms += any(c.dropped for c in compare.compare(old, new, ALLOWED))
    print(f"no change: the gate failed {false_alarms} of {PAIRS} pairs ({false_alarms / PAIRS:.1%}; at most 5% by design)")
    rates = [s for s in cells if s.kind == "rate"]
    if not rates:
        print("no met rate cell to plant a drop in")
        return
    sizes = sorted({len(s.sample) for s in rates})
    print(f"power at {', '.join(map(str, sizes))} trials, a drop planted in one of the {len(rates)} met rate cells (pairs caught):")
    for drop in PLANTED_DROPS:
        caught = trials = 0
        for _ in range(PAIRS // 5):
            target = rates[rng.integers(len(rates))]
            old = [redrawn(s, rng) for s in cells]
            new = [redrawn(s, rng, max(0.0, s.score - drop)) if s is target else redrawn(s, rng) for s in cells]
            changes = compare.compare(old, new, ALLOWED)
            caught += any(c.dropped and c.new.test_id == target.test_id and c.cell == compare.label(target) for c in changes)
            trials += 1
        print(f"  drop {drop:.1f}: caught in {caught} of {trials} ({caught / trials:.0%})")


if __name__ == "__main__":
    main(sys.argv[1:])
