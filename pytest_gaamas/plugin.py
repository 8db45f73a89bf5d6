"""The pytest wiring, and nothing else: options, model parametrization, the ``gaamas`` fixture, and
hooks of a few lines each, handing over to the session (``pytest_gaamas.session``), which owns the
state, the xdist merge and the one run record that the summary, the reports and the gate read.

A suite that requests neither ``gaamas`` nor ``gaamas_model`` sees no trace of the plugin.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from . import beside_pytest_recording  # noqa: F401  (first: before anything imports vcrpy)
from .errors import VerdictNotMet
from .experiment import Experiment
from .session import findings, terminal
from .session.engine import Ending, Session
from .session.xdist import hand_budget
from .settings import add_options

STATE = pytest.StashKey[Session]()


class GaamasHooks:
    """The session's hooks, registered as a plugin: each hands over to ``session``."""

    def __init__(self, session: Session) -> None:
        self.session = session

    @pytest.hookimpl(tryfirst=True, specname="pytest_runtest_makereport")
    def pytest_runtest_makereport_finding(self, item: pytest.Item, call: pytest.CallInfo[Any]) -> pytest.TestReport | None:
        """A finding's report, made from its one line (no traceback formatted)."""
        return findings.report_of(item, call) if findings.is_finding(call) else None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
        """A missed, at chance or inconclusive verdict: reported or failed as --gaamas-verdicts says."""
        outcome = yield
        if findings.is_finding(call):
            assert call.excinfo is not None and isinstance(call.excinfo.value, VerdictNotMet)
            findings.judge(outcome.get_result(), call.excinfo.value, self.session.settings.verdicts)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True, specname="pytest_runtest_makereport")
    def pytest_runtest_makereport_inert(self, item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
        """A failure's or a skip's line may quote a model: shown, never obeyed. Before the report is
        made from the exception, and after every other hook has made its line."""
        findings.inert_message(item, call)
        outcome = yield
        findings.inert_report(item, outcome.get_result())

    @pytest.hookimpl(tryfirst=True)  # before pytest's own word for an expected failure
    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        return findings.test_status(report)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.session.logreport(report)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> Generator[None, Any, None]:
        """Each test function's table counted once every parametrisation is made."""
        yield
        self.session.count_table(metafunc)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.session.deselected(items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        terminal.announce(self.session.config, self.session.collected_items(session.items))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        terminal.announce(self.session.config, self.session.worker_collected(ids), after_status_line=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        hand_budget(node, self.session.request_budget)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """A worker's results, sent once as it finishes (``pytest_sessionfinish`` on the worker)."""
        self.session.worker_finished(node, error)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The one record made; the gate's decision and the outputs' fate turned into the exit status."""
        try:
            status = exit_status(self.session.finish())
            if status is not None:
                session.exitstatus = status
        finally:
            for model in self.session.models.values():
                model.close()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        terminal.summary(terminalreporter, self.session)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.session.remove_budget()


def exit_status(ending: Ending) -> pytest.ExitCode | None:
    """The status the run ends with, where its end changes it; the later cause wins."""
    status = None
    if ending.orphaned:
        status = pytest.ExitCode.TESTS_FAILED
    if ending.decision is not None and ending.decision.refused:
        status = pytest.ExitCode.USAGE_ERROR
    elif ending.decision is not None and ending.decision.failed:
        status = pytest.ExitCode.TESTS_FAILED
    if ending.unwritten:
        status = pytest.ExitCode.INTERNAL_ERROR
    return status


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    session = Session.of(config)
    config.stash[STATE] = session
    config.pluginmanager.register(GaamasHooks(session), "gaamas-session")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "gaamas_model" not in metafunc.fixturenames:
        return
    session = metafunc.config.stash[STATE]
    specs = session.settings.models
    metafunc.parametrize("gaamas_model", specs, ids=[session.model(s).test_id for s in specs])


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A behaviour's body, run once a look of its cell's sequential design (``Experiment.run_looks``)."""
    experiment = pyfuncitem.funcargs.get("gaamas")
    if not isinstance(experiment, Experiment):
        return None
    experiment.run_looks(lambda: pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}))
    return True


@pytest.fixture
def gaamas(request: pytest.FixtureRequest, gaamas_model: str) -> Generator[Experiment, None, None]:
    """The experiment of this test item: its model, its settings, ``play`` and ``score``; while it
    runs, the verdict helpers judge its intervals as cells of its table."""
    experiment = request.config.stash[STATE].experiment(request.node, gaamas_model)
    with experiment.judged_as_table():
        yield experiment
