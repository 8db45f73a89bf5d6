"""Credentials out of everything written or printed: a URL with ``user:password@`` or a key in its
query string (``?api-key=...``, as Azure OpenAI and some gateways take it) keeps its scheme, host,
port, path and harmless parameters, and loses the secrets."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "REDACTED"
#: Query parameters that carry credentials, compared without case, '-' and '_'.
SECRET_PARAMETERS = frozenset(
    {"apikey", "key", "token", "accesstoken", "authtoken", "auth", "authorization", "password", "passwd", "secret",
     "clientsecret", "sig", "signature", "code", "session", "sessionid", "xapikey", "bearer"}
)  # fmt: skip


def _is_secret(name: str) -> bool:
    plain = name.lower().replace("-", "").replace("_", "")
    return plain in SECRET_PARAMETERS or plain.endswith(("key", "token", "secret", "password"))


def redact_url(url: str | None) -> str | None:
    """``url`` without user-info, and with the values of key-bearing query parameters replaced."""
    if not url or ("@" not in url and "?" not in url):
        return url
    if "://" not in url:  # host[:port] with user-info, as OLLAMA_HOST may be written
        return url.rpartition("@")[2]
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return REDACTED  # not a URL we can take apart: show none of it
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED if _is_secret(k) else v) for k, v in pairs], safe="/:")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


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
    text = _URL.sub(lambda match: redact_url(match.group(0)) or "", text)
    text = _CREDENTIALS[0].sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _CREDENTIALS[1].sub(REDACTED, text)
    text = _CREDENTIALS[2].sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = " ".join(text.split())  # one line, whatever the server's text was
    return text if limit is None or len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"
