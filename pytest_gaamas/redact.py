"""Credentials out of everything written or printed: a URL with ``user:password@`` or a key in its
query string (``?api-key=...``, as Azure OpenAI and some gateways take it) or its path keeps its
scheme, host, port, path and harmless parameters, and loses the secrets (and its fragment, which no
client sends).

Where a credential sits is only half of it: a server may echo a key in an answer, an HTTP library
may log the URL it was given. So every credential a model is given is also *remembered*, by value
(:func:`remember`), and scrubbed wherever it appears: in what is recorded, in what is shown, and in
every log record made in the process (a record factory installed with the first credential), since
pytest prints captured logs into the terminal and JUnit XML."""

from __future__ import annotations

import base64
import logging
import re
import threading
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

REDACTED = "REDACTED"
#: Query parameters that carry credentials, compared without case, '-' and '_'.
SECRET_PARAMETERS = frozenset(
    {"apikey", "key", "token", "accesstoken", "authtoken", "auth", "authorization", "password", "passwd", "secret",
     "clientsecret", "sig", "signature", "code", "session", "sessionid", "xapikey", "bearer"}
)  # fmt: skip


def _is_secret(name: str) -> bool:
    plain = name.lower().replace("-", "").replace("_", "")
    return plain in SECRET_PARAMETERS or plain.endswith(("key", "token", "secret", "password"))


#: Shorter values (a user "admin", a password "pass") would scrub ordinary words from a model's
#: answers; where they sit in a URL, the URL's own redaction removes them.
MIN_REMEMBERED = 8
_known: set[str] = set()
_known_lock = threading.Lock()
#: A path segment this long with upper and lower case letters and digits is a key, not a name: model
#: and deployment names are lower case (``gpt-4o-mini-2024-07-18``).
_KEY_LIKE = re.compile(r"(?=[A-Za-z0-9_~.-]*[A-Z])(?=[A-Za-z0-9_~.-]*[a-z])(?=[A-Za-z0-9_~.-]*[0-9])[A-Za-z0-9_~.-]{20,}")


def remember(*secrets: str | None) -> None:
    """Credentials this process holds, scrubbed by value from everything shown, recorded or logged."""
    fresh = {secret for secret in secrets if secret and len(secret) >= MIN_REMEMBERED}
    with _known_lock:
        fresh -= _known
        if not fresh:
            return
        _known.update(fresh)
    _scrub_log_records()


def url_secrets(url: str | None) -> tuple[str, ...]:
    """What of ``url`` is a credential, in every form it travels in: its user and password as
    written and as sent (percent-decoded), the Basic token the client makes of them, key-bearing
    query values, key-like path segments, its fragment. A URL that does not parse still gives its
    user-info and query, cut apart by hand."""
    if not url:
        return ()
    user = password = fragment = None
    try:
        parts = urlsplit(_with_authority(url))
        user, password, fragment, query, path = parts.username, parts.password, parts.fragment, parts.query, parts.path
    except ValueError:  # an unclosed IPv6 bracket: the parts are where they would be
        _, user, password, _, path, query, fragment = _cut_apart(url)
    found = [user, password, fragment, *(unquote(part) for part in (user, password) if part)]
    if user or password:  # what an HTTP client sends for user-info: ``Authorization: Basic <token>``
        found.append(base64.b64encode(f"{unquote(user or '')}:{unquote(password or '')}".encode()).decode("ascii"))
    for name, value in parse_qsl(query, keep_blank_values=True):
        if _is_secret(name):
            found += [value, *re.findall(rf"(?:^|&){re.escape(name)}=([^&]*)", query)]  # decoded, and as written
    found += [segment for segment in path.split("/") if _KEY_LIKE.fullmatch(segment)]
    return tuple(dict.fromkeys(part for part in found if part))


def _cut_apart(url: str) -> tuple[str, str | None, str | None, str, str, str, str]:
    """A URL that :func:`urlsplit` refuses, cut where its parts would be: scheme, user, password,
    host (and port), path, query, fragment."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        scheme, rest = "", url
    rest, _, fragment = rest.partition("#")
    rest, _, query = rest.partition("?")
    authority, slash, path = rest.partition("/")
    credentials, at, host = authority.rpartition("@")
    user, colon, password = credentials.partition(":")
    return scheme, user if at else None, password if colon else None, host, slash + path, query, fragment


def _with_authority(url: str) -> str:
    """``url`` as :func:`urlsplit` reads its host: ``host:port`` without a scheme (OLLAMA_HOST) is
    otherwise read as a scheme and a path."""
    return url if "://" in url or url.startswith("//") else f"//{url}"


def has_known_secrets() -> bool:
    return bool(_known)


def scrub_known(text: str) -> str:
    """``text`` with every remembered credential replaced, longest first."""
    if not _known:
        return text
    for secret in sorted(_known, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


_factory_installed = False


def _scrub_log_records() -> None:
    """Every log record made from now on has its message scrubbed of remembered credentials and of
    URLs' credentials (httpx, openai and vcrpy log the URLs they request)."""
    global _factory_installed
    with _known_lock:
        if _factory_installed:
            return
        _factory_installed = True
    made = logging.getLogRecordFactory()

    def scrubbed_record(*args, **kwargs):
        record = made(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not format is left for logging to report
            return record
        cleaned = _URL.sub(lambda match: redact_url(match.group(0)) or "", scrub_known(message))
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return record

    logging.setLogRecordFactory(scrubbed_record)


def redact_url(url: str | None) -> str | None:
    """``url`` without user-info, fragment or key-like path segments, and with the values of
    key-bearing query parameters replaced."""
    if not url:
        return url
    url = scrub_known(url)
    if "@" not in url and "?" not in url and "#" not in url and not _KEY_LIKE.search(url):
        return url
    schemeless = "://" not in url  # host[:port][?query] with user-info, as OLLAMA_HOST may be written
    try:
        parts = urlsplit(_with_authority(url))
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # not a URL urllib takes apart (an unclosed IPv6 bracket): its host and path, as written
        scheme, _, _, host, path, _, _ = _cut_apart(url)
        return f"{scheme}://{host}{_without_keys(path)}" if scheme else f"{host}{_without_keys(path)}"
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED if _is_secret(k) else v) for k, v in pairs], safe="/:")
    shown = urlunsplit((parts.scheme, netloc, _without_keys(parts.path), query, ""))
    return shown.removeprefix("//") if schemeless else shown


def _without_keys(path: str) -> str:
    return "/".join(REDACTED if _KEY_LIKE.fullmatch(segment) else segment for segment in path.split("/"))


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,15}://[^\s'\"<>()]+")


#: Credentials as servers and proxies echo them: an Authorization header's scheme and token, a key
#: in the OpenAI style, and ``name: value`` or ``name=value`` where the name says it is secret.
_CREDENTIALS = (
    re.compile(r"(?i)\b(bearer|basic|token)\s+(?!REDACTED)[A-Za-z0-9._~+/=-]{6,}"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?i)([\"']?[a-z0-9_-]*(?:api[-_]?key|apikey|token|secret|password|passwd|authorization)[\"']?\s*[:=]\s*)"
               r"(?:bearer\s+|basic\s+)?[\"']?(?!REDACTED)[^\s\"',;&}]{4,}"),
)
#: A server's message is shown in one line: longer text is cut, saying how long it was.
MAX_SHOWN = 300


def redact_text(text: str, secrets: tuple[str | None, ...] = (), limit: int | None = MAX_SHOWN) -> str:
    """``text`` without credentials: every URL in it redacted (an error message that quotes the URL
    it failed on), ``secrets`` (a key we hold) wherever they appear, and anything that looks like a
    credential; on one line, cut to ``limit`` characters (a server's text; our own messages are not cut)."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    text = scrub_known(text)
    text = _URL.sub(lambda match: redact_url(match.group(0)) or "", text)
    text = _CREDENTIALS[0].sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _CREDENTIALS[1].sub(REDACTED, text)
    text = _CREDENTIALS[2].sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = " ".join(text.split())  # one line, whatever the server's text was
    return text if limit is None or len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"
