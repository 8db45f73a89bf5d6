"""Reading an agent's reply as a JSON decision. Parsed, never guessed.

A reply is accepted when it is one JSON object, alone or inside a single fenced code block (how models
without structured output usually write JSON). Anything else is an invalid answer with its reason.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.DOTALL | re.IGNORECASE)


class InvalidAnswer(ValueError):
    """The reply cannot be used as a decision. The message reads "kind: detail", and the kind
    (before the colon) is what the reports count."""


def json_object(reply: str) -> dict[str, Any]:
    text = reply.strip()
    if not text:
        raise InvalidAnswer("empty reply: nothing to parse")
    fenced = _FENCE.findall(text)
    if len(fenced) == 1 and not text.startswith("{"):
        text = fenced[0].strip()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidAnswer(f"not JSON: {error.msg} at character {error.pos}") from None
    if not isinstance(value, dict):
        raise InvalidAnswer(f"not a JSON object: got {type(value).__name__}")
    return value


def number(obj: dict[str, Any], key: str) -> float:
    if key not in obj:
        raise InvalidAnswer(f"missing field: {key!r}")
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidAnswer(f"not a number: field {key!r} is {value!r}")
    if not math.isfinite(value):
        raise InvalidAnswer(f"not a number: field {key!r} is {value!r}")
    return float(value)
