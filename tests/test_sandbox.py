"""The sandbox against hostile and broken strategies: each is contained, and classified as it should be.

Every snippet defines ``f(x)``; the sandbox starts it and calls ``f(1)`` once. The host-side checks
(no file written, no process left, the environment unseen) are made here, outside the sandbox.
"""

import os
import sys
import textwrap
from collections.abc import Sequence

import pytest

from pytest_gaamas.sandbox import KINDS, Limits, Sandbox, StrategyFailure

#: Reaches any class by name through the object graph: how code escapes a restricted namespace.
FIND_CLASS = """
def find(name):
    seen, stack = set(), list(object.__subclasses__())
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        if cls.__name__ == name:
            return cls
        try:
            stack.extend(cls.__subclasses__())
        except TypeError:
            pass
"""

HOSTILE = {
    # -- time and CPU
    "infinite loop": ("def f(x):\n    while True:\n        pass", "timeout"),
    "infinite loop at import": ("while True:\n    pass\ndef f(x):\n    return 1", "timeout"),
    "exception storm": (
        "def f(x):\n    while True:\n        try:\n            raise ValueError('again')\n        except ValueError:\n            pass",
        "timeout",
    ),
    # -- memory and output
    "memory bomb, list": ("def f(x):\n    return len([0] * 10**10)", "memory limit"),
    "memory bomb, bytes": ("def f(x):\n    blob = bytearray(1 << 34)\n    return 1", "memory limit"),
    "memory bomb, doubling": ("def f(x):\n    s = 'x'\n    while True:\n        s = s + s", "memory limit"),
    "huge print": ("def f(x):\n    print('x' * 10**7)\n    return 1", "output limit"),
    "print storm": ("def f(x):\n    for _ in range(10**6):\n        print('spam')\n    return 1", "output limit"),
    "huge return value": ("def f(x):\n    return 'x' * 10**7", "output limit"),
    "return value with millions of items": ("def f(x):\n    return list(range(10**6))", "output limit"),
    # -- processes, shell, network
    "os.system": ("import os\ndef f(x):\n    return os.system('id')", "forbidden import"),
    "subprocess": ("import subprocess\ndef f(x):\n    return subprocess.run(['id']).returncode", "forbidden import"),
    "socket": ("import socket\ndef f(x):\n    socket.create_connection(('example.com', 80))\n    return 1", "forbidden import"),
    "multiprocessing": ("import multiprocessing\ndef f(x):\n    return 1", "forbidden import"),
    "thread bomb": ("import threading\ndef f(x):\n    return 1", "forbidden import"),
    "fork through a module's os": ("import random\ndef f(x):\n    return random._os.fork()", "forbidden operation"),
    "shell through a module's os": ("import random\ndef f(x):\n    return random._os.system('id')", "forbidden operation"),
    "spawn through a module's os": (
        "import random\ndef f(x):\n    return random._os.posix_spawn('/bin/sh', ['sh'], {})",
        "forbidden operation",
    ),
    "kill the parent": ("import random\ndef f(x):\n    random._os.kill(random._os.getppid(), 9)\n    return 1", "forbidden operation"),
    "shell through the object graph": (
        FIND_CLASS + "def f(x):\n    return find('_wrap_close').__init__.__globals__['system']('id')",
        "forbidden operation",
    ),
    "C library through ctypes": (
        FIND_CLASS + "def f(x):\n    return find('CDLL')(None).fork()",
        "forbidden operation",
    ),
    # -- files
    "write outside": ("def f(x):\n    open('/tmp/gaamas-sandbox-escape', 'w').write('x')\n    return 1", "forbidden operation"),
    "climb out": ("def f(x):\n    return open('../../etc/passwd').read()", "forbidden operation"),
    "read a system file": ("def f(x):\n    return open('/etc/passwd').read()", "forbidden operation"),
    "delete a file": ("import random\ndef f(x):\n    random._os.remove('/etc/hostname')\n    return 1", "forbidden operation"),
    "a file in the scratch directory": (
        "def f(x):\n    with open('big', 'wb') as out:\n        out.write(b'x' * (8 << 20))\n    return 1",
        "forbidden operation",
    ),
    # -- import tricks
    "__import__": ("def f(x):\n    return __import__('os').getcwd()", "forbidden import"),
    "builtins' __import__": ("def f(x):\n    return __builtins__['__import__']('os').getcwd()", "forbidden import"),
    "importlib": ("import importlib\ndef f(x):\n    return 1", "forbidden import"),
    "loader through the object graph": (
        FIND_CLASS + "def f(x):\n    return str(find('BuiltinImporter').load_module('posix').system('id'))",
        "forbidden operation",
    ),
    "relative import": ("from . import secrets\ndef f(x):\n    return 1", "forbidden import"),
    # -- broken code
    "recursion bomb": ("def f(x):\n    return f(x)", "raised"),
    "raises": ("def f(x):\n    raise ValueError('no idea')", "raised"),
    "exception whose str raises": (
        "class Bad(Exception):\n    def __str__(self):\n        raise RuntimeError\ndef f(x):\n    raise Bad()",
        "raised",
    ),
    "SystemExit": ("def f(x):\n    raise SystemExit(0)", "raised"),
    "exit()": ("def f(x):\n    exit()", "raised"),
    "hard exit": ("import random\ndef f(x):\n    random._os._exit(0)", "crashed"),
    "syntax error": ("def f(x)\n    return 1", "syntax error"),
    "no such function": ("def g(x):\n    return 1", "wrong signature"),
    "wrong arity": ("def f(x, y):\n    return 1", "wrong signature"),
    "not a function": ("f = 3", "wrong signature"),
    "a class": ("class f:\n    def __init__(self, x):\n        pass", "wrong signature"),
    "generator function": ("def f(x):\n    yield 1", "wrong signature"),
    "returns a generator": ("def f(x):\n    return (i for i in range(3))", "wrong return type"),
    "returns a set": ("def f(x):\n    return {1, 2}", "wrong return type"),
    "returns NaN": ("def f(x):\n    return float('nan')", "wrong return type"),
    "returns a str subclass": ("class S(str):\n    pass\ndef f(x):\n    return S('Rock')", "wrong return type"),
    "returns a self-containing list": ("def f(x):\n    a = []\n    a.append(a)\n    return a", "wrong return type"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_strategy_is_contained_and_classified(name):
    code, kind = HOSTILE[name]
    assert kind in KINDS
    with Sandbox(textwrap.dedent(code), "f", ("x",)) as box:
        with pytest.raises(StrategyFailure) as failure:
            box.start(seed=1)
            box.call(1)
    assert failure.value.kind == kind, failure.value.reason
    assert not os.path.exists("/tmp/gaamas-sandbox-escape")


def test_a_loop_while_loading_meets_the_wall_clock_before_the_cpu_clock():
    """The trial's CPU clock starts before the load's wall clock and runs no faster: with the two
    limits equal, a loop at import was a "timeout" or a "CPU limit" by the scheduler's whim."""
    limits = Limits()
    assert limits.trial_cpu_seconds >= limits.start_seconds + 2


def test_the_corpus_covers_every_kind_a_sandbox_can_report():
    reported = {kind for _, kind in HOSTILE.values()}
    assert len(HOSTILE) >= 25
    # "no code" and "illegal action" are the strategy layer's, tested in test_strategy.py.
    assert reported >= set(KINDS) - {"no code", "illegal action", "CPU limit"}


def test_a_forbidden_submodule_is_named_without_the_host_s_search_path():
    """An allowed module's submodule that does not exist ("from re import re", as a small model wrote)
    reaches the audit hook as an import: the reason names the module, not the interpreter's paths."""
    with Sandbox("from re import re\ndef f(x):\n    return 1", "f", ("x",)) as box:
        with pytest.raises(StrategyFailure) as failure:
            box.start(seed=1)
            box.call(1)
    assert failure.value.kind == "forbidden operation" and "'re.re'" in failure.value.detail
    assert sys.prefix not in failure.value.detail and "/" not in failure.value.detail


def test_a_strategy_sees_none_of_the_hosts_environment(monkeypatch):
    monkeypatch.setenv("GAAMAS_SECRET", "s3cret")
    code = "import random\ndef f(x):\n    return sorted(random._os.environ)"
    with Sandbox(code, "f", ("x",)) as box:
        box.start(seed=1)
        names = box.call(1)
    assert "GAAMAS_SECRET" not in names and "PATH" not in names and "HOME" not in names


@pytest.mark.parametrize("how", ["open", "os.open", "os.listdir"])
def test_a_strategy_sees_none_of_the_projects_files(how):
    readme = os.path.abspath("README.md")
    code = {
        "open": f"def f(x):\n    return open({readme!r}).read()",
        "os.open": f"import random\ndef f(x):\n    return random._os.open({readme!r}, 0)",
        "os.listdir": "import random\ndef f(x):\n    return random._os.listdir('/')",
    }[how]
    with Sandbox(code, "f", ("x",)) as box:
        box.start(seed=1)
        with pytest.raises(StrategyFailure) as failure:
            box.call(1)
    assert failure.value.kind == "forbidden operation"


def test_cpu_time_is_limited_even_when_the_wall_clock_would_allow_more():
    limits = Limits(call_seconds=30, trial_cpu_seconds=1)
    with Sandbox("def f(x):\n    while True:\n        pass", "f", ("x",), limits) as box:
        box.start(seed=1)
        with pytest.raises(StrategyFailure) as failure:
            box.call(1)
    assert failure.value.kind == "CPU limit"


def test_a_failed_strategy_stays_failed_and_its_process_is_gone():
    box = Sandbox("def f(x):\n    while True:\n        pass", "f", ("x",), Limits(call_seconds=0.2))
    box.start(seed=1)
    pid = box._process.pid
    with pytest.raises(StrategyFailure):
        box.call(1)
    with pytest.raises(StrategyFailure, match="timeout"):
        box.call(1)
    box.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_honest_strategies_may_use_the_allowed_modules():
    code = textwrap.dedent(
        """
        import collections, copy, dataclasses, decimal, enum, heapq, itertools, math, random, re, statistics
        from fractions import Fraction

        memory = []

        @dataclasses.dataclass
        class Seen:
            count: int

        class Move(enum.Enum):
            ROCK = "Rock"

        def f(moves):
            memory.append(len(moves))
            counts = collections.Counter(moves)
            ordered = heapq.nlargest(1, counts.items(), key=lambda kv: kv[1])
            return [ordered[0][0] if moves else Move.ROCK.value, math.floor(statistics.mean(memory)),
                    str(Fraction(1, 3)), random.random() < 2, str(decimal.Decimal("0.1") * 3),
                    bool(re.fullmatch(r"P\\w+", "Paper")), Seen(len(copy.deepcopy(moves))).count,
                    len(list(itertools.permutations(range(4))))]
        """
    )
    with Sandbox(code, "f", ("moves",)) as box:
        box.start(seed=1)
        assert box.call([]) == ["Rock", 0, "1/3", True, "0.3", True, 0, 24]
        assert box.call(["Paper", "Paper", "Rock"]) == ["Paper", 1, "1/3", True, "0.3", True, 3, 24]
        box.finish()


def test_each_trial_gets_a_fresh_module_and_the_same_seed_gives_the_same_play():
    code = "import random\ncalls = []\ndef f(x):\n    calls.append(x)\n    return [len(calls), random.randint(0, 10**6)]"
    with Sandbox(code, "f", ("x",)) as box:
        box.start(seed=7)
        first = [box.call(0), box.call(0)]
        box.start(seed=7)
        again = [box.call(0), box.call(0)]
        box.start(seed=8)
        other = box.call(0)
    assert first == again
    assert [c[0] for c in first] == [1, 2]
    assert other[0] == 1 and other[1] != first[0][1]


def test_the_sandbox_reports_its_layers():
    with Sandbox("def f(x):\n    return x", "f", ("x",)) as box:
        box.start(seed=1)
        assert box.call(5) == 5
    assert {"resource limits", "chroot", "seccomp", "fresh process per trial", "audit hook", "import allow-list"} <= set(
        box.layers
    )


# -- a replay is the same in every process ----------------------------------------------------------

#: Iterates over sets (of strings, bytes, ints, tuples, frozensets, plain objects) and draws from every
#: generator the allowed modules offer, seeded or not: everything whose value or order a process
#: could choose for itself. The long comment makes the load larger than a pipe writes at once.
SET_ORDERS = (
    "# " + "padding " * 1200 + "\n"
    + textwrap.dedent(
        """
        import random

        class Player:
            def __init__(self, name):
                self.name = name

        PLAYERS = [Player(f"loaded {i}") for i in range(16)]

        def f(seed):
            names = [f"agent {i}" for i in range(40)]
            return {
                "strings": list(set(names)),
                "bytes": [b.decode() for b in {n.encode() for n in names}],
                "ints": list({i * 7919 % 1000 for i in range(60)}),
                "tuples": [list(t) for t in {(n, i % 3) for i, n in enumerate(names)}],
                "frozensets": [sorted(s) for s in {frozenset(names[i:i + 2]) for i in range(20)}],
                "a dict of string keys, through a set": list(set(dict.fromkeys(names))),
                "seeded": random.random(),
                "unseeded generators": [random.Random().random(), random.SystemRandom().random(),
                                        random.SystemRandom().randbytes(4).hex()],
                "reseeded with nothing": (random.seed(), random.random())[1],
            }

        def objects(seed):
            made = [Player(f"made {i}") for i in range(16)]
            return {
                "objects loaded with the module": [p.name for p in set(PLAYERS)],
                "objects made in the call": [p.name for p in set(made)],
                "functions": [g.__name__ for g in {f, objects, Player.__init__}],
                "classes": [c.__name__ for c in {Player, int, str, dict, type}],
                "a dict keyed by objects, through a set": [p.name for p in set({p: 1 for p in made})],
                "ids, relative": sorted(range(16), key=lambda i: id(made[i])),
                "a set of 600 objects, wider than a page": [p.name for p in set(Player(i) for i in range(600))],
                "seeded": random.random(),
            }
        """
    )
)


def answers_in_a_fresh_sandbox(function: str, seeds: Sequence[int]) -> tuple[dict[int, object], tuple[str, ...]]:
    with Sandbox(SET_ORDERS, function, ("seed",)) as box:
        answers = {}
        for seed in seeds:
            box.start(seed=seed)
            answers[seed] = box.call(seed)
        box.finish()
    return answers, box.layers


def assert_the_same_in_every_sandbox(function: str) -> None:
    """Four fresh sandboxes play trials 1, 2, 3; one plays them in the other order, one plays trial 2
    alone: a trial's answer is a function of the code, its arguments and its seed, not of the process
    that ran it, nor of the trials before it."""
    runs = [answers_in_a_fresh_sandbox(function, [1, 2, 3]) for _ in range(4)]
    runs += [answers_in_a_fresh_sandbox(function, [3, 2, 1]), answers_in_a_fresh_sandbox(function, [2])]
    reference = runs[0][0]
    assert reference[1] != reference[2], "the trials' seeds change nothing: this test would prove nothing"
    for answers, _ in runs[1:]:
        for seed, answer in answers.items():
            differing = [key for key in answer if answer[key] != reference[seed][key]]
            assert not differing, f"trial {seed} answered differently in another sandbox: {differing}"


def test_a_strategy_iterating_over_sets_of_values_answers_the_same_in_every_fresh_sandbox():
    assert_the_same_in_every_sandbox("f")


def test_a_strategy_iterating_over_sets_of_objects_answers_the_same_in_every_fresh_sandbox():
    _, layers = answers_in_a_fresh_sandbox("objects", [1])
    if "fixed addresses" not in layers:
        pytest.skip("this host refuses to turn off address randomization (a container's seccomp profile may)")
    assert_the_same_in_every_sandbox("objects")


def test_honest_python_idioms_are_strategies_not_failures():
    """A future import and a decorator from the allowed modules are ordinary Python a model writes."""
    code = textwrap.dedent(
        """
        from __future__ import annotations
        import functools

        @functools.lru_cache(maxsize=None)
        def f(x: int) -> list[int]:
            return [x, x * 2]
        """
    )
    with Sandbox(code, "f", ("x",)) as box:
        box.start(seed=1)
        assert box.call(3) == [3, 6]
        box.finish()


@pytest.mark.parametrize(
    "draw",
    ["random._random.Random().random()", "random._os.getrandom(8).hex()", "random._os.urandom(8).hex()",
     "random.SystemRandom().random()", "random.Random().random()"],
)  # fmt: skip
def test_every_source_of_randomness_a_strategy_reaches_is_the_trials_seed(draw):
    """Two trials with one seed play alike, whatever generator the strategy reaches for; two seeds do not."""
    code = f"import random\ndef f(x):\n    return str({draw})"
    with Sandbox(code, "f", ("x",)) as box:
        plays = []
        for seed in (5, 5, 6):
            box.start(seed=seed)
            plays.append(box.call(0))
    assert plays[0] == plays[1] != plays[2], plays


def test_a_strategys_failure_reason_holds_no_character_a_terminal_or_browser_obeys():
    """The reason quotes the strategy's own exception: what it chose to write there stays inert in the
    run log and the HTML report too, not only on the terminal."""
    code = "def f(x):\n    raise ValueError('\\x1b]52;c;cHduZWQ=\\x07 \\u202eevil \\x1b[2J')"
    with Sandbox(code, "f", ("x",)) as box:
        box.start(seed=1)
        with pytest.raises(StrategyFailure) as failed:
            box.call(1)
    reason = failed.value.reason
    assert failed.value.kind == "raised" and "ValueError" in reason
    assert reason.isprintable() and "\\x1b" in reason and "\\u202e" in reason, reason
