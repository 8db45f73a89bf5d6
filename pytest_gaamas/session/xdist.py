"""What crosses xdist: the request cap's counter file and the file workers relay their progress
lines through, handed to each worker, and each worker's collector, sent once as it finishes and
merged on the controller (as syrupy sends its snapshots)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ..heartbeat import Relay
from ..runlog import Collector
from ..usage import RequestBudget

#: The key of a worker's results in xdist's ``workeroutput``.
WORKER_OUTPUT = "gaamas"
#: The key of the request cap's counter file in xdist's ``workerinput``.
REQUEST_COUNTER = "gaamas_request_counter"
#: The key of the file workers relay their progress lines through, in xdist's ``workerinput``.
PROGRESS_RELAY = "gaamas_progress_relay"
#: The controller's relay, where ``hand_budget`` finds it.
RELAY = pytest.StashKey[Relay]()


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def request_budget(config: pytest.Config, cap: int | None, dollars: float | None = None) -> RequestBudget | None:
    """The run's limits' counters: files the controller makes and hands to each xdist worker."""
    if cap is None and dollars is None:
        return None
    if is_worker(config):
        return RequestBudget(cap, Path(config.workerinput[REQUEST_COUNTER]), dollars)  # type: ignore[attr-defined]
    handle, name = tempfile.mkstemp(prefix="gaamas-requests-")
    os.close(handle)
    return RequestBudget(cap, Path(name), dollars)


def hand_budget(node: Any, budget: RequestBudget | None) -> None:
    """The controller tells a starting worker where the cap's counter is, and where to relay the
    lines it would say; the controller reads them from when its first worker starts."""
    if budget is not None:
        node.workerinput[REQUEST_COUNTER] = str(budget.path)
    relay = node.config.stash.get(RELAY, None)
    if relay is not None:
        relay.open()
        assert relay.path is not None
        node.workerinput[PROGRESS_RELAY] = str(relay.path)


def progress_relay(config: pytest.Config, say: Callable[[str], None]) -> Relay | None:
    """On a worker, where its lines go (None: a worker of an older controller, which reads none);
    on the controller, the relay that says its workers' lines with ``say``, read once workers start."""
    if is_worker(config):
        path = config.workerinput.get(PROGRESS_RELAY)  # type: ignore[attr-defined]
        return Relay(Path(path)) if path else None
    relay = config.stash[RELAY] = Relay(None, say)
    return relay


def send(config: pytest.Config, collected: Collector, *, plays: bool) -> None:
    """A worker's results, once, as it finishes; without the games played where no run log keeps them."""
    config.workeroutput[WORKER_OUTPUT] = json.dumps(collected.to_json(plays=plays))  # type: ignore[attr-defined]


def receive(node: Any, error: object, collected: Collector) -> str | None:
    """A finished worker's results merged into ``collected``; what to say where it crashed without any."""
    sent = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
    if sent is not None:
        collected.merge(json.loads(sent))
    elif error:
        return f"worker {getattr(node, 'gateway', node).id} crashed ({str(error)[:200]}): the scores of its items are not in the tables"
    return None
