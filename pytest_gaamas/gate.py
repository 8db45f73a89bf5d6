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

#: A refused comparison's one note begins with these words.
CANNOT_COMPARE = "cannot compare: "


@dataclass(frozen=True)
class Outcome:
    """A comparison's outcome in a few numbers, which every view says first. Read from the run
    record's ``comparison`` (``Decision.to_json``), so that the terminal, the report and the summary
    say the same words of the same record."""

    #: The saved run compared with, as named on the command line.
    against: str
    #: Cells paired with the saved run's, and of them the gated ones.
    compared: int
    gated: int
    #: Gated cells whose score fell significantly by more than allowed (DROP), and those whose usable
    #: answers were lost (LOST; such a cell is counted there alone, whatever its score did).
    dropped: int
    lost: int
    #: Why the runs could not be compared (or a gated cell tested), where they could not.
    refused: str = ""

    @classmethod
    def of(cls, comparison: Mapping[str, Any]) -> Outcome:
        cells, notes = comparison.get("cells", []), comparison.get("notes", [])
        refused = notes[0].removeprefix(CANNOT_COMPARE) if notes and notes[0].startswith(CANNOT_COMPARE) else ""
        lost = sum(bool(c.get("lost")) for c in cells)
        dropped = sum(bool(c.get("dropped")) and not c.get("lost") for c in cells)
        gated = sum(bool(c.get("gated") or c.get("dropped") or c.get("lost")) for c in cells)  # a run saved before "gated" was kept
        return cls(str(comparison.get("with", "")), len(cells), gated, dropped, lost, refused)

    @property
    def failed(self) -> bool:
        return bool(self.dropped or self.lost)

    @property
    def verdict(self) -> str:
        """``FAILED``, ``passed`` or ``refused``: the comparison's word."""
        return "refused" if self.refused else "FAILED" if self.failed else "passed"

    @property
    def head(self) -> str:
        """``comparison with baseline FAILED``: what the comparison came to."""
        return f"comparison with {self.against} {self.verdict}"

    @property
    def details(self) -> str:
        """How many cells it came to: ``3 cells dropped, 1 lost its answers (of the 30 gated)``, ``none
        of the 30 gated cells dropped or lost its answers``; or why it was refused."""
        if self.refused:
            return self.refused
        if self.failed:
            return f"{_cells(self.dropped)} dropped, {self.lost} lost {'its' if self.lost == 1 else 'their'} answers (of the {self.gated} gated)"
        if self.gated:
            return f"none of the {_cells(self.gated, 'gated ')} dropped or lost its answers"
        return f"{_cells(self.compared)} compared, none gated (met before and given an allowance)"

    def said(self) -> str:
        """The outcome in one sentence: ``comparison with baseline FAILED: 3 cells dropped, 1 lost its
        answers (of the 30 gated)``."""
        return f"{self.head}: {self.details}"


def _cells(count: int, kind: str = "") -> str:
    return f"{count} {kind}cell{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class Decision:
    """What a comparison found: the cells it paired, the notes it says, and whether it fails the run."""

    #: The saved run compared with, as named on the command line.
    against: str
    changes: tuple[compare.CellChange, ...] = ()
    notes: tuple[str, ...] = ()
    #: The runs could not be compared (no such saved run, no model in common, no cell paired), or a
    #: gated cell could not be tested and none failed: a usage error, never a pass.
    refused: bool = False

    @property
    def failed(self) -> bool:
        """A gated cell dropped significantly or lost its answers."""
        return compare.failed(self.changes)

    def to_json(self) -> dict[str, Any]:
        """The run log's ``comparison``."""
        return {"with": self.against, "notes": list(self.notes), "cells": [c.to_json() for c in self.changes]}


def refused(against: str, why: str) -> Decision:
    """No comparison: the saved run cannot be read, or its cells cannot be paired with this run's."""
    return Decision(against, notes=(f"{CANNOT_COMPARE}{why}",), refused=True)


def decide(saved: RunLog, current: RunLog, *, against: str, saved_path: Path, allowed_drops: Mapping[str, float],
           selection: compare.Selection | None = None) -> Decision:  # fmt: skip
    """``current`` compared with ``saved`` (read from ``saved_path``). ``selection``: what this run's
    selection left out (-k, -m, node ids), whose saved cells were simply not run."""
    try:
        changes = compare.compare(saved.scores, current.scores, allowed_drops)
    except compare.CompareError as error:
        return refused(against, str(error))
    notes = compare.digest_changes(saved.run, current.run)
    notes += compare.unpaired(saved.scores, current.scores, selection=selection)
    tested = [c for c in changes if not math.isnan(c.p_value)]
    gated = [c for c in changes if c.gated]
    gated_tested = [c for c in gated if not math.isnan(c.p_value)]
    lost = sum(c.lost for c in gated)
    untested = sum(not c.lost and math.isnan(c.p_value) for c in gated)
    besides = "".join(f", {count} {what}" for count, what in ((lost, "lost their answers"), (untested, "could not be tested")) if count)
    moved = compare.shown(changes)
    notes.append(
        f"{len(changes)} cells paired with {saved_path}, {len(tested)} tested; gated on the {len(gated)} whose criterion the saved run "
        f"met ({len(gated_tested)} tested one-sided, Holm over those{besides}), the other {len(tested) - len(gated_tested)} shown "
        f"where they changed (Holm over them); {len(moved) or 'nothing'} changed" + ("" if moved else ", nothing to show")
    )
    notes += compare.verdict_changes(changes)
    notes += compare.regressions(changes)
    unvouched = [c for c in changes if c.untested]
    if unvouched and not compare.failed(changes):  # a cell the gate could not test is no cell that held
        return Decision(against, tuple(changes), (f"{CANNOT_COMPARE}{_untested(unvouched)}", *notes), refused=True)
    if not compare.failed(changes) and allowed_drops:
        notes.append("no cell dropped significantly by more than allowed, nor lost its answers")
    return Decision(against, tuple(changes), tuple(notes))


def _untested(changes: list[compare.CellChange]) -> str:
    """The refusal of a comparison whose gated ``changes`` could not be tested, in one line: how many,
    the first of them, why and what to do."""
    first = changes[0]
    why, remedy = compare.untestable(first)
    more = f" and {len(changes) - 1} more" if len(changes) > 1 else ""
    return (f"{_cells(len(changes), 'gated ')} could not be tested, so the gate cannot say {'they' if more else 'it'} held: "
            f"{compare.named(first)}{more}, {why}; {remedy}")
