"""What a strategy may do and how it fails: the modules it may import, the kinds of failure, and the
failure itself. Pure: the contract a game offers (``strategy``) reads these, and so does the sandbox
that enforces them (``sandbox``), which the games never import."""

from __future__ import annotations

from .inert import terminal

#: What a strategy may import: computation only, no I/O, no introspection of the interpreter.
ALLOWED_MODULES = (
    "math", "cmath", "random", "statistics", "itertools", "functools", "operator", "collections",
    "collections.abc", "heapq", "bisect", "string", "re", "fractions", "decimal", "typing", "dataclasses",
    "enum", "copy",
)
#: The kinds of failure, as the tables' JSON counts them.
KINDS = (
    "no code", "syntax error", "forbidden import", "forbidden operation", "wrong signature", "raised",
    "timeout", "CPU limit", "memory limit", "output limit", "wrong return type", "illegal action", "crashed",
)


class StrategyFailure(Exception):
    """A strategy that cannot be used; ``kind`` is one of :data:`KINDS`."""

    def __init__(self, kind: str, detail: str = ""):
        # The detail quotes the strategy's own exceptions and values: made inert here, once, so no run
        # log, report or terminal ever holds the escape, bell or bidirectional characters it chose.
        detail = terminal(detail)
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail

    @property
    def reason(self) -> str:
        return str(self)
