"""What every model offers the plugin: a reply to a request, and what it can say about itself."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import Any

from ..play import Request

#: Replies are decisions, not essays: a cap keeps a rambling model from running for minutes.
MAX_REPLY_TOKENS = 256


def slug(text: str) -> str:
    """A file- and id-safe form of a name: letters, digits, '.', '_' and '-'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


class Model(ABC):
    """A source of decisions. ``spec`` is the canonical name, e.g. ``ollama:mistral-small``."""

    #: Whether replies come over HTTP, and so are recorded in and replayed from cassettes.
    uses_http = True

    def __init__(self, spec: str):
        self.spec = spec

    @property
    def test_id(self) -> str:
        """The model's part of a test id: Ollama names bare, as users type them, others prefixed."""
        prefix, _, name = self.spec.partition(":")
        return slug(name if prefix == "ollama" else f"{prefix}-{name}")

    @property
    def directory(self) -> str:
        """The model's folder under the cassette directory."""
        return slug(self.spec.replace(":", "-"))

    @abstractmethod
    def reply(self, request: Request) -> str:
        """The reply text to one request. Raises ModelUnavailable when no reply can be had."""

    def digest(self) -> str | None:
        """An identifier of the exact weights being served, where the server tells it."""
        return None

    def provenance(self) -> dict[str, Any]:
        return {"model": self.spec, "server": None, "digest": self.digest()}

    def close(self) -> None:
        """Release what the model holds (clients, servers)."""
