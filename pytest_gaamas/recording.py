"""An item's games, played: recorded into its cassette, journaled trial by trial, resumed from the
journal after a crash, replayed once a process for the items that share cells, and, in strategy mode,
the model's function run in the sandbox. What ``Experiment.play`` hands over to."""

from __future__ import annotations

import contextlib
import json
import time
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from . import cassettes, runlog
from .errors import GaamasError, MissingCassette, ModelUnavailable, NotRecordedYet, UnwritableOutput
from .heartbeat import Beating, Heartbeat
from .journal import Journal
from .model_meta import check_unchanged, write_model_meta
from .models import Model
from .models.base import file_name, slug
from .models.reference import EVERY_GAME, READERS, SHORTCUTS
from .play import Game, TrialRecord, cell_seed, fingerprint, play_trial
from .redact import redact_text
from .sandbox import SandboxUnavailable
from .settings import Settings
from .strategy import StrategyRequest, StrategyResult, no_strategy
from .strategy_run import run_strategy
from .trials import play_trials

#: How many exchanges an item recorded live, said by the controller as the item finishes.
RECORDED_PROPERTY = "gaamas_recorded"
PROGRESS_EVERY_S = 5.0


@dataclass
class ItemPaths:
    cassette: Path
    #: The journal's stem: its file adds the fingerprint of model, game, seed and temperature.
    journal: Path
    model_meta: Path
    #: The cassette is another item's, shared by a criterion that spans cells.
    shared: bool = False


class Recorder:
    """Where an item's games are recorded and journaled, and their playing."""

    def __init__(
        self, settings: Settings, model: Model, item: pytest.Item, behaviour: str, variant: dict[str, Any],
        progress: Callable[[str], None], unavailable: dict[str, str], collector: runlog.Collector,
        replayed: dict[tuple[Any, ...], list[TrialRecord]],
    ) -> None:  # fmt: skip
        self.settings, self.model, self.item, self.behaviour, self.variant = settings, model, item, behaviour, variant
        self._progress = progress
        #: Model spec -> why it cannot be reached, shared by the session's items.
        self.unavailable = unavailable
        #: Where the games played go, for the run log.
        self.collector = collector
        #: The records of each game already replayed whole from a cassette in this process (replay only,
        #: or a cassette that answered every request), so that a criterion over cells reads them instead
        #: of replaying every exchange again.
        self.replayed = replayed
        #: Exchanges the last cassette opened took live from the model.
        self.recorded_live = 0
        #: A later look of the cell's sequential design is playing: an answer a replay does not hold
        #: ends the design at the look before it (``NotRecordedYet``), instead of failing the item.
        self.extending = False
        #: Why answers were unusable -> how many, over every game this item played.
        self.invalid_reasons: dict[str, int] = {}
        #: The strategy and how it fared, in strategy mode.
        self.strategy: StrategyResult | None = None

    @property
    def seed(self) -> int:
        return self.settings.seed

    def paths(
        self, recorded_as: str | None = None, variant: Mapping[str, Any] | None = None, compressed: bool = False,
        named: Mapping[str, Any] | None = None,
    ) -> ItemPaths:  # fmt: skip
        """Where this item's exchanges are recorded and its trials journaled (``item_paths``)."""
        return item_paths(self.settings, self.model, self.item, self.behaviour, self.variant if named is None else named,
                          recorded_as=recorded_as, variant=variant, compressed=compressed)  # fmt: skip

    def play(self, game: Game, trials: int, *, temperature: float, generation: str, recorded_as: str | None,
             variant: Mapping[str, Any] | None, compressed: bool, named: Mapping[str, Any] | None) -> list[TrialRecord]:  # fmt: skip
        """``Experiment.play``: the game played, or this item skipped where its model plays no such game."""
        paths = self.paths(recorded_as, variant, compressed, named)
        kind = self.reference_kind
        if kind is not None and kind not in SHORTCUTS and kind not in READERS and kind not in getattr(game, "reference_kinds", EVERY_GAME):
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
        strategy: runlog.Strategy | None = None
        if asked is not None and self.strategy is not None:
            strategy = typing.cast(runlog.Strategy, {**self.strategy.to_json(), "request": dict(vars(asked.rounds[0])) if asked.rounds else None})
        play = runlog.Play(
            id=play_id, behaviour=self.behaviour, model=self.model.spec, game=getattr(game, "name", type(game).__name__),
            game_fingerprint=game_fingerprint, generation=generation, seed=self.seed, temperature=temperature,
            trials=[typing.cast(runlog.Trial, r.to_json()) for r in records], strategy=strategy,
        )  # fmt: skip
        item = runlog.ItemLog(self.item.nodeid, self.behaviour, self.model.spec, {"generation": "actions", **self.variant})
        self.collector.play(item, play)

    def _play_strategy(self, game: Game, trials: int, temperature: float, paths: ItemPaths) -> tuple[list[TrialRecord], TrialRecord]:
        if not callable(getattr(game, "strategy", None)):
            pytest.fail(f"gaamas.play(..., generation='strategy'): {type(game).__name__} has no strategy(), the Contract a strategy "
                        "is asked by: give the game one (docs/writing-a-behaviour.md, \"The same game played by a strategy\"), "
                        "or play it with generation='actions' alone", pytrace=False)  # fmt: skip
        contract = game.strategy()  # type: ignore[attr-defined]  # checked just above
        kind = self.reference_kind
        readable = kind in READERS and {"rational", "random"} <= set(contract.references)
        if kind is not None and kind not in contract.references and not readable:
            why = {
                "human": "people's choices are data, not code; no human strategies exist",
                **dict.fromkeys(SHORTCUTS, "it answers an answer form, and a strategy request has none: it writes no code"),
            }.get(kind, "it writes no strategy")
            pytest.skip(f"{self.model.spec}: {why}")
        asked = self._play_recorded(StrategyRequest(contract), 1, temperature, paths)[0]  # type: ignore[arg-type]  # a game of one request
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
        elif self.settings.record != "all":
            replay_key = (str(paths.cassette), played_as, trials)
        else:
            replay_key = None
        if replay_key in self.replayed:
            if self.model.uses_http:
                self.collector.cassette(paths.cassette.relative_to(self.settings.cassette_dir).as_posix())
            records = list(self.replayed[replay_key])
        else:
            self.recorded_live = 0
            records = self._play_journaled(game, trials, temperature, paths, played_as)
            if replay_key is not None and not self.recorded_live:  # what went live is read from its cassette next time
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
        not_recorded: NotRecordedYet | None = None
        try:
            # Replay only asks no one, so it has nothing to journal, nor has `once` where the cassette
            # exists (it only replays it); a journal a live run left stays for the next run that
            # records, which puts its exchanges into the cassette.
            if self.settings.record != "none" and not (self.settings.record == "once" and paths.cassette.exists()):
                journal = Journal(paths.journal, played_as, self._waiting_for(paths.journal))
            with self._recording(paths) as tape:
                rebuilt = rebuilt_from_journal(self.model, game, journal, tape, seed=self.seed, temperature=temperature) if journal is not None else {}
                for trial in rebuilt:  # answered before a crash: into the cassette
                    assert journal is not None
                    cassettes.restore(tape, journal.finished[trial].exchanges)
                start = len(tape.data) if tape is not None else 0
                played: list[TrialRecord] = []
                journal_failed = False

                def finished(record: TrialRecord) -> None:
                    nonlocal last_report, journal_failed
                    played.append(record)
                    if journal is not None and not journal_failed:
                        seeds = {r.seed for r in record.rounds}
                        try:
                            journal.write(record, cassettes.exchanges_of(tape, seeds, start) if tape is not None else [])
                        except UnwritableOutput:
                            # No new trial starts; what was answered, and what those running answer, goes
                            # into the cassette instead, whatever the record mode.
                            journal_failed = True
                            if tape is not None:
                                cassettes.unjournaled(tape)
                            raise
                    if time.monotonic() - last_report >= PROGRESS_EVERY_S:
                        last_report = time.monotonic()
                        invalid = sum(not r.valid for r in played)
                        self._progress(
                            f"{self.item.name}: {len(rebuilt) + len(played)}/{trials} trials, {invalid} invalid, "
                            f"{last_report - started:.0f} s"
                        )

                with Heartbeat(self._progress, f"{self.item.name}: {self.model.spec}", timeout=self.model.timeout) as heartbeat:
                    fresh = play_trials(
                        game, Beating(cassettes.replayer(self.model, tape), heartbeat), [t for t in range(trials) if t not in rebuilt],
                        seed=self.seed, temperature=temperature, concurrency=self.concurrency, finished=finished,
                        stopping=lambda running: self._progress(
                            f"{self.item.name}: interrupted; the {running} trials running finish and are journaled "
                            "(Ctrl-C again stops them now, and loses them)"),
                    )  # fmt: skip
                by_trial = {r.trial: r for r in fresh} | {t: record for t, record in rebuilt.items() if t < trials}
                records = [by_trial[t] for t in range(trials)]
                if tape is not None and self.concurrency > 1:
                    cassettes.in_trial_order(tape, [r.seed for record in fresh for r in record.rounds], start)
            complete = True
        except GaamasError as error:
            if self.extending and isinstance(error, MissingCassette):  # a later look the recordings do not hold: the look before stands
                not_recorded = NotRecordedYet(f"{trials} trials are not all recorded")
            else:
                failure = f"{self.model.spec}: {redact_text(str(error), limit=None)}"
                if isinstance(error, ModelUnavailable):
                    self.unavailable[self.model.spec] = failure  # the model's other items are skipped with it
        finally:
            if journal is not None:
                journal.close(complete=complete)
        if failure is not None:
            pytest.fail(failure, pytrace=False)  # outside the handler: no "during handling" chain under xdist
        if not_recorded is not None:
            raise not_recorded
        return records

    @contextlib.contextmanager
    def _recording(self, paths: ItemPaths) -> Iterator[Any]:
        """The item's cassette (None for agents without a server), written when the block ends."""
        if not self.model.uses_http:
            yield None
            return
        mode = self.settings.record
        if mode == "all" and paths.shared:
            mode = "new_episodes"  # re-recording a shared cell is its own item's job; a criterion over cells replays it
        if mode == "none" and not paths.cassette.exists():
            raise MissingCassette(
                f"replay only, and there is no cassette {paths.cassette} for {self.item.name}: "
                "record it with --gaamas-record=new_episodes (the default outside CI)"
            )
        check_unchanged(paths.model_meta, self.model, self.settings.record)
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
        self.recorded_live = recorded
        if recorded:
            self.item.user_properties.append((RECORDED_PROPERTY, json.dumps([self.model.spec, recorded])))
            write_model_meta(paths.model_meta, self.model)

    def _waiting_for(self, path: Path) -> Callable[[], None]:
        """What to say when another process is writing ``path`` and this item waits for it."""
        return lambda: self._progress(f"{self.item.name}: waits while another item or run writes {path}")

    @property
    def reference_kind(self) -> str | None:
        """``human`` for ``reference:human``; None for a model."""
        return self.model.spec.removeprefix("reference:") if self.model.spec.startswith("reference:") else None

    @property
    def concurrency(self) -> int:
        """Trials played at once: --gaamas-concurrency, else what the model's server is good for."""
        return self.settings.concurrency or self.model.default_concurrency


def rebuilt_from_journal(model: Model, game: Game, journal: Journal, tape, *, seed: int, temperature: float) -> dict[int, TrialRecord]:
    """The trials the journal holds, each played again through the game from the exchanges
    recorded with it, and from nothing else: what a line says of its trial is never read. A trial
    whose exchanges do not carry it to its end is left out, to be played again, and so is every
    trial of an agent without a server (``tape`` None), which recorded no exchange."""
    rebuilt = {}
    with model.replaying():  # answered before: not a live request, nothing taken from the budget
        for trial, entry in journal.finished.items() if tape is not None else ():
            try:
                with cassettes.replaying(entry.exchanges) as held:
                    rebuilt[trial] = play_trial(game, cassettes.replayer(model, held), trial, seed=seed, temperature=temperature)
            except Exception:  # whatever a journal's exchanges make the model or the game raise
                continue
    journal.keep(rebuilt)
    return rebuilt


#: Parameter values the shipped cassettes were recorded under, whose names keep the spelling ``slug``
#: gave them before names told every value apart: each slugs to a name of its own, with a '-' where
#: a name ``item_file_name`` gives no other value has one (tests/test_lost_names.py checks it).
RECORDED_BEFORE = frozenset({
    "Coop. Loss", "MP alternate", "MP constant", "RPS 2-loop", "RPS 3-loop", "RPS constant", "actions + CR", "actions + ano",
    "responder threshold", "all modules", "light punishment", "no group decision", "no punishment", "no social learning",
    "a group decision alone suffices", "altruistic societies outlive mixed ones where fish are scarce",
    "cooperation depends on regeneration: the rich lake outlives the harsh one",
    "mixed societies outlive altruistic ones where fish are plenty", "punishment sustains the commons (heavy: a meal)",
    "punishment sustains the commons (light: half a meal)", "social learning alone is worse than neither",
    "with selfish starts the group decision alone outlives the full system",
    "without social learning and group decision the society collapses sooner",
    "R2 S-1 T3 P1", "R2 S-4 T3 P1", "R2 S0 T3 P1", "R9 S-4 T10 P5",
})  # fmt: skip


def item_file_name(stem: str, values: Iterable[Any]) -> str:
    """The name of an item's cassette or journal: its test function's, then its parameters' values,
    each by its ``slug``, all joined by '-'. Where a value's slug could be another's (it lost a
    character, or holds a '-' that joining makes ambiguous) or the name grows long, a digest of the
    exact values follows (``file_name``): no two items' values share a file, and none passes 255
    bytes with the journal's affixes."""
    texts = [str(v) for v in values]
    readable = "-".join([slug(stem), *(slug(text) for text in texts)])
    plain = slug(stem) == stem and all((slug(text) == text and "-" not in text) or text in RECORDED_BEFORE for text in texts)
    return file_name(readable, [stem, texts], unambiguous=plain)


def item_paths(settings: Settings, model: Model, item: pytest.Item, behaviour: str, naming: Mapping[str, Any], *,
               recorded_as: str | None, variant: Mapping[str, Any] | None, compressed: bool) -> ItemPaths:  # fmt: skip
    """Where this item's exchanges are recorded and its trials journaled. ``recorded_as`` (a test
    function of this behaviour) and ``variant`` name another item whose cassette to share: the
    same game, seed and temperature make the same requests, so a criterion that spans several
    cells replays them instead of asking the model again. The journal stays this item's own.
    ``compressed``: the cassette is gzip-compressed YAML, ``<item>.yaml.gz`` (``zcat`` shows it).
    ``naming``: the parameters whose values name this item's own files, in order (all of them by
    default), so that a parameter added later can leave the recordings made before it where they
    are: ``variant`` then names the other item's the same way."""
    own_stem = item.originalname if hasattr(item, "originalname") else item.name
    own = item_file_name(own_stem, naming.values())
    recorded = item_file_name(recorded_as or own_stem, (naming if variant is None else variant).values())
    model_dir = model.directory + settings.cassette_suffix
    journal = own if recorded == own else f"{own}--{recorded}"
    return ItemPaths(
        cassette=settings.cassette_dir / model_dir / behaviour / f"{recorded}.yaml{'.gz' if compressed else ''}",
        journal=settings.journal_dir / model_dir / behaviour / journal,
        model_meta=settings.cassette_dir / model.directory / "model.json",
        shared=recorded != own,
    )
