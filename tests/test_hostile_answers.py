"""What a hostile or broken server answers is made safe where it enters: a lone surrogate is read as
U+FFFD (the session writes, replays and reports it), a control character is shown escaped in the
HTML report, a key reflected in ``system_fingerprint`` is kept nowhere, and a compressed body is
bounded as it inflates, not only as it arrives."""

import gzip
import json
import re
import socket
import threading
import unicodedata
import zlib
from contextlib import nullcontext

import pytest
from test_hostile_input import portfolio_request

from pytest_gaamas import cassettes, report_html, runlog
from pytest_gaamas.errors import ModelUnavailable
from pytest_gaamas.models import bounded
from pytest_gaamas.models.ollama_server import OllamaModel
from pytest_gaamas.models.openai_compatible import OpenAICompatibleModel

SECRET = "sk-live-0123456789abcdefSECRET"
MODEL = ("--gaamas-model=openai:fake", "--gaamas-concurrency=1", "--gaamas-trials=1")


def completion(content: str) -> dict:
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}  # fmt: skip


# -- lone surrogates ---------------------------------------------------------------------------------


def test_a_lone_surrogate_in_an_answer_is_recorded_replayed_and_written_as_a_replacement_character(
    behaviour_project, fake_chat_server, monkeypatch
):
    """JSON may escape half a surrogate pair (``"\\ud800"``), which no UTF-8 file can hold: the run
    log was then never written, and every replay of the cassette ended the session the same way."""
    server = fake_chat_server(content='{"asset_a": 50, "asset_b": 50, "note": "\ud800"}', message_extra={"reasoning_content": "\udfff"})
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    recorded = behaviour_project.runpytest(*MODEL, "--gaamas-record=new_episodes", "--gaamas-json=recorded.json")
    recorded.assert_outcomes(passed=1)
    server.close()
    replayed = behaviour_project.runpytest(*MODEL, "--gaamas-record=none", "--gaamas-json=replayed.json")
    replayed.assert_outcomes(passed=1)
    for name in ("recorded.json", "replayed.json"):
        play = next(iter(runlog.read(behaviour_project.path / name).plays.values()))
        first = play.trials[0]["rounds"][0]
        assert first["reply"].endswith('"note": "\ufffd"}') and first["thinking"] == "\ufffd"


def test_a_lone_surrogate_in_an_ollama_stand_in_error_sources_answer_is_a_replacement_character(monkeypatch):
    """The Ollama wire format, from a loopback stand-in (an error source, not an Ollama server)."""
    body = {"model": "m", "created_at": "2025-01-01T00:00:00Z", "done": True, "done_reason": "stop",
            "message": {"role": "assistant", "content": "{\"asset_a\": \"\ud800\"}", "thinking": "\udbff"}}  # fmt: skip
    with ErrorSource({"Content-Type": "application/json"}, json.dumps(body).encode()) as source:
        reply = OllamaModel("m", host=source.url).reply(portfolio_request())
    assert reply.text == '{"asset_a": "\ufffd"}' and reply.thinking == "\ufffd"
    reply.text.encode("utf-8")


# -- control characters in the HTML report -------------------------------------------------------------

#: What a terminal or a browser would act on or show reordered: an escape sequence (OSC 52), a
#: bidirectional override, a C1 control, a zero-width joiner, a bell.
CONTROLS = "\x1b]52;c;aGk=\x07 \u202eevil\u202c \x85\x9b2J \u200d"


def _run_log_replying(reply: str) -> runlog.RunLog:
    """A run log of one item whose one trial was answered ``reply``."""
    from pytest_gaamas.report import Score

    test_id = "behaviours/test_b.py::test_b[openai-m-actions]"
    score = Score(behaviour="b", test_id=test_id, model="openai:m", variant={"generation": "actions"}, metric="rate", score=0.5,
                  ci=(0.4, 0.6), n=2, invalid=0, passed=None, criterion="", table="T", columns=("x",), cells={"x": reply})  # fmt: skip
    round_ = {"seed": 1, "messages": [{"role": "user", "content": "ask"}], "reply": reply, "thinking": reply, "valid": False,
              "value": None, "reason": reply}  # fmt: skip
    play = {"id": "p", "behaviour": "b", "model": "openai:m", "game": reply, "game_fingerprint": "f", "generation": "actions",
            "seed": 1, "temperature": 0.0, "trials": [{"trial": 0, "rounds": [round_], "outcome": {"valid": False, "reason": reply}}]}  # fmt: skip
    document = {"format": runlog.FORMAT, "run": {"models": [{"model": "openai:m", "digest": reply}]}, "scores": [score.to_json()],
                "plays": {"p": play}, "items": [{"test_id": test_id, "behaviour": "b", "model": "openai:m", "variant": {}, "plays": ["p"],
                                                 "outcome": "failed"}],
                "findings": [{"test_id": test_id, "verdict": "missed", "finding": reply}]}  # fmt: skip
    return runlog.parse(json.dumps(document))


def test_control_characters_of_an_answer_are_shown_escaped_in_the_html_report_and_line_breaks_kept():
    page = report_html.render(_run_log_replying(f"first line\n{CONTROLS}\tlast"))
    acting = {char for char in page if unicodedata.category(char) in ("Cc", "Cf", "Cs") and char not in "\n\t"}
    assert not acting, sorted(map(hex, map(ord, acting)))
    assert "\\x1b]52;c;aGk=\\x07 \\u202eevil\\u202c \\x85\\x9b2J \\u200d" in page
    assert "first line\n\\x1b" in page and "\tlast" in page  # a reply's own lines, as it wrote them


# -- a key reflected in the fingerprint --------------------------------------------------------------


def test_a_key_reflected_in_system_fingerprint_is_not_the_models_digest(fake_chat_server):
    """model.json, every run log and the report carry the digest; the key never reaches any of them."""
    server = fake_chat_server(body_extra={"system_fingerprint": f"fp_{SECRET}"})
    model = OpenAICompatibleModel("openai:m", "m", base_url=server.url, api_key=SECRET)
    model.reply(portfolio_request())
    assert SECRET not in str(model.digest()) and model.digest() == "fp_REDACTED" and SECRET not in json.dumps(model.provenance())


def test_a_key_reflected_in_system_fingerprint_is_in_no_file_the_run_writes(behaviour_project, fake_chat_server, monkeypatch):
    server = fake_chat_server(body_extra={"system_fingerprint": f"fp_{SECRET}"})
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    result = behaviour_project.runpytest(*MODEL, "--gaamas-record=new_episodes", "--gaamas-json=run.json", "--gaamas-report=report.html")
    result.assert_outcomes(passed=1)
    written = {p: p.read_text(errors="replace") for p in behaviour_project.path.rglob("*") if p.is_file()}
    assert any("fp_REDACTED" in text for text in written.values())
    assert not [p for p, text in written.items() if SECRET in text]


# -- compressed answers ------------------------------------------------------------------------------


class ErrorSource:
    """A loopback stand-in for a server (not a model, not Ollama), an error source that answers every
    request with the same bytes, its status line and headers written by hand: a compressed body here,
    as a hostile server sends it."""

    def __init__(self, headers: dict[str, str], body: bytes):
        head = {**headers, "Content-Length": str(len(body)), "Connection": "close"}
        self.answer = ("HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items()) + "\r\n").encode() + body
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._answer_all, daemon=True).start()

    def _answer_all(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:  # closed: the test is over
                return
            with connection:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += connection.recv(1 << 16)
                head, _, body = request.partition(b"\r\n\r\n")
                length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
                while len(body) < length:
                    body += connection.recv(1 << 16)
                connection.sendall(self.answer)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.listener.close()


def padded(size: int) -> bytes:
    """A chat completion whose JSON holds ``size`` spaces: compressed, a few kilobytes."""
    text = json.dumps(completion('{"asset_a": 50, "asset_b": 50}'))
    return (text[:-1] + " " * size + "}").encode()


def deflated(data: bytes) -> bytes:
    return zlib.compress(data)


def raw_deflated(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


ENCODINGS = {"gzip": gzip.compress, "deflate": deflated, "raw deflate": raw_deflated,
             "gzip twice": lambda data: gzip.compress(gzip.compress(data))}  # fmt: skip
ENCODING_HEADER = {"gzip": "gzip", "deflate": "deflate", "raw deflate": "deflate", "gzip twice": "gzip, gzip"}


@pytest.mark.parametrize("recording", [False, True], ids=["sent", "recorded"])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_compressed_answer_inflating_past_the_bound_is_refused_in_one_line(monkeypatch, tmp_path, recording, encoding):
    """A few kilobytes inflating to 8 MiB against a bound of 1 MiB (2 MB of gzip inflates to 2 GiB
    against the real one); recorded too, where vcrpy inflated the whole body before anyone could look."""
    monkeypatch.setattr(bounded, "MAX_ANSWER_BYTES", 1 << 20)
    bomb = ENCODINGS[encoding](padded(8 << 20))
    assert len(bomb) < 64 << 10
    headers = {"Content-Type": "application/json", "Content-Encoding": ENCODING_HEADER[encoding]}
    with ErrorSource(headers, bomb) as source, pytest.raises(ModelUnavailable) as raised, (
        cassettes.cassette(tmp_path / "c.yaml", "all") if recording else nullcontext()
    ):
        OpenAICompatibleModel("openai:m", "m", base_url=f"{source.url}/v1", api_key="k").reply(portfolio_request())
    assert "larger than 1,048,576 bytes once decompressed" in str(raised.value) and "\n" not in str(raised.value)
    assert not (tmp_path / "c.yaml").exists()


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_compressed_answer_within_the_bound_is_read_recorded_plain_and_replayed(tmp_path, encoding):
    headers = {"Content-Type": "application/json", "Content-Encoding": ENCODING_HEADER[encoding]}
    with ErrorSource(headers, ENCODINGS[encoding](padded(100_000))) as source:
        model = OpenAICompatibleModel("openai:m", "m", base_url=f"{source.url}/v1", api_key="k")
        with cassettes.cassette(tmp_path / "c.yaml", "all"):
            assert model.reply(portfolio_request()).text == '{"asset_a": 50, "asset_b": 50}'
    assert "asset_a" in (tmp_path / "c.yaml").read_text()  # inflated before it was recorded
    with cassettes.cassette(tmp_path / "c.yaml", "none") as tape:
        assert cassettes.replayer(model, tape).reply(portfolio_request()).text == '{"asset_a": 50, "asset_b": 50}'


def test_an_answer_in_an_encoding_not_asked_for_is_not_a_chat_completion():
    """Brotli, which the client would inflate whole where the brotli package is installed: asked for
    gzip or deflate only, a server answering otherwise is read as it came, and is no chat completion."""
    headers = {"Content-Type": "application/json", "Content-Encoding": "br"}
    with ErrorSource(headers, b"\x1b\xff\xff" * 100) as source, pytest.raises(ModelUnavailable, match="not a chat completion"):
        OpenAICompatibleModel("openai:m", "m", base_url=f"{source.url}/v1", api_key="k").reply(portfolio_request())


def test_a_gzip_answer_inflating_past_the_bound_from_an_ollama_stand_in_error_source_is_refused_in_one_line(monkeypatch):
    """The Ollama wire format, from a loopback stand-in (an error source, not an Ollama server)."""
    monkeypatch.setattr(bounded, "MAX_ANSWER_BYTES", 1 << 20)
    body = b'{"model": "m", "done": true, "message": {"role": "assistant", "content": "x"}' + b" " * (8 << 20) + b"}"
    with ErrorSource({"Content-Type": "application/json", "Content-Encoding": "gzip"}, gzip.compress(body)) as source:
        with pytest.raises(ModelUnavailable) as raised:
            OllamaModel("m", host=source.url).reply(portfolio_request())
    assert "larger than 1,048,576 bytes once decompressed" in str(raised.value) and "\n" not in str(raised.value)
