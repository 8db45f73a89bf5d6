"""``model.json`` beside a model's cassettes: what the answers there were recorded from, read safely."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__, safejson
from .cassettes import ADDING_MODES, write_atomically
from .errors import ModelChanged, UnreadableFile

if TYPE_CHECKING:
    from .models import Model


def read_model_meta(path: Path) -> dict[str, Any]:
    """What ``model.json`` says of the model the cassettes beside it were recorded from."""
    meta = safejson.read_file(
        path, what="model description",
        remedy=f"restore it with `git checkout -- {path}`, or delete it and record again with --gaamas-record=all",
    )  # fmt: skip
    if not isinstance(meta, dict):
        raise UnreadableFile(f"{path}: not a model description (a JSON object); restore it with `git checkout -- {path}`")
    # Every field is text or null as written (the digest, the server, the version that recorded it): a
    # digest that is an object would be compared, shown and saved in the run log as one.
    wrong = [name for name, value in meta.items() if value is not None and not isinstance(value, str)]
    if wrong:
        named = ", ".join(repr(name[:40]) for name in wrong[:3]) + (f" and {len(wrong) - 3} more" * (len(wrong) > 3))
        raise UnreadableFile(
            f"{path}: not a model description: {named} {'is' if len(wrong) == 1 else 'are'} not text; restore it with "
            f"`git checkout -- {path}`, or delete it and record again with --gaamas-record=all"
        )
    return meta


def recorded_model(path: Path) -> tuple[dict[str, Any], str | None]:
    """What ``model.json`` says (nothing, when there is none), and why it cannot be read (None when
    it can): for a replay, which needs it only to say where its answers came from, and goes on."""
    if not os.path.lexists(path):
        return {}, None
    try:
        return read_model_meta(path), None
    except UnreadableFile as error:
        return {}, str(error)


def check_unchanged(meta_path: Path, model: Model, record: str) -> None:
    """Refuse to mix answers of two different models under one name in one cassette set."""
    if record not in ADDING_MODES or not meta_path.exists():
        return
    recorded = read_model_meta(meta_path).get("digest")
    current = model.digest()
    if recorded and current and recorded != current:
        raise ModelChanged(
            f"the cassettes in {meta_path.parent} were recorded from {recorded}, but {model.spec} is now "
            f"{current}. Re-record them all with --gaamas-record=all, or replay them with --gaamas-record=none."
        )


def write_model_meta(meta_path: Path, model: Model) -> None:
    """What the cassettes beside ``meta_path`` were recorded from, written where it changed."""
    meta = {**model.provenance(), "recorded_with": f"pytest-gaamas {__version__}"}
    if recorded_model(meta_path) == (meta, None):
        return  # a damaged one is replaced: `once` and `new_episodes` refused it before recording, `all` records afresh
    write_atomically(meta_path, json.dumps(meta, indent=2, sort_keys=True) + "\n", what="model description")
