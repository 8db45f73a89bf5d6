"""``python -m pytest_gaamas.models.llama_server``: llama-cpp-python's OpenAI-compatible server,
with llama.cpp's runtime weight repacking turned off, and Gemma 3's chat format.

Repacking rearranges quantised weights for the batched CPU matrix kernels; with these Q4_1 weights
and llama-cpp-python 0.3.36 built for x86 CPUs with AVX-512, the repacked kernels crash the
process on the first batched prompt. Without repacking, batched prompt evaluation works and is
several times faster than evaluating one token at a time. The server's own options are unchanged.

The Gemma 3 GGUF we serve carries no chat template, and llama-cpp-python's built-in ``gemma``
format drops the system message, which holds the role a game assigns (a human, a rational agent).
``gemma3`` writes turns as Gemma 3's own template does: the system text opens the first user turn.

The prompt cache is bounded by what its states hold. Each saved state keeps the logits it was saved
with (the batch's rows times the vocabulary: 100 MB for SmolLM2, 310 MB for Qwen2.5, 540 MB for
Gemma 3) besides the model's own state, which alone the library counts, so a cache of 1 GiB grew
past 10 GB in one two-agent cell of SmolLM2.

The server dies with the process that started it, however that process ends (SIGKILL included):
the kernel signals it when its parent dies, and a watchdog thread checks for a new parent besides.
"""

from __future__ import annotations

import os

import llama_cpp
import llama_cpp.llama_cpp as llama_cpp_api
from llama_cpp.llama_chat_format import ChatFormatterResponse, register_chat_format

from .lifeline import PARENT_ENV, die_with_parent

_default_model_params = llama_cpp_api.llama_model_default_params
GEMMA3_TURN_END = "<end_of_turn>\n"


def model_params_without_repacking():
    params = _default_model_params()
    params.use_extra_bufts = False
    return params


class MeasuredRAMCache(llama_cpp.LlamaRAMCache):
    """llama-cpp-python's RAM cache, counting every byte a saved state holds."""

    @property
    def cache_size(self) -> int:
        return sum(state_bytes(state) for state in self.cache_state.values())


def state_bytes(state) -> int:
    return int(state.llama_state_size) + int(state.scores.nbytes) + int(state.input_ids.nbytes)


def gemma3_prompt(messages: list[dict]) -> str:
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system" and m.get("content"))
    turns: list[str] = []
    for message in (m for m in messages if m["role"] != "system"):
        content = message.get("content") or ""
        if system and not turns and message["role"] == "user":
            content = f"{system}\n\n{content}"
        role = "model" if message["role"] == "assistant" else "user"
        turns.append(f"<start_of_turn>{role}\n{content}{GEMMA3_TURN_END}")
    return "".join(turns) + "<start_of_turn>model\n"


def format_gemma3(messages, **_) -> ChatFormatterResponse:
    return ChatFormatterResponse(prompt=gemma3_prompt(messages), stop=[GEMMA3_TURN_END, "<end_of_turn>"])


if __name__ == "__main__":
    if os.environ.get(PARENT_ENV, "").isdigit():
        die_with_parent(int(os.environ[PARENT_ENV]))
    llama_cpp_api.llama_model_default_params = model_params_without_repacking
    llama_cpp.LlamaRAMCache = MeasuredRAMCache  # type: ignore[misc]  # the server builds its cache from this name
    register_chat_format("gemma3")(format_gemma3)
    from llama_cpp.server.__main__ import main

    main()
