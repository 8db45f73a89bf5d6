import contextlib
import fcntl
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import scipy.stats  # noqa: F401
import yaml
from hypothesis import settings

pytest_plugins = ["pytester"]
# scipy.stats (and scipy.special with it) is imported here, before any test: pytester's in-process runs
# drop the modules they imported, and numpy's C modules, once dropped, cannot be imported again.

# What parses and what is computed are tested here, not how fast: on a loaded two-core CI machine one
# example may take longer than hypothesis' default 200 ms without anything being wrong.
settings.register_profile("gaamas", deadline=None, print_blob=True)
settings.load_profile("gaamas")

ROOT = Path(__file__).resolve().parents[1]
#: The project's own behaviours, held to the rules of README "Writing a behaviour": recorded for
#: SmolLM2 at 30 trials a cell, passed by reference:rational and missed by reference:random wherever
#: theory defines the answer. A behaviour file not listed here (a user's) runs with the others and is
#: held to none of these until it is listed.
SHIPPED = (
    "agent_coordination", "belief_refinement", "belief_use", "commons", "coordination", "dictator_preferences",
    "first_order_rationality", "garp_consistency", "preference_alignment", "rational_vs_credible",
    "second_order_rationality", "ultimatum",
)  # fmt: skip
BEHAVIOURS = sorted(SHIPPED)
SHIPPED_FILES = [f"behaviours/test_{name}.py" for name in SHIPPED]
PAPER_TRIALS = 30
#: Behaviours whose cells play another number of trials than the paper's 30: the commons plays 10
#: societies of 4 villagers over 10 rounds a cell.
TRIALS_PER_CELL = {"commons": 10}
#: The looks of a cell's sequential design: it plays the paper's count, then twice and four times it
#: where the trials cannot decide (what a replay holds of them).
LOOKS = (1, 2, 4)
#: The trial counts a behaviour's plays may have: each look of its count; the prisoner's dilemma's named
#: action cells play 120 trials (its option orders crossed with which label names which action, 30 of each
#: pattern), its strategy cells and generated dilemmas the paper's 30, each with its looks.
PLAY_TRIALS = {"rational_vs_credible": {k * count for count in (PAPER_TRIALS, 120) for k in LOOKS}}


def play_trials(behaviour: str) -> set[int]:
    """The trial counts a play of ``behaviour`` may have."""
    return PLAY_TRIALS.get(behaviour, {k * TRIALS_PER_CELL.get(behaviour, PAPER_TRIALS) for k in LOOKS})


def run_behaviours(tmp: Path, *options: str) -> tuple[int, dict, str]:
    report = tmp / "run.json"
    command = [
        sys.executable, "-m", "pytest", *SHIPPED_FILES, "-q", "-p", "no:cacheprovider",
        f"--gaamas-json={report}", f"--gaamas-journal-dir={tmp / 'journal'}", *options,
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "CI": "true", "COLUMNS": "1000"}, timeout=1800)  # the blind panel plays 21 agents through every look: 13 min on 2 busy cores
    assert report.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return done.returncode, json.loads(report.read_text()), done.stdout


@dataclass(frozen=True)
class Replay:
    code: int
    document: dict
    output: str
    #: Where its run log, HTML report and Markdown summary were written.
    folder: Path


@pytest.fixture(scope="session")
def shared_folder(tmp_path_factory, worker_id) -> Path:
    """A folder every xdist worker of this test session sees (the session's own without xdist)."""
    return tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent


def run_behaviours_once(shared: Path, name: str, *options: str) -> tuple[int, dict, str, Path]:
    """``run_behaviours`` into ``shared / name`` once for the whole test session: the first xdist
    worker to ask runs it while the others wait, and each reads what it left."""
    folder, kept = shared / name, shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not kept.exists():
            folder.mkdir(exist_ok=True)
            code, _, output = run_behaviours(folder, *options)
            kept.write_text(json.dumps([code, output]))
        code, output = json.loads(kept.read_text())
    return code, json.loads((folder / "run.json").read_text()), output, folder


#: Where docs/gating.md holds its CI recipe, a GitHub Actions job, in the first YAML block after it.
CI_RECIPE_MARKER = "<!-- ci-recipe -->"


def ci_recipe() -> tuple[list[str], list[str]]:
    """The options of the CI recipe's two pytest steps, the baseline's and the candidate's, as written
    in docs/gating.md after ``pytest behaviours``."""
    page = (ROOT / "docs" / "gating.md").read_text()
    block = re.search(r"```yaml\n(.*?)```", page.split(CI_RECIPE_MARKER, 1)[1], re.DOTALL).group(1)
    steps = yaml.safe_load(block)["jobs"]["gate"]["steps"]
    commands = [shlex.split(step["run"]) for step in steps if "run" in step and step["run"].startswith("pytest")]
    assert len(commands) == 2 and all(words[:2] == ["pytest", "behaviours"] for words in commands), commands
    baseline, candidate = (words[2:] for words in commands)
    return baseline, candidate


@pytest.fixture(scope="session")
def smollm2_replay(shared_folder) -> Replay:
    """The whole suite replayed from SmolLM2's cassettes, offline, as CI would: the baseline step of
    docs/gating.md's CI recipe as written (it saves ``runs/baseline.json``), with a report, a summary
    and the cassette check beside it."""
    folder = shared_folder / "smollm2-replay"
    baseline, _ = ci_recipe()
    code, document, output, _ = run_behaviours_once(
        shared_folder, "smollm2-replay", *baseline, f"--gaamas-runs-dir={folder / 'runs'}", "--gaamas-check-cassettes",
        f"--gaamas-report={folder / 'report.html'}", f"--gaamas-markdown={folder / 'summary.md'}",
    )  # fmt: skip
    return Replay(code, document, output, folder)


def gaamas_command(*arguments: str) -> tuple[int, str, str]:
    """``python -m pytest_gaamas *arguments``, in this process: its exit code, what it printed, what it said on stderr."""
    from pytest_gaamas import __main__ as gaamas_main

    said, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(errors):
        code = gaamas_main.main(list(arguments))
    return code, said.getvalue(), errors.getvalue()


def outcomes(result) -> dict[str, int]:
    """A pytester run's outcomes with a count, MISSED verdicts among them, warnings left out."""
    return {k: v for k, v in result.parseoutcomes().items() if v and k not in ("warnings", "warning", "deselected")}


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's exit may wait for a reaper that is slow to come)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def outlives(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` is still running after ``seconds``; killed if it is, so no test leaves it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not running(pid):
            return False
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    return True


class FakeChatServer:
    """A loopback stand-in for an OpenAI-compatible chat server (not a real model): answers every
    chat completion with ``content``, counts requests, and can be made to die after ``die_after``.
    As an error source it first answers ``refusals`` in order, each (status, headers), as a rate
    limit or a fault would; ``usage`` is the token count each answer reports; ``body_extra``, fields
    added to each answer. As an error source it can also send an ``endless`` body (chunk after chunk,
    until the client stops reading or 256 MB), or ``trickle`` its answer a byte every so many seconds."""

    def __init__(self, content: str, die_after: int | None = None, delay: float = 0.0, message_extra=None, finish_reason="stop",
                 refusals=(), usage=None, body_extra=None, endless=False, trickle=0.0):  # fmt: skip
        self.body_extra = body_extra or {}
        self.endless, self.trickle = endless, trickle
        self.content = content
        self.lock = threading.Lock()
        self.in_flight = self.most_in_flight = 0
        self.message_extra = message_extra or {}
        self.finish_reason = finish_reason
        self.die_after = die_after
        self.delay = delay
        self.requests: list[dict] = []
        self.refusals = list(refusals)
        self.refused = 0
        self.usage = usage
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if fake.die_after is not None and len(fake.requests) >= fake.die_after:
                    self.connection.close()  # a dying server: no response at all
                    return
                with fake.lock:
                    refusal = fake.refusals.pop(0) if fake.refusals else None
                    fake.refused += refusal is not None
                if refusal is not None:
                    status, headers = refusal
                    error = json.dumps({"error": {"message": f"refused ({status})"}}).encode()
                    self.send_response(status)
                    for name, value in {"Content-Type": "application/json", "Content-Length": str(len(error)), **headers}.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(error)
                    return
                with fake.lock:
                    fake.requests.append(body)
                    fake.in_flight += 1
                    fake.most_in_flight = max(fake.most_in_flight, fake.in_flight)
                if fake.delay:
                    time.sleep(fake.delay)
                with fake.lock:
                    fake.in_flight -= 1
                reply = {  # the same answer to the same request, however many arrive at once
                    "id": f"fake-{body.get('seed')}", "object": "chat.completion", "created": 0,
                    "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": fake.finish_reason,
                                 "message": {"role": "assistant", "content": fake.content, **fake.message_extra}}],
                    **({"usage": fake.usage} if fake.usage else {}), **fake.body_extra,
                }  # fmt: skip
                data = json.dumps(reply).encode()
                if fake.endless or fake.trickle:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(1 << 40) if fake.endless else str(len(data)))
                    self.end_headers()
                    try:
                        if fake.endless:
                            for _ in range(4096):  # 256 MB at most: the client should stop long before
                                self.wfile.write(b" " * (1 << 16))
                        else:
                            for byte in data[:64]:  # long enough to outlast a short deadline
                                self.wfile.write(bytes([byte]))
                                self.wfile.flush()
                                time.sleep(fake.trickle)
                    except OSError:
                        pass  # the client stopped reading, as it should
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Set-Cookie", "session=secret")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.handle_error = lambda request, address: None  # a client that gave up (a timeout) is no news
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_chat_server():
    servers = []

    def start(content='{"asset_a": 50, "asset_b": 50}', die_after=None, delay=0.0, **reply):
        server = FakeChatServer(content, die_after, delay, **reply)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def behaviour_project(pytester):
    """A pytester project holding the real GARP behaviour file and the shipped cassettes' location.
    Its one experiment (the fidelity test, which replays the same trials, is left out)."""
    pytester.makepyfile(test_garp_consistency=(ROOT / "behaviours" / "test_garp_consistency.py").read_text())
    pytester.makeini("[pytest]\naddopts = -k 'not fidelity'\n")
    return pytester
