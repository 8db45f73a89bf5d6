"""From a ``--gaamas-model`` spec to a model.

``ollama:NAME`` or a bare ``NAME`` (Ollama's own ``name:tag`` included), ``openai:NAME``,
``embedded:NAME``, ``reference:rational|random|human|...``, and the blind agents ``reference:blind-RULE``
(``reference.Blind``).
"""

from __future__ import annotations

from .base import Model, slug
from .reference import KINDS as REFERENCE_KINDS
from .reference import RULES as BLIND_RULES

PREFIXES = ("ollama", "openai", "embedded", "reference")

__all__ = ["PREFIXES", "Model", "canonical_spec", "resolve", "slug"]


class SpecError(ValueError):
    """A model spec that names no model; the message says what would."""


def _one_typo_apart(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or swap of neighbours: ``olama`` or ``openia``, but not
    an Ollama model name such as ``llama3:8b``, which is two edits from ``ollama``."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def canonical_spec(spec: str) -> str:
    """The one spelling of a spec (``mistral-small`` -> ``ollama:mistral-small``), or SpecError."""
    spec = spec.strip()
    prefix, colon, name = spec.partition(":")
    if not colon or prefix not in PREFIXES:
        near = [p for p in PREFIXES if _one_typo_apart(prefix, p)] if colon else []
        if near:
            raise SpecError(f"unknown model prefix {prefix!r} in {spec!r}: did you mean '{near[0]}:{name}'?")
        if not spec or any(c.isspace() for c in spec):
            raise SpecError(f"{spec!r} is not a model name; use one of {', '.join(p + ':NAME' for p in PREFIXES)}")
        return f"ollama:{spec}"  # a bare name, possibly Ollama's name:tag
    if not name:
        raise SpecError(f"{spec!r} names no model after the prefix")
    if prefix == "reference" and name not in REFERENCE_KINDS:
        raise SpecError(
            f"no reference agent {name!r}; use reference:{', reference:'.join(REFERENCE_KINDS)}, or a blind agent "
            f"reference:blind-RULE or reference:blind-RULE-numbers-RULE, a RULE one of {BLIND_RULES}"
        )
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
