"""Nothing lost: every finished trial is written as it finishes, one JSON line a trial.

A test item's journal lives until the item has played all its trials. A run that dies (Ctrl-C, a dying
server) leaves it behind, and the next run of the same item, with the same model, game, seed and
temperature, takes the finished trials from it instead of asking the model again.
"""

from __future__ import annotations

import json
from pathlib import Path

from .play import TrialRecord

FORMAT = 1


class Journal:
    def __init__(self, path: Path, fingerprint: str):
        self.path = path
        self.fingerprint = fingerprint
        self.finished: dict[int, TrialRecord] = self._load()
        self._handle = None

    def _load(self) -> dict[int, TrialRecord]:
        try:
            lines = self.path.read_text().splitlines()
        except FileNotFoundError:
            return {}
        if not lines:
            return {}
        try:
            header = json.loads(lines[0])
        except ValueError:
            return {}
        if header.get("format") != FORMAT or header.get("fingerprint") != self.fingerprint:
            return {}  # another model, game, seed or temperature: nothing here is ours
        finished = {}
        for line in lines[1:]:
            try:
                record = TrialRecord.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError):
                break  # a line cut short by the crash; everything after it is unreliable
            finished[record.trial] = record
        return finished

    def write(self, record: TrialRecord) -> None:
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            resumed = list(self.finished.values())
            self._handle = self.path.open("w")
            self._handle.write(json.dumps({"format": FORMAT, "fingerprint": self.fingerprint}) + "\n")
            for old in resumed:
                self._handle.write(json.dumps(old.to_json()) + "\n")
        self._handle.write(json.dumps(record.to_json()) + "\n")
        self._handle.flush()  # a killed process loses nothing it finished
        self.finished[record.trial] = record

    def close(self, *, complete: bool) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if complete:
            self.path.unlink(missing_ok=True)
