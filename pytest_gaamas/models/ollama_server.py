"""Models served by Ollama, through the official ``ollama`` client."""

from __future__ import annotations

import functools
import os
import random
import time

import httpx
import ollama

from ..errors import ModelUnavailable
from ..inert import terminal, whole
from ..play import Reply, Request
from ..redact import redact_text, redact_url, remember, scrub_known, url_secrets
from .base import Model
from .bounded import bounded_transport, too_large
from .http_errors import in_chain, is_transport_error, raise_if_cassette_miss
from .openai_compatible import refuse_unreadable_address

DEFAULT_HOST = "http://127.0.0.1:11434"
MAX_DIGEST_CHARS = 200
#: The first wait before a timed-out request is sent again; it doubles each time.
BACKOFF_S = 1.0


def timed_out(error: BaseException | None) -> bool:
    """Whether ``error`` is a timeout, however the client wrapped it: a server that took the request
    and did not answer in time, which is not a server that cannot be reached."""
    return in_chain(error, lambda e: isinstance(e, (httpx.TimeoutException, TimeoutError))) is not None


class _TimedOut(Exception):
    """A request that got no whole answer within --gaamas-timeout."""


class OllamaModel(Model):
    #: Ollama's own default of parallel requests per model (OLLAMA_NUM_PARALLEL) where memory allows.
    default_concurrency = 4

    def __init__(self, name: str, *, host: str | None = None):
        super().__init__(f"ollama:{name}")
        self.name = name
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        #: The server as it may be shown and written: without credentials in the URL.
        self.shown_url = redact_url(self.host)
        self._digest: str | None = None
        #: What of the host is a credential, scrubbed from whatever the client says.
        self._secrets = url_secrets(self.host)
        remember(*self._secrets)
        refuse_unreadable_address(self, "host", "OLLAMA_HOST" if host is None else "Ollama's host", "http://HOST:11434", scheme_optional=True)
        self._digest_asked = False

    @functools.cached_property
    def client(self):
        """The official client, made when first used, so that --gaamas-timeout is the one it reads with."""
        return ollama.Client(host=self.host, timeout=self.timeout, transport=bounded_transport(httpx, self.timeout))

    def reply(self, request: Request) -> Reply:
        """The answer; a request that times out is sent again as --gaamas-retries says, then the model is
        said too slow, not unreachable."""
        with self.released_if_unanswered():
            return self._reply(request)

    def _reply(self, request: Request) -> Reply:
        for retried in range(self.retries + 1):
            try:
                return self._chat(request)
            except _TimedOut:
                if retried < self.retries:
                    self.usage.retried("timeout")
                    time.sleep(BACKOFF_S * 2**retried * (1 + random.random() / 4))
        raise ModelUnavailable(
            f"Ollama at {self.shown_url} took the request but sent no whole answer within {self.timeout:g} s, "
            f"{self.retries + 1} times (--gaamas-timeout): the model may still be loading, or be too slow for that; "
            "raise --gaamas-timeout, or see what it is doing with `ollama ps` (what was answered is kept)"
        )

    def _chat(self, request: Request) -> Reply:
        if self.request_budget is not None:
            self.request_budget.take(request)
        try:
            response = self.client.chat(
                model=self.name,
                messages=[dict(m) for m in request.messages],
                format=dict(request.schema) or None,
                options={
                    "seed": request.seed,
                    "temperature": request.temperature,
                    "num_predict": self.token_budget(request),
                },
                stream=False,
                # Only when asked, so that the requests of a model that does not think stay as they
                # were recorded. An Ollama older than 0.9 ignores it and leaves the thinking in the
                # text, where <think> blocks are read apart from the answer all the same.
                **({"think": True} if self.think else {}),
            )
        except ollama.ResponseError as error:
            if error.status_code == 404:
                raise ModelUnavailable(
                    f"Ollama at {self.shown_url} has no model {self.name!r}: run `ollama pull {self.name}`"
                ) from None
            raise ModelUnavailable(f"Ollama at {self.shown_url} answered HTTP {error.status_code}: {redact_text(str(error.error))}") from None
        except Exception as error:  # vcrpy's refusal and transport errors surface unwrapped
            raise_if_cassette_miss(error, f"POST /api/chat (model {self.name!r}, seed {request.seed})")
            if timed_out(error):
                raise _TimedOut() from None
            if too_large(error) is not None:
                raise ModelUnavailable(
                    f"the answer from Ollama at {self.shown_url} is {too_large(error)}, far past any chat answer: "
                    "check that OLLAMA_HOST points at an Ollama server (what was answered before is kept)"
                ) from None
            if isinstance(error, (ValueError, TypeError, KeyError, AttributeError, RecursionError)):  # not Ollama's chat answer
                raise ModelUnavailable(self._not_an_answer(f"{type(error).__name__}: {error}")) from None
            if not is_transport_error(error):
                raise
            raise ModelUnavailable(  # the client's own words may name the host with its user and password
                f"cannot reach Ollama at {self.shown_url} ({redact_text(str(error), secrets=self._secrets)}); "
                "start it with `ollama serve`, or set OLLAMA_HOST"
            ) from None
        message = getattr(response, "message", None)
        if message is None or not isinstance(message.content or "", str):
            raise ModelUnavailable(self._not_an_answer("it has no message"))
        self.usage.answered({"prompt_tokens": getattr(response, "prompt_eval_count", None), "completion_tokens": getattr(response, "eval_count", None)})
        text, thinking = (scrub_known(whole(said or "")) for said in (message.content, message.thinking))
        return Reply(text, thinking, truncated=response.done_reason == "length")

    def _not_an_answer(self, problem: str) -> str:
        return (
            f"the answer from Ollama at {self.shown_url} is not a chat answer ({redact_text(problem)}): if it was replayed, "
            "record the cell afresh with --gaamas-record=all --gaamas-replace-recorded; if it came live, check that "
            "OLLAMA_HOST points at an Ollama server"
        )

    def digest(self) -> str | None:
        """The digest Ollama lists for the model; asked once, and only where it answers."""
        if not self._digest_asked:
            self._digest_asked = True
            try:
                listed = self.client.list().models
            except Exception:  # provenance is best effort: an unreachable server is reported by reply()
                return None
            wanted = {self.name, f"{self.name}:latest"}
            digest = next((m.digest for m in listed if m.model in wanted), None)
            # Kept only as what a digest is (sha256:<64 hex>, a few more characters at most): model.json
            # and every run log carry it, and the next run refuses a model.json past its size bound.
            self._digest = terminal(redact_text(digest, self._secrets)) if isinstance(digest, str) and len(digest) <= MAX_DIGEST_CHARS else None
        return self._digest

    def provenance(self) -> dict:
        return {"model": self.spec, "server": self.shown_url, "digest": self.digest()}
