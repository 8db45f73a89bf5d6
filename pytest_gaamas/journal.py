"""Nothing lost: every finished trial is written as it finishes, one JSON line a trial.

A test item's journal lives until the item has played all its trials and its cassette is safely
written. A run that dies (Ctrl-C, SIGKILL, a dying server, a cassette that cannot be written) leaves
it behind, and the next run of the same item, with the same model, game, seed and temperature, takes
the finished trials from it instead of asking the model again, and puts their recorded HTTP
exchanges (kept in the journal too) back into the cassette.

The file is ``<item>.<fingerprint>.jsonl``: the fingerprint of model, game, seed and temperature is
in its name, so runs at another seed or temperature keep journals of their own. Its first line is a
header; each other line is one trial. A line that cannot be read (cut short by a crash, or damaged)
costs that line only: its trial is played again.

What a line says of its trial (the decisions, the outcome) is kept for whoever reads the file, and
never believed: anyone can write a journal. A run takes from it only the recorded exchanges, and
plays each trial again through the game from them (``recording.rebuilt_from_journal``), as a
replay would; a trial whose exchanges do not carry it to its end is played again in full. The file
is read within :data:`MAX_JOURNAL_BYTES` and only if it is a regular file (a FIFO would block).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from . import safejson
from .cassettes import (
    MAX_CASSETTE_BYTES,
    cannot_write,
    one_writer,
    recorded_exchange,
    refuse_past_bound,
    write_atomically,
)
from .errors import UnwritableOutput
from .play import TrialRecord

FORMAT = 2
#: A journal holds a cassette's exchanges and the trials' records beside them. Its writer refuses a
#: line that would take it past this (``refuse_past_bound``), as its reader would refuse the file.
MAX_JOURNAL_BYTES = 2 * MAX_CASSETTE_BYTES
#: What to do when a journal would pass it.
TOO_LARGE_JOURNAL = (
    "the trials it could not take are written into the cassette instead; answers this large are seldom a chat model's: "
    "check the server's URL, or lower --gaamas-max-tokens or --gaamas-trials"
)
#: Where else a journal may go, when its folder cannot take it.
ELSEWHERE = " or choose another --gaamas-journal-dir, then run again"


@dataclass
class JournalEntry:
    record: TrialRecord
    #: The HTTP exchanges recorded while the trial was played (empty for agents without a server).
    exchanges: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {**self.record.to_json(), "exchanges": self.exchanges}


class Journal:
    """One item's journal, which no other process writes while it is open (``cassettes.one_writer``):
    two runs of one item take turns, and the second finds the first's trials, or nothing once the
    first has finished and its cassette holds them."""

    def __init__(self, stem: Path, fingerprint: str, waiting: Callable[[], None] | None = None):
        self.path = stem.with_name(f"{stem.name}.{fingerprint}.jsonl")
        self.fingerprint = fingerprint
        #: Lines that could not be read, and so cost their trial.
        self.unreadable_lines = 0
        self._writer = contextlib.ExitStack()
        self._writer.enter_context(one_writer(self.path, waiting))
        try:
            self.finished: dict[int, JournalEntry] = self._load()
        except BaseException:
            self._writer.close()
            raise
        #: The trials it held when it was read: any other found at writing time was written since.
        self._read = set(self.finished)
        self._handle: TextIO | None = None
        #: The bytes written, kept within ``MAX_JOURNAL_BYTES``.
        self._size = 0

    def _load(self) -> dict[int, JournalEntry]:
        remedy = "move it away (its trials are then asked again), then run again"
        try:
            lines = safejson.read_bytes(self.path, what="journal", remedy=remedy, limit=MAX_JOURNAL_BYTES).split(b"\n")
        except FileNotFoundError:
            return {}
        finished = {}
        for line in lines:
            if not line.strip():
                continue
            try:
                data = safejson.loads(line)
                if isinstance(data, dict) and "format" in data and "trial" not in data:
                    if data.get("format") != FORMAT or data.get("fingerprint") != self.fingerprint:
                        return {}  # another format or another game: nothing here is ours
                    continue
                record = TrialRecord.from_json(data)
                exchanges = data.get("exchanges", [])
                if type(record.trial) is not int or not isinstance(exchanges, list):
                    raise TypeError("exchanges")
                for exchange in exchanges:
                    recorded_exchange(exchange)
            except (safejson.JSONError, KeyError, TypeError, ValueError, AttributeError):
                self.unreadable_lines += 1
                continue
            finished[record.trial] = JournalEntry(record, exchanges)
        return finished

    def keep(self, replayed: dict[int, TrialRecord]) -> None:
        """Of the trials finished before this run, the journal holds from now on those ``replayed``
        from their exchanges, with the records the replay made, not what its lines said."""
        self.finished = {trial: JournalEntry(record, self.finished[trial].exchanges) for trial, record in replayed.items()}

    def write(self, record: TrialRecord, exchanges: list[dict[str, Any]]) -> None:
        """One finished trial, flushed; ``UnwritableOutput`` where it cannot be, and ``TooLarge`` where
        it would take the journal past what its reader reads."""
        entry = JournalEntry(record, exchanges)
        line = json.dumps(entry.to_json()) + "\n"
        try:
            if self._handle is None:
                # Rewritten whole before the first new line, without the unreadable lines; atomically,
                # so that a crash now leaves the old journal, not half of one. Trials written since it
                # was read (by a writer that took no lock) are kept: a journal never loses a trial.
                unreadable, on_disk = self.unreadable_lines, self._load()
                self.unreadable_lines = unreadable  # counted when it was read
                written_since = {trial: old for trial, old in on_disk.items() if trial not in self._read}
                self.finished = written_since | self.finished
                lines = [json.dumps({"format": FORMAT, "fingerprint": self.fingerprint})]
                lines += [json.dumps(old.to_json()) for old in self.finished.values()]
                text = "\n".join(lines) + "\n"
                refuse_past_bound(self.path, len(text.encode("utf-8")) + len(line.encode("utf-8")), MAX_JOURNAL_BYTES, "journal",
                                  TOO_LARGE_JOURNAL)  # fmt: skip
                write_atomically(self.path, text, what="journal", elsewhere=ELSEWHERE)
                self._handle = self.path.open("a", encoding="utf-8")
                self._size = len(text.encode("utf-8"))
            size = len(line.encode("utf-8"))
            refuse_past_bound(self.path, self._size + size, MAX_JOURNAL_BYTES, "journal", TOO_LARGE_JOURNAL)
            self._handle.write(line)
            self._handle.flush()  # a killed process loses nothing it finished
            self._size += size
        except OSError as error:
            raise UnwritableOutput(cannot_write("journal", self.path, error, ELSEWHERE)) from None
        self.finished[record.trial] = entry

    def close(self, *, complete: bool) -> None:
        """``complete``: every trial is played and safe in the cassette, so the journal goes."""
        if self._handle is not None:
            # A line that did not fit (a full disk) was said when it was written; closing would only
            # try to write it again.
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None
        try:
            if complete:
                self.path.unlink(missing_ok=True)
        finally:
            self._writer.close()
