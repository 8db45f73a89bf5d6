"""A child process that must not outlive the process that started it (the embedded llama.cpp
server): the kernel signals it when its parent dies, and a watchdog thread checks for a new parent
besides, because the kernel's signal follows the parent *thread* and is Linux's alone."""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time

#: Set by the parent to its own pid in the child's environment.
PARENT_ENV = "GAAMAS_PARENT_PID"
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int, poll_seconds: float = 0.5) -> None:
    """End this process when ``parent`` is no longer its parent, however the parent ended."""
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the watchdog alone

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_seconds)
        os._exit(0)

    threading.Thread(target=watch, name="gaamas-parent-watchdog", daemon=True).start()
