import json
import os
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]


def outcomes(result) -> dict[str, int]:
    """A pytester run's outcomes with a count, MISSED verdicts among them, warnings left out."""
    return {k: v for k, v in result.parseoutcomes().items() if v and k not in ("warnings", "warning", "deselected")}


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's exit may wait for a reaper that is slow to come)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def outlives(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` is still running after ``seconds``; killed if it is, so no test leaves it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not running(pid):
            return False
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    return True


class FakeChatServer:
    """A loopback stand-in for an OpenAI-compatible chat server (not a real model): answers every
    chat completion with ``content``, counts requests, and can be made to die after ``die_after``."""

    def __init__(self, content: str, die_after: int | None = None, delay: float = 0.0, message_extra=None, finish_reason="stop"):
        self.content = content
        self.lock = threading.Lock()
        self.in_flight = self.most_in_flight = 0
        self.message_extra = message_extra or {}
        self.finish_reason = finish_reason
        self.die_after = die_after
        self.delay = delay
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if fake.die_after is not None and len(fake.requests) >= fake.die_after:
                    self.connection.close()  # a dying server: no response at all
                    return
                with fake.lock:
                    fake.requests.append(body)
                    fake.in_flight += 1
                    fake.most_in_flight = max(fake.most_in_flight, fake.in_flight)
                if fake.delay:
                    time.sleep(fake.delay)
                with fake.lock:
                    fake.in_flight -= 1
                reply = {  # the same answer to the same request, however many arrive at once
                    "id": f"fake-{body.get('seed')}", "object": "chat.completion", "created": 0,
                    "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": fake.finish_reason,
                                 "message": {"role": "assistant", "content": fake.content, **fake.message_extra}}],
                }  # fmt: skip
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Set-Cookie", "session=secret")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_chat_server():
    servers = []

    def start(content='{"asset_a": 50, "asset_b": 50}', die_after=None, delay=0.0, **reply):
        server = FakeChatServer(content, die_after, delay, **reply)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def behaviour_project(pytester):
    """A pytester project holding the real GARP behaviour file and the shipped cassettes' location.
    Its one experiment (the fidelity test, which replays the same trials, is left out)."""
    pytester.makepyfile(test_garp_consistency=(ROOT / "behaviours" / "test_garp_consistency.py").read_text())
    pytester.makeini("[pytest]\naddopts = -k 'not fidelity'\n")
    return pytester
