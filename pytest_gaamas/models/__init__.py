"""From a ``--gaamas-model`` spec to a model.

``ollama:NAME`` or a bare ``NAME`` (Ollama's own ``name:tag`` included), ``openai:NAME``,
``embedded:NAME``, ``reference:rational|random|human``.
"""

from __future__ import annotations

import difflib

from .base import Model, slug
from .reference import KINDS as REFERENCE_KINDS

PREFIXES = ("ollama", "openai", "embedded", "reference")

__all__ = ["Model", "PREFIXES", "canonical_spec", "resolve", "slug"]


class SpecError(ValueError):
    """A model spec that names no model; the message says what would."""


def canonical_spec(spec: str) -> str:
    """The one spelling of a spec (``mistral-small`` -> ``ollama:mistral-small``), or SpecError."""
    spec = spec.strip()
    prefix, colon, name = spec.partition(":")
    if not colon or prefix not in PREFIXES:
        near = difflib.get_close_matches(prefix, PREFIXES, n=1, cutoff=0.6) if colon else []
        if near:
            raise SpecError(f"unknown model prefix {prefix!r} in {spec!r}: did you mean '{near[0]}:{name}'?")
        if not spec or any(c.isspace() for c in spec):
            raise SpecError(f"{spec!r} is not a model name; use one of {', '.join(p + ':NAME' for p in PREFIXES)}")
        return f"ollama:{spec}"  # a bare name, possibly Ollama's name:tag
    if not name:
        raise SpecError(f"{spec!r} names no model after the prefix")
    if prefix == "reference" and name not in REFERENCE_KINDS:
        raise SpecError(f"no reference agent {name!r}; use reference:{', reference:'.join(REFERENCE_KINDS)}")
    if prefix == "embedded":
        from .embedded import EMBEDDED

        if name not in EMBEDDED:
            raise SpecError(f"no embedded model {name!r}; available: {', '.join('embedded:' + n for n in EMBEDDED)}")
    return spec


def resolve(spec: str) -> Model:
    prefix, _, name = canonical_spec(spec).partition(":")
    if prefix == "reference":
        from .reference import ReferenceAgent

        return ReferenceAgent(name)
    if prefix == "embedded":
        from .embedded import EmbeddedModel

        return EmbeddedModel(name)
    if prefix == "openai":
        from .openai_compatible import OpenAICompatibleModel

        return OpenAICompatibleModel(f"openai:{name}", name)
    from .ollama_server import OllamaModel

    return OllamaModel(name)
