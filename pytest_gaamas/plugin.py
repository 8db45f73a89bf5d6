"""The pytest wiring, and nothing else: options, model parametrization, the ``gaamas`` fixture, and
the tables and JSON made once, on the controller, from the scores every item (or xdist worker) reports.

A suite that requests neither ``gaamas`` nor ``gaamas_model`` sees no trace of the plugin.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from .experiment import REFERENCE_PROPERTY, SCORE_PROPERTY, Experiment
from .models import Model, resolve
from .provenance import run_provenance
from .report import ReferenceRow, Score, build_tables
from .settings import Settings, add_options

STATE = pytest.StashKey["GaamasSession"]()


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

    def model(self, spec: str) -> Model:
        if spec not in self.models:
            self.models[spec] = resolve(spec)
        return self.models[spec]

    def progress(self, line: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if self.is_worker or reporter is None or capture is None:
            return  # xdist workers have no terminal; the controller shows their items finishing
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"  gaamas: {line}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for name, value in report.user_properties:
            if name == SCORE_PROPERTY:
                self.scores.append(Score.from_json(json.loads(value)))
            elif name == REFERENCE_PROPERTY:
                self.references.append(ReferenceRow(**json.loads(value)))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.is_worker or not self.scores:
            return
        for table in build_tables(self.scores, self.references, self.settings.models):
            terminalreporter.write_sep("=", f"gaamas: {table.title}")
            terminalreporter.write_line(table.render())

    def pytest_sessionfinish(self) -> None:
        try:
            if not self.is_worker and self.settings.json_path and self.scores:
                self._write_json()
        finally:
            for model in self.models.values():
                model.close()

    def _write_json(self) -> None:
        document = {
            "run": run_provenance(self, finished=datetime.now(timezone.utc)),
            "scores": [s.to_json() for s in sorted(self.scores, key=lambda s: s.test_id)],
            "references": [r.to_json() for r in sorted(self.references, key=lambda r: (r.table, r.label))],
            "tables": [t.to_json() for t in build_tables(self.scores, self.references, self.settings.models)],
        }
        path = self.settings.json_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2) + "\n")


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
    return Experiment(session.settings, session.model(gaamas_model), request.node, session.progress)
