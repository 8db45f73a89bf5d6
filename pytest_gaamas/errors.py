"""Errors that end a test item with one clear line saying what to do."""

from .verdicts import Verdict


class GaamasError(Exception):
    """Base class: the message is shown to the user as it is, without a traceback."""


class ModelUnavailable(GaamasError):
    """The server behind a model cannot be reached, died, or does not serve that model."""


class MissingCassette(GaamasError):
    """Replay-only mode met a request that no cassette holds."""


class NotRecordedYet(Exception):
    """A later look of a sequential design asked for trials that a replay holds no answer for: the
    cell's verdict is the one its last recorded look gave. Not a failure, and never shown as one."""


class ModelChanged(GaamasError):
    """The model behind a name is not the one its cassettes were recorded from."""


class UnreadableFile(GaamasError):
    """A file the suite reads (a cassette, a journal, a saved run, ``model.json``) is missing, corrupt
    or unreadable; the message names it and says what to do."""


class UnwritableOutput(GaamasError):
    """A file the suite must write (a cassette, a journal, the run's JSON) cannot be written; the
    message names it, says where what it held is kept, and what to do."""


class VerdictNotMet(Exception):
    """A behaviour's criterion was not met: a finding about the model, not an error of the suite.
    Its message is the finding, in one line; ``--gaamas-verdicts`` decides whether it fails the item.
    ``verdict`` says which: missed, at chance or inconclusive."""

    verdict: Verdict


class VerdictMissed(VerdictNotMet):
    """The trials show the criterion does not hold."""

    verdict = Verdict.MISSED


class VerdictAtChance(VerdictNotMet):
    """The trials show the model no better than chance at the criterion (an equivalence with chance)."""

    verdict = Verdict.AT_CHANCE


class VerdictInconclusive(VerdictNotMet):
    """The trials cannot decide whether the criterion holds (its interval straddles the threshold)."""

    verdict = Verdict.INCONCLUSIVE
