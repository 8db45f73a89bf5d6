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
        #: The item's sequential design: a look a run of its body (``run_looks``).
        self.looks = Looks(settings.max_trials)

    # -- settings a behaviour reads -------------------------------------------------------------

    @property
    def seed(self) -> int:
        return self.settings.seed

    def trials(self, paper_count: int) -> int:
        """The number of trials: --gaamas-trials if given (a fixed design), else this look's count of
        the sequential design that starts at the paper's count for this experiment (``Looks``)."""
        return self.settings.trials or self.looks.count(paper_count, self.table)

    def temperature(self, paper_value: float) -> float:
        return paper_value if self.settings.temperature is None else self.settings.temperature

    def threshold(self, name: str, default: float) -> float:
        """A pass threshold, overridable as --gaamas-threshold BEHAVIOUR.NAME=VALUE (or NAME=VALUE)."""
        overrides = self.settings.thresholds
        return overrides.get(f"{self.behaviour}.{name}", overrides.get(name, default))

    def run_looks(self, call: Callable[[], object]) -> None:
        """Run the item's body once a look of its sequential design (``Looks.run``)."""
        self.looks.run(self, call)

    def begin_look(self) -> None:
        """What one look of the body starts afresh: what it judged, played and found unusable."""
        self.judged_observations.clear()
        self.recorder.invalid_reasons.clear()
        self.recorder.strategy = None
        self.recorder.extending = self.looks.look > 0
        self.looks.begin(self.table)

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
        details = self.looks.judged(judged, decided, details, self.table)
        if judged is not None:  # what the verdict rests on, for the cost of a decided one
            details = {**(details or {}), "requests": self.collector.requests(self.item.nodeid)}
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


class Looks:
    """An item's sequential design: each look runs its body with more trials, twice the look before,
    while a score an interval helper judged is inconclusive (or missed where the helper was asked
    whether it is at chance) and a look is left, each look spending its share of the level
    (``verdicts.look_shares``). The looks before the last are taken out of the record; a replay that
    does not hold the next look's trials leaves the verdict of the last look it held, and the finding
    says what recording more would take."""

    def __init__(self, most: int | None) -> None:
        self.most = most
        #: The look playing now.
        self.look = 0
        #: Each look's trials as a multiple of the paper's count (1, 2, 4 by default), fixed by the first ask.
        self.design: tuple[int, ...] = ()
        #: Whether a score of this look that an interval helper judged is one more trials may decide.
        self.undecided = False
        #: The looks the design went past: their trials and verdicts, kept in the details of the last.
        self.looked: list[dict[str, Any]] = []

    def count(self, paper_count: int, table: verdicts.TableFamily | None) -> int:
        """This look's trials, and its share of the level spent by the table's verdicts."""
        if not self.design:  # the item's first ask fixes its looks; a later one plays as many times its own count
            self.design = tuple(count // paper_count for count in looks(paper_count, self.most))
        trials = paper_count * self.design[self.spend(table)]
        if table is not None:
            table.trials = trials
        return trials

    def spend(self, table: verdicts.TableFamily | None) -> int:
        """The table family's share of the level for this look of the design, once it is known; the look."""
        look = min(self.look, len(self.design) - 1)
        if table is not None and self.design:
            table.share, table.look, table.looks = verdicts.look_shares(len(self.design))[look], look, len(self.design)
        return look

    def begin(self, table: verdicts.TableFamily | None) -> None:
        self.undecided = False
        if table is not None:
            table.judged.clear()
            table.share, table.look, table.looks, table.trials, table.claims = 1.0, 0, 1, 0, 0
            self.spend(table)

    def judged(self, judged: Verdict | None, decided: verdicts.Judgement | None, details: Mapping[str, Any] | None,
               table: verdicts.TableFamily | None) -> Mapping[str, Any] | None:  # fmt: skip
        """A score's verdict noted (can more trials decide it?), and its details with the looks gone past."""
        self.undecided |= decided is not None and (judged is Verdict.INCONCLUSIVE or (judged is Verdict.MISSED and decided.chance_asked))
        if not self.looked or judged is None:
            return details
        return {**(details or {}), "looks": [*self.looked, {"trials": table.trials if table else 0, "verdict": judged.value}]}

    def may_look_again(self, table: verdicts.TableFamily | None) -> bool:
        """Whether more trials may decide this look's verdict, a look is left, and every verdict of this
        look spent only its share: none judged before the design was known, no claim decided by
        p-value at its whole level."""
        if not (self.undecided and self.look + 1 < len(self.design)) or table is None or table.claims:
            return False
        share = verdicts.look_shares(len(self.design))[self.look]
        return all(judgement.share == share for judgement in table.judged)

    def run(self, experiment: Experiment, call: Callable[[], object]) -> None:
        """The body run once a look, until a look decides, or the design or the recordings end."""
        kept: tuple[runlog.Look, VerdictNotMet] | None = None
        collector, test_id = experiment.collector, experiment.item.nodeid
        while True:
            mark = collector.mark(test_id)
            experiment.begin_look()
            try:
                call()
                return
            except NotRecordedYet:
                assert kept is not None, "only a later look extends a recorded cell"
                collector.take(test_id, mark)
                collector.restore(test_id, kept[0])
                previous, held = kept[1], self.looked[-1]["trials"]
                raise type(previous)(f"{previous}; {2 * held} trials would decide more, and a replay holds {held}: record them "
                                     "with --gaamas-record=new_episodes") from None  # fmt: skip
            except (VerdictInconclusive, VerdictMissed) as finding:
                if not self.may_look_again(experiment.table):
                    raise
                kept = (collector.take(test_id, mark), finding)
                self.looked.append({"trials": experiment.table.trials if experiment.table else 0, "verdict": finding.verdict.value})
                self.look += 1


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
