"""Strategy mode: the model writes a Python function once, and the function plays every trial.

A game that can be played by strategy offers a :class:`Contract`: the function's exact signature,
what its arguments and its value mean, how a decision's facts become the arguments, and how the
value becomes the answer the game reads. The model is asked once (recorded like any request); the
code is taken from the reply's fenced ``python`` block (or a JSON ``"code"`` field); the function
then runs in a :class:`~pytest_gaamas.sandbox.Sandbox`, a fresh module for each trial with
``random`` seeded by the trial, and answers each decision through the game's own parser
(``strategy_run``). This module is the contract alone, which the games import: no sandbox.

A strategy is valid or it is not: code that will not load, raises, runs too long, returns an answer
the game rejects, or tries what is not allowed makes the whole strategy invalid, with the reason.
"""

from __future__ import annotations

import ast
import importlib
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from . import answers, safejson
from .confinement import ALLOWED_MODULES, StrategyFailure
from .play import Answer, Decision, Trial, TrialRecord

#: Code is longer than a decision; SmolLM2 writes a short function in well under this.
STRATEGY_REPLY_TOKENS = 512
#: The language tags of a fenced block that may hold the strategy.
PYTHON_TAGS = frozenset({"", "python", "py", "python3"})
_ANY_DEFINITION = re.compile(r"^[ \t]*def[ \t]+\w+[ \t]*\(", re.MULTILINE)



@dataclass(frozen=True)
class Contract:
    """What a strategy for one game must be."""

    #: The system prompt (a role, a preference), as the game's action prompt has it.
    system: str
    #: The game, as the model is told it, without the answer form of the action prompt.
    rules: str
    #: ``def name(arg: type, ...) -> type``: the function's exact signature.
    signature: str
    #: What the arguments hold and what the function returns, for the model.
    explanation: str
    #: A decision's facts (its ``situation``) -> the arguments, in the signature's order.
    arguments: Callable[[Mapping[str, Any]], tuple]
    #: The function's value -> the JSON answer that the game's parser reads.
    answer: Callable[[Any], Mapping[str, Any]]
    #: The source of each reference agent's strategy.
    references: Mapping[str, str]
    #: Arguments the strategy is also asked once it has played, to read it whole (the responder's
    #: answer to every offer, its smallest accepted offer being what people's data record).
    probes: tuple[tuple, ...] = ()
    #: Where the answer's form changes from trial to trial (a split asked as kept or as given): the
    #: decision's facts and the function's value -> the JSON answer in that decision's form. The
    #: function itself answers the same question every trial.
    answer_for: Callable[[Mapping[str, Any], Any], Mapping[str, Any]] | None = None

    def answer_to(self, situation: Mapping[str, Any], value: Any) -> Mapping[str, Any]:
        return self.answer(value) if self.answer_for is None else self.answer_for(situation, value)

    @property
    def function(self) -> str:
        return self._definition().name

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(a.arg for a in self._definition().args.args)

    def _definition(self) -> ast.FunctionDef:
        return _parsed_signature(self.signature)

    def messages(self) -> tuple[dict[str, str], ...]:
        user = (
            f"{self.rules}\n\nWrite your strategy for this game as a Python function with exactly this signature:\n"
            f"    {self.signature}\n{self.explanation}\n"
            "The same function plays every game, and it must be deterministic apart from the random module. "
            f"It may import only these modules: {', '.join(m for m in ALLOWED_MODULES if '.' not in m)}. "
            "It must not read or write files, print, or use the network.\n"
            "Reply with the complete function in one ```python code block."
        )
        return (({"role": "system", "content": self.system},) if self.system else ()) + ({"role": "user", "content": user},)


@lru_cache(maxsize=256)
def _parsed_signature(signature: str) -> ast.FunctionDef:
    definition = ast.parse(f"{signature}: pass").body[0]
    assert isinstance(definition, ast.FunctionDef)
    return definition


def expect(value: Any, types: type | tuple[type, ...], what: str) -> Any:
    """``value`` if the function returned the contract's type (a bool is not a number), else an
    invalid strategy."""
    types = types if isinstance(types, tuple) else (types,)
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise StrategyFailure("wrong return type", f"returned {value!r:.100}, not {what}")
    return value


def extract_code(reply: str, function: str) -> Answer:
    """The strategy's source: the fenced block that defines ``function`` (else the first fenced
    block, else a block left open at the end of the reply), or the ``"code"`` field of a JSON reply,
    or the reply itself when it is bare Python."""
    closed, unclosed = code_blocks(reply)
    blocks = [body for tag, body in closed if tag in PYTHON_TAGS]
    if not blocks and unclosed is not None and unclosed[0] in PYTHON_TAGS:
        blocks = [unclosed[1]]
    if blocks:
        defines = re.compile(rf"def[ \t]+{re.escape(function)}[ \t]*\(")
        defining = [b for b in blocks if defines.search(b)]
        return Answer(True, (defining or blocks)[0].strip() + "\n")
    stripped = reply.strip()
    if stripped.startswith("{"):
        try:
            code = safejson.loads(stripped).get("code")
        except (safejson.JSONError, AttributeError):
            code = None
        if isinstance(code, str) and code.strip():
            return Answer(True, code.strip() + "\n")
    if _ANY_DEFINITION.search(stripped):
        return Answer(True, stripped + "\n")
    return Answer.invalid("no code: the reply has no ```python block, no JSON \"code\" field and no function")


def code_blocks(text: str) -> tuple[list[tuple[str, str]], tuple[str, str] | None]:
    """The fenced blocks of ``text`` as Markdown pairs them, each as (language tag, body), and a block
    opened and never closed (small models often stop right after their last line of code). One pass
    from left to right: linear in the text, whatever it holds."""
    fence = answers.FENCE
    blocks: list[tuple[str, str]] = []
    position = 0
    while (start := text.find(fence, position)) >= 0:
        line_end = text.find("\n", start + len(fence))
        if line_end < 0:
            return blocks, None  # a fence on the last line opens nothing
        tag = text[start + len(fence):line_end].strip().lower()
        end = text.find(fence, line_end + 1)
        if end < 0:
            return blocks, (tag, text[line_end + 1:])
        blocks.append((tag, text[line_end + 1:end]))
        position = end + len(fence)
    return blocks, None


@dataclass(frozen=True)
class StrategyRequest:
    """The one request of strategy mode, as a game of one decision, so that it is recorded,
    journaled and replayed like every other request, and reference agents answer it too."""

    contract: Contract
    name: str = "strategy request"

    def fingerprint(self) -> Mapping[str, Any]:
        return {"game": self.name, "messages": self.contract.messages()}

    def play(self, trial: int) -> Trial:
        function = self.contract.function
        answer = yield Decision(
            self.contract.messages(), {}, lambda reply: extract_code(reply, function), {"strategy": True},
            max_tokens=STRATEGY_REPLY_TOKENS,
        )
        return {"valid": answer.valid, "code": answer.value, "reason": answer.reason}

    def reference_reply(self, agent: str, situation: Mapping[str, Any], rng: random.Random) -> str:
        if agent not in self.contract.references:
            raise ValueError(f"reference:{agent} writes no strategy for this game")
        return f"```python\n{self.contract.references[agent].strip()}\n```"


@dataclass
class StrategyResult:
    code: str | None
    failure: StrategyFailure | None
    records: list[TrialRecord]
    calls: int
    layers: tuple[str, ...]
    #: (arguments, value) for each of the contract's probes, when the strategy is valid.
    probes: list[tuple[tuple, Any]] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return self.failure is None

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "reason": None if self.failure is None else self.failure.reason,
            "code": self.code,
            "calls": self.calls,
            "sandbox": list(self.layers),
            "probes": [[list(arguments), value] for arguments, value in self.probes],
        }


def no_strategy(reason: str, trials: int) -> StrategyResult:
    """The result of a reply that held no usable code."""
    failure = StrategyFailure("no code", reason.removeprefix("no code: "))
    return StrategyResult(None, failure, invalid_trials(failure, trials), 0, ())


def invalid_trials(failure: StrategyFailure, trials: int) -> list[TrialRecord]:
    return [TrialRecord(t, [], {"valid": False, "reason": f"invalid strategy: {failure.reason}"}) for t in range(trials)]


#: Names that live in ``strategy_run`` (the sandbox's side), still read from here by code written before.
_RUN_NAMES = frozenset({"DEFAULT_LIMITS", "StrategyPlayer", "run_strategy"})


def __getattr__(name: str) -> Any:
    if name in _RUN_NAMES:  # imported on first use: the contract itself never loads the sandbox
        return getattr(importlib.import_module(f"{__package__}.strategy_run"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
