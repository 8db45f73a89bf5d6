"""The session's state, and its end: the one run record (``runlog.RunLog``) every output is drawn
from. The hooks of ``pytest_gaamas.plugin`` hand over to a ``Session``; it owns the models, the
collector the items fill, what their reports said, and, on the controller, the record, the gate's
decision and what was written."""

from __future__ import annotations

import collections
import functools
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from .. import compare, gate, inert, null_runs, runlog
from ..experiment import RECORDED_PROPERTY, Experiment
from ..models import Model, resolve
from ..models.base import THINKING_TOKENS
from ..play import Request
from ..provenance import run_provenance
from ..report import build_tables
from ..settings import Settings
from ..strategy import STRATEGY_REPLY_TOKENS
from . import cassette_check, outputs, xdist
from .findings import VERDICT_OF_PROPERTY, Finding, reported_verdict

UNAVAILABLE_SKIP = " (found by an earlier item; its other items are skipped)"
#: The key of a worker's deselected items in xdist's ``workeroutput``: under xdist, the workers select.
DESELECTED_OUTPUT = "gaamas_deselected"


@dataclass
class Ending:
    """What the session's end came to, which only the hook turns into an exit status."""

    #: Cassettes no item used, under --gaamas-check-cassettes.
    orphaned: bool = False
    #: The gate's decision, under --gaamas-compare.
    decision: gate.Decision | None = None
    #: An output (the run log, the report, the summary) that could not be written.
    unwritten: bool = False


def reply_tokens_most(model: Model, request: Request | None) -> int:
    """The most tokens ``model``'s reply to ``request`` may take; where the request is not known,
    the larger of the two defaults (a strategy's), or --gaamas-max-tokens."""
    if request is not None:
        return model.token_budget(request)
    return model.max_tokens or STRATEGY_REPLY_TOKENS + (THINKING_TOKENS if model.thinks else 0)


@dataclass
class Session:
    """The session's models, collected scores and item outcomes; on the controller, its record."""

    config: pytest.Config
    settings: Settings
    models: dict[str, Model] = field(default_factory=dict)
    #: Scores, reference rows and games played: this process's, and on the controller every worker's.
    collected: runlog.Collector = field(default_factory=runlog.Collector)
    #: Test id -> passed, missed, failed or skipped, for the run log.
    outcomes: dict[str, str] = field(default_factory=dict)
    started: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    #: Workers that crashed without sending their scores, said at the end of the summary.
    errors: list[str] = field(default_factory=list)
    #: (test id, verdict, finding) for each item whose criterion was missed, at chance or inconclusive.
    findings: list[Finding] = field(default_factory=list)
    #: Models found unreachable in this process: their further items are skipped, not failed.
    unavailable: dict[str, str] = field(default_factory=dict)
    #: Games already replayed in this process, for the items that replay another item's cells.
    replayed: dict[tuple[Any, ...], list[Any]] = field(default_factory=dict)
    #: Why a model was unreachable -> how many of its items were skipped for it (all processes).
    skipped_unavailable: dict[str, int] = field(default_factory=dict)
    #: The files whose items this run collected (on the controller too, under xdist).
    collected_files: set[str] = field(default_factory=set)
    announced: bool = False
    #: (test function's node id, model spec) -> its items, every one its parametrisation makes:
    #: the size of the table whose cells are judged as one family (``verdicts.table_family``).
    table_sizes: dict[tuple[str, str], int] = field(default_factory=dict)
    #: The session's end, on the controller: the record, the gate's decision, the cassettes' check.
    record: runlog.RunLog | None = None
    ending: Ending = field(default_factory=Ending)
    written: outputs.Written = field(default_factory=outputs.Written)
    cassettes: cassette_check.CassetteCheck | None = None
    #: The items this run's selection deselected (-k, -m, --deselect), as [model, test function, parameters];
    #: on the controller under xdist, every worker's.
    deselected_items: list[list[Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.is_worker = xdist.is_worker(self.config)
        self.request_budget = xdist.request_budget(self.config, self.settings.max_requests, self.settings.budget)
        self.relay = xdist.progress_relay(self.config, self._write_progress)

    @classmethod
    def of(cls, config: pytest.Config) -> Session:
        return cls(config, Settings.from_config(config))

    def model(self, spec: str) -> Model:
        if spec not in self.models:
            model = resolve(spec)
            model.max_tokens, model.think, model.retries = self.settings.max_tokens, self.settings.think, self.settings.retries
            model.timeout = self.settings.timeout
            model.request_budget = self.request_budget
            price, budget = self.settings.prices.get(spec), self.request_budget
            if price is not None and budget is not None and budget.dollars is not None:
                model.request_budget = budget.priced(spec, price, functools.partial(reply_tokens_most, model), patience=model.timeout,
                                                     say=self.progress)  # fmt: skip
                model.usage.meter = model.request_budget.charged
            self.models[spec] = model
        return self.models[spec]

    def progress(self, line: str) -> None:
        """A line said while the run goes: by an xdist worker, which has no terminal, through the
        relay the controller reads (named by the worker's id)."""
        if not self.is_worker:
            self._write_progress(line)
        elif self.relay is not None:
            self.relay.send(f"[{self.config.workerinput['workerid']}] {line}")  # type: ignore[attr-defined]

    def _write_progress(self, line: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if reporter is None or capture is None:
            return
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"  gaamas: {inert.terminal(line)}")

    # -- items --------------------------------------------------------------------------------------

    def count_table(self, metafunc: pytest.Metafunc) -> None:
        """Count the cells of each test function's table for each model, once every parametrisation
        is made and before any is selected: choosing items by -k, by node id or by xdist's
        distribution never changes the family a cell is judged in."""
        if "gaamas_model" not in metafunc.fixturenames:
            return
        sizes = collections.Counter(call.params.get("gaamas_model") for call in metafunc._calls)
        for spec, size in sizes.items():
            self.table_sizes[(metafunc.definition.nodeid, str(spec))] = size

    def table_size(self, item: pytest.Item, spec: str) -> int:
        """The cells of ``item``'s table for the model ``spec``: its test function's items for it."""
        definition = getattr(item, "_pyfuncitem", item).nodeid.split("[", 1)[0]
        return self.table_sizes.get((definition, spec), 1)

    def experiment(self, item: pytest.Item, spec: str) -> Experiment:
        """The ``gaamas`` fixture's value for ``item`` and the model ``spec``; skipped where an earlier
        item found the model unavailable."""
        if spec in self.unavailable:
            pytest.skip(f"{self.unavailable[spec]}{UNAVAILABLE_SKIP}")
        return Experiment(self.settings, self.model(spec), item, self.progress, self.unavailable, self.collected, self.replayed,
                          self.table_size(item, spec))  # fmt: skip

    def logreport(self, report: pytest.TestReport) -> None:
        """An item's outcome, its finding and the exchanges it recorded live, as its report says."""
        if report.skipped and isinstance(report.longrepr, tuple) and report.longrepr[2].endswith(UNAVAILABLE_SKIP):
            reason = report.longrepr[2].removeprefix("Skipped: ").removesuffix(UNAVAILABLE_SKIP)
            self.skipped_unavailable[reason] = self.skipped_unavailable.get(reason, 0) + 1
        if report.failed or report.skipped or report.when == "call":
            not_met = reported_verdict(report)
            outcome = "failed" if report.failed else not_met.value if not_met else "skipped" if report.skipped else "passed"
            if self.outcomes.get(report.nodeid) != "failed":  # a teardown error after a pass is a failure
                self.outcomes[report.nodeid] = outcome
        if report.when != "call":
            return
        for name, value in report.user_properties:
            if name in VERDICT_OF_PROPERTY:
                self.findings.append((report.nodeid, VERDICT_OF_PROPERTY[name], str(value)))
            elif name == RECORDED_PROPERTY:
                spec, count = json.loads(str(value))
                self.progress(f"{report.nodeid.split('::', 1)[-1]}: {count} exchanges recorded live from {spec}")

    def deselected(self, items: list[pytest.Item]) -> None:
        """Items left out by -k, -m or --deselect: a saved run's cells of theirs are said to be deselected."""
        for item in items:
            params = item.callspec.params if hasattr(item, "callspec") else {}
            if "gaamas_model" in params:
                kept = {k: str(v) for k, v in params.items() if k != "gaamas_model" and isinstance(v, (str, int, float, bool))}
                self.deselected_items.append([str(params["gaamas_model"]), item.nodeid.split("[", 1)[0], kept])

    def collected_items(self, items: list[pytest.Item]) -> list[str] | None:
        """The files this process's items are in; on the controller, where answers come from, to be
        said before anything runs, where an item asks for the ``gaamas`` fixture (None: nothing to say)."""
        self.collected_files |= {item.nodeid.split("::", 1)[0] for item in items}
        if self.is_worker or not any("gaamas" in getattr(item, "fixturenames", ()) for item in items):
            return None
        return self._answer_sources()

    def worker_collected(self, ids: list[str]) -> list[str] | None:
        """Under xdist the controller collects nothing: a worker's ids show the files, and the models'
        parameters in them say that where answers come from is to be said, once."""
        self.collected_files |= {nodeid.split("::", 1)[0] for nodeid in ids}
        if self.announced or not any(f"[{self.model(spec).test_id}" in nodeid for spec in self.settings.models for nodeid in ids):
            return None
        return self._answer_sources()

    def _answer_sources(self) -> list[str]:
        self.announced = True
        return cassette_check.answer_sources(self.settings, {spec: self.model(spec) for spec in self.settings.models})

    def worker_finished(self, node: Any, error: object) -> None:
        crash = xdist.receive(node, error, self.collected)
        if crash:
            self.errors.append(crash)
        self.deselected_items += json.loads(getattr(node, "workeroutput", {}).get(DESELECTED_OUTPUT, "[]"))

    # -- the end --------------------------------------------------------------------------------------

    def finish(self) -> Ending:
        """On a worker, its results sent; on the controller, the cassettes checked, the one record made
        from everything collected, the gate's decision on it, and the files drawn from it written."""
        for spec, model in self.models.items():
            if model.usage:
                self.collected.add_usage(spec, model.usage.to_json())
        if self.relay is not None and not self.is_worker:
            self.relay.close()  # the workers are done: their last lines said before the summary
        if self.is_worker:
            xdist.send(self.config, self.collected, plays=self.settings.keeps_run_log)
            self.config.workeroutput[DESELECTED_OUTPUT] = json.dumps(self.deselected_items)  # type: ignore[attr-defined]
            return self.ending
        if self.settings.check_cassettes:
            self.cassettes = cassette_check.check(self.settings, {spec: self.model(spec) for spec in self.settings.models},
                                                  self.collected.cassettes_used, self.collected_files, self.config.rootpath)  # fmt: skip
            self.ending.orphaned = bool(self.cassettes.orphaned)
        if not self.collected.scores:
            return self.ending
        if not self.settings.keeps_run_log:  # no file to write, nothing to compare: the summary's record alone
            self.record = runlog.unwritten(run=self._run(), collector=self.collected, outcomes=self.outcomes, findings=self.findings,
                                           null_rates=self.null_rates)  # fmt: skip
            return self.ending
        document = self._document()
        self.record = record = runlog.record(document)
        if self.settings.compare:
            self.ending.decision = self._decide(record)
            document["comparison"] = runlog.finite(self.ending.decision.to_json())
            record.comparison = json.loads(json.dumps(document["comparison"]))  # as a reading of the file holds it
        self.written = outputs.write(self.settings, document, record, self.started)
        self.ending.unwritten = self.written.failed
        return self.ending

    def remove_budget(self) -> None:
        """The files the controller shares with its workers, the request cap's counter, the spend's
        ledger and the progress relay, gone with the session."""
        if self.relay is not None and not self.is_worker:
            self.relay.close()
        if self.request_budget is not None and not self.is_worker:
            self.request_budget.path.unlink(missing_ok=True)
            self.request_budget.ledger.unlink(missing_ok=True)

    def _decide(self, record: runlog.RunLog) -> gate.Decision:
        against = str(self.settings.compare)
        try:
            path, saved = compare.load_run(against, self.settings.runs_dir)
        except compare.CompareError as error:
            return gate.refused(against, str(error))
        return gate.decide(saved, record, against=against, saved_path=path, allowed_drops=self.settings.allowed_drops,
                           selection=self.selection())  # fmt: skip

    def selection(self) -> compare.Selection:
        """What this run's selection left out: the items deselected, and the node ids it was given."""
        deselected = frozenset((model, test, frozenset(params.items())) for model, test, params in self.deselected_items)
        arguments = [argument.split("::", 1) for argument in self.config.args]
        if not any(len(parts) == 2 for parts in arguments):
            return compare.Selection(deselected)
        root, here = Path(self.config.rootpath).resolve(), Path(self.config.invocation_params.dir)
        named = []
        for path, *rest in arguments:
            where = (here / path).resolve()
            relative = where.relative_to(root).as_posix() if where.is_relative_to(root) else path
            named.append("::".join([relative, *rest]) if relative != "." else "")
        return compare.Selection(deselected, tuple(named))

    @functools.cached_property
    def null_rates(self) -> dict[str, Any]:
        """What agents that never read the game earn in this run's tables (the shipped figures), each
        marked stale where the behaviour file this run played has changed since they were measured."""
        files = {self.settings.behaviour_file(Path(self.config.rootpath), s.test_id) for s in self.collected.scores}
        digests = null_runs.behaviour_digests(path for path in files if path.is_file())
        return null_runs.for_tables({s.table for s in self.collected.scores}, digests)

    def _run(self) -> dict[str, Any]:
        """The run's provenance; a server is asked for its digest only where a file will keep it."""
        settings = self.settings
        return run_provenance(settings, {spec: self.model(spec) for spec in settings.models}, self.collected.usage,
                              started=self.started, finished=datetime.now(timezone.utc), ask_models=settings.keeps_run_log)  # fmt: skip

    def _document(self) -> dict[str, Any]:
        collected, settings = self.collected, self.settings
        return runlog.document(
            run=self._run(),
            collector=collected,
            tables=[t.to_json() for t in build_tables(collected.scores, collected.references, settings.models, self.null_rates)],
            outcomes=self.outcomes,
            findings=self.findings,
            null_rates=self.null_rates,
        )
