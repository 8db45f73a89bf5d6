"""What the suite asks, kept for the cue audit (:mod:`pytest_gaamas.cues`): loaded into a run of reference
agents with ``-p pytest_gaamas.cue_capture --gaamas-cue-capture=PATH``, it writes (to PATH, or PATH.gwN under
xdist) one JSON line per
request a reference agent answers: the prompt's messages, the answer's form (its JSON schema), and the
answer that reads the game (the rational one; the sustainable villager's in the commons), whatever the
agent playing answered. The run log then says which judged unit asked which prompt.

A separate plugin, never loaded by the suite itself: the audit needs the form and the right answer of
every prompt, which no run log keeps, and nothing else does. Here too: the run that keeps them, and
the reading of what it kept into the judged units the audit (``cues.audit``) counts cues in.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import answers, runlog
from .cues import JUDGED, TOLERANCE, Asked, Bank, Finding, Unit, audit
from .models import reference

_kept: list[str] = []


def pytest_addoption(parser: Any) -> None:
    parser.addoption("--gaamas-cue-capture", metavar="PATH", help="write every prompt a reference agent is asked, with its "
                     "answer form and the answer that reads the game, to PATH (JSON lines), for python -m pytest_gaamas cue-audit")


def pytest_configure(config: Any) -> None:
    path = config.getoption("--gaamas-cue-capture")
    if not path:
        return
    workerinput = getattr(config, "workerinput", None)  # xdist's own mark of a worker (the environment may be a parent's)
    if workerinput is None and config.pluginmanager.hasplugin("dsession"):
        return  # the xdist controller asks nothing: its workers keep what they are asked, each in a file of its own
    worker = workerinput["workerid"] if workerinput else None
    config.add_cleanup(lambda: _write(f"{path}.{worker}" if worker else path))
    answered = reference.ReferenceAgent.reply

    def reply(self: reference.ReferenceAgent, request: Any) -> Any:
        if getattr(request.game, "contract", None) is None:  # a strategy's code request holds no decision
            _kept.append(json.dumps(_asked(request)))
        return answered(self, request)

    reference.ReferenceAgent.reply = reply  # type: ignore[method-assign]  # this process only


def _asked(request: Any) -> dict[str, Any]:
    kinds = getattr(request.game, "reference_kinds", reference.EVERY_GAME)
    right = request.game.reference_reply(reference.Reader.right(kinds), request.decision.situation, random.Random(request.seed))
    return {
        "messages": [m.get("content", "") for m in request.messages],
        "schema": request.schema,
        "right": answers.json_object(right),
    }


def _write(path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(line + "\n" for line in _kept)



def _key(messages: Sequence[str]) -> str:
    return hashlib.sha256("\x00".join(messages).encode()).hexdigest()


def read_capture(path: Path) -> dict[str, dict[str, Any]]:
    """What ``cue_capture`` kept at ``path`` (and at ``path``.gwN, its xdist workers'), by prompt."""
    kept = {}
    for one in [path, *sorted(path.parent.glob(path.name + ".gw*"))]:
        if not one.exists():
            continue
        with open(one, encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                kept[_key(record["messages"])] = record
    return kept


def option_fields(schema: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """The answer's option-valued fields and their options, as listed ("" for an answer that is one)."""
    if "enum" in schema:
        return {"": tuple(map(str, schema["enum"]))}
    return {name: tuple(map(str, spec["enum"])) for name, spec in schema.get("properties", {}).items() if "enum" in spec}


def judged_fields(item: Mapping[str, Any]) -> tuple[str, ...]:
    """The answer fields of ``item`` that its criterion judges against the answer that reads the game."""
    if item.get("variant", {}).get("generation") == "strategy":
        return ()
    return JUDGED.get(item["test_id"].partition("::")[2].partition("[")[0], ())


def units_of(run: Mapping[str, Any], captured: Mapping[str, Mapping[str, Any]],
             fields: Callable[[Mapping[str, Any]], Iterable[str]] = judged_fields) -> list[Unit]:
    """The judged units of a run log, each with the option-valued answers its plays asked in the
    fields ``fields`` says its criterion judges."""
    units = []
    for item in run["items"]:
        wanted = set(fields(item))
        if not wanted:
            continue
        unit = Unit(item["test_id"])
        for play in item["plays"]:
            for trial in run["plays"][play]["trials"]:
                for one in runlog._shared_expanded(trial.get("rounds", ())):
                    record = captured.get(_key([m.get("content", "") for m in one.get("messages", ())]))
                    if record is None:
                        continue
                    for name, options in option_fields(record["schema"]).items():
                        if name not in wanted:
                            continue
                        right = record["right"] if name == "" else record["right"].get(name)
                        if right is None:
                            continue
                        unit.fields.setdefault(name, []).append(Asked(tuple(record["messages"]), options, str(right)))
        if unit.fields:
            units.append(unit)
    return units


def every_field(item: Mapping[str, Any]) -> tuple[str, ...]:
    """Every option-valued field of every unit, strategy cells aside: ``cue-audit --all``."""
    return () if item.get("variant", {}).get("generation") == "strategy" else ("", *tuple(_ALL_FIELDS))


#: The option fields any shipped game's answer holds, for ``every_field``.
_ALL_FIELDS = ("action", "move", "prediction", "option", "decision", "choice")


def judged_files(folder: Path = Path("behaviours")) -> list[Path]:
    """The behaviour files of ``folder`` that hold a test the audit judges (``JUDGED``)."""
    return sorted(path for path in folder.glob("test_*.py")
                  if any(re.search(rf"^def {name}\(", path.read_text(encoding="utf-8"), re.MULTILINE) for name in JUDGED))


def capture(files: Sequence[Path], folder: Path, *, agent: str = "reference:random", workers: int = 2) -> tuple[Path, Path]:
    """Play ``files`` with ``agent`` (offline: a reference agent), keeping every prompt it is asked
    with its answer form and right answer, and the run log that says which unit asked which."""
    asked, run = folder / "asked.jsonl", folder / "run.json"
    command = [sys.executable, "-m", "pytest", *map(str, files), "-q", "-p", "no:cacheprovider", "-p", "pytest_gaamas.cue_capture",
               f"--gaamas-cue-capture={asked}", f"--gaamas-model={agent}", f"--gaamas-json={run}",
               f"--gaamas-journal-dir={folder / 'journal'}", "-n", str(workers)]
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}  # a test's worker is not the run's
    done = subprocess.run(command, capture_output=True, text=True, env={**inherited, "CI": "true"})
    if not run.exists():
        tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
        raise RuntimeError("the run that keeps the prompts failed: " + " | ".join(tail))
    return asked, run


def audit_files(files: Sequence[Path], folder: Path, *, every: bool = False, words: bool = False,
                tolerance: float = TOLERANCE, workers: int = 2) -> tuple[list[Unit], list[Finding]]:
    """Capture what ``files`` ask and audit it: the units audited and what the audit found."""
    asked, run = capture(files, folder, workers=workers)
    units = units_of(json.loads(run.read_text()), read_capture(asked), every_field if every else judged_fields)
    return units, audit(units, Bank.full(), tolerance=tolerance, words=words)
