"""The sandbox against code written by someone who has read its source.

Every attack here first takes the harness apart from inside: the harness's own module is reachable
through the object graph (``random._os.sys.modules['__main__']``), so the strategy neuters the audit
hook's allow-list and takes ``ctypes``, which the supervisor imported for itself, out of
``sys.modules``. A first call proves that this worked (the C library answers); the second call is
the attack. What must hold anyway is what lies outside the strategy's process: the kernel's
allow-list of system calls, the supervisor's checks, and the host's.
"""

import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from pytest_gaamas.sandbox import Limits, Sandbox, StrategyFailure

ROOT = str(Path(__file__).resolve().parents[1])

DISARMED = """
import random
sys = random._os.sys
harness = sys.modules["__main__"]

class Everything:
    def __contains__(self, item):
        return True

harness.HARMLESS_EVENTS = Everything()
ctypes = sys.modules["ctypes"]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def f(x):
    if x == "probe":
        return libc.getpid() > 0
    return attack(x)
"""


def disarmed(attack: str) -> str:
    return DISARMED + textwrap.dedent(attack)


#: System calls that the earlier deny-list let through, and others a strategy has no use for.
SYSCALL_ATTACKS = {
    "io_uring_setup": "def attack(x):\n    return libc.syscall(425, 8, ctypes.create_string_buffer(120))",
    "rt_sigqueueinfo to the host": "def attack(x):\n    return libc.syscall(129, x, 9, ctypes.create_string_buffer(128))",
    "kill the host": "def attack(x):\n    return libc.kill(x, 9)",
    "ptrace the supervisor": "def attack(x):\n    return libc.ptrace(16, random._os.getppid(), 0, 0)",
    "process_vm_writev": "def attack(x):\n    return libc.syscall(311, x, 0, 0, 0, 0, 0)",
    "fork": "def attack(x):\n    return libc.fork()",
    "execve": "def attack(x):\n    return libc.execv(b'/bin/sh', None)",
    "open a file": "def attack(x):\n    return libc.open(b'/etc/passwd', 0)",
    "create a file": "def attack(x):\n    return libc.open(b'escape', 0o101, 0o644)",
    "raise its own CPU limit": "def attack(x):\n    return libc.setrlimit(0, ctypes.create_string_buffer(16))",
    "new namespaces": "def attack(x):\n    return libc.unshare(0x10000000)",
    "memfd for code": "def attack(x):\n    return libc.syscall(319, b'x', 0)",
    "bpf": "def attack(x):\n    return libc.syscall(321, 0, 0, 0)",
    "userfaultfd": "def attack(x):\n    return libc.syscall(323, 0)",
    "mount": "def attack(x):\n    return libc.mount(b'none', b'/', b'tmpfs', 0, None)",
}


@pytest.mark.parametrize("name", SYSCALL_ATTACKS)
def test_a_disarmed_harness_still_cannot_make_a_system_call_off_the_allow_list(name):
    with Sandbox(disarmed(SYSCALL_ATTACKS[name]), "f", ("x",)) as box:
        box.start(seed=1)
        assert box.call("probe") is True, "the harness was not disarmed: this test would prove nothing"
        with pytest.raises(StrategyFailure) as failure:
            box.call(os.getpid())
    assert failure.value.kind == "forbidden operation"
    assert "allow-list" in failure.value.detail
    assert not os.path.exists("escape")


def test_a_socket_to_a_loopback_listener_gets_nowhere():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        attack = f"""
        def attack(x):
            fd = libc.socket(2, 1, 0)
            address = bytes([2, 0]) + ({port}).to_bytes(2, "big") + bytes([127, 0, 0, 1]) + bytes(8)
            return libc.connect(fd, address, 16)
        """
        with Sandbox(disarmed(attack), "f", ("x",)) as box:
            box.start(seed=1)
            assert box.call("probe") is True
            with pytest.raises(StrategyFailure, match="forbidden operation"):
                box.call(0)
        with pytest.raises(socket.timeout):
            listener.accept()


def test_one_strategy_cannot_signal_another_running_beside_it():
    with Sandbox("def f(x):\n    return x + 1", "f", ("x",)) as victim:
        victim.start(seed=1)
        assert victim.call(1) == 2
        attack = "def attack(x):\n    return libc.syscall(129, x, 9, ctypes.create_string_buffer(128)) + libc.kill(x, 9)"
        with Sandbox(disarmed(attack), "f", ("x",)) as attacker:
            attacker.start(seed=1)
            assert attacker.call("probe") is True
            with pytest.raises(StrategyFailure, match="forbidden operation"):
                attacker.call(victim._process.pid)
        assert victim.call(2) == 3  # still alive, still answering
        victim.finish()


# -- forged answers -------------------------------------------------------------------------------

FORGERIES = {
    "an answer written on the pipe, then never returns": """
        def f(x):
            random._os.write(1, b'{"ok": true, "value": "Cooperate"}\\n')
            while True:
                pass
        """,
    "an extra answer through the harness's own reply()": """
        def f(x):
            harness.reply({"ok": True, "value": "Cooperate"})
            return "Defect"
        """,
    "an answer in advance, then a hard exit": """
        def f(x):
            random._os.write(1, b'{"ok": true, "value": 1}\\n{"ok": true, "value": 2}\\n')
            return 0
        """,
    "NaN written on the pipe": """
        def f(x):
            random._os.write(1, b'{"ok": true, "value": NaN}\\n')
            random._os._exit(0)
        """,
    "json.dumps patched to send NaN": """
        def f(x):
            sys.modules["json"].dumps = lambda *a, **k: '{"ok": true, "value": NaN}'
            return 1
        """,
    "a 400-digit integer written on the pipe": """
        def f(x):
            random._os.write(1, b'{"ok": true, "value": ' + b'9' * 400 + b'}\\n')
            random._os._exit(0)
        """,
    "a 5,000-deep list written on the pipe": """
        def f(x):
            random._os.write(1, b'{"ok": true, "value": ' + b'[' * 5000 + b']' * 5000 + b'}\\n')
            random._os._exit(0)
        """,
    "the supervisor's value check patched in the child's copy": """
        def f(x):
            harness.check_value = lambda *a: None
            random._os.write(1, b'{"ok": true, "value": [' + b'0,' * 20000 + b'0]}\\n')
            random._os._exit(0)
        """,
    "a flood on the answer pipe": """
        def f(x):
            while True:
                random._os.write(1, b'x' * 65536)
        """,
    "a lie about its own failure": """
        def f(x):
            random._os.write(1, b'{"ok": false, "kind": "no such kind", "detail": "trust me"}\\n')
            random._os._exit(0)
        """,
    "stdin closed under the harness": """
        def f(x):
            random._os.close(0)
            return 1
        """,
}


@pytest.mark.parametrize("name", FORGERIES)
def test_a_forged_answer_never_passes_for_a_valid_play(name):
    """However the answer was forged, the trial ends with the strategy invalid: the forged value
    is refused, or the process is caught still running, or saying more than it was asked."""
    code = textwrap.dedent(FORGERIES[name])
    with Sandbox("import random\nsys = random._os.sys\nharness = sys.modules['__main__']\n" + code, "f", ("x",)) as box:
        with pytest.raises(StrategyFailure) as failure:
            box.start(seed=1)
            for x in range(3):
                value = box.call(x)
                assert value == value, "NaN reached the host"
            box.finish()
    assert failure.value.kind in {"forbidden operation", "timeout", "crashed", "output limit", "wrong return type"}


@pytest.mark.parametrize(
    "value, kind",
    [("10**400", "wrong return type"), ("[[[[]]]]", None), ("eval('[' * 5000 + ']' * 5000)", "raised"),
     ("[0] * 20000", "output limit"), ("{'a': float('inf')}", "wrong return type")],
)  # fmt: skip
def test_every_returned_value_is_checked_by_size_and_type(value, kind):
    nested = "def deep(n):\n    v = []\n    for _ in range(n):\n        v = [v]\n    return v\n"
    code = nested + f"def f(x):\n    return {value}"
    with Sandbox(code, "f", ("x",)) as box:
        box.start(seed=1)
        if kind is None:
            assert box.call(0) == [[[[]]]]
            return
        with pytest.raises(StrategyFailure) as failure:
            box.call(0)
    assert failure.value.kind == kind


def test_a_deeply_nested_return_value_is_refused_not_a_crash_of_the_host():
    code = "def f(x):\n    v = []\n    for _ in range(5000):\n        v = [v]\n    return v"
    with Sandbox(code, "f", ("x",)) as box:
        box.start(seed=1)
        with pytest.raises(StrategyFailure) as failure:
            box.call(0)
    assert failure.value.kind == "wrong return type"


# -- nothing carries over -------------------------------------------------------------------------

TAMPERING = """
import math, random, collections
sys = random._os.sys

def f(trial):
    seen = [len([1, 2, 3]), math.pi, random.random.__name__, collections.Counter.__name__,
            "planted" in sys.modules, getattr(sys, "planted", None)]
    # Everything a trial can reach, changed for the next one.
    __builtins__["len"] = lambda x: 42
    math.pi = 3
    random.random = lambda: 0.5
    collections.Counter = dict
    sys.modules["planted"] = math
    sys.planted = "yes"
    return seen
"""


def test_nothing_a_trial_changes_carries_over_to_the_next():
    with Sandbox(TAMPERING, "f", ("trial",)) as box:
        first, second = [], []
        for trial in range(2):
            box.start(seed=trial)
            (first if trial == 0 else second).append(box.call(trial))
        box.finish()
    pristine = [3, 3.141592653589793, "random", "Counter", False, None]
    assert first == [pristine] and second == [pristine]


# -- budgets --------------------------------------------------------------------------------------


def test_a_strategy_has_a_wall_clock_budget_for_all_its_trials():
    slow = "def f(x):\n    import math\n    n = 0\n    while n < 6 * 10**6:\n        n += 1\n    return x"
    limits = Limits(call_seconds=5, total_seconds=1.5)
    started = time.monotonic()
    with Sandbox(slow, "f", ("x",), limits) as box:
        with pytest.raises(StrategyFailure) as failure:
            for trial in range(20):
                box.start(seed=trial)
                box.call(trial)
    assert failure.value.kind == "timeout" and "budget" in failure.value.detail
    assert time.monotonic() - started < 5


def test_a_strategy_has_an_output_budget_for_all_its_trials():
    limits = Limits(total_output_bytes=200_000)
    with Sandbox("def f(x):\n    return 'x' * 50000", "f", ("x",), limits) as box:
        with pytest.raises(StrategyFailure) as failure:
            for trial in range(10):
                box.start(seed=trial)
                box.call(trial)
    assert failure.value.kind == "output limit" and "in all" in failure.value.detail


def test_ignoring_the_cpu_signal_does_not_buy_more_time():
    attack = "def attack(x):\n    libc.signal(24, ctypes.c_void_p(1))\n    while True:\n        pass"
    limits = Limits(call_seconds=10, trial_cpu_seconds=1)
    with Sandbox(disarmed(attack), "f", ("x",), limits) as box:
        box.start(seed=1)
        assert box.call("probe") is True
        started = time.monotonic()
        with pytest.raises(StrategyFailure) as failure:
            box.call(0)
    assert failure.value.kind == "CPU limit"
    assert time.monotonic() - started < 5


def test_no_file_is_ever_written_and_the_scratch_directory_goes():
    code = "def f(x):\n    for i in range(300):\n        open(f'chunk{i}', 'wb').write(b'x' * (1 << 20))\n    return 1"
    box = Sandbox(code, "f", ("x",))
    box.start(seed=1)
    workdir = box._workdir
    with pytest.raises(StrategyFailure, match="forbidden operation"):
        box.call(0)
    assert os.listdir(workdir) == []
    box.close()
    assert not os.path.exists(workdir)


# -- the host around the sandbox --------------------------------------------------------------------


def test_a_host_holding_more_than_1024_descriptors_still_runs_strategies():
    """select() cannot watch a descriptor numbered 1,024 or more; a busy host holds that many."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1300:
        pytest.skip(f"this host allows {hard} open descriptors")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1300), hard))
    held = []
    try:
        held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
        with Sandbox("def f(x):\n    return x + 1", "f", ("x",), Limits(call_seconds=0.3)) as box:
            box.start(seed=1)
            assert box._process.stdout.fileno() > 1024, "the sandbox's pipes are low: this test would prove nothing"
            assert box.call(1) == 2
            box.finish()
        with Sandbox("def f(x):\n    while True:\n        pass", "f", ("x",), Limits(call_seconds=0.3)) as box:
            box.start(seed=1)
            with pytest.raises(StrategyFailure, match="timeout"):
                box.call(1)
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


#: Run as the process that inherits every orphan (PID 1 of a container, or a subreaper): strategies
#: that time out, on the supervisor's clock and on the host's, and one that passes; then the zombies
#: among its children are counted, without reaping them.
ORPHANS_HOST = """
import ctypes, os, sys
from pytest_gaamas.sandbox import Limits, Sandbox, StrategyFailure

if sys.argv[1] == "subreaper":
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
else:
    assert os.getpid() == 1, os.getpid()
loop = "def f(x):\\n    while True:\\n        pass"
for limits in (Limits(call_seconds=0.3), Limits(call_seconds=10, total_seconds=3), Limits(call_seconds=0.3)):
    with Sandbox(loop, "f", ("x",), limits) as box:
        try:
            box.start(seed=1)
            box.call(1)
        except StrategyFailure as failure:
            assert failure.kind == "timeout", failure.reason
with Sandbox("def f(x):\\n    return x", "f", ("x",)) as box:
    for trial in range(3):
        box.start(seed=trial)
        assert box.call(trial) == trial
    box.finish()
zombies = []
for entry in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{entry}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        continue
    if fields[0] == "Z" and int(fields[1]) == os.getpid():
        zombies.append(entry)
print("zombies:", len(zombies))
"""


@pytest.mark.parametrize("host", ["subreaper", "pid 1"])
def test_a_host_that_inherits_orphans_is_left_no_zombies(host):
    """A container's PID 1 (and any subreaper) becomes the parent of the sandbox's processes once
    their supervisor is killed: what the sandbox started, it must also wait for."""
    command = [sys.executable, "-c", ORPHANS_HOST, host]
    if host == "pid 1":
        if os.getuid() != 0 or not shutil.which("unshare"):
            pytest.skip("a PID namespace needs root and unshare(1)")
        command = ["unshare", "--fork", "--pid", "--mount-proc", *command]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "zombies: 0"


#: A host that starts a strategy and is then killed with SIGKILL, before it can remove anything.
KILLED_HOST = """
import os, signal, sys
from pytest_gaamas.sandbox import Sandbox

box = Sandbox("def f(x):\\n    return x", "f", ("x",))
box.start(seed=1)
assert box.call(1) == 1
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_folders_of_a_killed_run_are_removed_at_the_next_start_and_no_live_runs(tmp_path, monkeypatch):
    environment = {**os.environ, "TMPDIR": str(tmp_path),
                   "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}  # fmt: skip

    def killed_run() -> set[str]:
        """Starts a host that is killed mid-strategy; the folders it found at its start and left at its death."""
        before = {p.name for p in tmp_path.iterdir()}
        killed = subprocess.run([sys.executable, "-c", KILLED_HOST], capture_output=True, text=True, timeout=60, env=environment)
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
        return {p.name for p in tmp_path.iterdir()} - before

    first = killed_run()
    assert len(first) == 1 and next(iter(first)).startswith("gaamas-strategy-"), first
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with Sandbox("def f(x):\n    return x", "f", ("x",)) as live:
        live.start(seed=1)
        live_folder = os.path.basename(live._workdir)
        assert {p.name for p in tmp_path.iterdir()} == {live_folder}, "this run's start left a killed run's folder"
        second = killed_run()  # its start meets a live run's folder
        outside = tmp_path.parent / f"{tmp_path.name}-outside"
        outside.mkdir()
        (outside / "keep").write_text("x")
        (tmp_path / "gaamas-strategy-link").symlink_to(outside)
        kept = {live_folder, "gaamas-strategy-link"}
        if os.getuid() == 0:  # and a folder of another user's, of that name
            (tmp_path / "gaamas-strategy-other").mkdir()
            os.chown(tmp_path / "gaamas-strategy-other", 4242, 4242)
            kept.add("gaamas-strategy-other")
        third = killed_run()  # its start meets a killed run's folder, a live run's, and those
        assert {p.name for p in tmp_path.iterdir()} == kept | third
        assert not second & third and len(third) == 1
        assert live.call(1) == 1, "a live run's folder was touched"
    assert (outside / "keep").read_text() == "x"
