"""The files a run writes from its record: the run log (``--gaamas-json``, ``--gaamas-save``), kept
in the temporary folder where it cannot be written, and the HTML report and Markdown summary."""

from __future__ import annotations

import importlib
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import compare, runlog
from ..cassettes import write_atomically
from ..errors import UnwritableOutput

if TYPE_CHECKING:
    from ..settings import Settings

#: (option's path attribute, module that renders it, what it is called)
VIEWS = (("report_path", "report_html", "report"), ("markdown_path", "report_markdown", "summary"))


@dataclass
class Written:
    """What the outputs came to: said at the end of the summary."""

    #: (what, path) of the report and summary written.
    views: list[tuple[str, Path]] = field(default_factory=list)
    #: (name, path) of the run saved with --gaamas-save.
    saved: tuple[str, Path] | tuple[()] = ()
    #: Outputs that could not be written.
    errors: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.errors)


def write(settings: Settings, document: Mapping[str, Any], record: runlog.RunLog, started: datetime) -> Written:
    """The run log where the options ask for it, then the views drawn from ``record``, its reading."""
    written = Written()
    if settings.json_path:
        write_log(settings.json_path, document, started, written)
    if settings.save:
        path = compare.saved_path(settings.save, settings.runs_dir)
        if write_log(path, document, started, written):
            written.saved = (settings.save, path)
    write_views(settings, record, written)
    return written


def write_log(path: Path, document: Mapping[str, Any], started: datetime, written: Written) -> bool:
    """The run log at ``path``, whole or not at all. If it cannot be written there, it is written
    to a file in the temporary folder instead, and the error says where."""
    try:
        write_atomically(path, runlog.dumps(document, path), what="run")
        return True
    except UnwritableOutput as error:
        fallback = Path(tempfile.gettempdir()) / f"gaamas-run-{started:%Y%m%dT%H%M%S}-{os.getpid()}.json"
        try:
            write_atomically(fallback, runlog.dumps(document, fallback), what="run")
            kept = f"the run is kept in {fallback}"
        except UnwritableOutput:
            kept = "and it could not be kept elsewhere either"
        written.errors.append(f"{error}: {kept}")
        return False


def write_views(settings: Settings, record: runlog.RunLog, written: Written) -> None:
    """The HTML report and the Markdown summary, each a function of the record alone."""
    for attribute, module, what in VIEWS:
        path = getattr(settings, attribute)
        if path is None:
            continue
        try:
            render = importlib.import_module(f"..{module}", __package__).render  # matplotlib only when a report is asked for
            write_atomically(path, render(record), what=what)
            written.views.append((what, path))
        except UnwritableOutput as error:
            written.errors.append(str(error))
        except Exception as error:  # a report that cannot be drawn must not lose the run or end in a traceback
            kept = f"; the run log is in {settings.json_path}" if settings.json_path else ""
            written.errors.append(f"cannot write the {what} {path} ({type(error).__name__}: {str(error)[:200]}){kept}")
