"""What a behaviour test gets from the ``gaamas`` fixture: the model, the trial settings, a way to play
a game (recorded, journaled, replayable), and a way to report its score."""

from __future__ import annotations

import contextlib
import json
import os
import time
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from . import __version__, cassettes, fidelity, runlog, safejson, verdicts
from .errors import (GaamasError, MissingCassette, ModelChanged, ModelUnavailable, UnreadableFile, VerdictAtChance, VerdictInconclusive,
                     VerdictMissed)
from .journal import Journal
from .models import Model, slug
from .models.reference import EVERY_GAME, SHORTCUTS
from .redact import redact_text
from .play import Game, TrialRecord, cell_seed, fingerprint, play_trial
from .fidelity import Fidelity, HumanChoices
from .figures import Figure
from .report import NO_VALUE, ReferenceRow, Score, cell, p_value_text
from .settings import Settings
from .stats import Estimate
from .sandbox import SandboxUnavailable
from .trials import play_trials
from .verdicts import Verdict
from .strategy import StrategyRequest, StrategyResult, no_strategy, run_strategy

#: How many exchanges an item recorded live, said by the controller as the item finishes.
RECORDED_PROPERTY = "gaamas_recorded"
PROGRESS_EVERY_S = 5.0
#: ``score(passed=...)`` not given: told apart from None, which is a descriptive row.
_UNSET: Any = object()


@dataclass
class ItemPaths:
    cassette: Path
    #: The journal's stem: its file adds the fingerprint of model, game, seed and temperature.
    journal: Path
    model_meta: Path
    #: The cassette is another item's, shared by a criterion that spans cells.
    shared: bool = False


class Experiment:
    def __init__(
        self,
        settings: Settings,
        model: Model,
        item: pytest.Item,
        progress: Callable[[str], None],
        unavailable: dict[str, str] | None = None,
        collector: runlog.Collector | None = None,
        replayed: dict[tuple, list[TrialRecord]] | None = None,
        table_size: int = 1,
    ):
        self.settings = settings
        #: The cells of this item's table, judged as one family (``verdicts.table_family``): every cell
        #: its test function has for this model, whichever of them this run selected.
        self.table_size = table_size
        #: The family this item's verdicts are judged in, while ``judged_as_table`` is open.
        self.table: verdicts.TableFamily | None = None
        #: Replay only: the records of each game already replayed from a cassette in this process, so
        #: that a criterion over cells reads them instead of replaying every exchange again.
        self.replayed = {} if replayed is None else replayed
        #: Where scores, reference rows and the games played go, for the run log.
        self.collector = runlog.Collector() if collector is None else collector
        #: Model spec -> why it cannot be reached, shared by the session's items.
        self.unavailable = {} if unavailable is None else unavailable
        self.model = model
        self.item = item
        self.behaviour = behaviour_name(item)
        self._progress = progress
        params = item.callspec.params if hasattr(item, "callspec") else {}
        # The behaviour's own parameters (not the model), as they appear in ids, names and the JSON.
        self.variant: dict[str, Any] = {
            k: v for k, v in params.items() if k != "gaamas_model" and isinstance(v, (str, int, float, bool))
        }
        self.invalid_reasons: dict[str, int] = {}
        #: The strategy and how it fared, in strategy mode.
        self.strategy: StrategyResult | None = None
        #: The valid observations behind each score of this item that carries a verdict.
        self.judged_observations: list[int] = []

    # -- settings a behaviour reads -------------------------------------------------------------

    @property
    def seed(self) -> int:
        return self.settings.seed

    def trials(self, paper_count: int) -> int:
        """The number of trials: --gaamas-trials if given, else the paper's count for this experiment."""
        return self.settings.trials or paper_count

    def temperature(self, paper_value: float) -> float:
        return paper_value if self.settings.temperature is None else self.settings.temperature

    def threshold(self, name: str, default: float) -> float:
        """A pass threshold, overridable as --gaamas-threshold BEHAVIOUR.NAME=VALUE (or NAME=VALUE)."""
        overrides = self.settings.thresholds
        return overrides.get(f"{self.behaviour}.{name}", overrides.get(name, default))

    # -- playing ----------------------------------------------------------------------------------

    def paths(
        self, recorded_as: str | None = None, variant: Mapping[str, Any] | None = None, compressed: bool = False,
        named: Mapping[str, Any] | None = None,
    ) -> ItemPaths:  # fmt: skip
        """Where this item's exchanges are recorded and its trials journaled. ``recorded_as`` (a test
        function of this behaviour) and ``variant`` name another item whose cassette to share: the
        same game, seed and temperature make the same requests, so a criterion that spans several
        cells replays them instead of asking the model again. The journal stays this item's own.
        ``compressed``: the cassette is gzip-compressed YAML, ``<item>.yaml.gz`` (``zcat`` shows it).
        ``named``: the parameters whose values name this item's own files, in order (all of them by
        default), so that a parameter added later can leave the recordings made before it where they
        are: ``variant`` then names the other item's the same way."""
        def name(stem: str, values) -> str:
            variant_part = "-".join(slug(str(v)) for v in values)
            return f"{stem}-{variant_part}" if variant_part else stem

        own_stem = self.item.originalname if hasattr(self.item, "originalname") else self.item.name
        naming = self.variant if named is None else named
        own = name(own_stem, naming.values())
        recorded = name(recorded_as or own_stem, (naming if variant is None else variant).values())
        model_dir = self.model.directory + self.settings.cassette_suffix
        journal = own if recorded == own else f"{own}--{recorded}"
        return ItemPaths(
            cassette=self.settings.cassette_dir / model_dir / self.behaviour / f"{recorded}.yaml{'.gz' if compressed else ''}",
            journal=self.settings.journal_dir / model_dir / self.behaviour / journal,
            model_meta=self.settings.cassette_dir / self.model.directory / "model.json",
            shared=recorded != own,
        )

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
        paths = self.paths(recorded_as, variant, compressed, named)
        kind = self.reference_kind
        if kind is not None and kind not in SHORTCUTS and kind not in getattr(game, "reference_kinds", EVERY_GAME):
            pytest.skip(f"{self.model.spec} plays only the games that define it, not {getattr(game, 'name', 'this one')}")
        if generation == "strategy":
            records, asked = self._play_strategy(game, trials, temperature, paths)
        else:
            if self.model.spec == "reference:human" and not getattr(game, "has_human_data", False):
                pytest.skip("reference:human: the shipped human data hold no individual choices for this game")
            records, asked = self._play_recorded(game, trials, temperature, paths), None
        self._log_play(game, generation, temperature, records, asked)
        return records

    def _log_play(self, game: Game, generation: str, temperature: float, records: list[TrialRecord], asked: TrialRecord | None) -> None:
        """The game as played, whole, into the run log; items replaying the same cells share it."""
        game_fingerprint = fingerprint(game.fingerprint())
        play_id = fingerprint(self.model.spec, game_fingerprint, self.seed, temperature, generation, len(records))
        strategy = None
        if asked is not None and self.strategy is not None:
            strategy = {**self.strategy.to_json(), "request": dict(vars(asked.rounds[0])) if asked.rounds else None}
        play = runlog.Play(
            id=play_id, behaviour=self.behaviour, model=self.model.spec, game=getattr(game, "name", type(game).__name__),
            game_fingerprint=game_fingerprint, generation=generation, seed=self.seed, temperature=temperature,
            trials=[r.to_json() for r in records], strategy=strategy,
        )  # fmt: skip
        item = runlog.ItemLog(self.item.nodeid, self.behaviour, self.model.spec, {"generation": "actions", **self.variant})
        self.collector.play(item, play)

    def _play_strategy(self, game: Game, trials: int, temperature: float, paths: ItemPaths) -> tuple[list[TrialRecord], TrialRecord]:
        contract = game.strategy()
        kind = self.reference_kind
        if kind is not None and kind not in contract.references:
            why = {
                "human": "people's choices are data, not code; no human strategies exist",
                **dict.fromkeys(SHORTCUTS, "it answers an answer form, and a strategy request has none: it writes no code"),
            }.get(kind, "it writes no strategy")
            pytest.skip(f"{self.model.spec}: {why}")
        asked = self._play_recorded(StrategyRequest(contract), 1, temperature, paths)[0]
        if asked.outcome["valid"]:
            try:
                # The cell is in the seed, so a strategy that draws does not replay one cell's draws in every cell.
                seed = cell_seed(self.seed, fingerprint(game.fingerprint()), temperature) % 2**32
                self.strategy = run_strategy(game, contract, asked.outcome["code"], trials, seed=seed)
            except SandboxUnavailable as error:
                pytest.skip(f"strategy not run: {error}")
        else:
            self.strategy = no_strategy(asked.outcome["reason"], trials)
        if self.strategy.failure is not None:
            self.invalid_reasons[self.strategy.failure.kind] = trials
        return self.strategy.records, asked

    def _play_recorded(self, game: Game, trials: int, temperature: float, paths: ItemPaths) -> list[TrialRecord]:
        played_as = fingerprint(self.model.spec, game.fingerprint(), self.seed, temperature)
        # A replay is a pure function of the cassette and the game, and a reference agent's play of the
        # game (each reply is seeded by its request): the same key, the same records. A criterion over
        # a family of cells plays every cell of the family, each once a process.
        if not self.model.uses_http:
            replay_key = ("reference", played_as, trials)
        elif self.settings.record == "none":
            replay_key = (str(paths.cassette), played_as, trials)
        else:
            replay_key = None
        if replay_key in self.replayed:
            if self.model.uses_http:
                self.collector.cassette(paths.cassette.relative_to(self.settings.cassette_dir).as_posix())
            records = list(self.replayed[replay_key])
        else:
            records = self._play_journaled(game, trials, temperature, paths, played_as)
            if replay_key is not None:
                self.replayed[replay_key] = list(records)
        for record in records:  # reasons per unusable answer; in a repeated game a trial may have several
            for answered in record.rounds:
                if not answered.valid:
                    kind = answered.reason.split(":", 1)[0] or "invalid"
                    self.invalid_reasons[kind] = self.invalid_reasons.get(kind, 0) + 1
        return records

    def _play_journaled(self, game: Game, trials: int, temperature: float, paths: ItemPaths, played_as: str) -> list[TrialRecord]:
        journal: Journal | None = None
        records: list[TrialRecord] = []
        started = last_report = time.monotonic()
        complete = False
        failure = None
        try:
            # Replay only asks no one, so it has nothing to journal; a journal a live run left stays
            # for the next live run, which puts its exchanges into the cassette.
            if self.settings.record != "none":
                journal = Journal(paths.journal, played_as, self._waiting_for(paths.journal))
            with self._recording(paths) as tape:
                rebuilt = self._rebuilt_from_journal(game, journal, tape, temperature) if journal is not None else {}
                for trial in rebuilt:  # answered before a crash: into the cassette
                    cassettes.restore(tape, journal.finished[trial].exchanges)
                start = len(tape.data) if tape is not None else 0
                played: list[TrialRecord] = []

                def finished(record: TrialRecord) -> None:
                    nonlocal last_report
                    if journal is not None:
                        seeds = {r.seed for r in record.rounds}
                        journal.write(record, cassettes.exchanges_of(tape, seeds, start) if tape is not None else [])
                    played.append(record)
                    if time.monotonic() - last_report >= PROGRESS_EVERY_S:
                        last_report = time.monotonic()
                        invalid = sum(not r.valid for r in played)
                        self._progress(
                            f"{self.item.name}: {len(rebuilt) + len(played)}/{trials} trials, {invalid} invalid, "
                            f"{last_report - started:.0f} s"
                        )

                fresh = play_trials(
                    game, cassettes.replayer(self.model, tape), [t for t in range(trials) if t not in rebuilt], seed=self.seed,
                    temperature=temperature, concurrency=self.concurrency, finished=finished,
                )  # fmt: skip
                by_trial = {r.trial: r for r in fresh} | {t: record for t, record in rebuilt.items() if t < trials}
                records = [by_trial[t] for t in range(trials)]
                if tape is not None and self.concurrency > 1:
                    cassettes.in_trial_order(tape, [r.seed for record in fresh for r in record.rounds], start)
            complete = True
        except GaamasError as error:
            failure = f"{self.model.spec}: {redact_text(str(error), limit=None)}"
            if isinstance(error, ModelUnavailable):
                self.unavailable[self.model.spec] = failure  # the model's other items are skipped with it
        finally:
            if journal is not None:
                journal.close(complete=complete)
        if failure is not None:
            pytest.fail(failure, pytrace=False)  # outside the handler: no "during handling" chain under xdist
        return records

    def _rebuilt_from_journal(self, game: Game, journal: Journal, tape, temperature: float) -> dict[int, TrialRecord]:
        """The trials the journal holds, each played again through the game from the exchanges
        recorded with it, and from nothing else: what a line says of its trial is never read. A trial
        whose exchanges do not carry it to its end is left out, to be played again, and so is every
        trial of an agent without a server (``tape`` None), which recorded no exchange."""
        rebuilt = {}
        for trial, entry in journal.finished.items() if tape is not None else ():
            try:
                with cassettes.replaying(entry.exchanges):
                    rebuilt[trial] = play_trial(game, self.model, trial, seed=self.seed, temperature=temperature)
            except Exception:  # whatever a journal's exchanges make the model or the game raise
                continue
        journal.keep(rebuilt)
        return rebuilt

    @contextlib.contextmanager
    def _recording(self, paths: ItemPaths):
        """The item's cassette (None for agents without a server), written when the block ends."""
        if not self.model.uses_http:
            yield None
            return
        mode = self.settings.record
        if mode == "all" and paths.shared:
            mode = "once"  # re-recording a shared cell is its own item's job; a criterion over cells replays it
        if mode == "none" and not paths.cassette.exists():
            raise MissingCassette(
                f"replay only, and there is no cassette {paths.cassette} for {self.item.name}: "
                "record it with --gaamas-record=once"
            )
        self._check_model_unchanged(paths.model_meta)
        self.collector.cassette(paths.cassette.relative_to(self.settings.cassette_dir).as_posix())
        # One writer a cassette, from before it is read until it is written: items sharing it, and runs
        # of one item, record in turn, and each finds and replays what the one before it paid for.
        # Replay only writes nothing, and waits for no one.
        writer = contextlib.nullcontext()
        if mode != "none":
            writer = cassettes.one_writer(paths.cassette, self._waiting_for(paths.cassette))
        with writer, cassettes.cassette(paths.cassette, mode, replace_recorded=self.settings.replace_recorded) as tape:
            before = len(tape.data)
            yield tape
            recorded = len(tape.data) - before if mode != "all" else len(tape.data)
        if recorded:
            self.item.user_properties.append((RECORDED_PROPERTY, json.dumps([self.model.spec, recorded])))
            self._write_model_meta(paths.model_meta)

    def _waiting_for(self, path: Path) -> Callable[[], None]:
        """What to say when another process is writing ``path`` and this item waits for it."""
        return lambda: self._progress(f"{self.item.name}: waits while another item or run writes {path}")

    def _check_model_unchanged(self, meta_path: Path) -> None:
        """Refuse to mix answers of two different models under one name in one cassette set."""
        if self.settings.record != "once" or not meta_path.exists():
            return
        recorded = read_model_meta(meta_path).get("digest")
        current = self.model.digest()
        if recorded and current and recorded != current:
            raise ModelChanged(
                f"the cassettes in {meta_path.parent} were recorded from {recorded}, but {self.model.spec} is now "
                f"{current}. Re-record them all with --gaamas-record=all, or replay them with --gaamas-record=none."
            )

    def _write_model_meta(self, meta_path: Path) -> None:
        provenance = self.model.provenance()
        meta = {**provenance, "recorded_with": f"pytest-gaamas {__version__}"}
        if recorded_model(meta_path) == (meta, None):
            return  # a damaged one is replaced: `once` refused it before recording, `all` records afresh
        cassettes.write_atomically(meta_path, json.dumps(meta, indent=2, sort_keys=True) + "\n", what="model description")

    @property
    def reference_kind(self) -> str | None:
        """``human`` for ``reference:human``; None for a model."""
        return self.model.spec.removeprefix("reference:") if self.model.spec.startswith("reference:") else None

    @property
    def concurrency(self) -> int:
        """Trials played at once: --gaamas-concurrency, else what the model's server is good for."""
        return self.settings.concurrency or self.model.default_concurrency

    # -- reporting --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def judged_as_table(self):
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
        score = Score(
            behaviour=self.behaviour,
            test_id=self.item.nodeid,
            model=self.model.spec,
            variant={"generation": "actions", **self.variant},
            metric=metric,
            score=None if estimate.n == 0 or math.isnan(estimate.value) else estimate.value,
            ci=(None, None) if estimate.n == 0 or math.isnan(estimate.value) else (estimate.low, estimate.high),
            n=estimate.n + invalid if n is None else n,
            invalid=invalid,
            passed=None if judged is None else judged is Verdict.MET,
            verdict=judged,
            criterion=criterion,
            table=table,
            columns=tuple(columns),
            cells=dict(cells),
            details={
                **(details or {}),
                "invalid_reasons": dict(sorted(self.invalid_reasons.items())),
                **({"strategy": self.strategy.to_json()} if self.strategy else {}),
            },
            row={k: str(v) for k, v in (row or {}).items()},
            row_rank=row_rank,
            kind=estimate.kind,
            sample=estimate.sample,
            worse=worse,
            verdict_label=verdict_label,
            unit=unit if unit is not None else ("rate" if estimate.kind == "rate" else ""),
            figures=tuple(figures),
            adjusted=None if decided is None else decided.as_json(),
        )
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
        finding += self._decided_on(judged)
        if self.judged_observations and not any(self.judged_observations):
            finding += "; no valid answer"
        if self.strategy is not None and self.strategy.failure is not None:
            finding += f"; the strategy is invalid: {self.strategy.failure.reason}"
        elif self.invalid_reasons:
            reasons = ", ".join(f"{kind} {count}" for kind, count in sorted(self.invalid_reasons.items(), key=lambda kv: -kv[1]))
            finding += f"; unusable answers: {reasons}"
        not_met = {Verdict.INCONCLUSIVE: VerdictInconclusive, Verdict.AT_CHANCE: VerdictAtChance}.get(judged, VerdictMissed)
        raise not_met(" ".join(finding.split())[:600])

    def _decided_on(self, verdict: Verdict) -> str:
        """What the item's last judgement of this verdict was decided on, said after its finding:
        the table-adjusted interval, and the interval that showed it at chance."""
        judgement = next((j for j in reversed(self.table.judged) if j.verdict is verdict), None) if self.table else None
        if judgement is None:
            return ""
        said = ""
        if judgement.widened:
            adjusted = judgement.adjusted
            said += (f"; judged on the table-adjusted interval [{adjusted.low:.3g}, {adjusted.high:.3g}] "
                     f"({judgement.confidence:.2%}, one of {judgement.family_size} cells)")  # fmt: skip
        if judgement.chance is not None:
            level, margin, interval = judgement.chance
            said += f"; at chance: the 90% interval [{interval.low:.3g}, {interval.high:.3g}] lies within {level:.3g} +- {margin:.3g}"
        return said

    def fidelity(self, values: Sequence[float], humans: HumanChoices, *, invalid: int, label: str) -> Fidelity | None:
        """Compare the model's valid choices with people's (``pytest_gaamas.fidelity``) and report the
        comparison as this item's row ``label`` of the fidelity table. None when nothing was valid."""
        result = fidelity.compare(values, humans)
        n = len(values) + invalid
        cells = dict.fromkeys(fidelity.COLUMNS, NO_VALUE) | {"n": str(n), "invalid": str(invalid)}
        if result is not None:
            test, unit = result.test, humans.unit
            cells |= {
                "model mean": f"{result.model_mean:.3g}",
                "human mean": f"{result.human_mean:.3g}",
                "difference [90% CI]": cell(result.difference, 3 if humans.tolerance < 1 else 1),
                "aggregate (mean within margin)": f"{result.aggregate} (+-{unit}{humans.mean_margin:g})",
                "Wasserstein [upper 95%]": f"{unit}{test.distance:.3g} [{unit}{test.upper:.3g}]",
                "p same as people": p_value_text(test.p_value),
                "two levels": result.levels,
            }
        self.score(
            table=fidelity.TABLE,
            metric="Wasserstein distance to people",
            estimate=Estimate(result.test.distance, result.test.distance, result.test.upper, len(values))
            if result else Estimate(math.nan, math.nan, math.nan, 0),
            invalid=invalid,
            verdict=verdicts.faithful(result),
            criterion=fidelity.criterion(humans),
            columns=fidelity.COLUMNS,
            cells=cells,
            details={
                "choices": list(values),
                "humans": {"n": len(humans.values), "source": humans.source, "tolerance": humans.tolerance},
                **({"p_value": result.test.p_value, "test": result.test.statistic, "verdict": result.verdict,
                    "difference_of_means_90": result.difference.as_json(), "aggregate": result.aggregate,
                    "mean_margin": humans.mean_margin, "paradox": result.paradox, "levels": result.levels} if result else {}),
            },  # fmt: skip
            row={"choice": label},
            worse="up",
            verdict_label=result.verdict if result else "no valid choice",
        )
        return result

    def reference(self, *, table: str, label: str, cells: Mapping[str, str], source: str, status: str) -> None:
        """A row of human or benchmark figures to show under the models in ``table``."""
        self.collector.reference(ReferenceRow(table=table, label=label, cells=dict(cells), source=source, status=status))


def read_model_meta(path: Path) -> dict[str, Any]:
    """What ``model.json`` says of the model the cassettes beside it were recorded from."""
    meta = safejson.read_file(
        path, what="model description",
        remedy=f"restore it with `git checkout -- {path}`, or delete it and record again with --gaamas-record=all",
    )  # fmt: skip
    if not isinstance(meta, dict):
        raise UnreadableFile(f"{path}: not a model description (a JSON object); restore it with `git checkout -- {path}`")
    # Every field is text or null as written (the digest, the server, the version that recorded it): a
    # digest that is an object would be compared, shown and saved in the run log as one.
    wrong = [name for name, value in meta.items() if value is not None and not isinstance(value, str)]
    if wrong:
        named = ", ".join(repr(name[:40]) for name in wrong[:3]) + (f" and {len(wrong) - 3} more" * (len(wrong) > 3))
        raise UnreadableFile(
            f"{path}: not a model description: {named} {'is' if len(wrong) == 1 else 'are'} not text; restore it with "
            f"`git checkout -- {path}`, or delete it and record again with --gaamas-record=all"
        )
    return meta


def recorded_model(path: Path) -> tuple[dict[str, Any], str | None]:
    """What ``model.json`` says (nothing, when there is none), and why it cannot be read (None when
    it can): for a replay, which needs it only to say where its answers came from, and goes on."""
    if not os.path.lexists(path):
        return {}, None
    try:
        return read_model_meta(path), None
    except UnreadableFile as error:
        return {}, str(error)


def behaviour_name(item: pytest.Item) -> str:
    """``behaviours/test_garp_consistency.py`` -> ``garp_consistency``."""
    stem = Path(str(item.path)).stem
    return stem[len("test_"):] if stem.startswith("test_") else stem
