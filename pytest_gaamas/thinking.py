"""A reply's reasoning, kept apart from its answer: where a model thinks in its text (DeepSeek-R1,
Qwen3) and the server does not separate the two."""

from __future__ import annotations

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def split_thinking(reply: str) -> tuple[str, str]:
    """(the answer's text, the reasoning) of a reply that thinks in its text, as DeepSeek-R1 and Qwen3
    do where the server does not separate them: every ``<think>...</think>`` block is reasoning; so is
    everything before a ``</think>`` whose opening tag the chat template wrote; and a block still
    open at the end (a thought cut off by the token limit) leaves no answer. One pass, linear."""
    if THINK_OPEN not in reply and THINK_CLOSE not in reply:
        return reply, ""
    thoughts, answer, position = [], [], 0
    first_open = reply.find(THINK_OPEN)
    first_close = reply.find(THINK_CLOSE)
    if first_close >= 0 and (first_open < 0 or first_close < first_open):  # the template opened it
        thoughts.append(reply[:first_close])
        position = first_close + len(THINK_CLOSE)
    while (start := reply.find(THINK_OPEN, position)) >= 0:
        answer.append(reply[position:start])
        end = reply.find(THINK_CLOSE, start + len(THINK_OPEN))
        if end < 0:
            thoughts.append(reply[start + len(THINK_OPEN):])
            position = len(reply)
            break
        thoughts.append(reply[start + len(THINK_OPEN):end])
        position = end + len(THINK_CLOSE)
    answer.append(reply[position:])
    return "".join(answer).strip(), "\n\n".join(t.strip() for t in thoughts if t.strip())
