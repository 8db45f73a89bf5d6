"""What the suite asks, kept for the cue audit (:mod:`pytest_gaamas.cues`): loaded into a run of reference
agents with ``-p pytest_gaamas.cue_capture --gaamas-cue-capture=PATH``, it writes (to PATH, or PATH.gwN under
xdist) one JSON line per
request a reference agent answers: the prompt's messages, the answer's form (its JSON schema), and the
answer that reads the game (the rational one; the sustainable villager's in the commons), whatever the
agent playing answered. The run log then says which judged unit asked which prompt.

A separate plugin, never loaded by the suite itself: the audit needs the form and the right answer of
every prompt, which no run log keeps, and nothing else does.
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

from . import answers
from .models import reference

_kept: list[str] = []


def pytest_addoption(parser: Any) -> None:
    parser.addoption("--gaamas-cue-capture", metavar="PATH", help="write every prompt a reference agent is asked, with its "
                     "answer form and the answer that reads the game, to PATH (JSON lines), for python -m pytest_gaamas cue-audit")


def pytest_configure(config: Any) -> None:
    path = config.getoption("--gaamas-cue-capture")
    if not path:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None and config.pluginmanager.hasplugin("dsession"):
        return  # the xdist controller asks nothing: its workers keep what they are asked, each in a file of its own
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
