"""A line now and then while a live cell waits on its model, so that a slow model, one still loading,
or a server that took a request and went quiet is seen waiting, not taken for a hung run.

Progress is said as trials finish; between two answers, which a reasoning model or a loaded server
may keep minutes apart, nothing would be said. ``Heartbeat`` says how long the cell has waited since
its last answer, every ``every`` seconds of silence, until the answer comes or the request's own
timeout (--gaamas-timeout) ends the wait.

An xdist worker has no terminal: what it would say (these lines, the trials' progress, a wait for
another run's lock) goes through a ``Relay``, a file the controller reads and says as it comes.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from .usage import appended_lines

#: Silence, in seconds, before the first line and between lines.
HEARTBEAT_EVERY_S = 30.0


class Heartbeat:
    """A context manager: while open, ``say`` is called from a daemon thread after every ``every``
    seconds without a ``beat()`` (an answer)."""

    def __init__(self, say: Callable[[str], None], what: str, *, timeout: float, every: float | None = None,
                 clock: Callable[[], float] = time.monotonic):  # fmt: skip
        self._say, self._what, self._timeout, self._clock = say, what, timeout, clock
        self._every = HEARTBEAT_EVERY_S if every is None else every
        self._last = clock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gaamas-heartbeat", daemon=True)

    def beat(self) -> None:
        """An answer came: the silence starts again."""
        self._last = self._clock()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            silent = self._clock() - self._last
            if silent >= self._every:
                self._say(f"{self._what}: still waiting for an answer, {silent:.0f} s since the last one "
                          f"(a request may take up to {self._timeout:g} s: --gaamas-timeout)")  # fmt: skip

    def __enter__(self) -> Heartbeat:
        self._last = self._clock()
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()


class Beating:
    """``agent`` whose every reply is a ``beat`` of ``heartbeat``: silence is counted from the last
    answer, not the last trial, which in a repeated game holds many."""

    def __init__(self, agent: Any, heartbeat: Heartbeat):
        self._agent, self._heartbeat = agent, heartbeat

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)

    def reply(self, request: Any) -> Any:
        try:
            return self._agent.reply(request)
        finally:
            self._heartbeat.beat()


#: How often the controller looks for lines its workers relayed.
RELAY_EVERY_S = 0.5


class Relay:
    """Lines said in xdist workers, carried to the controller's terminal: each worker appends its
    lines to ``path`` (made by the controller's ``open``), and while open, a thread of the controller's reads what was appended and
    hands each whole line to ``say``. Silence is what the heartbeat exists to break, so the lines
    cannot wait for xdist's next event, which a silent model never sends."""

    def __init__(self, path: Path | None, say: Callable[[str], None] | None = None) -> None:
        self.path, self._say = path, say
        self._read_to = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def send(self, line: str) -> None:
        """A worker's line, one line whatever it holds, appended whole among the other workers'."""
        assert self.path is not None, "a worker's relay is handed its path"
        with open(self.path, "ab") as relayed:
            fcntl.flock(relayed, fcntl.LOCK_EX)
            relayed.write(" ".join(line.splitlines()).encode("utf-8", "replace") + b"\n")

    def open(self) -> None:
        """On the controller, as its first worker starts: the file made, and read from now on."""
        if self._thread is not None:
            return
        handle, name = tempfile.mkstemp(prefix="gaamas-progress-")
        os.close(handle)
        self.path, self._read_to = Path(name), 0
        self._thread = threading.Thread(target=self._run, name="gaamas-relay", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(RELAY_EVERY_S):
            self.drain()

    def drain(self) -> None:
        """Every whole line appended since the last look, said."""
        with self._lock:
            if self.path is None:
                return
            lines, self._read_to = appended_lines(self.path, self._read_to)
            for line in lines:
                if self._say is not None:
                    self._say(line)

    def close(self) -> None:
        """The thread stopped, what is left said, and the file gone."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self.drain()
        self._thread = None
        if self.path is not None:
            self.path.unlink(missing_ok=True)
