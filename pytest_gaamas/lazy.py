"""Modules imported when first used. scipy.stats and the openai client each take most of a second to
import, which every pytest process paid before its first item: xdist's controller, which uses
neither to play, and the workers of a replay, which the openai client never serves."""

from __future__ import annotations

import importlib
from types import ModuleType


class OnFirstUse:
    """Stands for the module ``name``, importing it at the first attribute asked of it."""

    def __init__(self, name: str):
        self._name = name

    def load(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attribute: str):
        return getattr(self.load(), attribute)
