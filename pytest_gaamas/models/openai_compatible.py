"""Any OpenAI-compatible chat server (OpenAI, vLLM, llama.cpp, LM Studio), through the official client."""

from __future__ import annotations

import email.utils
import functools
import os
import random
import sys
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import pytest

from ..errors import ModelUnavailable
from ..inert import terminal, whole
from ..lazy import OnFirstUse
from ..play import Reply, Request
from ..redact import redact_text, redact_url, remember, scrub_known, url_secrets
from .base import Model
from .bounded import too_large
from .http_errors import in_chain, is_transport_error, raise_if_cassette_miss

# A replay is served from the cassette without the client (``cassettes.Replayer``): it is imported
# when a request goes to a server, or through vcrpy.
openai = OnFirstUse("openai")
httpx = OnFirstUse("httpx")
pydantic = OnFirstUse("pydantic")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: OpenAI's reasoning models: they think whatever is asked, take ``max_completion_tokens`` and refuse
#: ``temperature`` and ``max_tokens``.
OPENAI_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")
#: Where OpenAI-compatible servers put a reasoning model's thoughts: vLLM's and DeepSeek's field,
#: and the name some gateways and newer vLLM releases use.
REASONING_FIELDS = ("reasoning_content", "reasoning")
#: What is worth asking again, as the official clients retry: a lock timeout, a conflict, a rate
#: limit, a server's fault. Anything else would answer the same.
RETRIED_STATUSES = frozenset({408, 409, 429}) | frozenset(range(500, 600))
#: The first wait before asking again, doubled each time (1, 2, 4, 8 s), with up to a quarter more
#: at random so that trials played at once do not come back together.
BACKOFF_S = 1.0
#: The longest wait a server may ask for (Retry-After); one that asks for longer is said, not waited.
MAX_RETRY_AFTER_S = 120.0
#: A server's fingerprint names a build (``fp_44709d6fcb``); a longer one is not kept as the model's
#: digest, which model.json and every run log then carry.
MAX_FINGERPRINT_CHARS = 200


def unreadable() -> tuple[type[BaseException], ...]:
    """What the client raises on a body it cannot read as a chat completion (not JSON, the wrong shape)."""
    return (ValueError, TypeError, KeyError, AttributeError, RecursionError, openai.APIResponseValidationError)


def completion_problem(completion) -> str | None:
    """What keeps ``completion`` (JSON) from being a chat completion with an answer; None if nothing."""
    if not isinstance(completion, Mapping):
        return f"the body is {type(completion).__name__}, not a JSON object"
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices:
        return "it has no choices"
    if not isinstance(choices[0], Mapping) or not isinstance(choices[0].get("message"), Mapping):
        return "its first choice has no message"
    message = choices[0]["message"]
    if not isinstance(message.get("content") or "", str):
        return f"its message's content is {type(message.get('content')).__name__}, not text"
    return None


def _timed_out(error: BaseException) -> bool:
    """Whether ``error`` is a timeout, however the client wrapped it (a slow connect can arrive as a
    connection error caused by the socket's TimeoutError)."""
    return in_chain(error, lambda e: isinstance(e, (openai.APITimeoutError, TimeoutError, httpx.TimeoutException))) is not None


class UnreadableAddress(ModelUnavailable, pytest.Collector.CollectError):
    """A server's URL that cannot be read as one. Raised where the model is made, which is while the
    items are collected: pytest shows a collection error of this kind as its message alone, with no
    traceback whose locals (``-l``) would print the URL, password and all."""


def refuse_unreadable_address(model: Any, attribute: str, variable: str, example: str, *, scheme_optional: bool = False) -> None:
    """Raises :class:`UnreadableAddress` where the URL in ``model``'s ``attribute`` is no http(s) URL
    (or, ``scheme_optional``, ``host:port``) with a host and a port that is a number. Only ``model``
    is a local here: the URL is in no frame that a traceback shows."""
    try:
        address = urlsplit(getattr(model, attribute) if "://" in getattr(model, attribute) else f"//{getattr(model, attribute)}")
        _ = address.port  # a port that is no number from 0 to 65535 raises here
    except ValueError:  # not said as urllib says it, which may quote the host with its user-info
        problem = "a bracket of an IPv6 address is not closed, or its host or port cannot be read"
    else:
        schemes = ("http", "https", "") if scheme_optional else ("http", "https")
        problem = ("it names no host" if not address.hostname
                   else None if address.scheme in schemes else "it does not begin with http:// or https://")  # fmt: skip
    if problem is not None:
        raise UnreadableAddress(f"{variable} {model.shown_url!r} is not a server's URL: {problem}; write it as {example}")


def summary(request: Request, name: str) -> str:
    return f"POST /chat/completions (model {name!r}, seed {request.seed}, temperature {request.temperature:g})"


class OpenAICompatibleModel(Model):
    #: vLLM, llama.cpp with slots and hosted APIs batch many requests; a hosted API's rate limit is
    #: the user's to raise with --gaamas-concurrency.
    default_concurrency = 8

    def __init__(
        self,
        spec: str,
        name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        response_format: str = "json_schema",
        key_is_secret: bool = True,
    ):
        super().__init__(spec)
        self.name = name
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        #: The server as it may be shown and written: without credentials in the URL.
        self.shown_url = redact_url(self.base_url)
        remember(*url_secrets(self.base_url))
        refuse_unreadable_address(self, "base_url", "OPENAI_BASE_URL" if base_url is None else "the server's URL", "http://HOST:PORT/v1")
        # A replay never reaches the server, so a missing key only matters for a live request, and
        # the server's 401 then says so.
        key = api_key or os.environ.get("OPENAI_API_KEY") or "no-key-set"
        self._api_key = key
        remember(key if key_is_secret and key != "no-key-set" else None)
        # A query in the URL (Azure's and some gateways' ?api-key=...) is kept a query: the client
        # appends paths to base_url, which would put /chat/completions after it.
        address = urlsplit(self.base_url)
        self._client_arguments = {
            "base_url": urlunsplit((address.scheme, address.netloc, address.path, "", "")), "api_key": key,
            "default_query": dict(parse_qsl(address.query, keep_blank_values=True)) or None, "max_retries": 0,
        }  # fmt: skip
        self.response_format = response_format
        self._fingerprint: str | None = None

    @functools.cached_property
    def client(self):
        """The official client, made when a request first goes through it, reading every answer within
        a size and a deadline for the whole request (``bounded``)."""
        from .bounded import bounded_transport

        http = sys.modules[openai.DefaultHttpxClient.__mro__[1].__module__.split(".")[0]]
        transport = bounded_transport(http, self.timeout)
        return openai.OpenAI(**self._client_arguments, timeout=self.timeout, http_client=openai.DefaultHttpxClient(transport=transport))

    def _structured_output(self, schema) -> dict:
        if self.response_format == "json_object":
            return {"type": "json_object", "schema": dict(schema)}
        return {"type": "json_schema", "json_schema": {"name": "decision", "schema": dict(schema), "strict": True}}

    def _connection_failed(self) -> bool:
        """Called when the server cannot be reached; True to send the request once more."""
        return False

    def reply(self, request: Request) -> Reply:
        with self.released_if_unanswered():
            return self._reply(request)

    def _reply(self, request: Request) -> Reply:
        connection_retried = False
        retried = 0
        while True:
            try:
                if self.request_budget is not None:
                    self.request_budget.take(request)
                completion = self._complete(request)
                break
            except openai.NotFoundError:
                raise ModelUnavailable(
                    f"the server at {self.shown_url} does not serve a model named {self.name!r}; "
                    "check the name with GET /models on that server"
                ) from None
            except openai.AuthenticationError:
                raise ModelUnavailable(f"the server at {self.shown_url} refused the API key: set OPENAI_API_KEY") from None
            except openai.APIStatusError as error:
                status = error.status_code
                wait = self._wait_before_retry(error.response, retried) if status in RETRIED_STATUSES else None
                if wait is not None and retried < self.retries:
                    retried += 1
                    self.usage.retried(f"HTTP {status}")
                    time.sleep(wait)
                    continue
                raise ModelUnavailable(self._refused(error, retried, wait)) from None
            except Exception as error:  # connection errors arrive wrapped or raw, vcrpy's refusal raw
                raise_if_cassette_miss(error, summary(request, self.name))
                if too_large(error) is not None:
                    raise ModelUnavailable(
                        f"the answer from {self.shown_url} is {too_large(error)}, far past any chat completion: check that "
                        "OPENAI_BASE_URL points at an OpenAI-compatible server (what was answered before is kept)"
                    ) from None
                if _timed_out(error):
                    if retried < self.retries:
                        retried += 1
                        self.usage.retried("timeout")
                        time.sleep(self._backoff(retried - 1))
                        continue
                    raise ModelUnavailable(
                        f"the server at {self.shown_url} did not answer in time, {retried + 1} times; it may be overloaded: "
                        "lower --gaamas-concurrency, or run again later (what was answered is kept)"
                    ) from None
                if isinstance(error, openai.APIConnectionError) or is_transport_error(error):
                    if connection_retried or not self._connection_failed():
                        raise ModelUnavailable(self._unreachable(error)) from None
                    connection_retried = True
                    continue
                if isinstance(error, unreadable()):  # a body the client cannot read as a chat completion
                    raise ModelUnavailable(self._not_a_completion(f"{type(error).__name__}: {error}")) from None
                raise
        body = completion.model_dump(warnings=False) if isinstance(completion, pydantic.BaseModel) else completion
        problem = completion_problem(body)
        if problem is not None:
            raise ModelUnavailable(self._not_a_completion(problem))
        self.usage.answered(body.get("usage"))
        return self.read_completion(body)

    @staticmethod
    def _backoff(retried: int) -> float:
        return BACKOFF_S * 2**retried * (1 + random.random() / 4)

    def _wait_before_retry(self, response, retried: int) -> float | None:
        """How long to wait before asking again: what the server said (``retry-after-ms``,
        ``Retry-After`` in seconds or as a date), else the backoff; None where it asks for longer
        than ``MAX_RETRY_AFTER_S``."""
        headers = getattr(response, "headers", None) or {}
        asked = None
        try:
            if headers.get("retry-after-ms"):
                asked = float(headers["retry-after-ms"]) / 1000
            elif headers.get("retry-after"):
                raw = headers["retry-after"]
                try:
                    asked = float(raw)
                except ValueError:
                    when = email.utils.parsedate_to_datetime(raw)
                    asked = when.timestamp() - time.time()
        except (TypeError, ValueError, OverflowError):
            asked = None
        if asked is None or asked != asked:  # absent, unreadable or NaN: our own backoff
            return self._backoff(retried)
        return None if asked > MAX_RETRY_AFTER_S else max(0.0, asked)

    def _refused(self, error, retried: int, wait: float | None) -> str:
        said = f"the server at {self.shown_url} answered HTTP {error.status_code}: {self._scrubbed(error.message)}"
        if error.status_code in RETRIED_STATUSES and wait is None:
            return said + f" and asks to wait more than {MAX_RETRY_AFTER_S:g} s (Retry-After); run again later (what was answered is kept)"
        if retried:
            return said + f" ({retried + 1} times, waiting between); run again later or lower --gaamas-concurrency (what was answered is kept)"
        return said

    def wire_request(self, request: Request) -> tuple[str, str, dict]:
        """The method, path and JSON body the client sends for ``request`` (``_complete``'s call)."""
        arguments = self._arguments(request)
        body = {**{k: v for k, v in arguments.items() if k != "extra_body"}, **arguments["extra_body"]}
        return "POST", f"{urlsplit(self.base_url).path.rstrip('/')}/chat/completions", body

    def recorded_reply(self, completion) -> Reply | None:
        """The reply in a recorded chat completion, or None where it holds none (then the client
        reads it, as ``reply`` does, and says what is wrong)."""
        return None if completion_problem(completion) is not None else self.read_completion(completion)

    def read_completion(self, completion: Mapping) -> Reply:
        """The reply in a chat completion as JSON, live or recorded (``completion_problem`` is None)."""
        choice = completion["choices"][0]
        message = choice["message"]
        fingerprint = completion.get("system_fingerprint")
        if self._fingerprint is None and isinstance(fingerprint, str) and len(fingerprint) <= MAX_FINGERPRINT_CHARS:
            # model.json, every run log and the report carry it: a key a server reflects there is not kept.
            self._fingerprint = terminal(self._scrubbed(fingerprint))
        thinking = next((message[f] for f in REASONING_FIELDS if isinstance(message.get(f), str) and message[f]), "")
        # A server that echoes the key in its answer: scrubbed here as in the cassette, so live and replay agree.
        text, thinking = (scrub_known(whole(said)) for said in (message.get("content") or "", thinking))
        return Reply(text, thinking, truncated=choice.get("finish_reason") == "length")

    @property
    def reasoning_model(self) -> bool:
        return self.name.startswith(OPENAI_REASONING_PREFIXES)

    @property
    def thinks(self) -> bool:
        return self.think or self.reasoning_model

    def _complete(self, request: Request):
        return self.client.chat.completions.create(**self._arguments(request))

    def _arguments(self, request: Request) -> dict:
        # A free-text answer (a strategy's code) goes without response_format: the request, and so
        # its cassette entry, is then what it would be without structured output at all.
        structured = {"response_format": self._structured_output(request.schema)} if request.schema else {}
        if self.reasoning_model:  # no temperature: these models sample at their own
            sampling = {"max_completion_tokens": self.token_budget(request)}
        else:
            sampling = {"temperature": request.temperature, "max_tokens": self.token_budget(request)}
        return dict(
            model=self.name,
            # The messages go in extra_body, which the client sends as given: the request body is
            # byte for byte the same, and the client's per-field transform of a long conversation
            # (typing lookups for every message, each round) was most of the cost of a replay.
            messages=[],
            extra_body={"messages": [dict(m) for m in request.messages]},
            seed=request.seed,
            **sampling,
            **structured,
        )

    def _scrubbed(self, text: str) -> str:
        """A server's text without credentials: the API key wherever it is echoed, and whatever
        looks like one (``redact.redact_text``), cut to a line's length."""
        return redact_text(text, secrets=(self._api_key,))

    def _not_a_completion(self, problem: str) -> str:
        return (
            f"the answer from {self.shown_url} is not a chat completion ({self._scrubbed(problem)}): if it was replayed, "
            "record the cell afresh with --gaamas-record=all --gaamas-replace-recorded; if it came live, check that "
            "OPENAI_BASE_URL points at an OpenAI-compatible server"
        )

    def _unreachable(self, error: Exception) -> str:
        return (
            f"cannot reach the OpenAI-compatible server at {self.shown_url} ({error.__cause__ or error}); "
            "start it, or point OPENAI_BASE_URL at it"
        )

    def digest(self) -> str | None:
        return self._fingerprint

    def provenance(self) -> dict:
        return {"model": self.spec, "server": self.shown_url, "digest": self.digest()}

    def close(self) -> None:
        if "client" in self.__dict__:
            self.client.close()
