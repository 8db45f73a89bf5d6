"""Credentials in a server's URL, as an unlucky user writes them and a hostile server reflects them:
remembered in every form they travel in (as written, percent-decoded, as the Basic token the client
sends), and never shown, also where the URL cannot even be read."""

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

import pytest
from test_hostile_input import portfolio_request

from pytest_gaamas import cassettes, redact
from pytest_gaamas.models.ollama_server import OllamaModel
from pytest_gaamas.models.openai_compatible import OpenAICompatibleModel, UnreadableAddress

SECRET = "sk-live-0123456789abcdefSECRET"
#: A password as the user must write it in a URL (``@`` and ``/`` percent-encoded), and as it is sent.
WRITTEN, SENT = "h%40nter%2F2pw", "h@nter/2pw"


class ReflectingSource:
    """A loopback stand-in for a chat server (not a model), an error source that answers each chat
    completion with the Authorization header it was sent, and the password in it, decoded."""

    def __init__(self):
        class Reflecting(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                authorization = self.headers.get("Authorization", "")
                decoded = base64.b64decode(authorization.removeprefix("Basic ")).decode()
                said = f"you sent {authorization!r}, that is {decoded!r}"
                body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m", "system_fingerprint": decoded,
                                   "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": said}}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Reflecting)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def reflecting():
    source = ReflectingSource()
    yield source
    source.close()


def test_a_percent_encoded_password_and_its_basic_token_are_scrubbed_as_sent(reflecting, tmp_path):
    """The client sends the password decoded, in a Basic token; a server that reflects either got it
    into the reply, the cassette, the digest and so the run log and the report."""
    model = OpenAICompatibleModel("openai:m", "m", base_url=f"http://alice:{WRITTEN}@127.0.0.1:{reflecting.port}/v1", api_key="k")
    token = base64.b64encode(f"alice:{SENT}".encode()).decode()
    with cassettes.cassette(tmp_path / "c.yaml", "all"):
        reply = model.reply(portfolio_request())
    assert "you sent 'Basic REDACTED', that is 'alice:REDACTED'" == reply.text
    for shown in (reply.text, str(model.digest()), model.shown_url, (tmp_path / "c.yaml").read_text()):
        for secret in (token, SENT, WRITTEN):
            assert secret not in shown, (secret, shown)


@pytest.mark.parametrize("url", ["http://alice:hunter2pw@[::1/v1?api-key=QUERYKEY", "http://alice:hunter2pw@127.0.0.1:port/v1",
                                 "http://alice:hunter2pw@/v1", "ftp://alice:hunter2pw@127.0.0.1/v1", "localhost:8000/v1"])  # fmt: skip
def test_a_malformed_server_url_is_one_line_that_shows_no_credentials(monkeypatch, url):
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    with pytest.raises(UnreadableAddress) as raised:
        OpenAICompatibleModel("openai:m", "m", api_key=SECRET)
    said = str(raised.value)
    assert said.startswith("OPENAI_BASE_URL ") and "is not a server's URL" in said and "write it as http://HOST:PORT/v1" in said
    assert "\n" not in said and "hunter2pw" not in said and "alice" not in said and "QUERYKEY" not in said
    assert redact.scrub_known("hunter2pw QUERYKEY") == "REDACTED REDACTED"  # remembered though the URL could not be read


def test_pytest_l_on_a_malformed_server_url_is_one_line_with_no_traceback_and_no_credentials(behaviour_project, monkeypatch):
    """``-l`` prints every frame's locals with a traceback; a URL that cannot be read was one, with
    urllib's locals holding the host and its password, and the API key in the model's."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://alice:hunter2pw@[::1/v1?api-key=QUERYKEY")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    result = behaviour_project.runpytest_subprocess("-l", "--gaamas-model=openai:fake", "--gaamas-trials=1", "--gaamas-record=new_episodes")
    shown = result.stdout.str() + result.stderr.str()
    assert "OPENAI_BASE_URL 'http://[::1/v1' is not a server's URL: a bracket of an IPv6 address is not closed" in shown, shown[-3000:]
    assert result.ret == pytest.ExitCode.INTERRUPTED and "Traceback" not in shown and "urlsplit" not in shown and "netloc" not in shown
    for secret in ("hunter2pw", "QUERYKEY", SECRET, "alice"):
        assert secret not in shown


@pytest.mark.parametrize("host", ["example.com:11434?key=abc", "alice:pw@example.com:11434?token=abc", "example.com:11434/?api-key=abc#xyz"])
def test_an_ollama_host_without_a_scheme_is_shown_without_its_query_key(host):
    """OLLAMA_HOST as ``host:port``, no scheme, with a short key in its query (no Ollama is asked)."""
    shown = OllamaModel("m", host=host).shown_url
    assert "example.com:11434" in shown and "REDACTED" in shown
    assert "abc" not in shown and "alice" not in shown and "pw" not in shown and "xyz" not in shown


def test_a_malformed_ollama_host_is_one_line_that_shows_no_credentials(monkeypatch):
    """OLLAMA_HOST that cannot be read (no Ollama is asked)."""
    monkeypatch.setenv("OLLAMA_HOST", "alice:hunter2pw@[::1:11434")
    with pytest.raises(UnreadableAddress) as raised:
        OllamaModel("m")
    assert str(raised.value).startswith("OLLAMA_HOST '[::1:11434' is not a server's URL") and "hunter2pw" not in str(raised.value)


def test_every_form_of_a_urls_credentials_is_remembered():
    secrets = redact.url_secrets(f"http://al%69ce:{WRITTEN}@h/v1?api-key=a%2Bb")
    assert {"al%69ce", "alice", WRITTEN, SENT, base64.b64encode(f"alice:{SENT}".encode()).decode(), "a+b", "a%2Bb"} <= set(secrets)
    assert unquote(WRITTEN) == SENT
