"""Running model-written code: one confined supervisor per strategy, a fresh confined process per trial.

A :class:`Sandbox` starts ``launch.py`` in a fresh interpreter (``-I -S -B``, empty environment,
throw-away working directory), which fixes what would differ between processes (string hashes,
addresses) and becomes ``runner.py``, a *supervisor* that never runs model-written code; for each
trial the supervisor forks, from its clean state, a relay and the relay a child, and the child runs
the strategy's module and answers the trial's calls over pipes, one JSON line each way. The two
modules say what each process may do and why. Every way a strategy can go wrong ends in a
:class:`StrategyFailure` whose ``kind`` says which, and never in an exception of another kind, a hung
test or a damaged host.

Nothing that crosses back is trusted: each answer is read with a deadline and a size limit, parsed
by :mod:`pytest_gaamas.safejson`, and checked by shape, by type and by size here, in the host, where
no strategy can reach. A strategy has a budget of wall-clock seconds and of answer bytes for all its
trials together, besides its per-call and per-trial limits.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import safejson
from ..confinement import ALLOWED_MODULES as ALLOWED_MODULES
from ..confinement import KINDS as KINDS
from ..confinement import StrategyFailure as StrategyFailure

LAUNCHER = Path(__file__).with_name("launch.py")
#: The layer the sandbox will not run without: the kernel's allow-list of system calls.
REQUIRED_LAYER = "seccomp"
#: How long the host waits for the sandbox's processes that it inherits when their supervisor dies
#: (they die with it, killed by the kernel, in well under this).
ORPHANS_SECONDS = 5.0
MAX_VALUE_DEPTH = 32
#: Each supervisor's throw-away folder, in the temporary folder: ``gaamas-strategy-XXXXXXXX``.
WORKDIR_PREFIX = "gaamas-strategy-"
NOBODY = 65534
#: The temporary folders this process has swept of what killed runs left.
_swept: set[str] = set()


@dataclass(frozen=True)
class Limits:
    #: Wall-clock seconds for one call, and for starting a trial (loading the strategy's module).
    call_seconds: float = 1.0
    start_seconds: float = 5.0
    #: Wall-clock seconds for everything a strategy does, all its trials together.
    total_seconds: float = 60.0
    #: CPU seconds for one trial's process, and for each of the supervisor's own (its life, a trial's
    #: relay). A trial's CPU limit stays well above ``start_seconds``: a loop while the strategy
    #: loads is then always the start's timeout, not a race between the wall clock and the kernel's
    #: CPU clock.
    trial_cpu_seconds: int = 8
    supervisor_cpu_seconds: int = 30
    memory_bytes: int = 256 << 20
    #: Characters a strategy may print per call (discarded), and bytes of one answer.
    output_bytes: int = 64 << 10
    #: Bytes of answers for all its trials together.
    total_output_bytes: int = 4 << 20
    #: Values in one returned structure.
    max_items: int = 10_000


class SandboxUnavailable(RuntimeError):
    """This host cannot confine a strategy (no seccomp: not Linux on x86-64 or arm64), so none is run."""


class Sandbox:
    """One strategy in its own confined process. Use as a context manager::

        with Sandbox(code, "my_share", ("pie",)) as box:
            box.start(seed=1)
            box.call(100)
    """

    def __init__(self, code: str, function: str, parameters: Sequence[str], limits: Limits = Limits()):
        self.code = code
        self.function = function
        self.parameters = tuple(parameters)
        self.limits = limits
        self.layers: tuple[str, ...] = ()
        self.calls = 0
        #: The supervisor, with its pipes, while it runs (``subprocess.Popen``).
        self._process: Any = None
        self._trial_open = False
        self._workdir: str | None = None
        self._workdir_lock: int | None = None
        self._answers = select.poll()  # poll, not select: a busy host's descriptors are numbered past 1,024
        self._buffer = b""
        self._received = 0
        self._deadline = 0.0
        self._failure: StrategyFailure | None = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- the strategy's life ------------------------------------------------------------------

    def start(self, seed: int) -> None:
        """A fresh process for a new trial, running the strategy's module with ``random`` seeded."""
        if self._process is None:
            self._spawn()
            self._ask({"op": "load", "code": self.code}, self.limits.start_seconds)
        self.finish()  # the last trial's processes end before the next trial's are made
        self._ask(
            {"op": "start", "seed": seed, "function": self.function, "arguments": list(self.parameters)},
            self.limits.start_seconds,
        )
        self._trial_open = True

    def call(self, *arguments: Any) -> Any:
        """The function's value for these arguments, made only of JSON's types."""
        if self._process is None:
            raise RuntimeError("start() the sandbox before calling the strategy")
        self.calls += 1
        return self._ask({"op": "call", "arguments": list(arguments)}, self.limits.call_seconds)["value"]

    def finish(self) -> None:
        """End the last trial: its process must have said nothing more and must exit at once."""
        if self._trial_open:
            self._trial_open = False
            self._ask({"op": "end"}, self.limits.start_seconds)

    def close(self) -> None:
        if self._process is not None:
            self._kill()
            for stream in (self._process.stdin, self._process.stdout):
                if stream:
                    try:
                        stream.close()
                    except OSError:
                        pass
            self._process = None
        if self._workdir:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        if self._workdir_lock is not None:
            os.close(self._workdir_lock)
            self._workdir_lock = None

    # -- the process ---------------------------------------------------------------------------

    def _spawn(self) -> None:
        self._workdir, self._workdir_lock = locked_workdir()
        if os.getuid() == 0:
            os.chown(self._workdir, NOBODY, NOBODY)
            os.chmod(self._workdir, 0o500)  # nobody may look, nobody may write
        self._deadline = time.monotonic() + self.limits.total_seconds
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-B", str(LAUNCHER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self._workdir,
            env={},
            start_new_session=True,  # its own process group, killed whole
            close_fds=True,
        )
        self._answers.register(self._process.stdout.fileno(), select.POLLIN)
        setup = {
            "host": os.getpid(),
            "modules": list(ALLOWED_MODULES),
            "memory_bytes": self.limits.memory_bytes,
            "total_cpu_seconds": self.limits.supervisor_cpu_seconds,
            "trial_cpu_seconds": self.limits.trial_cpu_seconds,
            "call_seconds": self.limits.call_seconds,
            "start_seconds": self.limits.start_seconds,
            "output_bytes": self.limits.output_bytes,
            "max_items": self.limits.max_items,
        }
        ready = self._ask(setup, self.limits.start_seconds)
        layers = ready.get("layers")
        if not isinstance(layers, list) or not all(isinstance(layer, str) for layer in layers):
            raise self._fail(StrategyFailure("crashed", "the sandbox did not start"))
        self.layers = tuple(layers) + CHILD_LAYERS
        if REQUIRED_LAYER not in layers:
            self.close()
            raise SandboxUnavailable(
                f"cannot confine model-written code on this host ({sys.platform}, {os.uname().machine}): "
                "strategies run only where Linux's seccomp filter is available (x86-64 or arm64)"
            )

    def _ask(self, message: dict, timeout: float) -> dict:
        if self._failure:
            raise self._failure
        try:
            self._process.stdin.write(_line(message))
            self._process.stdin.flush()
        except (OSError, ValueError):
            raise self._fail(self._death()) from None
        answer = self._read_answer(timeout)
        if answer.get("ok") is True:
            if "value" in answer:
                check_value(answer["value"], self.limits.max_items)
            return answer
        kind, detail = answer.get("kind"), answer.get("detail", "")
        if answer.get("ok") is not False or kind not in KINDS or not isinstance(detail, str):
            self._kill()
            raise self._fail(StrategyFailure("crashed", "the sandbox sent something that is not an answer"))
        self._kill()  # a strategy that failed once is not used again
        raise self._fail(StrategyFailure(kind, detail[:300]))

    def _read_answer(self, timeout: float) -> dict:
        remaining_budget = self._deadline - time.monotonic()
        over_budget = remaining_budget < timeout
        deadline = time.monotonic() + min(timeout, max(remaining_budget, 0.0))
        fd = self._process.stdout.fileno()
        limit = self.limits.output_bytes + 4096
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._kill()
                if over_budget:
                    raise self._fail(StrategyFailure("timeout", f"used its whole budget of {self.limits.total_seconds:g} s"))
                raise self._fail(StrategyFailure("timeout", f"no answer within {timeout:g} s"))
            if not self._answers.poll(remaining * 1000):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise self._fail(self._death())
            self._buffer += chunk
            self._received += len(chunk)
            if len(self._buffer) > limit:
                self._kill()
                raise self._fail(StrategyFailure("output limit", f"an answer of more than {limit} bytes"))
            if self._received > self.limits.total_output_bytes:
                self._kill()
                raise self._fail(
                    StrategyFailure("output limit", f"answers of more than {self.limits.total_output_bytes} bytes in all")
                )
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            answer = safejson.loads(line, max_depth=MAX_VALUE_DEPTH + 2)
        except safejson.JSONError:
            answer = None
        if not isinstance(answer, dict):
            self._kill()
            raise self._fail(StrategyFailure("crashed", "the sandbox sent something unreadable"))
        return answer

    def _death(self) -> StrategyFailure:
        """Why the supervisor ended, once it has."""
        try:
            code = self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._kill()
            return StrategyFailure("crashed", "the strategy's process stopped answering")
        self._reap_orphans()
        if code == -signal.SIGXCPU:
            return StrategyFailure("CPU limit", f"its supervisor used more than {self.limits.supervisor_cpu_seconds} CPU seconds")
        if code == -signal.SIGSYS:
            return StrategyFailure("forbidden operation", "a system call outside the sandbox's allow-list")
        if code < 0:
            return StrategyFailure("crashed", f"killed by {signal.Signals(-code).name}")
        return StrategyFailure("crashed", f"the strategy's process exited with status {code}")

    def _fail(self, failure: StrategyFailure) -> StrategyFailure:
        self._failure = failure
        return failure

    def _kill(self) -> None:
        if self._process is None:
            return
        if self._process.poll() is None:
            try:
                os.killpg(self._process.pid, signal.SIGKILL)  # while its group id cannot be anyone else's
            except (ProcessLookupError, PermissionError):
                self._process.kill()
            self._process.wait()
        self._reap_orphans()

    def _reap_orphans(self) -> None:
        """Where the host is PID 1 (a container) or a subreaper, the processes of a supervisor that died
        become the host's own children, and stay zombies for the host's whole life unless waited for.
        Only the sandbox's own process group is waited for; elsewhere that is no child at all."""
        deadline = time.monotonic() + ORPHANS_SECONDS
        while True:
            try:
                pid, _ = os.waitpid(-self._process.pid, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.001)


def locked_workdir() -> tuple[str, int]:
    """A new empty folder for a supervisor, and a descriptor that holds its lock for as long as this
    process keeps it open: the kernel lets go of the lock when the process ends, however it ends, so a
    folder nobody holds is one a killed run left. The temporary folder is swept of those first."""
    folder = tempfile.gettempdir()
    if folder not in _swept:
        _swept.add(folder)
        remove_stale_workdirs(folder)
    while True:
        path = tempfile.mkdtemp(prefix=WORKDIR_PREFIX)
        try:
            lock = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except FileNotFoundError:
            continue  # another process's sweep took it before it was locked
        try:
            # Locked, and still the folder of that name: a sweep removes a folder only while it holds its lock.
            if _lock(lock) and os.path.samestat(os.fstat(lock), os.lstat(path)):
                return path, lock
        except FileNotFoundError:
            pass
        os.close(lock)


def remove_stale_workdirs(folder: str) -> None:
    """Remove the supervisors' folders that no live process holds locked. Only folders of this
    user's (or of ``nobody``, to whom root gives them) are looked at; a symbolic link, or a name
    that changed what it points at while it was looked at, is left alone, and nothing is followed."""
    owners = {os.geteuid()} | ({NOBODY} if os.geteuid() == 0 else set())
    try:
        entries = [entry for entry in os.scandir(folder) if entry.name.startswith(WORKDIR_PREFIX)]
    except OSError:
        return
    for entry in entries:
        try:
            status = entry.stat(follow_symlinks=False)
            if not stat.S_ISDIR(status.st_mode) or status.st_uid not in owners:
                continue
            lock = os.open(entry.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            if os.path.samestat(status, os.fstat(lock)) and _lock(lock):
                shutil.rmtree(entry.path, ignore_errors=True)  # rmtree itself never follows a link
        finally:
            os.close(lock)


def _lock(fd: int) -> bool:
    import fcntl  # POSIX only, like every use of the sandbox; importing the package needs none

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


#: What each trial's process adds to the supervisor's layers (runner.CHILD_LAYERS).
CHILD_LAYERS = ("fresh process per trial", "seccomp allow-list per trial", "audit hook", "import allow-list")


def _line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def check_value(value: Any, max_items: int) -> None:
    """JSON's types, finite numbers, at most ``max_items`` values and MAX_VALUE_DEPTH levels, checked in
    the host whatever the sandbox's own checks said. ``runner.check_value`` is its twin in the
    supervisor, which may not import the project: two checks on two sides of a process boundary."""
    stack, count = [(value, 1)], 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > max_items:
            raise StrategyFailure("output limit", f"returned more than {max_items} values")
        if depth > MAX_VALUE_DEPTH:
            raise StrategyFailure("wrong return type", "returned a value nested too deeply")
        if isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif not isinstance(item, (str, int, float, bool, type(None))):
            raise StrategyFailure("wrong return type", f"returned a {type(item).__name__}")
