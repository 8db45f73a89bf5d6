"""The sandbox's processes: a supervisor that never runs model-written code, and one child per trial
that does.

Started by ``launch.py`` (``python -s -S -B runner.py``, an environment that holds ``PYTHONHASHSEED=0``
alone, addresses not randomized where the host allows it) in a throw-away directory, the *supervisor*
speaks JSON lines with the host (requests on stdin, answers on a private copy of stdout; file
descriptors 1 and 2 point at /dev/null). Standard library only: it must not import the project.

The supervisor confines itself first, before anything of the strategy exists in it:

1. resource limits: address space, CPU seconds, no file may grow past 0 bytes, few open files, no core;
2. the allow-listed modules are imported now, so that nothing needs loading later;
3. the root directory becomes the empty throw-away directory (chroot);
4. a process running as root drops to ``nobody``;
5. a seccomp allow-list: the kernel ends the process at any system call not on it;
6. it dies with the host (parent-death signal), and the host kills its whole process group.

Once the strategy's code is compiled, the supervisor only holds that clean state: for each trial it
forks a *relay*, which talks with the host for that trial and forks the trial's *child*, so that
every trial starts from the same memory, whatever the trials before it did (see Supervisor.hold).
The child narrows the limits further (its own CPU seconds, no new processes), installs a stricter
seccomp allow-list (reading its request pipe, writing its answer pipe, memory, clocks, exiting: no
files, no processes, no signals, no sockets, no io_uring, nothing else), an audit hook that names the
first forbidden operation it sees, builtins whose ``__import__`` knows only the allowed modules, and
draws every random number a strategy can ask the allowed modules for from the trial's seed; only then
does it run the strategy. A trial therefore starts from a state no strategy has touched: nothing a
trial does to modules, builtins or the interpreter carries over to the next.

The child is untrusted from its first model-written line: it can rewrite its own harness code, patch
``json``, or write to its answer pipe directly. So nothing it says is taken on trust. The relay
reads its pipe with its own deadline and size limit, parses the line with its own strict reader,
checks its shape and its value (JSON's types only, finite, bounded in size and depth), demands exactly
one line per call and a clean exit when the trial ends (a child still running after its last answer,
or that wrote more than was asked, makes the strategy invalid), and writes its own message to the
host, which checks it again. The audit hook and the import allow-list give honest mistakes a clear
name; the kernel's allow-list, which no code in the process can lift, is what holds.
"""

import __future__  # noqa: F401  (a strategy's future import finds it loaded)

import builtins
import errno
import inspect
import json
import os
import random
import resource
import select
import signal
import sys
import time
import types
from typing import Any

VIOLATION_EXIT = 86
NOBODY = 65534
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 38, 22, 2
ADDR_NO_RANDOMIZE, QUERY_PERSONALITY = 0x0040000, 0xFFFFFFFF
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
#: System call numbers: (x86-64, arm64), from the kernel's unistd tables.
SYSCALLS = {
    "read": (0, 63), "write": (1, 64), "close": (3, 57), "fstat": (5, 80), "newfstatat": (262, 79),
    "lseek": (8, 62), "mmap": (9, 222), "mprotect": (10, 226), "munmap": (11, 215), "brk": (12, 214),
    "mremap": (25, 216), "madvise": (28, 233), "rt_sigaction": (13, 134), "rt_sigprocmask": (14, 135),
    "rt_sigreturn": (15, 139), "sigaltstack": (131, 132), "futex": (202, 98), "clock_gettime": (228, 113),
    "clock_getres": (229, 114), "getrandom": (318, 278), "exit": (60, 93), "exit_group": (231, 94),
    "getpid": (39, 172), "gettid": (186, 178), "sched_yield": (24, 124),
    # the supervisor's own: pipes, forking and reaping its children, deadlines, limits
    "pipe2": (293, 59), "dup": (32, 23), "dup3": (292, 24), "dup2": (33, None), "fcntl": (72, 25),
    "clone": (56, 220), "wait4": (61, 260), "waitid": (247, 95), "kill": (62, 129), "prctl": (157, 167),
    "prlimit64": (302, 261), "setrlimit": (160, 164), "getrlimit": (97, 163),
    "poll": (7, None), "ppoll": (271, 73), "getppid": (110, 173),
    "close_range": (436, 436), "set_robust_list": (273, 99), "rseq": (334, 293), "set_tid_address": (218, 96),
    "getuid": (102, 174), "geteuid": (107, 175), "getgid": (104, 176), "getegid": (108, 177),
    "nanosleep": (35, 101), "clock_nanosleep": (230, 115), "uname": (63, 160),
    # compiling: a syntax error's report looks for the source file (none exists in the empty root)
    "open": (2, None), "openat": (257, 56),
}  # fmt: skip
#: What running Python code needs once it is loaded: memory, clocks, its two pipes, signals to itself.
CHILD_SYSCALLS = (
    "read", "write", "close", "fstat", "newfstatat", "lseek", "mmap", "mprotect", "munmap", "brk", "mremap",
    "madvise", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "futex", "clock_gettime",
    "clock_getres", "getrandom", "exit", "exit_group", "getpid", "gettid", "sched_yield",
)
SUPERVISOR_SYSCALLS = CHILD_SYSCALLS + tuple(name for name in SYSCALLS if name not in CHILD_SYSCALLS)
#: Audited events that honest strategy code raises; any other audited event ends the child.
HARMLESS_EVENTS = frozenset(
    {
        "exec", "compile", "object.__getattr__", "object.__setattr__", "object.__delattr__",
        "sys._getframe", "sys._getframemodulename", "builtins.id", "code.__new__", "function.__new__",
        "sys.unraisablehook", "sys.excepthook",
    }
)
CHILD_KINDS = frozenset(
    {"syntax error", "forbidden import", "wrong signature", "raised", "memory limit", "output limit", "wrong return type"}
)
#: A child's answer line, and the value in it.
MAX_DEPTH = 32
MAX_INT_DIGITS = 30
#: How long a child may take to exit once its trial is over.
EXIT_SECONDS = 1.0


class Failure(Exception):
    def __init__(self, kind, detail=""):
        super().__init__(kind)
        self.kind = kind
        self.detail = str(detail)[:300]

    def message(self):
        return {"ok": False, "kind": self.kind, "detail": self.detail}


class ForbiddenImport(ImportError):
    pass


class OutputLimit(BaseException):
    """Raised into the strategy when it prints more than it may; BaseException, so that a bare
    ``except Exception`` in the strategy does not swallow it."""


# -- the supervisor -------------------------------------------------------------------------------


def main():
    answers = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    requests = LineReader(0)

    def send(message):
        write_all(answers, (json.dumps(message) + "\n").encode())

    setup = json.loads(requests.line(None, 1 << 20))
    if sys.flags.hash_randomization:
        send({"ok": False, "kind": "crashed", "detail": "string hashes vary by process: start the sandbox with launch.py"})
        os._exit(0)
    seccomp = Seccomp()
    layers = confine(setup, seccomp)
    send({"ok": True, "layers": layers})
    Supervisor(setup, send, seccomp).serve(requests)


def confine(setup, seccomp):
    seccomp.die_with_parent(setup["host"])
    # What launch.py fixed (main() serves nothing with salted string hashes), named with the layers.
    determinism = ["fixed hash seed"] + (["fixed addresses"] if seccomp.addresses_fixed() else [])
    layers = []
    memory = setup["memory_bytes"]
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (setup["total_cpu_seconds"], setup["total_cpu_seconds"] + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32))
    layers.append("resource limits")
    for name in setup["modules"]:
        __import__(name)
    root = os.getuid() == 0
    if not root:
        seccomp.libc.unshare(0x10000000)  # CLONE_NEWUSER: lets an ordinary user chroot, and changes nothing else
    try:
        os.chroot(".")  # started in its throw-away directory
        os.chdir("/")
        layers.append("chroot")
    except OSError:
        pass
    if root:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        layers.append("uid nobody")
    if seccomp.install(seccomp.program(SUPERVISOR_SYSCALLS)):
        layers.append("seccomp")
    layers.append("parent-death signal")
    return layers + determinism


class Seccomp:
    """Filters that let through the named system calls and kill the process at any other; built
    once in the supervisor, so that each trial's child only installs its own."""

    def __init__(self):
        import ctypes

        self.ctypes = ctypes
        self.libc = ctypes.CDLL(None, use_errno=True)
        machine = os.uname().machine
        self.arch = AUDIT_ARCH.get(machine)
        self.column = 0 if machine == "x86_64" else 1

    def program(self, allowed):
        if self.arch is None:
            return None
        ctypes: Any = self.ctypes  # loaded at start, before the process confines itself
        numbers = sorted({number for name in allowed if (number := SYSCALLS[name][self.column]) is not None})

        class Instruction(ctypes.Structure):
            _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]  # noqa: RUF012  (ctypes reads the class's own list)

        class Program(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Instruction))]  # noqa: RUF012  (as above)

        load, jump_equal, jump_at_least, ret = 0x20, 0x15, 0x35, 0x06
        allow, kill = 0x7FFF0000, 0x80000000  # SECCOMP_RET_ALLOW, SECCOMP_RET_KILL_PROCESS
        code = [(load, 0, 0, 4), (jump_equal, 1, 0, self.arch), (ret, 0, 0, kill), (load, 0, 0, 0)]
        if self.column == 0:
            code += [(jump_at_least, 0, 1, 0x40000000), (ret, 0, 0, kill)]  # the x32 ABI's numbers
        for i, number in enumerate(numbers):
            code.append((jump_equal, len(numbers) - i, 0, number))
        code += [(ret, 0, 0, kill), (ret, 0, 0, allow)]
        instructions = (Instruction * len(code))(*[Instruction(*c) for c in code])  # type: ignore[operator]  # a ctypes array type
        program = Program(len(code), instructions)
        program.keep = instructions  # the array must live as long as the program
        return program

    def install(self, program):
        if program is None or self.libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return self.libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self.ctypes.byref(program), 0, 0) == 0

    def addresses_fixed(self):
        """Whether launch.py could turn off address randomization for this process."""
        persona = self.libc.personality(QUERY_PERSONALITY)
        return persona != -1 and bool(persona & ADDR_NO_RANDOMIZE)

    def die_with_parent(self, parent):
        """Killed when ``parent`` ends; and at once if it already has. Compared with the parent's own
        pid, not with 1: in a container the host may itself be PID 1."""
        self.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(0)


class Supervisor:
    """Loads the strategy, then holds the state every trial starts from; a relay per trial passes the
    host's requests to the trial's child and checks every answer it gets back."""

    def __init__(self, setup, send, seccomp):
        self.setup = setup
        self.send = send
        self.seccomp = seccomp
        self.child_filter = seccomp.program(CHILD_SYSCALLS)
        self.pid = os.getpid()
        self.code = None
        self.child: Any = None  # (pid, request fd, answer reader)

    def serve(self, requests):
        try:
            request = json.loads(requests.line(None, 1 << 24))
        except EOFError:
            os._exit(0)
        if request.get("op") != "load":
            self.send(Failure("crashed", "the strategy's code was not loaded first").message())
            os._exit(0)
        # Compiled once, here, so that each trial's child inherits the code object: parsing runs none
        # of the code, and a syntax error's report may look for a source file, which only the
        # supervisor's filter allows (in an empty root, it finds none).
        self.code = compile_strategy(request["code"])
        if isinstance(self.code, Failure):
            self.send(self.code.message())
            os._exit(0)
        self.send({"ok": True})
        self.hold(requests)

    def hold(self, requests):
        """Forks a relay for each trial, from a state that nothing changes: the loop keeps nothing
        from one turn to the next (each value it makes is freed before the next is made), so every
        trial's processes start from the same memory, and the same addresses, whatever the trials
        before did and however long they took. The relay does the trial's work, which depends on
        timing (how a pipe's bytes arrive, how often a clock is read), and then ends with its memory."""
        while True:
            if os.fork() == 0:
                self.relay(requests)
            status = os.wait()[1]
            if status != 0:
                break
        if os.WIFSIGNALED(status):  # a relay over its CPU limit, or off the allow-list: the host says which
            os.kill(self.pid, os.WTERMSIG(status))
        os._exit(0)

    def relay(self, requests):
        """One trial: the host's "start", its calls, its "end". Never returns; exits 0 when the trial
        ended cleanly, 1 when the strategy failed (the failure sent) or the host is gone."""
        self.seccomp.die_with_parent(self.pid)
        while True:
            try:
                line = requests.line(None, 1 << 24)
            except EOFError:
                os._exit(1)
            request = json.loads(line)
            try:
                try:
                    answer = self.handle(request)
                except Failure:
                    raise
                except Exception as error:  # the supervisor's own fault: reported, never printed
                    raise Failure("crashed", f"the sandbox's supervisor failed: {describe(error)}") from None
            except Failure as failure:
                self.end_child(clean=False)
                self.send(failure.message())
                os._exit(1)
            self.send(answer)
            if request["op"] == "end":
                os._exit(0)

    def handle(self, request):
        op = request["op"]
        if op == "start":
            if self.child is not None:
                raise Failure("crashed", "a trial started before the last one ended")
            self.start_child(request)
            return {"ok": True}
        if op == "call":
            if self.child is None:
                raise Failure("crashed", "called before a trial started")
            value = self.exchange({"arguments": request["arguments"]}, self.setup["call_seconds"])
            return {"ok": True, "value": value}
        if op == "end":
            self.end_child(clean=True)
            return {"ok": True}
        raise Failure("crashed", f"unknown request {op!r}")

    # -- the child's life, seen from outside ------------------------------------------------------

    def start_child(self, request):
        to_child, requests_fd = os.pipe()
        answers_fd, from_child = os.pipe()
        relay = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(requests_fd)
            os.close(answers_fd)
            self.seccomp.die_with_parent(relay)
            child_main(to_child, from_child, self.setup, self.code, request, self.seccomp, self.child_filter)
        os.close(to_child)
        os.close(from_child)
        self.child = (pid, requests_fd, LineReader(answers_fd))
        ready = self.read_answer(self.setup["start_seconds"], alone=False)
        if set(ready.get("layers", ())) != set(CHILD_LAYERS):
            raise Failure("crashed", "the trial's process could not confine itself: " + ", ".join(ready.get("layers", ())))
        self.read_answer(self.setup["start_seconds"])  # the strategy loaded, and its function fits

    def exchange(self, message, seconds):
        _pid, requests_fd, _ = self.child
        try:
            write_all(requests_fd, (json.dumps(message) + "\n").encode())
        except OSError:
            raise self.death() from None
        return self.read_answer(seconds).get("value")

    def read_answer(self, seconds, alone=True):
        """The child's one line, within ``seconds``, checked; a failure it reports, raised. ``alone``:
        nothing may follow it (its ready line is followed by its first answer)."""
        _, _, reader = self.child
        try:
            line = reader.line(time.monotonic() + seconds, self.setup["output_bytes"] + 4096)
        except TimeoutError:
            raise self.stop_child("timeout", f"no answer within {seconds:g} s") from None
        except EOFError:
            raise self.death() from None
        except OverflowError:
            raise self.stop_child("output limit", "an answer larger than allowed") from None
        if alone and reader.pending():
            raise self.stop_child("forbidden operation", "wrote to the answer pipe more than one answer")
        answer = strict_json(line)
        if not isinstance(answer, dict):
            raise self.stop_child("crashed", "wrote something that is not an answer")
        if "violation" in answer:
            raise self.stop_child("forbidden operation", f"{answer.get('violation')} {answer.get('detail', '')}".strip())
        if answer.get("ok") is True and set(answer) <= {"ok", "value", "layers"}:
            if "value" in answer:
                check_value(answer["value"], self.setup["max_items"])
            return answer
        kind = answer.get("kind")
        if answer.get("ok") is False and kind in CHILD_KINDS:
            raise self.stop_child(kind, answer.get("detail", ""))
        raise self.stop_child("crashed", "wrote something that is not an answer")

    def end_child(self, clean, reaped=False):
        """The trial is over: the child must have nothing more to say and exit at once. Not
        ``clean``: it is killed, whatever it was doing (unless already ``reaped``)."""
        if self.child is None:
            return
        pid, requests_fd, reader = self.child
        try:
            os.close(requests_fd)
        except OSError:
            pass
        if not clean:
            if not reaped:
                self.reap(pid, kill=True)
            reader.close()
            self.child = None
            return
        left_over = reader.drain(time.monotonic() + EXIT_SECONDS)  # to the end of the pipe: the child has exited
        status = self.reap(pid, kill=False)
        reader.close()
        self.child = None
        if status is None:
            raise Failure("timeout", "still running after the trial's last answer")
        if left_over:
            raise Failure("forbidden operation", "wrote to the answer pipe more than was asked")
        if status[0] != 0:
            raise exit_failure(status, self.setup)

    def stop_child(self, kind, detail):
        self.end_child(clean=False)
        return Failure(kind, detail)

    def death(self):
        """Why the child ended, once it has."""
        pid, _, _ = self.child
        status = self.reap(pid, kill=False)
        self.end_child(clean=False, reaped=True)
        if status is None:
            return Failure("crashed", "the strategy's process stopped answering")
        return exit_failure(status, self.setup)

    @staticmethod
    def reap(pid, kill):
        """The child's wait status and CPU seconds, or None if it had not exited within EXIT_SECONDS
        (it is then killed)."""
        if kill:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            os.wait4(pid, 0)
            return None
        deadline = time.monotonic() + EXIT_SECONDS
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                return status, usage.ru_utime + usage.ru_stime
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.wait4(pid, 0)
                return None
            time.sleep(0.0005)


def exit_failure(ended, setup):
    status, cpu_seconds = ended
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        # A strategy that ignores SIGXCPU is killed by the kernel at the hard limit, a second later.
        if number == signal.SIGXCPU or (number == signal.SIGKILL and cpu_seconds >= setup["trial_cpu_seconds"]):
            return Failure("CPU limit", f"more than {setup['trial_cpu_seconds']} CPU seconds in one trial")
        if number == signal.SIGXFSZ:
            return Failure("forbidden operation", "wrote to a file")
        if number == signal.SIGSYS:
            return Failure("forbidden operation", "a system call outside the sandbox's allow-list")
        return Failure("crashed", f"killed by {signal.Signals(number).name}")
    code = os.WEXITSTATUS(status)
    if code == VIOLATION_EXIT:
        return Failure("forbidden operation", "ended by the audit hook")
    return Failure("crashed", f"the strategy's process exited with status {code}")


def strict_json(line):
    """json.loads that gives None for anything but finite numbers, short integers and shallow values."""

    def integer(digits):
        if len(digits.lstrip("-")) > MAX_INT_DIGITS:
            raise ValueError("integer too long")
        return int(digits)

    def finite(text):
        value = float(text)
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("not finite")
        return value

    def constant(name):
        raise ValueError(name)

    def unique(pairs):
        obj = {}
        for key, value in pairs:
            if key in obj:
                raise ValueError("duplicate key")
            obj[key] = value
        return obj

    try:
        return json.loads(line, parse_int=integer, parse_float=finite, parse_constant=constant, object_pairs_hook=unique)
    except (ValueError, RecursionError, UnicodeDecodeError):
        return None


def check_value(value, max_items):
    """JSON's types, at most ``max_items`` values and MAX_DEPTH levels, text that encodes: else a failure."""
    stack, count = [(value, 1)], 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > max_items:
            raise Failure("output limit", f"returned more than {max_items} values")
        if depth > MAX_DEPTH:
            raise Failure("wrong return type", "returned a value nested too deeply")
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise Failure("wrong return type", "returned text that is not valid Unicode") from None
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
            stack.extend((k, depth + 1) for k in item)


# -- the child ------------------------------------------------------------------------------------

CHILD_LAYERS = ("fresh process", "no processes", "seccomp allow-list", "audit hook", "import allow-list")


def child_main(requests_fd, answers_fd, setup, code, request, seccomp, child_filter):
    """One trial. Never returns: the process ends here."""
    try:
        os.dup2(requests_fd, 0)
        os.dup2(answers_fd, 1)
        os.closerange(3, 1 << 10)
        cpu = setup["trial_cpu_seconds"]
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        layers = ["fresh process"]
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
            layers.append("no processes")
        except (ValueError, OSError):
            pass
        # A future import only switches the compiler's behaviour: no module a strategy can use (imported
        # with this file, before any hook, as the import system's search for it would list folders).
        allowed = frozenset(setup["modules"]) | {"__future__"}
        names = safe_builtins(allowed)
        seed_every_generator(request["seed"])
        if seccomp.install(child_filter):
            layers.append("seccomp allow-list")
        install_audit_hook(allowed)
        layers += ["audit hook", "import allow-list"]
    except BaseException:
        os._exit(70)
    reply({"ok": True, "layers": layers})
    requests = LineReader(0)
    writer = CappedWriter(setup["output_bytes"])
    sys.stdout = sys.stderr = writer
    try:
        namespace = {"__builtins__": names, "__name__": "strategy"}
        exec(code, namespace)
        function = namespace.get(request["function"])
        answer = check_function(function, request["function"], request["arguments"])
    except BaseException as error:
        answer = failure(OutputLimit() if writer.exceeded else error)
    reply(answer)
    if not answer["ok"]:
        os._exit(0)
    while True:
        try:
            line = requests.line(None, 1 << 24)
        except EOFError:
            os._exit(0)
        writer.written = 0
        answer = call(function, json.loads(line)["arguments"], writer, setup["max_items"])
        reply(answer)
        if not answer["ok"]:
            os._exit(0)


def call(function, arguments, writer, max_items):
    """The strategy's answer to one call, or why there is none."""
    try:
        result = function(*arguments)
        if writer.exceeded:
            raise OutputLimit()
    except BaseException as error:
        return failure(OutputLimit() if writer.exceeded else error)
    try:
        return {"ok": True, "value": plain(result, [max_items])}
    except ReturnedWrongType as error:
        return {"ok": False, "kind": "wrong return type", "detail": str(error)[:300]}
    except RecursionError:
        return {"ok": False, "kind": "wrong return type", "detail": "returned a value nested too deeply"}
    except OutputLimit:
        return {"ok": False, "kind": "output limit", "detail": f"returned more than {max_items} values"}
    except BaseException as error:  # a __len__ or __iter__ of the strategy's own that raises
        return failure(error)


def compile_strategy(code):
    """The code object, or the Failure that says why there is none."""
    try:
        return compile(code, "<strategy>", "exec")
    except SyntaxError as error:
        return Failure("syntax error", f"line {error.lineno}: {error.msg}")
    except (ValueError, RecursionError, MemoryError) as error:  # null bytes, nesting beyond the parser
        return Failure("syntax error", describe(error))


def reply(message):
    try:
        text = json.dumps(message)
    except (ValueError, RecursionError):
        text = json.dumps({"ok": False, "kind": "wrong return type", "detail": "returned a value JSON cannot hold"})
    write_all(1, (text + "\n").encode("utf-8", "replace"))


def seed_every_generator(seed):
    """Every draw a strategy can make through the allowed modules comes from the trial's seed: the
    module's own generator; a ``Random()`` or ``random.seed()`` given no seed, which would read the
    kernel's entropy; and ``SystemRandom``, which reads it at every draw."""
    stream = random.Random(f"entropy of trial {seed}")
    seed_from_the_kernel = random.Random.seed

    def seed_from_the_trial(self, a=None, version=2):
        seed_from_the_kernel(self, stream.getrandbits(256) if a is None else a, version)

    random.Random.seed = seed_from_the_trial  # type: ignore[method-assign]
    random.seed = random._inst.seed
    random._urandom = os.urandom = stream.randbytes  # type: ignore[attr-defined]
    os.getrandom = lambda size, flags=0: stream.randbytes(size)
    # The C generator behind random.Random seeds itself from the kernel when made with no seed, and a
    # strategy can reach it as random._random: what it reaches is a generator seeded by the trial.
    kernel_seeded: Any = random._random.Random  # type: ignore[attr-defined]

    class TrialSeeded(kernel_seeded):
        def __init__(self, *seed):  # the C type seeds in __init__ too, from the kernel when given nothing
            super().__init__(*(seed or (stream.getrandbits(256),)))

    random._random = types.SimpleNamespace(Random=TrialSeeded)  # type: ignore[attr-defined,assignment]
    random.seed(seed)


def install_audit_hook(allowed):
    def violation(event, detail=""):
        reply({"violation": event, "detail": detail[:200]})
        os._exit(VIOLATION_EXIT)

    def audit(event, args):
        if event in HARMLESS_EVENTS:
            return
        if event == "import" and args[0] in allowed:
            return
        # An import's other arguments are the interpreter's search path: the host's, not the strategy's.
        violation(event, repr(args[0] if event == "import" else args)[:200])

    sys.addaudithook(audit)


def safe_builtins(allowed):
    real_import = builtins.__import__

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level != 0 or name not in allowed:
            raise ForbiddenImport(f"import of {name!r} is not allowed in a strategy")
        return real_import(name, globals, locals, fromlist, level)

    names = dict(vars(builtins))
    for name in ("input", "breakpoint", "exit", "quit", "help", "copyright", "credits", "license"):
        names.pop(name, None)
    names["__import__"] = guarded_import
    return names


class CappedWriter:
    def __init__(self, limit):
        self.limit = limit
        self.written = 0
        self.exceeded = False

    def write(self, text):
        self.written += len(text) if isinstance(text, str) else 0
        if self.written > self.limit:
            self.exceeded = True
            raise OutputLimit()
        return len(text) if isinstance(text, str) else 0

    def flush(self):
        pass


def describe(error):
    try:
        kind = type(error).__name__
    except BaseException:
        kind = "exception"
    try:
        text = str(error)
    except BaseException:
        text = ""
    return f"{kind}: {text}"[:300] if text else kind[:300]


def failure(error):
    if isinstance(error, ForbiddenImport):
        return {"ok": False, "kind": "forbidden import", "detail": describe(error)}
    if isinstance(error, MemoryError):
        return {"ok": False, "kind": "memory limit", "detail": "MemoryError"}
    if isinstance(error, OutputLimit):
        return {"ok": False, "kind": "output limit", "detail": "printed more than allowed"}
    if isinstance(error, OSError) and error.errno == errno.EFBIG:
        return {"ok": False, "kind": "output limit", "detail": "wrote a file larger than allowed"}
    return {"ok": False, "kind": "raised", "detail": describe(error)}


PLAIN_SCALARS = (str, int, float, bool, type(None))


class ReturnedWrongType(TypeError):
    pass


def plain(value, budget):
    """The value if it is made of JSON's types exactly (no subclasses, no cycles), else TypeError."""
    budget[0] -= 1
    if budget[0] < 0:
        raise OutputLimit()
    kind = type(value)
    if kind in PLAIN_SCALARS:
        if kind is float and (value != value or value in (float("inf"), float("-inf"))):
            raise ReturnedWrongType(f"returned {value!r}")
        if kind is int and not -(10**MAX_INT_DIGITS) < value < 10**MAX_INT_DIGITS:
            raise ReturnedWrongType("returned an integer too large to be a decision")
        return value
    if kind in (list, tuple):
        return [plain(v, budget) for v in value]
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise ReturnedWrongType(f"returned a dict with a {type(k).__name__} key")
            out[k] = plain(v, budget)
        return out
    raise ReturnedWrongType(f"returned a {kind.__name__}")


def check_function(function, name, arguments):
    if function is None:
        return {"ok": False, "kind": "wrong signature", "detail": f"no function named {name!r}"}
    try:  # a function decorated by an allowed module (functools.lru_cache) is the function it wraps
        wrapped = inspect.unwrap(function) if callable(function) else function
    except (ValueError, RecursionError):
        wrapped = function
    if not callable(function) or not inspect.isfunction(wrapped):
        return {"ok": False, "kind": "wrong signature", "detail": f"{name!r} is not a function"}
    if inspect.isgeneratorfunction(wrapped) or inspect.iscoroutinefunction(wrapped):
        return {"ok": False, "kind": "wrong signature", "detail": f"{name!r} is a generator or coroutine function"}
    try:
        inspect.signature(function).bind(*arguments)
    except TypeError as error:
        return {"ok": False, "kind": "wrong signature", "detail": f"{name}({', '.join(arguments)}): {error}"}
    return {"ok": True}


# -- pipes ----------------------------------------------------------------------------------------


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class LineReader:
    """Lines from a file descriptor, with a deadline and a size limit, and nothing read ahead unseen."""

    def __init__(self, fd):
        self.fd = fd
        self.buffer = b""
        self.readable = select.poll()
        self.readable.register(fd, select.POLLIN)

    def line(self, deadline, limit):
        while b"\n" not in self.buffer:
            if len(self.buffer) > limit:
                raise OverflowError
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                if not self.readable.poll(remaining * 1000):
                    continue
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        if len(line) > limit:
            raise OverflowError
        return line

    def pending(self):
        return bool(self.buffer)

    def drain(self, deadline):
        """Whether anything more was written before the end of the pipe (its writer has exited or
        closed it), waiting for that end until ``deadline``."""
        left = bool(self.buffer)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self.readable.poll(remaining * 1000):
                return left
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return left
            left = True
            if len(chunk) == 1 << 16:  # a flood: no need to read it all
                return left

    def close(self):
        try:
            os.close(self.fd)
        except OSError:
            pass


if __name__ == "__main__":
    main()
