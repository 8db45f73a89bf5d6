"""The pytest wiring, and nothing else: options, model parametrization, the ``gaamas`` fixture, and
the tables and JSON made once, on the controller, from the scores every item (or xdist worker) reports.

A suite that requests neither ``gaamas`` nor ``gaamas_model`` sees no trace of the plugin.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import pytest

from . import cassettes, compare
from .cassettes import write_atomically
from .errors import UnwritableOutput, VerdictMissed
from .experiment import CASSETTE_PROPERTY, RECORDED_PROPERTY, REFERENCE_PROPERTY, SCORE_PROPERTY, Experiment
from .models import Model, resolve
from .provenance import run_provenance
from .report import TABLE_WIDTH, ReferenceRow, Score, build_tables
from .settings import Settings, add_options

STATE = pytest.StashKey["GaamasSession"]()
VERDICT_PROPERTY = "gaamas_verdict"
UNAVAILABLE_SKIP = " (found by an earlier item; its other items are skipped)"


class GaamasSession:
    """The session's models and collected scores; registered as a plugin for its hooks."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.settings = Settings.from_config(config)
        self.models: dict[str, Model] = {}
        self.scores: list[Score] = []
        self.references: list[ReferenceRow] = []
        self.started = datetime.now(timezone.utc)
        self.is_worker = hasattr(config, "workerinput")
        self.changes: list[compare.CellChange] = []
        self.compare_notes: list[str] = []
        self.saved_run: tuple = ()
        #: Outputs that could not be written, said at the end of the summary.
        self.errors: list[str] = []
        #: (test id, finding) for each item whose verdict was missed.
        self.findings: list[tuple[str, str]] = []
        #: Models found unreachable in this process: their further items are skipped, not failed.
        self.unavailable: dict[str, str] = {}
        #: Why a model was unreachable -> how many of its items were skipped for it (all processes).
        self.skipped_unavailable: dict[str, int] = {}
        #: Cassettes the items used, relative to the cassette folder.
        self.cassettes_used: set[str] = set()
        self.orphaned: list[str] = []
        self.cassette_notes: list[str] = []
        self.announced = False

    def model(self, spec: str) -> Model:
        if spec not in self.models:
            model = resolve(spec)
            model.max_tokens, model.think = self.settings.max_tokens, self.settings.think
            self.models[spec] = model
        return self.models[spec]

    def progress(self, line: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if self.is_worker or reporter is None or capture is None:
            return  # xdist workers have no terminal; the controller shows their items finishing
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"  gaamas: {line}")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        """A missed verdict is a finding: one line, no traceback; reported (MISSED) or failed as
        --gaamas-verdicts says."""
        outcome = yield
        if call.when != "call" or call.excinfo is None or not call.excinfo.errisinstance(VerdictMissed):
            return
        report = outcome.get_result()
        finding = str(call.excinfo.value)
        report.user_properties.append((VERDICT_PROPERTY, finding))
        if self.settings.verdicts == "report":
            report.outcome = "passed"
            report.longrepr = None
        else:
            report.longrepr = f"verdict: {finding}"

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config):
        if report.when == "call" and report.passed and any(name == VERDICT_PROPERTY for name, _ in report.user_properties):
            return "missed", "m", ("MISSED", {"yellow": True})
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and isinstance(report.longrepr, tuple) and report.longrepr[2].endswith(UNAVAILABLE_SKIP):
            reason = report.longrepr[2].removeprefix("Skipped: ").removesuffix(UNAVAILABLE_SKIP)
            self.skipped_unavailable[reason] = self.skipped_unavailable.get(reason, 0) + 1
        if report.when != "call":
            return
        for name, value in report.user_properties:
            if name == SCORE_PROPERTY:
                self.scores.append(Score.from_json(json.loads(value)))
            elif name == REFERENCE_PROPERTY:
                self.references.append(ReferenceRow(**json.loads(value)))
            elif name == VERDICT_PROPERTY:
                self.findings.append((report.nodeid, value))
            elif name == CASSETTE_PROPERTY:
                self.cassettes_used.add(value)
            elif name == RECORDED_PROPERTY:
                spec, count = json.loads(value)
                self.progress(f"{report.nodeid.split('::', 1)[-1]}: {count} exchanges recorded live from {spec}")

    def pytest_terminal_summary(self, terminalreporter) -> None:
        for error in self.errors:
            terminalreporter.write_line(f"gaamas: {error}", red=True, bold=True)
        for reason, count in sorted(self.skipped_unavailable.items()):
            terminalreporter.write_line(f"gaamas: {count} more item{'s' if count != 1 else ''} skipped, the model being unavailable: {reason}", yellow=True)
        if self.is_worker or not self.scores:
            return
        width = min(terminalreporter._tw.fullwidth, TABLE_WIDTH) if terminalreporter.isatty else TABLE_WIDTH
        for table in build_tables(self.scores, self.references, self.settings.models):
            terminalreporter.write_sep("=", f"gaamas: {table.title}")
            terminalreporter.write_line(table.render(width))
        if self.findings:
            mode = "failed" if self.settings.verdicts == "fail" else "reported, not failed: --gaamas-verdicts=fail fails them"
            count = f"{len(self.findings)} verdict{'s' if len(self.findings) != 1 else ''} not met"
            terminalreporter.write_sep("=", f"gaamas: {count} ({mode})")
            for test_id, finding in sorted(self.findings):
                line = f"MISSED {test_id.split('::', 1)[-1]}: {finding}"
                terminalreporter.write_line(textwrap.fill(line, width, subsequent_indent="    "))
        if self.settings.check_cassettes:
            self._report_cassette_check(terminalreporter)
        if self.saved_run:
            name, path = self.saved_run
            terminalreporter.write_line(f"gaamas: saved this run as {name!r} ({path})")
        if self.settings.compare:
            terminalreporter.write_sep("=", f"gaamas: compared with {self.settings.compare}")
            if self.changes:
                terminalreporter.write_line(compare.render(self.changes, width=width))
            for note in self.compare_notes:
                terminalreporter.write_line(f"gaamas: {note}")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.is_worker and any("gaamas" in getattr(item, "fixturenames", ()) for item in session.items):
            self._say_where_answers_come_from()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        """Under xdist the controller collects nothing; a worker's ids show the models' parameters."""
        if not self.announced and any(f"[{self.model(spec).test_id}" in nodeid for spec in self.settings.models for nodeid in ids):
            self._say_where_answers_come_from()

    def _say_where_answers_come_from(self) -> None:
        """Said before anything runs: where answers come from, and whether a request may go live."""
        self.announced = True
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        width = min(reporter._tw.fullwidth, TABLE_WIDTH)
        for line in self._answer_sources():
            reporter.write_line(textwrap.fill(line, width, subsequent_indent="    "))

    def _answer_sources(self) -> list[str]:
        lines = []
        for spec in self.settings.models:
            model = self.model(spec)
            if not model.uses_http:
                continue
            folder = self.settings.cassette_dir / (model.directory + self.settings.cassette_suffix)
            held = len(cassettes.held(self.settings.cassette_dir, folder))
            if self.settings.record == "none":
                how = "replay only: a request no cassette holds fails"
            elif self.settings.record == "all":
                how = "--gaamas-record=all: every request goes live to the model and is recorded afresh"
            else:
                how = ("anything not recorded there is asked live from the model and recorded "
                       "(--gaamas-record=once; --gaamas-record=none replays only)")  # fmt: skip
            lines.append(f"gaamas: {spec}: {held} cassettes in {folder}; {how}")
        return lines

    def _check_cassettes(self, session: pytest.Session) -> None:
        """Every cassette of the models run that no item used: a rename must not orphan recordings silently."""
        for spec in self.settings.models:
            model = self.model(spec)
            if not model.uses_http:
                continue
            folder = self.settings.cassette_dir / (model.directory + self.settings.cassette_suffix)
            on_disk = cassettes.held(self.settings.cassette_dir, folder)
            orphaned = sorted(on_disk - self.cassettes_used)
            self.orphaned += orphaned
            self.cassette_notes.append(
                f"{spec}: {len(on_disk & self.cassettes_used)} of {len(on_disk)} cassettes used"
                + (f"; {len(orphaned)} used by no item (a renamed test or reordered parameters?):" if orphaned else "")
            )
            self.cassette_notes += [f"    {name}" for name in orphaned]
        if self.orphaned:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _report_cassette_check(self, terminalreporter) -> None:
        terminalreporter.write_sep("=", "gaamas: cassette check")
        for line in self.cassette_notes:
            terminalreporter.write_line(line)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        try:
            if not self.is_worker and self.settings.check_cassettes:
                self._check_cassettes(session)
            if not self.is_worker and self.scores:
                document = self._document()
                if self.settings.compare:
                    self._compare(session, document)
                    document["comparison"] = {"with": self.settings.compare, "notes": self.compare_notes,
                                              "cells": [c.to_json() for c in self.changes]}  # fmt: skip
                if self.settings.json_path:
                    self._write(session, self.settings.json_path, document)
                if self.settings.save:
                    path = compare.saved_path(self.settings.save, self.settings.runs_dir)
                    if self._write(session, path, document):
                        self.saved_run = (self.settings.save, path)
        finally:
            for model in self.models.values():
                model.close()

    def _compare(self, session: pytest.Session, document: dict) -> None:
        settings = self.settings
        try:
            path, saved = compare.load_run(settings.compare, settings.runs_dir)
            self.changes = compare.compare(saved["scores"], self.scores, settings.allowed_drops)
        except compare.CompareError as error:
            self.compare_notes.append(f"cannot compare: {error}")
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            return
        self.compare_notes += compare.digest_changes(saved.get("run", {}), document["run"])
        tested = [c for c in self.changes if not math.isnan(c.p_value)]
        self.compare_notes.append(
            f"{len(self.changes)} cells paired with {path}, {len(tested)} tested; Holm-adjusted over those {len(tested)}"
        )
        dropped = [c for c in self.changes if c.dropped]
        if dropped:
            self.compare_notes += [
                f"DROP {c.behaviour} {c.cell} ({c.models}): {c.old.score:.3g} -> {c.new.score:.3g}, worse by "
                f"{c.worse_by:.3g} > allowed {c.allowed_drop:g}, p (Holm) = {c.p_adjusted:.2g}"
                for c in dropped
            ]
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        elif settings.allowed_drops:
            self.compare_notes.append("no cell dropped significantly by more than allowed")

    def _document(self) -> dict:
        return {
            "run": run_provenance(self, finished=datetime.now(timezone.utc)),
            "scores": [s.to_json() for s in sorted(self.scores, key=lambda s: s.test_id)],
            "references": [r.to_json() for r in sorted(self.references, key=lambda r: (r.table, r.label))],
            "tables": [t.to_json() for t in build_tables(self.scores, self.references, self.settings.models)],
        }

    def _write(self, session: pytest.Session, path, document: dict) -> bool:
        """The run's document at ``path``, whole or not at all. If it cannot be written there, it is
        written to a file in the temporary folder instead, the session fails, and the summary says where."""
        text = json.dumps(document, indent=2) + "\n"
        try:
            write_atomically(path, text, what="run")
            return True
        except UnwritableOutput as error:
            fallback = Path(tempfile.gettempdir()) / f"gaamas-run-{self.started:%Y%m%dT%H%M%S}-{os.getpid()}.json"
            try:
                write_atomically(fallback, text, what="run")
                kept = f"the run is kept in {fallback}"
            except UnwritableOutput:
                kept = "and it could not be kept elsewhere either"
            self.errors.append(f"{error}: {kept}")
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return False


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    session = GaamasSession(config)
    config.stash[STATE] = session
    config.pluginmanager.register(session, "gaamas-session")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "gaamas_model" not in metafunc.fixturenames:
        return
    session = metafunc.config.stash[STATE]
    specs = session.settings.models
    metafunc.parametrize("gaamas_model", specs, ids=[session.model(s).test_id for s in specs])


@pytest.fixture
def gaamas(request: pytest.FixtureRequest, gaamas_model: str) -> Experiment:
    """The experiment of this test item: its model, its settings, ``play`` and ``score``."""
    session = request.config.stash[STATE]
    if gaamas_model in session.unavailable:
        pytest.skip(f"{session.unavailable[gaamas_model]}{UNAVAILABLE_SKIP}")
    return Experiment(session.settings, session.model(gaamas_model), request.node, session.progress, session.unavailable)
