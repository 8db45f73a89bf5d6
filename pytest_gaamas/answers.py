"""Reading an agent's reply as a JSON decision. Parsed, never guessed.

A reply is accepted when it is one JSON object, alone or inside a single fenced code block (how models
without structured output usually write JSON). Anything else is an invalid answer with its reason.
Every parser here is total and linear in the reply's length: a reply of any size, depth or content
gives a decision or an invalid answer (:mod:`pytest_gaamas.safejson` for the JSON itself); two values
for one key are invalid, not "the last one wins".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from . import safejson
from .play import Answer
from .thinking import THINK_CLOSE as THINK_CLOSE
from .thinking import THINK_OPEN as THINK_OPEN
from .thinking import split_thinking as split_thinking

FENCE = "```"
#: What may follow the opening fence of a JSON block: its language tag, matched at one position.
_JSON_TAG = re.compile(r"(?:json)?", re.IGNORECASE)


class InvalidAnswer(ValueError):
    """The reply cannot be used as a decision. The message reads "kind: detail", and the kind
    (before the colon) is what the reports count. ``told`` is what a game may say of it to the model
    in a later prompt: the suite's own words, never a value the model wrote, which could otherwise
    write into its own next prompt or into another player's (the message quotes the value)."""

    def __init__(self, reason: str, told: str | None = None):
        super().__init__(reason)
        self.told = reason if told is None else told


def json_blocks(text: str) -> list[str]:
    """The bodies of the closed ```-fenced blocks of ``text``, an opening ``json`` tag left out: one
    pass from left to right, as ``re.findall`` of ``FENCE (?:json)? (.*?) FENCE`` reads it, but in
    time linear in the text, where that pattern is quadratic."""
    blocks: list[str] = []
    position = 0
    while (start := text.find(FENCE, position)) >= 0:
        tag = _JSON_TAG.match(text, start + len(FENCE))
        assert tag is not None  # the pattern matches the empty string
        body = tag.end()
        end = text.find(FENCE, body)
        if end < 0:
            break
        blocks.append(text[body:end])
        position = end + len(FENCE)
    return blocks


def json_object(reply: str) -> dict[str, Any]:
    text = reply.strip()
    if not text:
        raise InvalidAnswer("empty reply: nothing to parse")
    fenced = json_blocks(text)
    if len(fenced) == 1 and not text.startswith("{"):
        text = fenced[0].strip()
    try:
        value = safejson.loads(text)
    except safejson.JSONError as error:
        raise InvalidAnswer(f"not JSON: {error}", told=f"not JSON: {error.told}") from None
    if not isinstance(value, dict):
        raise InvalidAnswer(f"not a JSON object: got {type(value).__name__}")
    return value


def field(obj: dict[str, Any], key: str) -> Any:
    if key not in obj:
        raise InvalidAnswer(f"missing field: {key!r}")
    return obj[key]


def number(obj: dict[str, Any], key: str) -> float:
    value = field(obj, key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidAnswer(f"not a number: field {key!r} is {value!r}", told=f"not a number: field {key!r} must be a number")
    return float(value)


def choice(obj: dict[str, Any], key: str, options: tuple[str, ...]) -> str:
    """One of ``options``, matched without regard to case or surrounding spaces; returned as listed."""
    value = field(obj, key)
    if isinstance(value, str):
        for option in options:
            if value.strip().casefold() == option.casefold():
                return option
    raise InvalidAnswer(f"not an option: field {key!r} is {value!r}, not one of {', '.join(options)}",
                        told=f"not an option: field {key!r} must be one of {', '.join(options)}")


def bounded(obj: dict[str, Any], key: str, low: float, high: float) -> float:
    value = number(obj, key)
    if not low <= value <= high:
        raise InvalidAnswer(f"out of range: field {key!r} is {value:g}, not between {low:g} and {high:g}")
    return value


def text(obj: dict[str, Any], key: str) -> str:
    value = field(obj, key)
    if not isinstance(value, str):
        raise InvalidAnswer(f"not text: field {key!r} is {value!r}", told=f"not text: field {key!r} must be text")
    return value


def reader(read: Callable[[dict[str, Any]], Any]) -> Callable[[str], Answer]:
    """A reply parser from a function of the reply's JSON object; its InvalidAnswer becomes the reason."""

    def parse(reply: str) -> Answer:
        try:
            return Answer(True, read(json_object(reply)))
        except InvalidAnswer as error:
            return Answer.invalid(str(error), told=error.told)

    return parse


def object_schema(**properties: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON schema of an answer object with exactly these fields, all required, in this order."""
    return {
        "type": "object",
        "properties": {name: dict(spec) for name, spec in properties.items()},
        "required": list(properties),
        "additionalProperties": False,
    }


def one_of(options: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "string", "enum": list(options)}


def dump(fields: Mapping[str, Any]) -> str:
    """A reply as a well-behaved model writes it (the reference agents' replies)."""
    return json.dumps(dict(fields))
