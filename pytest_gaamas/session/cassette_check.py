"""The cassettes of a run: where its answers come from, said before anything runs, and the cassettes
no item used, which ``--gaamas-check-cassettes`` fails the run for (a rename must not orphan
recordings silently)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import cassettes
from ..model_meta import recorded_model

if TYPE_CHECKING:
    from ..models import Model
    from ..settings import Settings


def answer_sources(settings: Settings, models: Mapping[str, Model]) -> list[str]:
    """For each model with a server: how many cassettes it has, where, and whether a request may go live."""
    lines = []
    for spec, model in models.items():
        if not model.uses_http:
            continue
        folder = settings.cassette_dir / (model.directory + settings.cassette_suffix)
        held = len(cassettes.held(settings.cassette_dir, folder))
        if settings.record == "none":
            how = "replay only: a request no cassette holds fails"
        elif settings.record == "all":
            how = "--gaamas-record=all: every request goes live to the model and is recorded afresh"
        elif settings.record == "once":
            how = ("a cassette not there yet is recorded live from the model, whole; one that is there is replayed, "
                   "and a request it lacks fails (--gaamas-record=once; new_episodes also records what a cassette lacks)")  # fmt: skip
        else:
            how = ("anything not recorded there is asked live from the model and recorded "
                   "(--gaamas-record=new_episodes; --gaamas-record=none replays only)")  # fmt: skip
        lines.append(f"gaamas: {spec}: {held} cassettes in {folder}; {how}")
        if settings.record != "none" and not folder.exists():  # a mistyped folder would record, and pay, everything afresh
            lines.append(f"gaamas: WARNING: {folder} does not exist: every request of {spec} will be sent live and recorded "
                         "into a new folder; check --gaamas-cassette-dir, or give --gaamas-record=none to replay only")  # fmt: skip
        unreadable = recorded_model(settings.model_meta(model.directory))[1]
        lines += [f"gaamas: {unreadable}"] if unreadable else []
    return lines


@dataclass
class CassetteCheck:
    """The cassettes of the models run that no item used, and the lines that say so."""

    orphaned: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check(settings: Settings, models: Mapping[str, Model], used: set[str], ran: Iterable[str], root: Path) -> CassetteCheck:
    """Every cassette of ``models`` that no item used (``used``: relative paths), of the behaviours
    this run answers for (``ran``: the files whose items it collected)."""
    result = CassetteCheck()
    ran_files = {Path(file) for file in ran}
    for spec, model in models.items():
        if not model.uses_http:
            continue
        folder = settings.cassette_dir / (model.directory + settings.cassette_suffix)
        on_disk = {name for name in cassettes.held(settings.cassette_dir, folder) if answers_for(name, ran_files, root)}
        orphaned = sorted(on_disk - used)
        result.orphaned += orphaned
        result.notes.append(
            f"{spec}: {len(on_disk & used)} of {len(on_disk)} cassettes used"
            + (f"; {len(orphaned)} used by no item (a renamed test or reordered parameters?):" if orphaned else "")
        )
        result.notes += [f"    {name}" for name in orphaned]
    return result


def answers_for(cassette: str, ran: set[Path], root: Path) -> bool:
    """Whether this run answers for ``cassette`` (``model/behaviour/...``): the behaviours it ran
    do, and so do behaviours whose file is gone (their cassettes are orphans); a behaviour that
    exists beside those run but was not run (a new file not yet listed, a -k subset) does not."""
    parts = cassette.split("/")
    behaviour = parts[1] if len(parts) > 2 else ""
    if not behaviour or any(file.name == f"test_{behaviour}.py" for file in ran):
        return True
    return not any((root / file.parent / f"test_{behaviour}.py").is_file() for file in ran)
