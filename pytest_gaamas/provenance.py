"""Where a run's numbers came from: plugin, models and their digests, seeds, trials, temperature, time.
Made from explicit arguments: the settings, the models the run resolved and what it asked of them."""

from __future__ import annotations

import platform
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from . import __version__
from .model_meta import recorded_model

if TYPE_CHECKING:
    from .models import Model
    from .usage import Usage


class RunSettings(Protocol):
    """What of a run's settings its provenance says (``settings.Settings`` has it all)."""

    @property
    def models(self) -> Sequence[str]: ...
    @property
    def record(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def trials(self) -> int | None: ...
    @property
    def temperature(self) -> float | None: ...
    @property
    def cassette_dir(self) -> Path: ...
    def model_meta(self, directory: str) -> Path: ...


def _recorded(settings: RunSettings, model: Model) -> dict[str, Any]:
    """What the model's cassettes say it was recorded with: the run's own, or the shipped suite's."""
    meta, unreadable = recorded_model(settings.model_meta(model.directory))
    if unreadable:  # said when the session began; the run log is written all the same
        return {"recorded_digest": None, "recorded_with": None, "recorded_unreadable": unreadable}
    return {"recorded_digest": meta.get("digest"), "recorded_with": meta.get("recorded_with")} if meta else {}


def run_provenance(settings: RunSettings, models: Mapping[str, Model], usage: Mapping[str, Usage], *,
                   started: datetime, finished: datetime, ask_models: bool = True) -> dict[str, Any]:  # fmt: skip
    """The run log's ``run``: ``models`` holds each spec of ``settings.models`` resolved; ``usage`` what
    the run asked of each server live. ``ask_models``: whether a server may be asked for its digest
    (not for a record that no file keeps: a digest would cost a request or hashing the weights)."""
    live = settings.record != "none" and ask_models
    described = []
    for spec in settings.models:
        model = models[spec]
        # A replay-only run contacts no server, not even to ask for a digest.
        about = model.provenance() if live or not model.uses_http else {"model": spec, "digest": None}
        used = usage.get(spec)
        recorded = _recorded(settings, model) if model.uses_http else {}
        described.append({**about, **recorded, **({"usage": used.to_json()} if used else {})})
    return {
        "plugin": f"pytest-gaamas {__version__}",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "models": described,
        "seed": settings.seed,
        "trials": settings.trials or "paper",
        "temperature": settings.temperature if settings.temperature is not None else "paper",
        "record": settings.record,
        "live_requests": sum(used.requests for used in usage.values()),
        "started": started.isoformat(timespec="seconds"),
        "finished": finished.isoformat(timespec="seconds"),
    }
