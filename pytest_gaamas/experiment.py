"""What a behaviour test gets from the ``gaamas`` fixture: the model, the trial settings, a way to play
a game (recorded, journaled, replayable: ``recording``), and a way to report its score (``scoring``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import fidelity, runlog, verdicts
from .errors import NotRecordedYet, VerdictAtChance, VerdictInconclusive, VerdictMissed, VerdictNotMet
from .model_meta import read_model_meta, recorded_model
from .recording import RECORDED_PROPERTY, ItemPaths, Recorder
from .report import ReferenceRow
from .scoring import fidelity_row, finding_of, score_of
from .verdicts import Verdict

if TYPE_CHECKING:  # what the face's signatures name; the work is recording's and scoring's
    from .fidelity import Fidelity, HumanChoices
    from .figures import Figure
    from .models import Model
    from .play import Game, TrialRecord
    from .report import Score
    from .settings import Settings
    from .stats import Estimate
    from .strategy import StrategyResult

__all__ = ["RECORDED_PROPERTY", "Experiment", "ItemPaths", "behaviour_name", "read_model_meta", "recorded_model"]

#: ``score(passed=...)`` not given: told apart from None, which is a descriptive row.
_UNSET: Any = object()


class Experiment:
    def __init__(
        self,
        settings: Settings,
        model: Model,
        item: pytest.Item,
        progress: Callable[[str], None],
        unavailable: dict[str, str] | None = None,
        collector: runlog.Collector | None = None,
        replayed: dict[tuple[Any, ...], list[TrialRecord]] | None = None,
        table_size: int = 1,
    ):
        self.settings = settings
        #: The cells of this item's table, judged as one family (``verdicts.table_family``): every cell
        #: its test function has for this model, whichever of them this run selected.
        self.table_size = table_size
        #: The family this item's verdicts are judged in, while ``judged_as_table`` is open.
        self.table: verdicts.TableFamily | None = None
        #: Where scores, reference rows and the games played go, for the run log.
        self.collector = runlog.Collector() if collector is None else collector
        self.model = model
        self.item = item
        self.behaviour = behaviour_name(item)
        params = item.callspec.params if hasattr(item, "callspec") else {}
        # The behaviour's own parameters (not the model), as they appear in ids, names and the JSON.
        self.variant: dict[str, Any] = {
            k: v for k, v in params.items() if k != "gaamas_model" and isinstance(v, (str, int, float, bool))
        }
        #: Where this item's games are recorded and journaled, and their playing.
        self.recorder = Recorder(settings, model, item, self.behaviour, self.variant, progress, {} if unavailable is None else unavailable,
                                 self.collector, {} if replayed is None else replayed)  # fmt: skip
        #: The valid observations behind each score of this item that carries a verdict.
        self.judged_observations: list[int] = []
        #: The sequential design (``run_looks``): the look playing now, the trial counts of the looks
        #: the design has (set where the behaviour asks ``trials``), and whether a score of this look
        #: that an interval helper judged is inconclusive.
        self.look = 0
        #: Each look's trials as a multiple of the paper's count (1, 2, 4 by default), fixed by the first ask.
        self.design: tuple[int, ...] = ()
        self.undecided = False
        #: The looks the design went past: their trials and verdicts, kept in the details of the last.
        self.looked: list[dict[str, Any]] = []

    # -- settings a behaviour reads -------------------------------------------------------------

    @property
    def seed(self) -> int:
        return self.settings.seed

    def trials(self, paper_count: int) -> int:
        """The number of trials: --gaamas-trials if given (a fixed design), else this look's count of
        the sequential design that starts at the paper's count for this experiment (``looks``)."""
        if self.settings.trials:
            return self.settings.trials
        if not self.design:  # the item's first ask fixes its looks; a later one plays as many times its own count
            self.design = tuple(count // paper_count for count in looks(paper_count, self.settings.max_trials))
        look = min(self.look, len(self.design) - 1)
        self._spend(look)
        if self.table is not None:
            self.table.trials = paper_count * self.design[look]
        return paper_count * self.design[look]

    def _spend(self, look: int) -> None:
        """The table family's share of the level for ``look`` of the item's design."""
        if self.table is not None and self.design:
            self.table.share, self.table.look, self.table.looks = verdicts.look_shares(len(self.design))[look], look, len(self.design)

    def run_looks(self, call: Callable[[], object]) -> None:
        """Run the item's body once a look of its sequential design: again with the next look's trials
        where a score an interval helper judged is inconclusive, or missed where the helper was asked
        whether it is at chance, and the design has a look left, the
        looks before it taken out of the record. A replay that does not hold the next look's trials
        leaves the verdict of the last look it held, and the finding says what more trials would need."""
        kept: tuple[runlog.Look, VerdictNotMet] | None = None
        test_id = self.item.nodeid
        while True:
            mark = self.collector.mark(test_id)
            self._begin_look()
            try:
                call()
                return
            except NotRecordedYet:
                assert kept is not None, "only a later look extends a recorded cell"
                self.collector.take(test_id, mark)
                self.collector.restore(test_id, kept[0])
                previous = kept[1]
                held = self.looked[-1]["trials"]
                raise type(previous)(f"{previous}; {2 * held} trials would decide more, and a replay holds {held}: record them "
                                     "with --gaamas-record=new_episodes") from None  # fmt: skip
            except (VerdictInconclusive, VerdictMissed) as finding:
                if not (self.undecided and self.look + 1 < len(self.design) and self._spent_its_share()):
                    raise
                kept = (self.collector.take(test_id, mark), finding)
                self.looked.append({"trials": self.table.trials if self.table else 0, "verdict": finding.verdict.value})
                self.look += 1

    def _spent_its_share(self) -> bool:
        """Whether every verdict of this look spent only its look's share: none was judged before the
        design was known, and no claim was decided by p-value at its whole level."""
        table = self.table
        if table is None or table.claims:
            return False
        share = verdicts.look_shares(len(self.design))[self.look]
        return all(judgement.share == share for judgement in table.judged)

    def _begin_look(self) -> None:
        self.undecided = False
        self.judged_observations.clear()
        self.recorder.invalid_reasons.clear()
        self.recorder.strategy = None
        self.recorder.extending = self.look > 0
        if self.table is not None:
            self.table.judged.clear()
            self.table.share, self.table.look, self.table.looks, self.table.trials, self.table.claims = 1.0, 0, 1, 0, 0
            self._spend(self.look)

    def temperature(self, paper_value: float) -> float:
        return paper_value if self.settings.temperature is None else self.settings.temperature

    def threshold(self, name: str, default: float) -> float:
        """A pass threshold, overridable as --gaamas-threshold BEHAVIOUR.NAME=VALUE (or NAME=VALUE)."""
        overrides = self.settings.thresholds
        return overrides.get(f"{self.behaviour}.{name}", overrides.get(name, default))

    # -- playing (``recording.Recorder``) ---------------------------------------------------------------

    def paths(self, recorded_as: str | None = None, variant: Mapping[str, Any] | None = None, compressed: bool = False,
              named: Mapping[str, Any] | None = None) -> ItemPaths:  # fmt: skip
        """Where this item's exchanges are recorded and its trials journaled (``Recorder.paths``)."""
        return self.recorder.paths(recorded_as, variant, compressed, named)

    def play(
        self, game: Game, trials: int, *, temperature: float, generation: str = "actions",
        recorded_as: str | None = None, variant: Mapping[str, Any] | None = None, compressed: bool = False,
        named: Mapping[str, Any] | None = None,
    ) -> list[TrialRecord]:  # fmt: skip
        """Play ``trials`` trials of ``game``; every finished trial is journaled, every exchange recorded.

        ``generation="strategy"`` asks the model once for a Python function (the game's
        ``strategy()`` contract) and lets the function play the trials in a sandbox; an invalid
        strategy makes every trial invalid, with its reason. ``recorded_as`` and ``variant`` share
        another item's cassette (see ``paths``); ``compressed`` keeps the cassette gzip-compressed, for
        behaviours whose recordings are large; ``named`` chooses the parameters that name its files.
        """
        return self.recorder.play(game, trials, temperature=temperature, generation=generation, recorded_as=recorded_as,
                                  variant=variant, compressed=compressed, named=named)  # fmt: skip

    @property
    def strategy(self) -> StrategyResult | None:
        """The strategy and how it fared, in strategy mode."""
        return self.recorder.strategy

    @property
    def invalid_reasons(self) -> dict[str, int]:
        return self.recorder.invalid_reasons

    @property
    def reference_kind(self) -> str | None:
        """``human`` for ``reference:human``; None for a model."""
        return self.recorder.reference_kind

    @property
    def concurrency(self) -> int:
        """Trials played at once: --gaamas-concurrency, else what the model's server is good for."""
        return self.recorder.concurrency

    # -- reporting (``scoring``) ----------------------------------------------------------------------

    @contextlib.contextmanager
    def judged_as_table(self) -> Iterator[Experiment]:
        """While the item runs: the verdict helpers judge its intervals as cells of its table."""
        with verdicts.table_family(self.table_size) as family:
            self.table = family
            try:
                yield self
            finally:
                self.table = None

    def score(
        self,
        *,
        table: str,
        metric: str,
        estimate: Estimate,
        invalid: int,
        passed: bool | None = _UNSET,
        criterion: str,
        columns: tuple[str, ...],
        cells: Mapping[str, str],
        details: Mapping[str, Any] | None = None,
        row: Mapping[str, str] | None = None,
        row_rank: int = 0,
        n: int | None = None,
        worse: str = "down",
        verdict_label: str = "",
        unit: str | None = None,
        figures: Sequence[Figure] = (),
        verdict: Verdict | str | bool | None = _UNSET,
    ) -> Score:
        """Record a score of this item for the session's tables and JSON, and return it.

        An item fills ``cells`` of its row, the row being model x generation, plus ``row`` where the
        behaviour's table has more row labels (an opponent, a round). An item may report several
        scores, in several tables. ``n`` defaults to the valid observations plus the invalid ones.
        ``verdict`` is met, missed or inconclusive (``pytest_gaamas.verdicts``), or None for a
        descriptive row that carries none; ``passed`` (True met, False missed, None descriptive) is
        still read in its place, for behaviours written before there were three. ``worse`` says which way
        a change of the score is a regression when runs are compared: "down", "up" or "both".
        ``verdict_label`` says the verdict in the behaviour's own word (faithful, inconclusive...)
        where pass and missed say too little. ``unit`` is what the score counts (``compare.UNITS``):
        a rate's is "rate" without saying; a mean must say its own. ``figures`` say where the report
        draws the score (``pytest_gaamas.figures``).
        """
        if (passed is _UNSET) == (verdict is _UNSET):
            raise TypeError("gaamas.score: give verdict= (met, missed, inconclusive, or None for a descriptive row), or passed=, not both")
        judged = Verdict.of(passed if verdict is _UNSET else verdict)
        if judged is not None:
            self.judged_observations.append(estimate.n)
        decided = self.table.judgement(estimate) if self.table is not None and judged is not None else None
        # What more trials may decide: a cell that cannot tell met from missed, or a miss not yet shown at chance.
        self.undecided |= decided is not None and (judged is Verdict.INCONCLUSIVE or (judged is Verdict.MISSED and decided.chance_asked))
        if self.looked and judged is not None:
            details = {**(details or {}), "looks": [*self.looked, {"trials": self.table.trials if self.table else 0, "verdict": judged.value}]}
        score = score_of(
            behaviour=self.behaviour, test_id=self.item.nodeid, model=self.model.spec, variant=self.variant, estimate=estimate,
            judged=judged, decided=decided, invalid_reasons=self.invalid_reasons, strategy=self.strategy, table=table, metric=metric,
            invalid=invalid, criterion=criterion, columns=columns, cells=cells, details=details, row=row, row_rank=row_rank, n=n,
            worse=worse, verdict_label=verdict_label, unit=unit, figures=figures,
        )  # fmt: skip
        self.collector.score(score)
        return score

    def verdict(self, verdict: Verdict | str | bool | None, finding: str) -> None:
        """The behaviour's verdict on this item: met, missed, at chance or inconclusive
        (``pytest_gaamas.verdicts``; True and False are still read as met and missed, and None, no
        result at all, as missed). Nothing happens when it is met; otherwise ``finding`` (what was
        measured against what criterion) is reported in one line, with what the verdict was decided
        on where a helper decided it in a table of several cells or at chance, and why answers were
        unusable where some were: a finding about the model, which ``--gaamas-verdicts`` may turn
        into a failed item."""
        judged = Verdict.of(verdict) or Verdict.MISSED
        if judged is Verdict.MET:
            return
        not_met = {Verdict.INCONCLUSIVE: VerdictInconclusive, Verdict.AT_CHANCE: VerdictAtChance}.get(judged, VerdictMissed)
        raise not_met(finding_of(finding, judged, self.table, self.judged_observations, self.strategy, self.invalid_reasons))

    def fidelity(self, values: Sequence[float], humans: HumanChoices, *, invalid: int, label: str) -> Fidelity | None:
        """Compare the model's valid choices with people's (``pytest_gaamas.fidelity``) and report the
        comparison as this item's row ``label`` of the fidelity table. None when nothing was valid."""
        result = fidelity.compare(values, humans)
        self.score(**fidelity_row(result, values, humans, invalid=invalid, label=label))
        return result

    def reference(self, *, table: str, label: str, cells: Mapping[str, str], source: str, status: str) -> None:
        """A row of human or benchmark figures to show under the models in ``table``."""
        self.collector.reference(ReferenceRow(table=table, label=label, cells=dict(cells), source=source, status=status))


#: How many times the paper's count of trials the last look of the default design plays.
DEFAULT_MOST = 4


def looks(paper_count: int, most: int | None = None) -> tuple[int, ...]:
    """The trial counts of a sequential design: the paper's count, then twice as many at each look
    while that stays within ``most`` (four times the paper's count where not given)."""
    most = DEFAULT_MOST * paper_count if most is None else most
    counts = [paper_count]
    while counts[-1] * 2 <= most:
        counts.append(counts[-1] * 2)
    return tuple(counts)


def behaviour_name(item: pytest.Item) -> str:
    """``behaviours/test_garp_consistency.py`` -> ``garp_consistency``."""
    stem = Path(str(item.path)).stem
    return stem[len("test_"):] if stem.startswith("test_") else stem
