"""Where a run's numbers came from: plugin, models and their digests, seeds, trials, temperature, time."""

from __future__ import annotations

import platform
import sys
from datetime import datetime

from . import __version__
from .experiment import recorded_model


def _recorded(state, spec: str) -> dict:
    model = state.model(spec)
    meta, unreadable = recorded_model(state.settings.cassette_dir / model.directory / "model.json")
    if unreadable:  # said when the session began; the run log is written all the same
        return {"recorded_digest": None, "recorded_with": None, "recorded_unreadable": unreadable}
    return {"recorded_digest": meta.get("digest"), "recorded_with": meta.get("recorded_with")} if meta else {}


def run_provenance(state, *, finished: datetime) -> dict:
    settings = state.settings
    live = settings.record != "none"
    models = []
    for spec in settings.models:
        model = state.model(spec)
        # A replay-only run contacts no server, not even to ask for a digest.
        about = model.provenance() if live or not model.uses_http else {"model": spec, "digest": None}
        usage = state.collected.usage.get(spec)
        models.append({**about, **(_recorded(state, spec) if model.uses_http else {}), **({"usage": usage.to_json()} if usage else {})})
    return {
        "plugin": f"pytest-gaamas {__version__}",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "models": models,
        "seed": settings.seed,
        "trials": settings.trials or "paper",
        "temperature": settings.temperature if settings.temperature is not None else "paper",
        "record": settings.record,
        "live_requests": sum(usage.requests for usage in state.collected.usage.values()),
        "started": state.started.isoformat(timespec="seconds"),
        "finished": finished.isoformat(timespec="seconds"),
    }
