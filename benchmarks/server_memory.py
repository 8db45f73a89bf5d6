"""The embedded server's resident memory as its prompt cache fills. Prints numbers; asserts nothing.

    python benchmarks/server_memory.py [smollm2|gemma3-270m|qwen2.5-coder-0.5b] [conversations]

Starts the server the suite starts (pytest_gaamas.models.embedded), asks it ``conversations``
distinct conversations of about 400 prompt tokens each, one token of answer apiece (so what is timed
and measured is the prompt and its saved state), and prints the server's resident memory every ten.
Each saved state keeps its batch's logits besides the model's state; the cache's bound
(PROMPT_CACHE_BYTES) counts both, so the figure levels off near the bound plus the model.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from openai import OpenAI  # noqa: E402

from pytest_gaamas.models.embedded import EMBEDDED, PROMPT_CACHE_BYTES, LlamaCppServer  # noqa: E402


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "smollm2"
    conversations = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    server = LlamaCppServer(EMBEDDED[name])
    started = time.perf_counter()
    server.ensure_running()
    assert server.process is not None
    client = OpenAI(base_url=server.base_url, api_key="local")
    print(f"{name}: cache bound {PROMPT_CACHE_BYTES / 2**20:.0f} MiB; started in {time.perf_counter() - started:.1f} s, "
          f"{resident_mb(server.process.pid):.0f} MB resident")
    try:
        started = time.perf_counter()
        for index in range(1, conversations + 1):
            story = " ".join(f"Round {r} of game {index}: the opponent played Rock, then Paper." for r in range(30))
            client.chat.completions.create(model=name, max_tokens=1, temperature=0.0,
                                           messages=[{"role": "user", "content": story}])
            if index % 10 == 0:
                print(f"  after {index:3d} conversations: {resident_mb(server.process.pid):6.0f} MB resident, "
                      f"{(time.perf_counter() - started) / index:.2f} s a conversation")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
