"""What ``pip install pytest-gaamas`` gives a user, built and run as a user would (docs/installing.md).

The sdist is built from a copy of the checkout's files, the wheel from that sdist (as ``python -m
build`` does), and the wheel is installed into a fresh virtual environment outside the checkout;
the documented command then runs from an empty project folder, with nothing of the checkout on
the path.

What the fresh environment proves: everything the plugin and its suite read comes from the wheel,
its modules, behaviours, cassettes, data and both pytest entry points; the checkout is not on the
path and the project folder holds nothing. What it does not prove: that the dependencies resolve
from an index. The environment sees the dependencies of the environment running these tests (each
of them linked into its site-packages, every file of pytest-gaamas itself left out), since
installing numpy, scipy, matplotlib and the model clients afresh would need the network and
minutes; ``pip install`` in CI resolves the same requirements from pyproject.toml.

Building needs setuptools 77 or later (the ``dev`` extra), pip and venv: where one is missing the
tests are skipped and say why, except where the ``CI`` variable is set, where they fail.
"""

import fcntl
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, SHIPPED
from test_readme_example import example_behaviour

from pytest_gaamas.settings import Settings, shipped_beside, shipped_suite


def documented_command() -> list[str]:
    """The options of the command docs/installing.md gives, the first ``pytest`` line of its first block."""
    block = re.search(r"```bash\n(.*?)```", (ROOT / "docs" / "installing.md").read_text(), re.DOTALL).group(1)
    words = next(shlex.split(line) for line in block.splitlines() if line.startswith("pytest "))
    assert "--gaamas-suite" in words and "--gaamas-model=embedded:smollm2" in words and "--gaamas-record=none" in words, words
    return words[1:]

#: What a user's shell would not have: the checkout on the path, or pytest options for this test session.
NOT_A_USERS = ("PYTHONPATH", "PYTHONHOME", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_XDIST_WORKER",
               "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID", "PYTEST_CURRENT_TEST")  # fmt: skip
#: What the copy of the checkout leaves out: what git ignores, and git's own folder.
LEFT_OUT = (".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis", ".gaamas", "gaamas-runs", "test-artifacts")


def _cannot_build() -> str | None:
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return "setuptools is not installed (pip install -e '.[dev]')"
    if int(version.split(".")[0]) < 77:
        return f"building needs setuptools>=77 (pyproject.toml's build backend), this environment has {version} (pip install -e '.[dev]')"
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return "the checkout's files are listed by git, and this is no git checkout"
    return None


def _require_building() -> None:
    reason = _cannot_build()
    if reason and os.environ.get("CI"):
        pytest.fail(f"CI must build and install the wheel: {reason}")
    if reason:
        pytest.skip(reason)


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    return sorted(name for name in listed.split("\0") if name and (ROOT / name).is_file())


def user_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in NOT_A_USERS} | {"COLUMNS": "1000"}


def run(command: list, cwd: Path, expected: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run([str(word) for word in command], check=False, cwd=cwd, capture_output=True, text=True, env=user_environment(), timeout=600)
    assert done.returncode == expected, f"{' '.join(map(str, command))} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@dataclass(frozen=True)
class Installed:
    sdist: Path
    wheel: Path
    #: The fresh environment's interpreter, with the wheel installed.
    python: Path


def build_and_install(folder: Path) -> Installed:
    """The checkout's files copied, the sdist built from them, the wheel from the unpacked sdist, and
    a fresh environment with the wheel installed."""
    source = folder / "checkout"
    for name in tracked_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    dist = folder / "dist"
    build = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    run([sys.executable, "-c", build, dist], cwd=source)
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(folder / "unpacked", filter="data")
    (unpacked,) = (folder / "unpacked").iterdir()
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", dist, unpacked], cwd=folder)
    (wheel,) = dist.glob("*.whl")

    return Installed(sdist, wheel, environment_with(wheel, folder / "env"))


def environment_with(wheel: Path, environment: Path) -> Path:
    """A fresh virtual environment at ``environment`` with ``wheel`` installed, and the dependencies
    of this one linked in; its interpreter."""
    run([sys.executable, "-m", "venv", "--without-pip", environment], cwd=environment.parent)
    python = environment / "bin" / "python"
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=environment.parent).stdout.strip())
    try:  # an editable install's finder and metadata, or an installed copy: none of it is linked
        ours = {Path(str(file)).parts[0] for file in importlib.metadata.distribution("pytest-gaamas").files or ()}
    except importlib.metadata.PackageNotFoundError:
        ours = set()
    for folder_of_dependencies in {Path(sysconfig.get_paths()[kind]).resolve() for kind in ("purelib", "platlib")}:
        for entry in folder_of_dependencies.iterdir():
            linked = site / entry.name
            if entry.name not in ours and entry.name != "__pycache__" and not entry.name.startswith("pytest_gaamas") and not linked.exists():
                linked.symlink_to(entry)
    run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=environment.parent)
    return python


@pytest.fixture(scope="module")
def installed(shared_folder) -> Installed:
    """Built and installed once for the whole test session: the first xdist worker to ask builds
    while the other waits, and each uses what it left."""
    _require_building()
    folder = shared_folder / "installed"
    with open(shared_folder / "installed.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build_and_install(folder)
            (folder / "done").touch()
    dist = folder / "dist"
    return Installed(next(dist.glob("*.tar.gz")), next(dist.glob("*.whl")), folder / "env" / "bin" / "python")


def project(tmp_path: Path, *behaviours: tuple[str, str]) -> Path:
    """A user's project: an empty folder, or one with their own behaviours in ``behaviours/``."""
    folder = tmp_path / "project"
    folder.mkdir()
    for name, source in behaviours:
        (folder / "behaviours").mkdir(exist_ok=True)
        (folder / "behaviours" / name).write_text(source)
    return folder


def run_log(installed: Installed, folder: Path, *options: str) -> tuple[dict, str]:
    log = folder.parent / "run.json"
    done = run([installed.python, "-m", "pytest", *options, "-p", "no:cacheprovider", f"--gaamas-json={log}"], cwd=folder)
    return json.loads(log.read_text()), done.stdout


def test_the_wheel_holds_the_package_and_the_shipped_suite_with_both_entry_points(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    tracked = tracked_files()
    wanted = {name for name in tracked if name.startswith("pytest_gaamas/")}
    wanted |= {f"pytest_gaamas/shipped/{name}" for name in tracked if name.startswith(("behaviours/", "cassettes/"))}
    assert wanted - names == set()
    assert len([name for name in names if name.startswith("pytest_gaamas/shipped/behaviours/test_")]) == len(SHIPPED)
    (entry_points,) = (name for name in names if name.endswith(".dist-info/entry_points.txt"))
    said = zipfile.ZipFile(installed.wheel).read(entry_points).decode()
    assert "gaamas = pytest_gaamas.plugin" in said and "gaamas-suite = pytest_gaamas.suite" in said


def test_the_sdist_holds_every_file_of_the_checkout_its_tests_read(installed):
    """The tests read the behaviours, the cassettes, the docs (the CI recipe, the example behaviour)
    and .ci/run: every file git tracks is in the sdist."""
    with tarfile.open(installed.sdist) as archive:
        held = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert set(tracked_files()) - held == set()
    assert not [name for name in held if "__pycache__" in name or name.endswith((".pyc", ".lock", ".tmp"))]


def test_the_installed_suite_replays_smollm2_offline_with_the_checkouts_verdicts(installed, smollm2_replay, tmp_path):
    """The command docs/installing.md gives, from an empty project, replays every shipped behaviour for SmolLM2 from
    the installed cassettes: the same items, each with the verdict and the score it has when the
    checkout's ``pytest behaviours`` replays them (the baseline of docs/gating.md's CI recipe)."""
    folder = project(tmp_path)
    document, output = run_log(installed, folder, *documented_command(), "-n", "2")
    environment = installed.python.parents[1].resolve()
    assert f"{len(SHIPPED)} shipped behaviours in {environment}/lib/" in output, output[:2000]

    def verdicts(doc):
        return {item["test_id"]: item["outcome"] for item in doc["items"]}

    def scores(doc):
        kept = ("test_id", "metric", "row", "score", "ci", "n", "invalid", "verdict", "adjusted")
        return sorted(json.dumps({k: s.get(k) for k in kept}, sort_keys=True) for s in doc["scores"])

    checkout = smollm2_replay.document
    assert len(verdicts(checkout)) > 200
    assert verdicts(document) == verdicts(checkout)
    assert scores(document) == scores(checkout)
    assert document["run"]["live_requests"] == 0


def test_a_users_own_behaviour_runs_beside_the_shipped_ones_under_the_same_options(installed, tmp_path):
    """The user's behaviour and the shipped ultimatum, in one run: both collected, both played with
    the run's trials, and a threshold of each accepted (a misspelt one is refused, so each behaviour's
    names were read)."""
    folder = project(tmp_path, ("test_more_or_less.py", example_behaviour()))
    options = ("--gaamas-suite", "--gaamas-model=reference:rational", "--gaamas-trials=4", "-k", "more_or_less or test_ultimatum[",
               "--gaamas-threshold=more_or_less.min_rate=0.3", "--gaamas-threshold=ultimatum.min_acceptance=0.5")  # fmt: skip
    document, _ = run_log(installed, folder, *options)
    files = {item["test_id"].split("::")[0] for item in document["items"]}
    assert files == {"behaviours/test_more_or_less.py", "behaviours/test_ultimatum.py"}
    assert {score["n"] for score in document["scores"]} == {4}

    alone, _ = run_log(installed, folder, "--gaamas-model=reference:rational", "--gaamas-trials=4")
    assert {item["test_id"] for item in alone["items"]} == {"behaviours/test_more_or_less.py::test_more_or_less[reference-rational]"}


def test_the_projects_own_recordings_of_a_shipped_behaviour_are_read_before_the_shipped_ones(installed, tmp_path):
    """A project whose cassette folder holds a recording of the ultimatum for SmolLM2 replays the
    shipped ultimatum from its own folder, not from the package: an item whose cassette is not there
    fails for want of it there. An empty folder of the behaviour holds no recording, and hides none."""
    folder = project(tmp_path)
    own = folder / "cassettes" / "embedded-smollm2" / "ultimatum"
    own.mkdir(parents=True)
    command = [installed.python, "-m", "pytest", *documented_command(), "-k", "test_ultimatum[embedded-smollm2-proposer", "-p", "no:cacheprovider"]
    done = run(command, folder)
    assert "there is no cassette" not in done.stdout, done.stdout[-2000:]

    shutil.copy2(SHIPPED_CASSETTES / "test_ultimatum-proposer-actions.yaml", own)
    done = run(command, folder, expected=pytest.ExitCode.TESTS_FAILED)
    assert f"there is no cassette {own / 'test_ultimatum-proposer-strategy.yaml'} for test_ultimatum[embedded-smollm2-proposer-strategy]" in done.stdout
    assert " 1 failed, " in done.stdout, done.stdout[-2000:]


# -- the project's own virtual environment -------------------------------------------------------

#: The checkout's recordings of one shipped behaviour for SmolLM2.
SHIPPED_CASSETTES = ROOT / "cassettes" / "embedded-smollm2" / "ultimatum"


def in_project_environment(installed: Installed, folder: Path) -> Path:
    """The usual layout: ``python3 -m venv .venv`` in the project, the wheel installed there. Its interpreter."""
    return environment_with(installed.wheel, folder / ".venv")


def collected_ids(python: Path, folder: Path, *options: str) -> set[str]:
    said = run([python, "-m", "pytest", *options, "--collect-only", "-q", "-p", "no:cacheprovider"], cwd=folder).stdout
    return {line for line in said.splitlines() if "::" in line}


def test_the_suite_installed_in_the_projects_own_venv_is_collected_whole_beside_the_users_behaviour(installed, tmp_path):
    """pytest skips a project's ``.venv``: the shipped suite installed there is collected all the same,
    every item of it, beside the user's own behaviour, under the ids a checkout gives them."""
    folder = project(tmp_path, ("test_more_or_less.py", example_behaviour()))
    python = in_project_environment(installed, folder)
    checkout = collected_ids(Path(sys.executable), ROOT, "behaviours", *documented_command()[1:])
    assert len(checkout) > 200
    mine = {"behaviours/test_more_or_less.py::test_more_or_less[embedded-smollm2]"}
    assert collected_ids(python, folder, *documented_command()) == checkout | mine
    assert collected_ids(python, folder, *documented_command(), "behaviours") == checkout | mine


def test_a_run_saved_in_a_checkout_gates_the_suite_installed_in_the_projects_venv_cell_for_cell(installed, tmp_path):
    """The ultimatum's cells replayed in a checkout and saved, then replayed from a project whose venv
    holds the suite and compared with that run: every cell pairs with its own."""
    options = ["--gaamas-model=embedded:smollm2", "--gaamas-record=none", "-k", "test_ultimatum[", "-p", "no:cacheprovider"]
    run([sys.executable, "-m", "pytest", "behaviours/test_ultimatum.py", *options, f"--gaamas-runs-dir={tmp_path / 'runs'}",
         "--gaamas-save=checkout"], cwd=ROOT)  # fmt: skip
    saved = json.loads((tmp_path / "runs" / "checkout.json").read_text())
    folder = project(tmp_path)
    python = in_project_environment(installed, folder)
    document, _ = run_log(Installed(installed.sdist, installed.wheel, python), folder, *documented_command(), "-k", "test_ultimatum[",
                          f"--gaamas-compare={tmp_path / 'runs' / 'checkout.json'}")  # fmt: skip
    cells = document["comparison"]["cells"]
    assert len(saved["scores"]) >= 6 and len(cells) == len(saved["scores"])
    assert {item["test_id"] for item in document["items"]} == {item["test_id"] for item in saved["items"]}


# -- which cassettes a shipped behaviour reads -------------------------------------------------


def settings_for(tmp_path: Path, record: str = "none") -> Settings:
    shipped = (tmp_path / "site" / "shipped" / "behaviours", tmp_path / "site" / "shipped" / "cassettes")
    (shipped[1] / "embedded-smollm2" / "ultimatum").mkdir(parents=True)
    (shipped[1] / "embedded-smollm2" / "ultimatum" / "test_ultimatum-proposer-actions.yaml").write_text("interactions: []\n")
    shipped[0].mkdir()
    return Settings(models=("embedded:smollm2",), trials=None, seed=0, temperature=None, record=record, json_path=None,
                    cassette_dir=tmp_path / "project" / "cassettes", journal_dir=tmp_path / "journal", shipped=shipped)  # fmt: skip


def test_a_shipped_behaviour_replays_the_shipped_cassettes_of_a_model_they_hold(tmp_path):
    settings = settings_for(tmp_path)
    behaviours, cassettes = settings.shipped
    assert settings.for_item(behaviours / "test_ultimatum.py", "embedded-smollm2").cassette_dir == cassettes
    # a model the package holds no recording of, for this behaviour or at all: the project's folder
    assert settings.for_item(behaviours / "test_commons.py", "embedded-smollm2").cassette_dir == settings.cassette_dir
    assert settings.for_item(behaviours / "test_ultimatum.py", "ollama-mistral").cassette_dir == settings.cassette_dir
    # the user's own behaviour, wherever it lives
    assert settings.for_item(tmp_path / "project" / "behaviours" / "test_ultimatum.py", "embedded-smollm2") is settings


def test_the_projects_own_recordings_of_a_shipped_behaviour_win_and_recording_afresh_goes_there(tmp_path):
    settings = settings_for(tmp_path)
    behaviours = settings.shipped[0]
    (settings.cassette_dir / "embedded-smollm2" / "ultimatum").mkdir(parents=True)
    (settings.cassette_dir / "embedded-smollm2" / "ultimatum" / "test_ultimatum-responder-actions.yaml.gz").write_bytes(b"")
    assert settings.for_item(behaviours / "test_ultimatum.py", "embedded-smollm2") is settings
    recording = settings_for(tmp_path / "all", record="all")
    assert recording.for_item(recording.shipped[0] / "test_ultimatum.py", "embedded-smollm2") is recording


def test_an_empty_folder_of_the_projects_hides_no_shipped_cassette(tmp_path):
    """A folder left empty (a recording moved away, a ``mkdir`` ahead of one) or holding only a
    writer's lock holds no recording: the shipped cassettes replay."""
    settings = settings_for(tmp_path)
    behaviours, cassettes = settings.shipped
    own = settings.cassette_dir / "embedded-smollm2" / "ultimatum"
    own.mkdir(parents=True)
    (own / ".test_ultimatum-proposer-actions.yaml.lock").write_text("")
    assert settings.for_item(behaviours / "test_ultimatum.py", "embedded-smollm2").cassette_dir == cassettes


@pytest.mark.parametrize("mode", ["new_episodes", "once"])
def test_the_shipped_cassettes_are_only_replayed_whatever_the_runs_mode(tmp_path, mode):
    """A request the shipped cassette lacks is never recorded into the installed package: the shipped
    cassettes are replayed only, and a recording of the behaviour is made in the project's folder
    (``--gaamas-record=all``)."""
    settings = settings_for(tmp_path, record=mode)
    behaviours, cassettes = settings.shipped
    played = settings.for_item(behaviours / "test_ultimatum.py", "embedded-smollm2")
    assert (played.cassette_dir, played.record) == (cassettes, "none")
    # where the project's folder holds the behaviour, or the package does not, the run's mode stands
    assert settings.for_item(behaviours / "test_commons.py", "embedded-smollm2") is settings


def test_in_the_checkout_every_item_reads_and_writes_the_runs_own_cassette_folder(tmp_path):
    """``--gaamas-cassette-dir`` in the checkout is where the run replays and records: its ``cassettes/``
    is neither read behind it nor written. Run from another project (an editable install), the
    checkout's suite is shipped as an installed one is."""
    assert shipped_beside(ROOT) is None and shipped_beside(tmp_path) == shipped_suite()
    own = tmp_path / "cassettes"
    own.mkdir()
    item = "behaviours/test_ultimatum.py::test_ultimatum[embedded-smollm2-proposer-actions]"
    command = [sys.executable, "-m", "pytest", item, "--gaamas-model=embedded:smollm2", "--gaamas-record=none", f"--gaamas-cassette-dir={own}",
               "-p", "no:cacheprovider"]  # fmt: skip
    done = run(command, ROOT, expected=pytest.ExitCode.TESTS_FAILED)
    assert f"there is no cassette {own / 'embedded-smollm2' / 'ultimatum' / 'test_ultimatum-proposer-actions.yaml'}" in done.stdout


def test_a_cassette_folder_given_that_does_not_exist_is_refused_under_replay_only(behaviour_project):
    """Every item would fail one by one for want of its cassette, or, for a reference agent, the folder
    was never read: a mistyped folder is said at once."""
    missing = behaviour_project.path / "casettes"
    result = behaviour_project.runpytest("--gaamas-model=embedded:smollm2", "--gaamas-record=none", f"--gaamas-cassette-dir={missing}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--gaamas-cassette-dir: there is no folder {missing} to replay from; give the folder*"])
    assert "Traceback" not in result.stderr.str() and len([line for line in result.stderr.lines if line.strip()]) == 1


def test_in_a_checkout_the_shipped_suite_is_the_checkouts_own():
    assert shipped_suite() == (ROOT / "behaviours", ROOT / "cassettes")


def test_a_shipped_items_file_and_its_models_description_are_found_in_the_package(tmp_path):
    """What the plugin reads beside the cassettes: the behaviour file (whose digest says whether the
    null runs' figures are current) and the model's ``model.json`` (the recorded digest)."""
    settings = settings_for(tmp_path)
    behaviours, cassettes = settings.shipped
    (behaviours / "test_ultimatum.py").write_text("")
    (cassettes / "embedded-smollm2" / "model.json").write_text("{}")
    root = tmp_path / "project"
    test_id = "behaviours/test_ultimatum.py::test_ultimatum[embedded-smollm2-proposer-actions]"
    assert settings.behaviour_file(root, test_id) == behaviours / "test_ultimatum.py"
    assert settings.model_meta("embedded-smollm2") == cassettes / "embedded-smollm2" / "model.json"
    assert settings.model_meta("ollama-mistral") == settings.cassette_dir / "ollama-mistral" / "model.json"
    (root / "behaviours").mkdir(parents=True)
    (root / "behaviours" / "test_ultimatum.py").write_text("")
    (settings.cassette_dir / "embedded-smollm2").mkdir(parents=True)
    (settings.cassette_dir / "embedded-smollm2" / "model.json").write_text("{}")
    assert settings.behaviour_file(root, test_id) == root / "behaviours" / "test_ultimatum.py"
    assert settings.model_meta("embedded-smollm2") == settings.cassette_dir / "embedded-smollm2" / "model.json"
