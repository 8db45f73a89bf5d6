"""The gate: a run compared with a saved one, as a decision. A pure function of the two run records
(and the allowances); the pytest hook alone turns the decision into an exit status."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import compare
from .runlog import RunLog


@dataclass(frozen=True)
class Decision:
    """What a comparison found: the cells it paired, the notes it says, and whether it fails the run."""

    #: The saved run compared with, as named on the command line.
    against: str
    changes: tuple[compare.CellChange, ...] = ()
    notes: tuple[str, ...] = ()
    #: The runs could not be compared at all (no such saved run, no model in common): a usage error.
    refused: bool = False

    @property
    def failed(self) -> bool:
        """A gated cell dropped significantly or lost its answers."""
        return compare.failed(self.changes)

    @property
    def dropped(self) -> list[compare.CellChange]:
        """The cells the comparison fails on, counted on the closing line."""
        return [c for c in self.changes if c.dropped or c.lost]

    def to_json(self) -> dict[str, Any]:
        """The run log's ``comparison``."""
        return {"with": self.against, "notes": list(self.notes), "cells": [c.to_json() for c in self.changes]}


def refused(against: str, why: str) -> Decision:
    """No comparison: the saved run cannot be read, or its cells cannot be paired with this run's."""
    return Decision(against, notes=(f"cannot compare: {why}",), refused=True)


def decide(saved: RunLog, current: RunLog, *, against: str, saved_path: Path, allowed_drops: Mapping[str, float],
           subset: bool = False) -> Decision:  # fmt: skip
    """``current`` compared with ``saved`` (read from ``saved_path``). ``subset``: this run chose some
    items (-k, -m, node ids), so a saved cell may simply not have been run."""
    try:
        changes = compare.compare(saved.scores, current.scores, allowed_drops)
    except compare.CompareError as error:
        return refused(against, str(error))
    notes = compare.digest_changes(saved.run, current.run)
    lost = compare.unpaired(saved.scores, current.scores, subset=subset)
    if lost:
        notes.append(lost)
    tested = [c for c in changes if not math.isnan(c.p_value)]
    gated = [c for c in tested if c.gated]
    moved = compare.shown(changes)
    notes.append(
        f"{len(changes)} cells paired with {saved_path}, {len(tested)} tested; gated on the {len(gated)} whose criterion the saved run "
        f"met (one-sided, Holm over those {len(gated)}), the other {len(tested) - len(gated)} shown where they changed (Holm over "
        f"them); {len(moved) or 'nothing'} changed" + ("" if moved else ", nothing to show")
    )
    notes += compare.verdict_changes(changes)
    notes += compare.regressions(changes)
    if not compare.failed(changes) and allowed_drops:
        notes.append("no cell dropped significantly by more than allowed, nor lost its answers")
    return Decision(against, tuple(changes), tuple(notes))
