"""Turning what an HTTP client raises into an error that says what to do."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import MissingCassette


def in_chain(error: BaseException | None, matches: Callable[[BaseException], bool]) -> BaseException | None:
    """The first exception in ``error``'s chain (its causes and contexts) that ``matches``: however a
    client wraps what went wrong, the cause is read where it is."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if matches(error):
            return error
        error = error.__cause__ or error.__context__
    return None


def _cassette_refusal(error: BaseException | None) -> BaseException | None:
    """The vcrpy refusal hidden in an exception's chain, if replay-only mode, or ``once`` replaying a
    cassette that exists, refused a request."""
    return in_chain(error, lambda e: type(e).__name__ == "CannotOverwriteExistingCassetteException")


def raise_if_cassette_miss(error: BaseException, request_summary: str) -> None:
    refusal = _cassette_refusal(error)
    if refusal is None:
        return
    tape = getattr(refusal, "cassette", None)
    cassette = getattr(tape, "_path", "the cassette")
    if getattr(getattr(tape, "record_mode", None), "value", None) == "once":
        raise MissingCassette(
            f"--gaamas-record=once: {cassette} exists and holds no answer for {request_summary}; once records only "
            "cassettes that do not exist yet, as vcrpy's once does. Record what a cassette lacks with "
            "--gaamas-record=new_episodes (spelled once here before), or everything afresh with --gaamas-record=all."
        ) from None
    raise MissingCassette(
        f"replay only: no recorded answer for {request_summary} in {cassette}. Record what is missing from the model "
        "with --gaamas-record=new_episodes, or everything afresh with --gaamas-record=all."
    ) from None


_TRANSPORT_PACKAGES = {"httpx", "httpx2", "httpcore", "httpcore2", "h11"}


def is_transport_error(error: BaseException) -> bool:
    """A failure to exchange bytes with the server (refused, reset, closed mid-response)."""
    return isinstance(error, OSError) or type(error).__module__.split(".")[0] in _TRANSPORT_PACKAGES
