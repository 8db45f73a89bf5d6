"""Saved runs, and the comparison of a run with a saved one: which cells moved, by how much, and
whether the evidence says so once every cell compared is accounted for.

A run is saved as the JSON document of ``--gaamas-json`` (provenance with each model's digest, and
every score with its interval, n, invalid count and the observations behind it). A comparison
pairs each cell of the new run with the same cell of the old one (same behaviour, test, variant,
row and metric; same model, or the one model of each run when they differ), tests the change with
the test that fits the score (Fisher's exact test for rates, a permutation test of the difference of
means for means; both exact, so that two constant samples that differ are not infinitely apart).

**What the gate is on.** A regression is losing what the saved run had: the gate is on the cells of
criteria the saved run *met* (and whose unit has an allowance), each tested one-sided in the
direction that is worse for it, with Holm's method over those cells alone. A cell *drops* when its
adjusted p-value is below alpha and it moved the wrong way by more than the allowed drop. Every
other cell (a criterion missed or inconclusive before, a descriptive row) is tested two-sided and
Holm-adjusted as a family of its own, and shown where it changed, never failing the comparison.
A criterion **at chance** is not met: it is never gated on.

**Why family-wise, and why those cells.** A gate fails a build on any alarm, so the error that
matters is the chance of one false alarm in a comparison: the family-wise error rate, which Holm's
method holds at alpha. A false discovery rate would bound the share of false alarms among alarms,
which is no comfort to a build failed by one; and with a single real drop both methods ask the
same of its p-value (below alpha over the number of cells tested). That is why the family must be
small: over all ~900 cells of a run, a responder's acceptance falling from 1.00 to 0.70 in 30
trials (Fisher p = 0.002) is adjusted to 1.0 and missed; over the few dozen criteria a model met it
is caught. ``benchmarks/gate.py`` measures both error rates on reference agents.

**Answers lost are lost.** A cell whose answers were invalid or missing has no score to test: its
change would be NaN, which is below no alpha and beyond no allowance, so a model that answers
nothing would pass every gate. A gated cell that keeps no usable answer where the saved run had
some is **LOST**, and so is one whose share of usable answers fell significantly (Fisher's exact
test, one-sided, Holm over the gated cells): each fails the comparison with its own line, which
gives the counts. No NaN decides anything: a gated cell that cannot be tested for another reason
(a score of another kind, no observations kept) is said, cell by cell, and where nothing failed it
refuses the comparison, which cannot say the cell held.

**A gate on nothing is refused.** A comparison where no cell pairs, or whose saved run holds a cell
no run could have written (observations stripped or not its score's, dollars saved as a rate), is
refused in one line that says what to do: either would otherwise pass whatever this run did. A
difference of rates or of means, and an excess over habits, keep one value an observation (its
influence on the estimate, ``stats.influence_sample``), so that they are tested as means are.

Only a drop or a loss fails a comparison. A verdict that changed is shown beside the cell and counted in a
note, but is no regression by itself: a criterion met before and **inconclusive** now means that the
new trials no longer show it holds, nor show that it does not (the interval now reaches past the
threshold): the evidence weakened, which a drop of the score says whether it is significant, and
more trials decide. Met before and **missed** now is said too; whether it is a regression is again
the drop's to say, since a score may cross a threshold by chance.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import inert, runlog, stats
from .errors import UnreadableFile
from .report import NO_VALUE, TABLE_WIDTH, Score, Table, p_value_text
from .verdicts import Verdict

ALPHA = 0.05
#: The units a cell can count, each with its own allowance (--gaamas-compare-fail UNIT=DROP).
UNITS = ("rate", "dollars", "CCEI", "points")
RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class CompareError(ValueError):
    """A saved run that cannot be found, read or paired; the message says what to do."""


def saved_path(name: str, runs_dir: Path) -> Path:
    if not RUN_NAME.match(name):
        raise CompareError(f"a saved run's name is letters, digits, '.', '_' and '-', got {name!r}")
    return runs_dir / f"{name}.json"


def load_run(name_or_path: str, runs_dir: Path) -> tuple[Path, runlog.RunLog]:
    """A saved run by name (under ``runs_dir``) or by path to its run log (either format)."""
    candidates = [Path(name_or_path)]
    if RUN_NAME.match(name_or_path):
        candidates.insert(0, runs_dir / f"{name_or_path}.json")
    path = next((p for p in candidates if p.exists()), None)  # a FIFO or a folder too: reading it says what it is not
    if path is None:
        known = sorted(p.stem for p in runs_dir.glob("*.json")) if runs_dir.is_dir() else []
        hint = f"saved runs in {runs_dir}: {', '.join(known)}" if known else f"no runs are saved in {runs_dir}"
        raise CompareError(f"no saved run {name_or_path!r} ({hint}); save one with --gaamas-save=NAME")
    try:
        return path, runlog.read(path)
    except UnreadableFile as error:
        raise CompareError(inert.terminal(str(error))) from None  # a file's name may hold anything


def _cell_key(score: Score) -> tuple:
    test = score.test_id.split("[", 1)[0]
    variant = tuple(sorted((k, str(v)) for k, v in score.variant.items()))
    return (score.behaviour, test, variant, tuple(sorted(score.row.items())), score.metric)


@dataclass(frozen=True)
class CellChange:
    behaviour: str
    cell: str
    models: str
    old: Score
    new: Score
    p_value: float
    p_adjusted: float
    worse_by: float  # how far the cell moved the wrong way (negative: it improved)
    allowed_drop: float | None
    dropped: bool
    #: Whether the comparison gates on it: a criterion the saved run met, with an allowance.
    gated: bool = False
    #: Gated, and its usable answers lost: none left where the saved run had some, or significantly fewer.
    lost: bool = False

    def to_json(self) -> dict[str, Any]:
        def finite(x: float | None) -> float | None:
            return None if x is None or math.isnan(x) else x

        return {
            "behaviour": self.behaviour, "cell": self.cell, "models": self.models, "test_id": self.new.test_id,
            "old": self.old.score, "new": self.new.score, "old_ci": list(self.old.ci), "new_ci": list(self.new.ci),
            "old_n": self.old.n, "new_n": self.new.n, "difference": finite(_difference(self.old, self.new)),
            "p_value": finite(self.p_value), "p_holm": finite(self.p_adjusted), "worse": self.new.worse,
            "allowed_drop": self.allowed_drop, "dropped": self.dropped, "unit": self.new.unit, "gated": self.gated,
            "headline": self.new.passed is not None, "old_verdict": _word(self.old), "new_verdict": _word(self.new),
            "lost": self.lost, "old_usable": usable(self.old), "new_usable": usable(self.new),
        }  # fmt: skip

    @property
    def untested(self) -> bool:
        """Gated, yet its change could not be tested, though answers remain on both sides."""
        return self.gated and not self.lost and math.isnan(self.p_value)

    @property
    def verdict_change(self) -> str:
        """``met -> inconclusive`` where the cell's verdict changed; empty where it did not, or where
        either run has none."""
        old, new = _word(self.old), _word(self.new)
        return f"{old} -> {new}" if old and new and old != new else ""


def _word(score: Score) -> str | None:
    return None if score.verdict is None else score.verdict.value


def usable(score: Score) -> int:
    """The answers a cell's score was computed from: none where it has no score."""
    return 0 if score.score is None or not math.isfinite(score.score) else max(score.n - score.invalid, 0)


def _answers_lost(old: Score, new: Score) -> float:
    """The p-value of H0: the two runs' answers were usable alike, against fewer usable now (Fisher's
    exact test, one-sided); NaN where there is nothing to test (no answer on a side)."""
    if old.n <= 0 or new.n <= 0:
        return math.nan
    return stats.change_test(stats.wilson(usable(old), old.n), stats.wilson(usable(new), new.n), "down")


def _testable(score: Score) -> bool:
    """Whether a cell's score can be tested against another run's: its observations are its usable
    answers, all numbers."""
    return (score.score is not None and math.isfinite(score.score) and len(score.sample) == score.n - score.invalid
            and all(math.isfinite(x) for x in score.sample))  # fmt: skip


def _difference(old: Score, new: Score) -> float:
    if old.score is None or new.score is None:
        return math.nan
    return new.score - old.score


def _worse_by(old: Score, new: Score) -> float:
    d = _difference(old, new)
    return {"down": -d, "up": d}.get(new.worse, abs(d))


def _model_mapping(old: Sequence[Score], new: Sequence[Score]) -> dict[str, str]:
    """This run's model -> the saved run's model whose cells it is compared with."""
    old_models, new_models = {s.model for s in old}, {s.model for s in new}
    shared = old_models & new_models
    if shared:
        mapping = {m: m for m in shared}
    elif len(old_models) == 1 and len(new_models) == 1:
        mapping = {next(iter(new_models)): next(iter(old_models))}
    else:
        raise CompareError(
            f"the saved run has models {sorted(old_models)} and this run {sorted(new_models)}: none in common, and "
            "more than one on a side, so cells cannot be paired; compare one model with one model"
        )
    return mapping


#: The units whose observations are amounts (a mean's values), never a rate's 0/1 outcomes.
AMOUNTS = ("dollars", "CCEI", "points")


def _inconsistency(score: Score) -> str:
    """What no run saves in a cell as it was saved: a count of invalid answers beyond its answers, a
    kind that does not fit its unit, observations that are not its score's (of mean its score; as
    many as its usable answers where it counts a unit, where a cell without one may keep none, as a
    trend or a distance, or observations of another unit, as villagers of societies); empty where
    the cell holds together."""
    if score.kind not in ("rate", "mean"):
        return f"is of kind {score.kind!r}, where a cell is a rate or a mean"
    if score.unit not in ("", *UNITS):
        return f"counts {score.unit!r}, which is none of the units {', '.join(UNITS)}"
    if score.unit in AMOUNTS and score.kind != "mean":
        return f"counts {score.unit} as a {score.kind}, where an amount is a mean"
    if not 0 <= score.invalid <= score.n:
        return f"counts {score.invalid} invalid answers of {score.n}"
    if score.score is None or not math.isfinite(score.score):
        return f"keeps {len(score.sample)} observations and no score" if score.sample else ""
    usable_answers = score.n - score.invalid
    if len(score.sample) != usable_answers and score.unit:
        return f"keeps {len(score.sample)} observations of {usable_answers} usable answers"
    if score.sample and not all(math.isfinite(x) for x in score.sample):
        return "keeps an observation that is no number"
    if score.sample and abs(math.fsum(score.sample) / len(score.sample) - score.score) > 1e-9 * max(1.0, *map(abs, score.sample)):
        return f"keeps observations whose mean is not its score {score.score:.6g}"
    return ""


def _pair(old: Sequence[Score], new: Sequence[Score]) -> list[tuple[Score, Score]]:
    mapping = _model_mapping(old, new)
    by_key: dict[tuple[str, Any], Score] = {}
    for saved in old:
        if problem := _inconsistency(saved):  # an edited baseline could pass a regression, as a stripped sample is untestable
            raise CompareError(f"the saved run's cell {saved.behaviour} {label(saved)} ({saved.model}) {problem}, which no run saves: "
                               "it was edited or damaged; save the baseline again with --gaamas-save")  # fmt: skip
        key = (saved.model, _cell_key(saved))
        if key in by_key:  # a run saves each cell once: two are an edited or merged file, whose last would win unseen
            raise CompareError(f"the saved run holds the cell {saved.test_id} ({', '.join(saved.cells) or saved.metric}) twice, "
                               "which no run saves: it was edited or merged; save the baseline again with --gaamas-save")
        by_key[key] = saved
    pairs = [(by_key[(mapping[s.model], _cell_key(s))], s) for s in new if (mapping.get(s.model), _cell_key(s)) in by_key]
    if new and not pairs:  # a gate on no cell would pass whatever this run did
        raise CompareError(_nothing_pairs(old, new))
    return pairs


def _nothing_pairs(old: Sequence[Score], new: Sequence[Score]) -> str:
    """Why no cell of this run found its saved cell, in one line: what each run holds."""
    def held(scores: Sequence[Score]) -> str:
        behaviours = sorted({s.behaviour for s in scores})
        return f"{', '.join(behaviours[:4])}{f' and {len(behaviours) - 4} more' if len(behaviours) > 4 else ''}, items such as {scores[0].test_id}"

    return (f"no cell of this run pairs with one of the saved run's {len(old)} (same behaviour, test, variant, row and metric), so the "
            f"gate would be on nothing: the saved run holds {held(old)}; this run {held(new)}; compare a run of the behaviours the "
            "baseline was saved from, or save the baseline again from the same behaviours")  # fmt: skip


@dataclass(frozen=True)
class Selection:
    """What this run's selection left out, for the saved cells that find no cell of this run to
    compare with: the items pytest deselected (``-k``, ``-m``, ``--deselect``: its
    ``pytest_deselected`` hook), each as (model, test function's node id, its parameters but the
    model's); and where the run was given node ids, all its arguments, as node ids from the
    rootdir (an item none of them names was never collected)."""

    deselected: frozenset[tuple[str, str, frozenset[tuple[str, str]]]] = frozenset()
    arguments: tuple[str, ...] = ()

    def left_out(self, score: Score, model: str) -> bool:
        """Whether the item of ``score`` (a saved cell; ``model``: this run's model it is compared
        with) was left out of this run by its selection."""
        test = score.test_id.split("[", 1)[0]
        variant = {(k, str(v)) for k, v in score.variant.items()}
        if any(m == model and t == test and params <= variant for m, t, params in self.deselected):
            return True
        return bool(self.arguments) and not any(_names(argument, score.test_id) for argument in self.arguments)


def _names(argument: str, test_id: str) -> bool:
    """Whether the node id ``argument`` (a folder, a file, a test, a parametrized item) selects ``test_id``."""
    argument = argument.rstrip("/")
    return not argument or test_id == argument or any(test_id.startswith(argument + tail) for tail in ("/", "::", "["))


def unpaired(old: Sequence[Score], new: Sequence[Score], *, selection: Selection | None = None) -> list[str]:
    """Notes on the saved run's cells, of a model and behaviour this run played, that found no cell
    to be compared with: those whose item this run's ``selection`` left out are said to be
    deselected; the others (their item ran, or no longer exists) were renamed or given a parameter
    since the run was saved. Neither is gated on, and a gate that silently skipped them would look
    greener than it is. None where every such cell paired."""
    selection = selection or Selection()
    mapping = _model_mapping(old, new)
    current = {saved: model for model, saved in mapping.items()}
    played = {(mapping.get(s.model), s.behaviour) for s in new}
    here = {(mapping.get(s.model), _cell_key(s)) for s in new}
    deselected: dict[str, int] = {}
    renamed: dict[str, int] = {}
    for s in old:
        if (s.model, s.behaviour) in played and (s.model, _cell_key(s)) not in here:
            counts = deselected if selection.left_out(s, current.get(s.model, s.model)) else renamed
            counts[s.behaviour] = counts.get(s.behaviour, 0) + 1
    notes = []
    if deselected:
        notes.append(f"{_count(deselected)} of the saved run deselected in this run ({_where(deselected)}), so not compared nor "
                     "gated on: their items were left out by this run's selection (-k, -m, --deselect or node ids)")  # fmt: skip
    if renamed:
        notes.append(f"{_count(renamed)} of the saved run found no cell of this run to compare with, though their behaviour ran "
                     f"({_where(renamed)}): renamed or re-parametrized since the run was saved, so not gated on; save a run again "
                     "to gate on them")  # fmt: skip
    return notes


def _count(by_behaviour: Mapping[str, int]) -> str:
    count = sum(by_behaviour.values())
    return f"{count} cell{'' if count == 1 else 's'}"


def _where(by_behaviour: Mapping[str, int]) -> str:
    return ", ".join(f"{behaviour} {count}" for behaviour, count in sorted(by_behaviour.items()))


def compare(
    old: Sequence[Score], new: Sequence[Score], allowed_drops: Mapping[str, float], alpha: float = ALPHA
) -> list[CellChange]:
    """Every cell the two runs share, with its change, its Holm-adjusted p-value (within the gated
    cells, or within the others: the module's docstring) and whether it dropped. ``allowed_drops``
    maps a behaviour or a unit (``UNITS``) to the drop that fails the session; a behaviour's
    allowance overrides its unit's."""
    if any(not math.isfinite(drop) or drop < 0 for drop in allowed_drops.values()):
        raise CompareError(f"an allowed drop is a number from 0 up, got {dict(allowed_drops)}")  # NaN would allow every drop
    pairs = _pair(old, new)
    allowed = [allowed_drops.get(n.behaviour, allowed_drops.get(n.unit) if n.unit else None) for _, n in pairs]
    gated = [o.verdict is Verdict.MET and a is not None for (o, _), a in zip(pairs, allowed, strict=True)]
    raw = [
        stats.change_test(o.estimate(), n.estimate(), n.worse if g else "both") if _testable(o) and _testable(n) else math.nan
        for (o, n), g in zip(pairs, gated, strict=True)
    ]
    adjusted = [math.nan] * len(pairs)
    for family in (True, False):
        members = [i for i, g in enumerate(gated) if g is family]
        for i, p in zip(members, stats.holm([raw[i] for i in members]), strict=True):
            adjusted[i] = p
    # The gated cells' usable answers, tested as a family of their own: a loss is a regression whatever the score.
    gated_cells = [i for i, g in enumerate(gated) if g]
    fewer_usable = dict(zip(gated_cells, stats.holm([_answers_lost(*pairs[i]) for i in gated_cells]), strict=True))
    changes = []
    for i, (o, n) in enumerate(pairs):
        worse_by = _worse_by(o, n)
        p_adj = adjusted[i]
        drop = allowed[i]
        dropped = gated[i] and drop is not None and not math.isnan(p_adj) and p_adj < alpha and worse_by > drop
        lost = gated[i] and usable(o) > 0 and (usable(n) == 0 or fewer_usable[i] < alpha)
        models = n.model if o.model == n.model else f"{o.model} -> {n.model}"
        changes.append(CellChange(n.behaviour, label(n), models, o, n, raw[i], p_adj, worse_by, allowed[i], dropped, gated[i], lost))
    return sorted(changes, key=lambda c: (c.behaviour, c.new.test_id, c.cell))


def label(score: Score) -> str:
    """A cell in words, from its declared fields: its test, its variant and row as ``name value``,
    then what it measures (``test_ultimatum: role responder, generation actions: accepts $40``)."""
    return _label(score)


def _label(score: Score, first: Sequence[str] = ()) -> str:
    """``label``, the fields named in ``first`` put first."""
    test = score.test_id.split("::")[-1].split("[", 1)[0]
    named = _fields(score)
    where = ", ".join(f"{k} {v}" for k, v in sorted(named.items(), key=lambda kv: kv[0] not in first))
    return f"{test}" + (f" ({where})" if where else "") + f": {score.metric}"


def _fields(score: Score) -> dict[str, Any]:
    return {**{k: v for k, v in score.variant.items() if k != "model"}, **score.row}


#: How each line of a cell that fails the comparison begins (its answers lost, its score fell), and of
#: a gated cell that could not be tested: the lines a reader of the comparison needs first.
REGRESSION_MARKS = ("LOST ", "DROP ", "untested ")


def shown(changes: Sequence[CellChange], alpha: float = ALPHA) -> list[CellChange]:
    """What a comparison prints: the cells that dropped, changed significantly or changed verdict."""
    return [c for c in changes if _shown(c.to_json(), alpha)]


def _untested(cell: Mapping[str, Any]) -> bool:
    return bool(cell.get("gated")) and not cell.get("lost") and cell.get("p_value") is None


def _changed_verdict(cell: Mapping[str, Any]) -> str:
    old, new = cell.get("old_verdict"), cell.get("new_verdict")
    return f"{old} -> {new}" if old and new and old != new else ""


def _significant(cell: Mapping[str, Any], alpha: float) -> bool:
    return cell.get("p_holm") is not None and cell["p_holm"] < alpha


def shown_of(cells: Sequence[Mapping[str, Any]], alpha: float = ALPHA) -> list[Mapping[str, Any]]:
    """``shown``, of the cells as the run record holds them (``CellChange.to_json``)."""
    return [c for c in cells if _shown(c, alpha)]


def _shown(cell: Mapping[str, Any], alpha: float) -> bool:
    return bool(cell.get("dropped") or cell.get("lost") or _untested(cell) or _changed_verdict(cell) or _significant(cell, alpha))


def render(changes: Sequence[CellChange], alpha: float = ALPHA, width: int = TABLE_WIDTH) -> str:
    return render_cells([c.to_json() for c in changes], alpha, width)


def render_cells(cells: Sequence[Mapping[str, Any]], alpha: float = ALPHA, width: int = TABLE_WIDTH) -> str:
    """The table of the cells a comparison shows, from the run record's cells; empty where none."""
    def number(x: float | None) -> str:
        return NO_VALUE if x is None or math.isnan(x) else f"{x:.3g}"

    def p(x: float | None) -> str:
        return p_value_text(math.nan if x is None else x)

    rows = [
        (c["behaviour"], c["cell"] + (" [gated]" if c.get("gated") else ""), c["models"], number(c.get("old")), number(c.get("new")),
         number(c.get("difference")), p(c.get("p_value")), p(c.get("p_holm")),
         "LOST" if c.get("lost") else "DROP" if c.get("dropped") else "untested" if _untested(c) else
         ("changed" if _significant(c, alpha) else ""),
         _changed_verdict(c))
        for c in shown_of(cells, alpha)
    ]  # fmt: skip
    if not rows:
        return ""
    headers = ("behaviour", "cell", "model", "old", "new", "new - old", "p", "p (Holm)", "verdict", "criterion")
    return Table("comparison", headers, tuple(rows), (), (), labels=2).render(width)


def regressions(changes: Sequence[CellChange]) -> list[str]:
    """A line for each cell that fails the comparison (LOST: its usable answers lost; DROP: its score
    fell), and for each gated cell the comparison could not test; empty where none did. Each names
    its cell first, then its numbers: lines cut short at a screen's edge still tell their cells apart."""
    def answers(score: Score) -> str:
        return f"{usable(score)} of {score.n} answers usable, {score.invalid} invalid"

    def number(x: float | None) -> str:
        return NO_VALUE if x is None or not math.isfinite(x) else f"{x:.3g}"

    listed = [c for c in changes if c.lost or c.dropped or c.untested]
    several_models = len({c.models for c in listed}) > 1
    fields = [_fields(c.new) for c in listed]
    varying = [k for k in dict.fromkeys(k for f in fields for k in f) if len({str(f.get(k)) for f in fields}) > 1]
    lines = []
    for c in listed:
        cell = named(c, model=several_models, first=varying)
        if c.lost:
            lines.append(f"LOST {cell}: {answers(c.new)}, where the saved run had {answers(c.old)} ({number(c.old.score)} -> "
                         f"{number(c.new.score)}): a cell that no longer answers is a regression whatever its score")  # fmt: skip
        elif c.dropped:
            lines.append(f"DROP {cell}: {number(c.old.score)} -> {number(c.new.score)}, worse by {c.worse_by:.3g} > allowed "
                         f"{c.allowed_drop:g}, p (Holm) = {c.p_adjusted:.2g}")  # fmt: skip
        elif c.untested:
            why, remedy = untestable(c)
            lines.append(f"untested {cell}: gated, but its change cannot be tested ({number(c.old.score)} -> {number(c.new.score)}): "
                         f"{why}; {remedy}")  # fmt: skip
    return lines


def named(change: CellChange, *, model: bool = True, first: Sequence[str] = ()) -> str:
    """A cell as a line names it: its behaviour, its label with the fields ``first`` first (those that
    tell it from the other cells listed), and its model where ``model`` (a comparison of more than one)."""
    return f"{change.behaviour} {_label(change.new, first)}" + (f" ({change.models})" if model else "")


def untestable(change: CellChange) -> tuple[str, str]:
    """Why a gated cell's change could not be tested, and what to do about it."""
    old, new = change.old, change.new
    again = "save the baseline again with --gaamas-save"
    by_unit = f"gate {change.behaviour} by unit (--gaamas-compare-fail=UNIT=DROP) rather than by behaviour, which gates every cell of it"
    if old.kind != new.kind:
        return f"a {old.kind} in the saved run and a {new.kind} in this one", again
    if not old.sample and not new.sample:
        return "it is a statistic that keeps no observations (a trend, a distance) in either run", by_unit
    if not old.sample or not new.sample:
        return f"{len(old.sample)} and {len(new.sample)} observations kept", again
    if len(new.sample) != usable(new) or len(old.sample) != usable(old):
        return (f"its observations are of another unit than its answers ({len(old.sample)} for {usable(old)} usable answers in the "
                f"saved run, {len(new.sample)} for {usable(new)} in this one)", by_unit)
    return "an observation that is no number", again


def failed(changes: Sequence[CellChange]) -> bool:
    """Whether the comparison fails: a gated cell dropped or lost its answers."""
    return any(c.dropped or c.lost for c in changes)


def verdict_changes(changes: Sequence[CellChange]) -> list[str]:
    """A note for each way a criterion's verdict changed between the runs, and what it means; none
    of them fails the comparison (only a DROP does)."""
    meaning = {
        "met -> inconclusive": "the new trials no longer show the criterion holds, nor that it does not: the evidence weakened, "
                               "which is no regression by itself (only a significant drop is one); more trials would decide",
        "met -> missed": "the new trials show the criterion does not hold; a regression only where the cell also dropped significantly",
        "inconclusive -> missed": "the new trials show the criterion does not hold, where the old ones could not decide",
        "inconclusive -> met": "the new trials show the criterion holds, where the old ones could not decide",
        "missed -> inconclusive": "the new trials no longer show the criterion fails, nor that it holds",
        "missed -> met": "the new trials show the criterion holds",
        "met -> at chance": "the new trials show the model no better than chance at the criterion; a regression only where the "
                            "cell also dropped significantly",
        "inconclusive -> at chance": "the new trials show the model no better than chance, where the old ones could not decide",
        "missed -> at chance": "the new trials show the model no better than chance, where the old ones showed the criterion fails",
        "at chance -> met": "the new trials show the criterion holds, where the old ones showed the model no better than chance",
        "at chance -> missed": "the new trials show the criterion fails, no longer that the model is no better than chance",
        "at chance -> inconclusive": "the new trials no longer show the model no better than chance, nor that the criterion holds",
    }  # fmt: skip
    by_change: dict[str, list[CellChange]] = {}
    for change in changes:
        if change.verdict_change:
            by_change.setdefault(change.verdict_change, []).append(change)
    notes = []
    for change, cells in sorted(by_change.items(), key=lambda kv: list(meaning).index(kv[0])):
        named = ", ".join(f"{c.behaviour} {c.cell}" for c in cells[:5]) + (f" and {len(cells) - 5} more" if len(cells) > 5 else "")
        notes.append(f"{len(cells)} cell{'' if len(cells) == 1 else 's'} {change} ({named}): {meaning[change]}")
    return notes


def digest_changes(old_run: Mapping[str, Any], new_run: Mapping[str, Any]) -> list[str]:
    """Models served under the same name from different weights in the two runs."""

    def digests(run: Mapping[str, Any]) -> dict[str, str]:
        out = {}
        for model in run.get("models", []):
            digest = model.get("digest") or model.get("recorded_digest")
            if digest:
                out[model["model"]] = digest
        return out

    before, after = digests(old_run), digests(new_run)
    return [
        f"{model}: the weights changed since the saved run ({before[model]} -> {after[model]}); "
        "its cells compare two different models under one name"
        for model in sorted(before.keys() & after.keys())
        if before[model] != after[model]
    ]
