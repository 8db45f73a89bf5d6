"""Running model-written code: one child process per strategy, confined, called many times.

A :class:`Sandbox` starts ``runner.py`` in a fresh interpreter (``-I -S -B``, empty environment,
throw-away working directory), hands it the code once, and then calls the strategy's function over
pipes, one JSON line each way, so a 10-round game is ten calls to one process, not ten processes.
Every way a strategy can go wrong ends in a :class:`StrategyFailure` whose ``kind`` says which, and
never in an exception of another kind, a hung test or a damaged host.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RUNNER = Path(__file__).with_name("runner.py")
VIOLATION_EXIT = 86
#: What a strategy may import: computation only, no I/O, no introspection of the interpreter.
ALLOWED_MODULES = (
    "math", "cmath", "random", "statistics", "itertools", "functools", "operator", "collections",
    "collections.abc", "heapq", "bisect", "string", "re", "fractions", "decimal", "typing", "dataclasses",
    "enum", "copy",
)
#: The kinds of failure, as the tables' JSON counts them.
KINDS = (
    "no code", "syntax error", "forbidden import", "forbidden operation", "wrong signature", "raised",
    "timeout", "CPU limit", "memory limit", "output limit", "wrong return type", "illegal action", "crashed",
)


@dataclass(frozen=True)
class Limits:
    #: Wall-clock seconds for one call, and for loading the code and starting a trial.
    call_seconds: float = 1.0
    start_seconds: float = 5.0
    #: CPU seconds for the process's whole life (a strategy plays every trial in one process).
    cpu_seconds: int = 20
    memory_bytes: int = 256 << 20
    #: Characters a strategy may print per call (discarded) and bytes of one answer.
    output_bytes: int = 64 << 10
    file_bytes: int = 1 << 20
    #: Values in one returned structure.
    max_items: int = 10_000


class StrategyFailure(Exception):
    """A strategy that cannot be used; ``kind`` is one of :data:`KINDS`."""

    def __init__(self, kind: str, detail: str = ""):
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail

    @property
    def reason(self) -> str:
        return str(self)


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
        self._process: subprocess.Popen | None = None
        self._workdir: str | None = None
        self._buffer = b""
        self._failure: StrategyFailure | None = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- the strategy's life ------------------------------------------------------------------

    def start(self, seed: int) -> None:
        """A fresh copy of the strategy's module for a new trial, its ``random`` seeded."""
        if self._process is None:
            self._spawn()
            self._ask({"op": "load", "code": self.code}, self.limits.start_seconds)
        self._ask(
            {"op": "start", "seed": seed, "function": self.function, "arguments": list(self.parameters)},
            self.limits.start_seconds,
        )

    def call(self, *arguments: Any) -> Any:
        """The function's value for these arguments, made only of JSON's types."""
        if self._process is None:
            raise RuntimeError("start() the sandbox before calling the strategy")
        self.calls += 1
        return self._ask({"op": "call", "arguments": list(arguments)}, self.limits.call_seconds)["value"]

    def close(self) -> None:
        if self._process is not None:
            self._kill()
            for stream in (self._process.stdin, self._process.stdout):
                if stream:
                    stream.close()
            self._process = None
        if self._workdir:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    # -- the process ---------------------------------------------------------------------------

    def _spawn(self) -> None:
        self._workdir = tempfile.mkdtemp(prefix="gaamas-strategy-")
        if os.getuid() == 0:
            os.chown(self._workdir, 65534, 65534)  # the child runs as nobody, and writes only here
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-B", str(RUNNER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self._workdir,
            env={},
            start_new_session=True,  # its own process group, killed whole
            close_fds=True,
        )
        setup = {
            "workdir": self._workdir,
            "modules": list(ALLOWED_MODULES),
            "memory_bytes": self.limits.memory_bytes,
            "cpu_seconds": self.limits.cpu_seconds,
            "file_bytes": self.limits.file_bytes,
            "output_bytes": self.limits.output_bytes,
            "max_items": self.limits.max_items,
        }
        ready = self._ask(setup, self.limits.start_seconds)
        self.layers = tuple(ready.get("layers", ()))

    def _ask(self, message: dict, timeout: float) -> dict:
        if self._failure:
            raise self._failure
        try:
            self._process.stdin.write(json.dumps(message).encode() + b"\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._fail(self._death()) from None
        answer = self._read_line(timeout)
        if "violation" in answer:
            self._kill()
            raise self._fail(StrategyFailure("forbidden operation", f"{answer['violation']} {answer.get('detail', '')}".strip()))
        if not answer.get("ok", False):
            self._kill()  # a strategy that failed once is not used again
            raise self._fail(StrategyFailure(answer.get("kind", "crashed"), answer.get("detail", "")))
        return answer

    def _read_line(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        fd = self._process.stdout.fileno()
        limit = self.limits.output_bytes + 4096
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._kill()
                raise self._fail(StrategyFailure("timeout", f"no answer within {timeout:g} s"))
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise self._fail(self._death())
            self._buffer += chunk
            if len(self._buffer) > limit:
                self._kill()
                raise self._fail(StrategyFailure("output limit", f"an answer of more than {limit} bytes"))
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            self._kill()
            raise self._fail(StrategyFailure("crashed", "the strategy's process wrote something unreadable"))
        return answer

    def _death(self) -> StrategyFailure:
        """Why the process ended, once it has."""
        try:
            code = self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._kill()
            return StrategyFailure("crashed", "the strategy's process stopped answering")
        if code == -signal.SIGXCPU:
            return StrategyFailure("CPU limit", f"more than {self.limits.cpu_seconds} CPU seconds")
        if code == -signal.SIGXFSZ:
            return StrategyFailure("output limit", f"wrote a file of more than {self.limits.file_bytes} bytes")
        if code < 0:
            return StrategyFailure("crashed", f"killed by {signal.Signals(-code).name}")
        return StrategyFailure("crashed", f"the strategy's process exited with status {code}")

    def _fail(self, failure: StrategyFailure) -> StrategyFailure:
        self._failure = failure
        return failure

    def _kill(self) -> None:
        if self._process is None or self._process.poll() is not None:
            return
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            self._process.kill()
        self._process.wait()
