"""The shipped suite, run from any project: ``pytest --gaamas-suite`` adds the behaviours that ship
with pytest-gaamas to what pytest collects, beside the project's own, and plays them from the
cassettes that ship with them (docs/installing.md).

A pytest plugin of its own (the ``gaamas-suite`` entry point) that only wires: the option, the
shipped behaviours added to the collection, and each shipped item's cassette folder, which
:meth:`pytest_gaamas.settings.Settings.for_item` chooses. Where the files are is
:func:`pytest_gaamas.settings.shipped_suite`'s to say.

Run from another project, the shipped behaviours are collected as a folder ``behaviours`` of the
session, not through the run's arguments: a package installed in the project's own virtual environment
(``.venv/lib/.../site-packages``) lies in a folder pytest skips, and reached by an argument it was
collected under the project's folder already, so not at all; and its items would be named from
the rootdir (``.venv/lib/...``). As collected here every shipped item has the id it has in a
checkout (``behaviours/test_ultimatum.py::...``), wherever the package is, so runs saved in either
compare cell by cell.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .settings import COLLECTED_BESIDE, OPTIONS, collected_beside, shipped_beside, shipped_suite


def pytest_addoption(parser: pytest.Parser) -> None:
    suite = next(option for option in OPTIONS if option.name == "suite")  # said where docs/options.md's table is drawn from
    parser.getgroup("gaamas").addoption(suite.flag, dest="gaamas_suite", action="store_true", default=False, help=suite.plain)
    parser.addini("gaamas_suite", suite.plain, type=suite.ini_type, default=False)


@pytest.hookimpl(tryfirst=True)  # before the plugin reads the run's behaviour files
def pytest_configure(config: pytest.Config) -> None:
    if not _asked(config):
        return
    shipped = shipped_suite()
    if shipped is None:
        raise pytest.UsageError("--gaamas-suite: this installation of pytest-gaamas holds no shipped behaviours; reinstall it from its wheel")
    behaviours = shipped[0]
    given = {Path(arg.split("::", 1)[0]).resolve() for arg in config.args}
    beside = shipped_beside(config.rootpath) is not None
    if behaviours in given or (beside and behaviours.parent in given):
        return  # given by the run itself: collected from there
    if beside:
        config.stash[COLLECTED_BESIDE] = [behaviours]
    else:
        config.args.append(str(behaviours))


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """The session's collection, with the shipped behaviours beside what its arguments gave."""
    report = yield
    beside = collected_beside(collector.config) if isinstance(collector, pytest.Session) else []
    if report.passed:
        report.result.extend(ShippedBehaviours.from_parent(collector, path=folder, nodeid=folder.name) for folder in beside)
    return report


class ShippedBehaviours(pytest.Directory):
    """The shipped behaviour files, each collected as a test module (whatever the project's
    ``python_files`` says) named as in a checkout."""

    def collect(self):
        for file in sorted(self.path.glob("test_*.py")):
            yield self.ihook.pytest_pycollect_makemodule(module_path=file, parent=self)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """A shipped behaviour run from another project, however reached, has the id it has in a checkout."""
    shipped = shipped_beside(parent.config.rootpath)
    if shipped is None or Path(module_path).resolve().parent != shipped[0]:
        return None
    return pytest.Module.from_parent(parent, path=module_path, nodeid=f"{shipped[0].name}/{module_path.name}")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The shipped cassettes are never collected; nor, where the session collects the shipped
    behaviours itself, the folder that holds them, should a walk of the project reach it again."""
    shipped = shipped_suite() if _asked(config) else None
    if shipped is None:
        return None
    beside = collected_beside(config)
    return True if collection_path == shipped[1] or (beside and collection_path == shipped[0].parent) else None


def pytest_report_header(config: pytest.Config) -> str | None:
    shipped = shipped_suite() if _asked(config) else None
    if shipped is None:
        return None
    behaviours, cassettes = shipped
    return (f"gaamas: --gaamas-suite: {len(list(behaviours.glob('test_*.py')))} shipped behaviours in {behaviours}, "
            f"replayed from {cassettes} for each model recorded there, unless the project's cassette folder holds that "
            f"behaviour's for the model")  # fmt: skip


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest):
    """The ``gaamas`` fixture of a shipped behaviour's item is made with the settings of its item
    (``Settings.for_item``): its cassettes in the shipped folder or the project's. Applied here, around
    the fixture, while the plugin's fixture takes the session's settings as they are; for_item is
    idempotent, so this stays right once the fixture asks for the item's own."""
    session = _session(request.config) if fixturedef.argname == "gaamas" else None
    spec = getattr(getattr(request.node, "callspec", None), "params", {}).get("gaamas_model")
    if session is None or spec is None:
        return (yield)
    settings = session.settings
    session.settings = settings.for_item(request.node.path, session.model(spec).directory + settings.cassette_suffix)
    try:
        return (yield)
    finally:
        session.settings = settings


def _asked(config: pytest.Config) -> bool:
    return bool(config.getoption("gaamas_suite") or config.getini("gaamas_suite"))


def _session(config: pytest.Config):
    from .plugin import STATE

    return config.stash.get(STATE, None)
