"""Trials played at once against a server that answers K requests at a time. Prints figures; asserts
nothing.

    python benchmarks/concurrency.py

The server here is a LOAD TARGET, NOT A MODEL: a loopback stand-in that waits a fixed delay per
request, with K slots (a request beyond K waits for one), and answers every round of
rock-paper-scissors with the same JSON. It measures what the plugin adds around a server's own
time: the wall time of one behaviour's trials (a 10-round repeated game, 32 trials, so 320 requests)
at --gaamas-concurrency N = 1, 4, 16, against the ideal of requests x delay / min(N, K). The delay,
200 ms, is a small model's short JSON answer on a GPU; the plugin's own work, about 4 ms a request
on 2 cores (the openai client, parsing, the journal), is what separates a run from the ideal.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_gaamas.games.repeated import RPS_WIN_DRAW_LOSS, HiddenPatternGame  # noqa: E402
from pytest_gaamas.models.openai_compatible import OpenAICompatibleModel  # noqa: E402
from pytest_gaamas.trials import play_trials  # noqa: E402

DELAY_S = 0.2
TRIALS = 32
ROUNDS = 10
ANSWER = json.dumps({"prediction": "Rock", "move": "Paper"})


def load_target(slots: int) -> ThreadingHTTPServer:
    """A loopback server that takes DELAY_S per request, ``slots`` at a time. Not a model."""
    gate = threading.Semaphore(slots)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with gate:
                time.sleep(DELAY_S)
            reply = {"id": f"t-{body.get('seed')}", "object": "chat.completion", "created": 0, "model": body["model"],
                     "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ANSWER}}]}  # fmt: skip
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def serve(slots: int, port) -> None:
    """The load target in a process of its own, so that it does not share the benchmark's GIL."""
    server = load_target(slots)
    port.put(server.server_address[1])
    threading.Event().wait()


def wall_time(slots: int, concurrency: int) -> float:
    port = multiprocessing.Queue()
    target = multiprocessing.Process(target=serve, args=(slots, port), daemon=True)
    target.start()
    model = OpenAICompatibleModel("openai:load-target", "load-target", base_url=f"http://127.0.0.1:{port.get()}/v1", api_key="none")
    game = HiddenPatternGame(RPS_WIN_DRAW_LOSS, (("Rock",),))
    start = time.perf_counter()
    records = play_trials(game, model, range(TRIALS), seed=0, temperature=0.0, concurrency=concurrency, finished=lambda r: None)
    elapsed = time.perf_counter() - start
    assert all(r.valid for r in records) and sum(len(r.rounds) for r in records) == TRIALS * ROUNDS
    model.close()
    target.terminate()
    target.join()
    return elapsed


def main() -> None:
    requests = TRIALS * ROUNDS
    print(f"load target: {DELAY_S * 1000:g} ms a request; {TRIALS} trials x {ROUNDS} rounds = {requests} requests\n")
    print(f"{'slots K':>7}  {'N':>3}  {'wall':>7}  {'ideal':>7}  {'over ideal':>10}")
    for slots, concurrency in ((16, 1), (16, 4), (16, 16), (8, 16)):
        ideal = requests * DELAY_S / min(concurrency, slots)
        measured = wall_time(slots, concurrency)
        print(f"{slots:>7}  {concurrency:>3}  {measured:6.2f}s  {ideal:6.2f}s  {100 * (measured / ideal - 1):9.1f}%")


if __name__ == "__main__":
    main()
