"""A line now and then while a live cell waits on its model, so that a slow model, one still loading,
or a server that took a request and went quiet is seen waiting, not taken for a hung run.

Progress is said as trials finish; between two answers, which a reasoning model or a loaded server
may keep minutes apart, nothing would be said. ``Heartbeat`` says how long the cell has waited since
its last answer, every ``every`` seconds of silence, until the answer comes or the request's own
timeout (--gaamas-timeout) ends the wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

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
