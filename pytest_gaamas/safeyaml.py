"""Reading a cassette's YAML, which anyone may have edited, without trusting it.

PyYAML's C loader composes nested collections by recursion on the C stack: 80 KB of ``[`` kill the
process (SIGSEGV), where a Python exception would have been one line. Its pure-Python loader
recurses too, and is fifteen times slower. :func:`load` reads libyaml's event stream (the C
parser, which keeps its own stack on the heap) and builds the value with a stack of its own: it
cannot recurse, stops at the first collection nested more than ``max_depth`` deep or the
``max_nodes``-th value, and refuses a key written twice in one mapping (a bad merge, whose
second copy would silently replace the first), aliases (each one could stand for a whole tree again) and any
tag that is not plain data. Every scalar is read as PyYAML's safe loader reads it (a timestamp
stays its text), so a cassette gives the same value either way; and it is twice as fast, since no
node tree is built first.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

try:
    from yaml import CSafeLoader as _Parser
except ImportError:  # PyYAML built without libyaml: the same events, parsed in Python (no recursion either)
    from yaml import SafeLoader as _Parser

MAX_DEPTH = 64
#: The largest shipped cassette (2 MB) holds 21,000 values; a million is 40 MB of such cassettes,
#: and a few seconds to read.
MAX_NODES = 1_000_000

_YAML = "tag:yaml.org,2002:"
_STR = _YAML + "str"
#: Tags a scalar may carry: plain data, and the spellings of text older vcrpy releases wrote.
_SCALAR_TAGS = {
    _STR: _STR, _YAML + "python/str": _STR, _YAML + "python/unicode": _STR,
    **{_YAML + kind: _YAML + kind for kind in ("int", "float", "bool", "null", "binary")},
}  # fmt: skip
#: Tags a collection may carry (vcrpy wrote some lists as Python tuples).
_COLLECTION_TAGS = {None, "!", _YAML + "map", _YAML + "seq", _YAML + "python/tuple"}
#: What a plain scalar may be read as; anything else a plain scalar resolves to (a timestamp, a
#: merge key) stays the text it is.
_IMPLICIT = {_YAML + kind for kind in ("int", "float", "bool", "null")}

_RESOLVER = Resolver()
_CONSTRUCTOR = SafeConstructor()
_NO_KEY = object()


class YAMLRefused(ValueError):
    """The text is not YAML that a cassette may hold; the message says why, in a few words."""


def load(text: str, *, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> Any:
    """The one document in ``text`` as dicts, lists and scalars, or :class:`YAMLRefused`."""
    try:
        return _build(yaml.parse(text, Loader=_Parser), max_depth, max_nodes)
    except yaml.MarkedYAMLError as error:
        if "nesting depth" in str(error.problem):  # libyaml's own bound (PyYAML 6.0.4 on), far past ours
            raise YAMLRefused(f"nested more than {max_depth} levels deep") from None
        where = f" at line {error.problem_mark.line + 1}" if error.problem_mark is not None else ""
        raise YAMLRefused(f"{error.problem or error.context or 'not YAML'}{where}") from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as error:  # a scalar its tag cannot hold
        if isinstance(error, YAMLRefused):
            raise
        raise YAMLRefused(f"{type(error).__name__}: {str(error).splitlines()[0][:120] if str(error) else ''}") from None


def _build(events, max_depth: int, max_nodes: int) -> Any:
    root: Any = None
    container: Any = None  # the collection being filled, and for a mapping the key read last
    key: Any = _NO_KEY
    open_collections: list[tuple[Any, Any]] = []
    nodes = documents = 0
    for event in events:
        kind = type(event)
        if kind is ScalarEvent:
            value = _scalar(event)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if event.tag not in _COLLECTION_TAGS:
                raise YAMLRefused(f"the tag {event.tag[:60]} is not data a cassette holds")
            if len(open_collections) >= max_depth:
                raise YAMLRefused(f"nested more than {max_depth} levels deep")
            value = {} if kind is MappingStartEvent else []
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            container, key = open_collections.pop()
            continue
        elif kind is AliasEvent:
            raise YAMLRefused(f"an alias (*{str(event.anchor)[:40]}), which no cassette holds")
        else:
            if kind is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise YAMLRefused("more than one document")
            continue
        nodes += 1
        if nodes > max_nodes:
            raise YAMLRefused(f"more than {max_nodes:,} values")
        if container is None:
            root = value
        elif type(container) is list:
            container.append(value)
        elif key is _NO_KEY:
            if type(value) is dict or type(value) is list:
                raise YAMLRefused("a mapping whose key is a collection")
            key = value
        else:
            if key in container:  # a bad merge's second copy would silently replace the first
                raise YAMLRefused(f"the key {str(key)[:60]!r} twice in one mapping")
            container[key] = value
            key = _NO_KEY
        if type(value) is dict or type(value) is list:
            open_collections.append((container, key))
            container, key = value, _NO_KEY
    return root


def _scalar(event: ScalarEvent) -> Any:
    tag = event.tag
    if tag is None or tag == "!":
        if tag is not None or not event.implicit[0]:
            return event.value  # quoted, or marked as text
        tag = _RESOLVER.resolve(ScalarNode, event.value, (True, False))
        if tag not in _IMPLICIT:
            return event.value
    else:
        if tag not in _SCALAR_TAGS:
            raise YAMLRefused(f"the tag {tag[:60]} is not data a cassette holds")
        tag = _SCALAR_TAGS[tag]
        if tag == _STR:
            return event.value
    return _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, ScalarNode(tag, event.value, style=event.style))
