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


def redact_text(text: str) -> str:
    """``text`` with every URL in it redacted (an error message that quotes the URL it failed on)."""
    return _URL.sub(lambda match: redact_url(match.group(0)) or "", text)
