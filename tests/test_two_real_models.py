"""The gating example of docs/gating.md with two real models, replayed from their cassettes: the
four behaviours both SmolLM2-135M and Qwen2.5-Coder-0.5B are recorded for whole. Qwen writes
strategies that run; SmolLM2 writes none. Saved from Qwen and compared with SmolLM2, the gate fails
on the strategy cells Qwen met and SmolLM2 lost; saved from SmolLM2 and compared with Qwen, it
passes, since SmolLM2 met nothing there that a gate could lose."""

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

BEHAVIOURS = ["behaviours/test_dictator_preferences.py", "behaviours/test_first_order_rationality.py",
              "behaviours/test_garp_consistency.py", "behaviours/test_preference_alignment.py"]  # fmt: skip
ALLOWED = ["--gaamas-compare-fail=rate=0.2", "--gaamas-compare-fail=dollars=10", "--gaamas-compare-fail=CCEI=0.05"]
MODELS = {"smollm2": "embedded:smollm2", "qwen": "embedded:qwen2.5-coder-0.5b"}


def run(tmp, *options: str) -> subprocess.CompletedProcess:
    private = [f"--gaamas-runs-dir={tmp / 'runs'}", f"--gaamas-journal-dir={tmp / 'journal'}", f"--gaamas-json={tmp / 'run.json'}",
               "-p", "no:cacheprovider", "-q"]  # fmt: skip
    command = [sys.executable, "-m", "pytest", *BEHAVIOURS, *options, *private]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "CI": "true"}, timeout=900)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("two-models")
    for name, spec in MODELS.items():
        done = run(tmp, f"--gaamas-model={spec}", f"--gaamas-save={name}")
        assert done.returncode == 0, done.stdout[-2000:]
    return tmp


def test_a_swap_that_loses_what_the_saved_model_had_fails_the_gate(saved):
    swap = run(saved, "--gaamas-model=embedded:smollm2", "--gaamas-compare=qwen", *ALLOWED)
    assert swap.returncode == 1, swap.stdout[-2000:]
    comparison = json.loads((saved / "run.json").read_text())["comparison"]
    lost = [c for c in comparison["cells"] if c["lost"]]
    assert lost and all("strategy" in json.dumps(c) for c in lost), lost  # Qwen's strategies ran, SmolLM2's do not
    assert "LOST dictator_preferences" in swap.stdout and "LOST preference_alignment" in swap.stdout


def test_a_swap_that_loses_nothing_the_saved_model_had_passes(saved):
    swap = run(saved, "--gaamas-model=embedded:qwen2.5-coder-0.5b", "--gaamas-compare=smollm2", *ALLOWED)
    assert swap.returncode == 0 and "DROP" not in swap.stdout and "LOST" not in swap.stdout, swap.stdout[-2000:]
    assert "56 cells paired" in swap.stdout
