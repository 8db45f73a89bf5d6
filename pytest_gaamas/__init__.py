"""pytest-gaamas: how LLM agents behave in classic economic games, against rational play and real people."""

__version__ = "0.1.0"
