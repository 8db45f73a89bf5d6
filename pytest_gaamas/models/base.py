"""What every model offers the plugin: a reply to a request, and what it can say about itself."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any

from ..play import Reply, Request
from ..usage import RequestBudget, Usage

#: Replies are decisions, not essays: a cap keeps a rambling model from running for minutes.
MAX_REPLY_TOKENS = 256
#: What a model that thinks before it answers gets on top of its answer's budget: DeepSeek-R1 and
#: Qwen3 reason for one to three thousand tokens over a one-shot game.
THINKING_TOKENS = 4096
#: How often a request refused for a while (a rate limit, a server fault, a timeout) is sent again.
DEFAULT_RETRIES = 4
#: The longest one request may take, its answer read whole (--gaamas-timeout): a reasoning model's long
#: answer comes well within it.
REQUEST_TIMEOUT_S = 300.0


#: What a file's name (``file_name``) may weigh: a journal is named after two of them, its fingerprint,
#: and a lock's or a temporary file's affixes, within the 255 bytes a file name may have.
MAX_NAME_BYTES = 96
#: Between a name's readable part and the digest that tells it apart; never in a slug.
DIGEST_MARK = "~"
_SLUG_SAFE = re.compile(r"[A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """A file- and id-safe form of a name: letters, digits, '.', '_' and '-'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def file_name(readable: str, exact: Any, *, unambiguous: bool) -> str:
    """``readable`` (a slug) as a file's name where it is ``unambiguous`` (no other ``exact`` has it)
    and short; else its first part and a digest of ``exact``, after ``DIGEST_MARK``: two names
    that slug alike ("risk averse", "risk-averse", a hyphen and its look-alike) or that are cut
    short alike never share a file, and a name never passes ``MAX_NAME_BYTES``."""
    if unambiguous and len(readable) <= MAX_NAME_BYTES:
        return readable
    digest = hashlib.sha256(json.dumps(exact, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{readable[: MAX_NAME_BYTES - len(digest) - 1].rstrip('-')}{DIGEST_MARK}{digest}"


class Model(ABC):
    """A source of decisions. ``spec`` is the canonical name, e.g. ``ollama:mistral-small``."""

    #: Whether replies come over HTTP, and so are recorded in and replayed from cassettes.
    uses_http = True
    #: Trials played at once unless --gaamas-concurrency says otherwise: what the server is good for.
    default_concurrency = 1

    def __init__(self, spec: str):
        self.spec = spec
        #: --gaamas-max-tokens: every reply's budget, thinking included, when set.
        self.max_tokens: int | None = None
        #: --gaamas-think: ask the server to think (Ollama's ``think``) and budget for it.
        self.think = False
        #: --gaamas-retries: how often a request refused for a while is sent again.
        self.retries = DEFAULT_RETRIES
        #: --gaamas-timeout: the longest one request may take, its answer read whole, in seconds.
        self.timeout = REQUEST_TIMEOUT_S
        self.usage = Usage()
        #: --gaamas-max-requests: the run's live requests, shared by its models and workers.
        self.request_budget: RequestBudget | None = None

    @property
    def thinks(self) -> bool:
        """Whether replies spend tokens on reasoning before the answer."""
        return self.think

    def token_budget(self, request: Request) -> int:
        """The most tokens a reply may take: the answer's need, plus room to think where the model thinks."""
        if self.max_tokens:
            return self.max_tokens
        answer = request.max_tokens(MAX_REPLY_TOKENS)
        return answer + THINKING_TOKENS if self.thinks else answer

    @property
    def test_id(self) -> str:
        """The model's part of a test id: Ollama names bare, as users type them, others prefixed."""
        prefix, _, name = self.spec.partition(":")
        return slug(name if prefix == "ollama" else f"{prefix}-{name}")

    @property
    def directory(self) -> str:
        """The model's folder under the cassette directory: ``prefix-name``, with a digest of the
        spec where that would not tell it from another's (a second ':', a look-alike hyphen, a
        space or a '/' in the name)."""
        prefix, _, name = self.spec.partition(":")
        readable = slug(self.spec.replace(":", "-"))
        exact = prefix.isalnum() and prefix.isascii() and _SLUG_SAFE.fullmatch(name) is not None and readable == f"{prefix}-{name}"
        return file_name(readable, self.spec, unambiguous=exact)

    @contextlib.contextmanager
    def replaying(self) -> Iterator[None]:
        """While the block runs, what the model answers was answered before (a journaled trial played
        again from its exchanges): nothing is taken from the run's budget, nor counted as asked live."""
        budget, usage = self.request_budget, self.usage
        self.request_budget, self.usage = None, Usage()
        try:
            yield
        finally:
            self.request_budget, self.usage = budget, usage

    @contextlib.contextmanager
    def released_if_unanswered(self) -> Iterator[None]:
        """While a request is sent: if it ends without an answer, the hold it took on the run's budget
        goes back at once, not when its thread next sends."""
        try:
            yield
        except BaseException:
            if self.request_budget is not None:
                self.request_budget.release()
            raise

    @abstractmethod
    def reply(self, request: Request) -> str | Reply:
        """The reply to one request. Raises ModelUnavailable when no reply can be had."""

    def digest(self) -> str | None:
        """An identifier of the exact weights being served, where the server tells it."""
        return None

    def provenance(self) -> dict[str, Any]:
        return {"model": self.spec, "server": None, "digest": self.digest()}

    def close(self) -> None:  # noqa: B027  (a model without clients or servers has nothing to release)
        """Release what the model holds (clients, servers)."""
