"""The pytest wiring, and nothing else: options, model parametrization, the ``gaamas`` fixture, and
the tables and JSON made once, on the controller, from the scores every item (or xdist worker) reports.

A suite that requests neither ``gaamas`` nor ``gaamas_model`` sees no trace of the plugin.
"""

from __future__ import annotations

import collections
import functools
import importlib
import json
import math
import os
import tempfile
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import pytest

from . import beside_pytest_recording  # noqa: F401  (first: before anything imports vcrpy)
from . import cassettes, compare, inert, null_runs, runlog
from .cassettes import write_atomically
from .errors import UnwritableOutput, VerdictNotMet
from .experiment import RECORDED_PROPERTY, Experiment, recorded_model
from .models import Model, resolve
from .provenance import run_provenance
from .report import NBSP, TABLE_WIDTH, Table, build_tables
from .settings import Settings, add_options
from .usage import RequestBudget
from .verdicts import AT_CHANCE, INCONCLUSIVE, MISSED, NOT_MET, Verdict

STATE = pytest.StashKey["GaamasSession"]()
#: The user property that carries an item's finding, by its verdict.
VERDICT_PROPERTY = "gaamas_verdict"
INCONCLUSIVE_PROPERTY = "gaamas_inconclusive"
AT_CHANCE_PROPERTY = "gaamas_at_chance"
VERDICT_OF_PROPERTY = {VERDICT_PROPERTY: MISSED, AT_CHANCE_PROPERTY: AT_CHANCE, INCONCLUSIVE_PROPERTY: INCONCLUSIVE}
PROPERTY_OF_VERDICT = {verdict: name for name, verdict in VERDICT_OF_PROPERTY.items()}
#: The verdicts each --gaamas-verdicts mode fails an item for; the others are reported. At chance shows
#: the criterion not met, as missed does: ``fail`` fails both.
FAILED_VERDICTS = {"report": (), "fail": (MISSED, AT_CHANCE), "fail-inconclusive": (MISSED, AT_CHANCE, INCONCLUSIVE)}
#: The value of --gaamas-verdicts that fails each verdict.
FAILED_FROM = {MISSED: "--gaamas-verdicts=fail", AT_CHANCE: "--gaamas-verdicts=fail", INCONCLUSIVE: "--gaamas-verdicts=fail-inconclusive"}
#: The key of a worker's results in xdist's ``workeroutput``.
WORKER_OUTPUT = "gaamas"
#: The key of the request cap's counter file in xdist's ``workerinput``.
REQUEST_COUNTER = "gaamas_request_counter"
UNAVAILABLE_SKIP = " (found by an earlier item; its other items are skipped)"
#: Findings listed one by one without -v: about a screenful. Past it, a line per test function
#: counts them, as pytest cuts a long diff short and says how to see it whole.
FINDINGS_LISTED = 20


class GaamasSession:
    """The session's models and collected scores; registered as a plugin for its hooks."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.settings = Settings.from_config(config)
        self.models: dict[str, Model] = {}
        #: Scores, reference rows and games played: this process's, and on the controller every worker's.
        self.collected = runlog.Collector()
        #: Test id -> passed, missed, failed or skipped, for the run log.
        self.outcomes: dict[str, str] = {}
        self.started = datetime.now(timezone.utc)
        self.is_worker = hasattr(config, "workerinput")
        self.changes: list[compare.CellChange] = []
        self.compare_notes: list[str] = []
        self.saved_run: tuple = ()
        #: Outputs that could not be written, said at the end of the summary.
        self.errors: list[str] = []
        #: (test id, verdict, finding) for each item whose criterion was missed, at chance or inconclusive.
        self.findings: list[tuple[str, Verdict, str]] = []
        #: Models found unreachable in this process: their further items are skipped, not failed.
        self.unavailable: dict[str, str] = {}
        #: Games already replayed in this process, for the items that replay another item's cells.
        self.replayed: dict[tuple, list] = {}
        #: Why a model was unreachable -> how many of its items were skipped for it (all processes).
        self.skipped_unavailable: dict[str, int] = {}
        self.request_budget = self._request_budget()
        self.orphaned: list[str] = []
        #: The files whose items this run collected (on the controller too, under xdist).
        self.collected_files: set[str] = set()
        self.cassette_notes: list[str] = []
        self.announced = False
        #: (what, path) of the report and summary written, said at the end.
        self.views_written: list[tuple[str, Path]] = []
        #: (test function's node id, model spec) -> its items, every one its parametrisation makes:
        #: the size of the table whose cells are judged as one family (``verdicts.table_family``).
        self.table_sizes: dict[tuple[str, str], int] = {}

    def model(self, spec: str) -> Model:
        if spec not in self.models:
            model = resolve(spec)
            model.max_tokens, model.think, model.retries = self.settings.max_tokens, self.settings.think, self.settings.retries
            model.timeout = self.settings.timeout
            model.request_budget = self.request_budget
            self.models[spec] = model
        return self.models[spec]

    def progress(self, line: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if self.is_worker or reporter is None or capture is None:
            return  # xdist workers have no terminal; the controller shows their items finishing
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"  gaamas: {inert.terminal(line)}")

    @pytest.hookimpl(tryfirst=True, specname="pytest_runtest_makereport")
    def pytest_runtest_makereport_finding(self, item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport | None:
        """A finding's report made from its one line. pytest's own would format the finding's
        traceback, which no tool shows, parsing the behaviour's source for every missed criterion:
        a fifth of a whole suite's replay."""
        if call.when != "call" or call.excinfo is None or not call.excinfo.errisinstance(VerdictNotMet):
            return None
        sections = [(f"Captured {key} {when}", content) for when, key, content in item._report_sections]
        return pytest.TestReport(item.nodeid, item.location, dict.fromkeys(item.keywords, 1), "failed", str(call.excinfo.value), call.when,
                                 sections, call.duration, call.start, call.stop, user_properties=item.user_properties)  # fmt: skip

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        """A missed, at chance or inconclusive verdict is a finding: one line, no traceback; reported
        (MISSED, AT CHANCE, INCONCLUSIVE) or failed as --gaamas-verdicts says."""
        outcome = yield
        if call.when != "call" or call.excinfo is None or not call.excinfo.errisinstance(VerdictNotMet):
            return
        report = outcome.get_result()
        not_met = call.excinfo.value
        finding = str(not_met)
        report.user_properties.append((PROPERTY_OF_VERDICT[not_met.verdict], finding))
        if not_met.verdict in FAILED_VERDICTS[self.settings.verdicts]:
            report.longrepr = f"verdict: {finding}"
        else:
            # Reported, not failed: pytest's own form for that is an expected failure, which every
            # tool that reads reports (JUnit XML, pytest-html, pytest-sugar, --lf) shows as such and
            # none counts as a pass; the terminal shows the verdict's word.
            report.outcome = "skipped"
            report.wasxfail = f"{not_met.verdict.value}: {finding}"
            report.longrepr = None

    @pytest.hookimpl(hookwrapper=True, tryfirst=True, specname="pytest_runtest_makereport")
    def pytest_runtest_makereport_inert(self, item: pytest.Item, call: pytest.CallInfo):
        """A failure's or a skip's one line may quote a model (a verdict's finding, a server's error
        body, a strategy's exception): shown, never obeyed. Before the report is made from the
        exception, and after every other hook has made its line."""
        ours = "gaamas_model" in getattr(item, "fixturenames", ())
        error = call.excinfo.value if call.excinfo is not None else None
        if ours and isinstance(error, (pytest.fail.Exception, pytest.skip.Exception)) and isinstance(error.msg, str):
            error.msg = inert.terminal(error.msg)
        outcome = yield
        report = outcome.get_result()
        if ours and isinstance(report.longrepr, str):
            report.longrepr = inert.terminal(report.longrepr)

    @pytest.hookimpl(tryfirst=True)  # before pytest's own word for an expected failure
    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config):
        verdict = _reported_verdict(report) if report.when == "call" and not report.failed else None
        if verdict is None:
            return None
        return verdict.value, verdict.value[0], (verdict.value.upper(), {"yellow": True})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and isinstance(report.longrepr, tuple) and report.longrepr[2].endswith(UNAVAILABLE_SKIP):
            reason = report.longrepr[2].removeprefix("Skipped: ").removesuffix(UNAVAILABLE_SKIP)
            self.skipped_unavailable[reason] = self.skipped_unavailable.get(reason, 0) + 1
        if report.failed or report.skipped or report.when == "call":
            not_met = _reported_verdict(report)
            outcome = "failed" if report.failed else not_met.value if not_met else "skipped" if report.skipped else "passed"
            if self.outcomes.get(report.nodeid) != "failed":  # a teardown error after a pass is a failure
                self.outcomes[report.nodeid] = outcome
        if report.when != "call":
            return
        for name, value in report.user_properties:
            if name in VERDICT_OF_PROPERTY:
                self.findings.append((report.nodeid, VERDICT_OF_PROPERTY[name], value))
            elif name == RECORDED_PROPERTY:
                spec, count = json.loads(value)
                self.progress(f"{report.nodeid.split('::', 1)[-1]}: {count} exchanges recorded live from {spec}")

    def pytest_terminal_summary(self, terminalreporter) -> None:
        _verdicts_in_order(terminalreporter)
        if compare.failed(self.changes):  # the closing line says the comparison failed, and how many cells
            terminalreporter.stats[DROPPED] = [c for c in self.changes if c.dropped or c.lost]
        for error in self.errors:
            terminalreporter.write_line(inert.terminal(f"gaamas: {error}"), red=True, bold=True)
        for reason, count in sorted(self.skipped_unavailable.items()):
            terminalreporter.write_line(inert.terminal(f"gaamas: {count} more item{'s' if count != 1 else ''} skipped, the model being unavailable: {reason}"), yellow=True)
        if self.is_worker:
            return
        if not self.collected.scores:
            self._say_usage(terminalreporter)
            return
        width = min(terminalreporter._tw.fullwidth, TABLE_WIDTH) if terminalreporter.isatty else TABLE_WIDTH
        tables = build_tables(self.collected.scores, self.collected.references, self.settings.models, self.null_rates)
        shown = [table for table in tables if table.judged or self.settings.tables == "all"]
        for table in shown:
            terminalreporter.write_sep("=", inert.terminal(f"gaamas: {table.title}"))
            terminalreporter.write_line(table.render(width))
        if len(shown) < len(tables):
            terminalreporter.write_line(_fill(f"gaamas: {self._unshown_tables(len(tables) - len(shown))}", width))
        if self.findings:
            terminalreporter.write_sep("=", f"gaamas: {findings_heading(self.findings, self.settings.verdicts)}")
            if len(self.findings) <= FINDINGS_LISTED or self.config.option.verbose > 0:
                for verdict in NOT_MET:
                    for test_id, _, finding in sorted(f for f in self.findings if f[1] == verdict):
                        line = inert.terminal(f"{verdict.upper()} {test_id.split('::', 1)[-1]}: {finding}")
                        terminalreporter.write_line(_fill(line, width))
            else:
                terminalreporter.write_line(findings_by_test(self.findings, self.outcomes).render(width))
                terminalreporter.write_line(_fill(f"gaamas: each finding with its reason: -v lists them here; {self._views()}", width))
        if self.settings.check_cassettes:
            self._report_cassette_check(terminalreporter)
        if self.saved_run:
            name, path = self.saved_run
            terminalreporter.write_line(inert.terminal(f"gaamas: saved this run as {name!r} ({path})"))
        for what, path in self.views_written:
            terminalreporter.write_line(inert.terminal(f"gaamas: wrote the {what} to {path}"))
        self._say_usage(terminalreporter)
        if self.settings.compare:
            terminalreporter.write_sep("=", inert.terminal(f"gaamas: compared with {self.settings.compare}"))
            table = compare.render(self.changes, width=width)
            if table:
                terminalreporter.write_line(table)
            for note in self.compare_notes:
                terminalreporter.write_line(inert.terminal(f"gaamas: {note}"))

    def _views(self) -> str:
        """Where the whole run can be read: the files this run writes, else the options that write them."""
        written = {"report": self.settings.report_path, "summary": self.settings.markdown_path, "run log": self.settings.json_path}
        named = [f"the {what} {path}" for what, path in written.items() if path]
        if named:
            return "see " + ", ".join(named)
        return "the report (--gaamas-report=PATH), the summary (--gaamas-markdown=PATH) and the run log (--gaamas-json=PATH) hold them all"

    def _unshown_tables(self, count: int) -> str:
        tables = f"{count} more table{'s' if count != 1 else ''}, which judge no criterion (rounds, companions),"
        return f"{tables} not printed: --gaamas-tables=all prints them here; {self._views()}"

    def _say_usage(self, terminalreporter) -> None:
        """What the run asked of each server live; nothing for a replay."""
        for spec, usage in sorted(self.collected.usage.items()):
            terminalreporter.write_line(inert.terminal(f"gaamas: {spec}: {usage.text()}"))
        if self.request_budget is not None:
            taken = self.request_budget.taken
            terminalreporter.write_line(f"gaamas: {taken:,} of the run's {self.request_budget.cap:,} live requests (--gaamas-max-requests) sent")

    def _request_budget(self) -> RequestBudget | None:
        """The cap's counter: a file the controller makes and hands to each xdist worker."""
        if self.settings.max_requests is None:
            return None
        if self.is_worker:
            return RequestBudget(self.settings.max_requests, Path(self.config.workerinput[REQUEST_COUNTER]))
        handle, name = tempfile.mkstemp(prefix="gaamas-requests-")
        os.close(handle)
        return RequestBudget(self.settings.max_requests, Path(name))

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        if self.request_budget is not None:
            node.workerinput[REQUEST_COUNTER] = str(self.request_budget.path)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.request_budget is not None and not self.is_worker:
            self.request_budget.path.unlink(missing_ok=True)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_generate_tests(self, metafunc: pytest.Metafunc):
        """Count the cells of each test function's table for each model, once every parametrisation
        is made and before any is selected: choosing items by -k, by node id or by xdist's
        distribution never changes the family a cell is judged in."""
        yield
        if "gaamas_model" not in metafunc.fixturenames:
            return
        sizes = collections.Counter(call.params.get("gaamas_model") for call in metafunc._calls)
        for spec, size in sizes.items():
            self.table_sizes[(metafunc.definition.nodeid, spec)] = size

    def table_size(self, item: pytest.Item, spec: str) -> int:
        """The cells of ``item``'s table for the model ``spec``: its test function's items for it."""
        definition = getattr(item, "_pyfuncitem", item).nodeid.split("[", 1)[0]
        return self.table_sizes.get((definition, spec), 1)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected_files |= {item.nodeid.split("::", 1)[0] for item in session.items}
        if not self.is_worker and any("gaamas" in getattr(item, "fixturenames", ()) for item in session.items):
            self._say_where_answers_come_from()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        """Under xdist the controller collects nothing; a worker's ids show the models' parameters."""
        self.collected_files |= {nodeid.split("::", 1)[0] for nodeid in ids}
        if not self.announced and any(f"[{self.model(spec).test_id}" in nodeid for spec in self.settings.models for nodeid in ids):
            self._say_where_answers_come_from(after_status_line=True)

    def _say_where_answers_come_from(self, *, after_status_line: bool = False) -> None:
        """Said before anything runs: where answers come from, and whether a request may go live."""
        self.announced = True
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        if after_status_line and reporter.isatty:
            reporter.write_line("")  # end xdist's "ready: 2/2 workers", which a terminal rewrites in place
        width = min(reporter._tw.fullwidth, TABLE_WIDTH)
        for line in self._answer_sources():
            reporter.write_line(_fill(inert.terminal(line), width))

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
            unreadable = recorded_model(self.settings.cassette_dir / model.directory / "model.json")[1]
            lines += [f"gaamas: {unreadable}"] if unreadable else []
        return lines

    def _check_cassettes(self, session: pytest.Session) -> None:
        """Every cassette of the models run that no item used: a rename must not orphan recordings silently."""
        for spec in self.settings.models:
            model = self.model(spec)
            if not model.uses_http:
                continue
            folder = self.settings.cassette_dir / (model.directory + self.settings.cassette_suffix)
            on_disk = {name for name in cassettes.held(self.settings.cassette_dir, folder) if self._checked(name)}
            used = self.collected.cassettes_used
            orphaned = sorted(on_disk - used)
            self.orphaned += orphaned
            self.cassette_notes.append(
                f"{spec}: {len(on_disk & used)} of {len(on_disk)} cassettes used"
                + (f"; {len(orphaned)} used by no item (a renamed test or reordered parameters?):" if orphaned else "")
            )
            self.cassette_notes += [f"    {name}" for name in orphaned]
        if self.orphaned:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _checked(self, cassette: str) -> bool:
        """Whether this run answers for ``cassette`` (``model/behaviour/...``): the behaviours it ran
        do, and so do behaviours whose file is gone (their cassettes are orphans); a behaviour that
        exists beside those run but was not run (a new file not yet listed, a -k subset) does not."""
        parts = cassette.split("/")
        behaviour = parts[1] if len(parts) > 2 else ""
        ran = {Path(file) for file in self.collected_files}
        if not behaviour or any(file.name == f"test_{behaviour}.py" for file in ran):
            return True
        root = self.config.rootpath
        return not any((root / file.parent / f"test_{behaviour}.py").is_file() for file in ran)

    def _report_cassette_check(self, terminalreporter) -> None:
        terminalreporter.write_sep("=", "gaamas: cassette check")
        for line in self.cassette_notes:
            terminalreporter.write_line(inert.terminal(line))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        """A worker's results, sent once as it finishes (``pytest_sessionfinish`` on the worker)."""
        sent = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
        if sent is not None:
            self.collected.merge(json.loads(sent))
        elif error:
            self.errors.append(f"worker {getattr(node, 'gateway', node).id} crashed ({str(error)[:200]}): the scores of its items are not in the tables")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        try:
            for spec, model in self.models.items():
                if model.usage:
                    self.collected.add_usage(spec, model.usage.to_json())
            if self.is_worker:
                self.config.workeroutput[WORKER_OUTPUT] = json.dumps(self.collected.to_json(plays=self.settings.keeps_run_log))
                return
            if self.settings.check_cassettes:
                self._check_cassettes(session)
            if self.collected.scores and self.settings.keeps_run_log:
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
                self._write_views(session, document)
        finally:
            for model in self.models.values():
                model.close()

    def _write_views(self, session: pytest.Session, document: dict) -> None:
        """The HTML report and the Markdown summary, drawn from the run log just made."""
        views = [(self.settings.report_path, "report_html", "report"), (self.settings.markdown_path, "report_markdown", "summary")]
        if not any(path for path, _, _ in views):
            return
        log = runlog.parse(json.dumps(document))
        for path, module, what in views:
            if path is None:
                continue
            try:
                # matplotlib is loaded only when a report is asked for
                render = importlib.import_module(f".{module}", __package__).render
                write_atomically(path, render(log), what=what)
                self.views_written.append((what, path))
            except UnwritableOutput as error:
                self.errors.append(str(error))
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            except Exception as error:  # a report that cannot be drawn must not lose the run or end in a traceback
                kept = f"; the run log is in {self.settings.json_path}" if self.settings.json_path else ""
                self.errors.append(f"cannot write the {what} {path} ({type(error).__name__}: {str(error)[:200]}){kept}")
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    def _compare(self, session: pytest.Session, document: dict) -> None:
        settings = self.settings
        try:
            path, saved = compare.load_run(settings.compare, settings.runs_dir)
            self.changes = compare.compare(saved.scores, self.collected.scores, settings.allowed_drops)
        except compare.CompareError as error:
            self.compare_notes.append(f"cannot compare: {error}")
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            return
        self.compare_notes += compare.digest_changes(saved.run, document["run"])
        option = self.config.option
        subset = bool(getattr(option, "keyword", "") or getattr(option, "markexpr", "") or any("::" in a for a in self.config.args))
        lost = compare.unpaired(saved.scores, self.collected.scores, subset=subset)
        if lost:
            self.compare_notes.append(lost)
        tested = [c for c in self.changes if not math.isnan(c.p_value)]
        gated = [c for c in tested if c.gated]
        moved = compare.shown(self.changes)
        self.compare_notes.append(
            f"{len(self.changes)} cells paired with {path}, {len(tested)} tested; gated on the {len(gated)} whose criterion the saved run "
            f"met (one-sided, Holm over those {len(gated)}), the other {len(tested) - len(gated)} shown where they changed (Holm over "
            f"them); {len(moved) or 'nothing'} changed" + ("" if moved else ", nothing to show")
        )
        self.compare_notes += compare.verdict_changes(self.changes)
        self.compare_notes += compare.regressions(self.changes)
        if compare.failed(self.changes):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        elif settings.allowed_drops:
            self.compare_notes.append("no cell dropped significantly by more than allowed, nor lost its answers")

    @functools.cached_property
    def null_rates(self) -> dict:
        """What agents that never read the game earn in this run's tables (the shipped figures), each
        marked stale where the behaviour file this run played has changed since they were measured."""
        files = {Path(self.config.rootpath) / s.test_id.split("::")[0] for s in self.collected.scores}
        digests = null_runs.behaviour_digests(path for path in files if path.is_file())
        return null_runs.for_tables({s.table for s in self.collected.scores}, digests)

    def _document(self) -> dict:
        collected = self.collected
        return runlog.document(
            run=run_provenance(self, finished=datetime.now(timezone.utc)),
            collector=collected,
            tables=[t.to_json() for t in build_tables(collected.scores, collected.references, self.settings.models, self.null_rates)],
            outcomes=self.outcomes,
            findings=self.findings,
            null_rates=self.null_rates,
        )

    def _write(self, session: pytest.Session, path: Path, document: dict) -> bool:
        """The run log at ``path``, whole or not at all. If it cannot be written there, it is written
        to a file in the temporary folder instead, the session fails, and the summary says where."""
        try:
            write_atomically(path, runlog.dumps(document, path), what="run")
            return True
        except UnwritableOutput as error:
            fallback = Path(tempfile.gettempdir()) / f"gaamas-run-{self.started:%Y%m%dT%H%M%S}-{os.getpid()}.json"
            try:
                write_atomically(fallback, runlog.dumps(document, fallback), what="run")
                kept = f"the run is kept in {fallback}"
            except UnwritableOutput:
                kept = "and it could not be kept elsewhere either"
            self.errors.append(f"{error}: {kept}")
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return False


def _fill(line: str, width: int) -> str:
    """A long line of the summary over several, never broken inside an option's name."""
    return textwrap.fill(line, width, subsequent_indent="    ", break_on_hyphens=False)


#: The closing line's word for the cells a comparison failed on (dropped, or their answers lost).
DROPPED = "dropped in the comparison"


def _verdicts_in_order(terminalreporter) -> None:
    """The closing line counts the verdicts in one order, "passed, missed, at chance, inconclusive",
    whichever an item reached first: pytest lists the words it does not know in the order first seen."""
    stats, words = terminalreporter.stats, [verdict.value for verdict in NOT_MET]
    if not any(word in stats for word in words):
        return
    ordered = {key: value for key, value in stats.items() if key not in words} | {word: stats[word] for word in words if word in stats}
    stats.clear()
    stats.update(ordered)
    terminalreporter._set_main_color()


def _reported_verdict(report: pytest.TestReport) -> Verdict | None:
    """Missed, at chance or inconclusive for an item whose criterion was not met, else None."""
    return next((VERDICT_OF_PROPERTY[name] for name, _ in report.user_properties if name in VERDICT_OF_PROPERTY), None)


def findings_by_test(findings: list[tuple[str, Verdict, str]], outcomes: dict[str, str]) -> Table:
    """How many items of each test function missed a criterion, were at chance and left it inconclusive, of how many run."""
    def function(test_id: str) -> str:
        return test_id.split("::", 1)[-1].split("[", 1)[0]

    counts: dict[str, dict[Verdict, int]] = {}
    for test_id, verdict, _ in findings:
        counts.setdefault(function(test_id), dict.fromkeys(NOT_MET, 0))[verdict] += 1
    items = collections.Counter(function(test_id) for test_id in outcomes)
    rows = tuple((name, str(items[name]), *(str(counts[name][verdict]) for verdict in NOT_MET)) for name in sorted(counts))
    return Table("findings", ("test", "items", *(str(verdict).replace(" ", NBSP) for verdict in NOT_MET)), rows, (), ())


def findings_heading(findings: list[tuple[str, Verdict, str]], mode: str) -> str:
    """``9 verdicts not met: 5 missed (failed), 1 at chance (failed), 3 inconclusive (reported, ...)``:
    how many of each, and whether they fail the session under ``--gaamas-verdicts`` (``mode``)."""
    counts = {verdict: sum(f[1] == verdict for f in findings) for verdict in NOT_MET}
    total = sum(counts.values())

    def fate(verdict: Verdict) -> str:
        return "failed" if verdict in FAILED_VERDICTS[mode] else f"reported, not failed: {FAILED_FROM[verdict]} fails them"

    heading = f"{total} verdict{'s' if total != 1 else ''} not met"
    if not counts[INCONCLUSIVE] and not counts[AT_CHANCE]:
        return f"{heading} ({fate(MISSED)})"
    return f"{heading}: " + ", ".join(f"{count} {verdict} ({fate(verdict)})" for verdict, count in counts.items() if count)


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
def gaamas(request: pytest.FixtureRequest, gaamas_model: str):
    """The experiment of this test item: its model, its settings, ``play`` and ``score``; while it
    runs, the verdict helpers judge its intervals as cells of its table."""
    session = request.config.stash[STATE]
    if gaamas_model in session.unavailable:
        pytest.skip(f"{session.unavailable[gaamas_model]}{UNAVAILABLE_SKIP}")
    experiment = Experiment(session.settings, session.model(gaamas_model), request.node, session.progress, session.unavailable,
                            session.collected, session.replayed, session.table_size(request.node, gaamas_model))  # fmt: skip
    with experiment.judged_as_table():
        yield experiment
