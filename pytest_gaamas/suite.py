"""The shipped suite, run from any project: ``pytest --gaamas-suite`` adds the behaviours that ship
with pytest-gaamas to what pytest collects, beside the project's own, and plays them from the
cassettes that ship with them (docs/installing.md).

A pytest plugin of its own (the ``gaamas-suite`` entry point) that only wires: the option, the
shipped folder added to the run's arguments, and each shipped item's cassette folder, which
:meth:`pytest_gaamas.settings.Settings.for_item` chooses. Where the files are is
:func:`pytest_gaamas.settings.shipped_suite`'s to say.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .settings import OPTIONS, shipped_suite


def pytest_addoption(parser: pytest.Parser) -> None:
    suite = next(option for option in OPTIONS if option.name == "suite")  # said where docs/options.md's table is drawn from
    parser.getgroup("gaamas").addoption(suite.flag, dest="gaamas_suite", action="store_true", default=False, help=suite.plain)
    parser.addini("gaamas_suite", suite.plain, type=suite.ini_type, default=False)


@pytest.hookimpl(tryfirst=True)  # before the plugin reads the run's behaviour files from its arguments
def pytest_configure(config: pytest.Config) -> None:
    if not _asked(config):
        return
    shipped = shipped_suite()
    if shipped is None:
        raise pytest.UsageError("--gaamas-suite: this installation of pytest-gaamas holds no shipped behaviours; reinstall it from its wheel")
    collected = _collected(shipped[0])
    if not any(Path(arg.split("::", 1)[0]).resolve() in (collected, shipped[0]) for arg in config.args):
        config.args.append(str(collected))


def _collected(behaviours: Path) -> Path:
    """What the run is given to collect: the installed package's folder of the suite (its cassettes
    ignored), so that the items' ids read ``behaviours/test_ultimatum.py::...`` as in a checkout and
    runs saved in either compare cell by cell; in a checkout, its behaviours folder."""
    root = behaviours.parent
    return behaviours if (root / "pyproject.toml").is_file() else root


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    shipped = shipped_suite() if _asked(config) else None
    return True if shipped is not None and collection_path == shipped[1] else None


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
