"""``python -m pytest_gaamas.models.llama_server``: llama-cpp-python's OpenAI-compatible server,
with llama.cpp's runtime weight repacking turned off.

Repacking rearranges quantised weights for the batched CPU matrix kernels; with these Q4_1 weights
and llama-cpp-python 0.3.36 built for x86 CPUs with AVX-512, the repacked kernels crash the
process on the first batched prompt. Without repacking, batched prompt evaluation works and is
several times faster than evaluating one token at a time. The server's own options are unchanged.
"""

from __future__ import annotations

import llama_cpp.llama_cpp as llama_cpp_api

_default_model_params = llama_cpp_api.llama_model_default_params


def model_params_without_repacking():
    params = _default_model_params()
    params.use_extra_bufts = False
    return params


if __name__ == "__main__":
    llama_cpp_api.llama_model_default_params = model_params_without_repacking
    from llama_cpp.server.__main__ import main

    main()
