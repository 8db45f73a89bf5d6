"""The sandbox's child process: loads one model-written strategy and calls it on request.

Started as ``python -I -S -B runner.py`` with an empty environment, in a throw-away directory. It
speaks JSON lines: requests on stdin, answers on a private copy of stdout (file descriptors 1 and 2
are pointed at /dev/null, so nothing the strategy prints can corrupt an answer). Standard library
only: it must not import the project.

Before any model-written line runs, it closes the doors in layers, each of which stands alone:

1. resource limits: address space, CPU seconds, file size, open files, no core dumps;
2. the allow-listed modules are imported now, so that nothing needs loading later;
3. the root directory becomes the throw-away directory (chroot), where the kernel allows it;
4. a process running as root drops to ``nobody`` and the number of processes it may own is 0;
5. a seccomp filter makes the kernel refuse sockets, new processes, exec, signals to others,
   ptrace, namespaces and mounts (x86-64 and arm64);
6. an audit hook ends the process at the first audited operation outside a short allow-list (opening
   a file outside the directory, ``os.system``, sockets, imports of other modules...), saying which;
7. the strategy sees a copy of the builtins whose ``__import__`` knows only the allow-listed modules.

Layers 3-5 depend on the kernel and on privileges; the ready message lists the layers that are up.
"""

import builtins
import errno
import inspect
import json
import os
import random
import resource
import sys

VIOLATION_EXIT = 86
#: Audited events that honest strategy code raises; any other audited event ends the process.
HARMLESS_EVENTS = frozenset(
    {
        "exec", "compile", "object.__getattr__", "object.__setattr__", "object.__delattr__",
        "sys._getframe", "sys._getframemodulename", "time.sleep", "builtins.id", "code.__new__", "function.__new__",
        "sys.unraisablehook", "sys.excepthook",
    }
)
NOBODY = 65534
X86_64, AARCH64 = 0xC000003E, 0xC00000B7
#: Syscalls that the seccomp filter refuses with EPERM: sockets, processes, exec, signals,
#: ptrace, namespaces, mounts, chroot.
REFUSED_SYSCALLS = {
    X86_64: (41, 42, 43, 49, 50, 53, 288, 56, 57, 58, 435, 59, 322, 62, 200, 234, 101, 311, 272, 308, 165, 161, 155),
    AARCH64: (198, 199, 200, 201, 202, 203, 242, 220, 435, 221, 281, 129, 130, 131, 117, 271, 97, 268, 40, 51, 41),
}


class ForbiddenImport(ImportError):
    pass


class OutputLimit(BaseException):
    """Raised into the strategy when it prints more than it may; BaseException, so that a bare
    ``except Exception`` in the strategy does not swallow it."""


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


def main():
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    requests = sys.stdin.buffer

    def send(message):
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    setup = json.loads(requests.readline())
    layers = confine(setup)
    allowed = frozenset(setup["modules"])

    def violation(event, detail=""):
        send({"violation": event, "detail": detail[:200]})
        os._exit(VIOLATION_EXIT)

    def audit(event, args):
        if event in HARMLESS_EVENTS:
            return
        if event == "open":
            path = args[0]
            if isinstance(path, bytes):
                path = path.decode("utf-8", "replace")
            if isinstance(path, str) and inside_working_directory(path):
                return
            violation("open", repr(path))
        if event == "import" and args[0] in allowed:
            return
        violation(event, repr(args)[:200])

    sys.addaudithook(audit)
    layers.append("audit hook")
    layers.append("import allow-list")
    send({"ok": True, "layers": layers})
    serve(requests, send, allowed, setup)


def inside_working_directory(path):
    """A relative path that stays below the throw-away directory, whatever the root is."""
    normal = os.path.normpath(path)
    return not os.path.isabs(normal) and normal != ".." and not normal.startswith("../")


def confine(setup):
    layers = []
    memory = setup["memory_bytes"]
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (setup["cpu_seconds"], setup["cpu_seconds"] + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (setup["file_bytes"], setup["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32))
    layers.append("resource limits")
    for name in setup["modules"]:
        __import__(name)
    import ctypes  # after the allow-listed imports: the strategy cannot import it, the kernel still rules

    libc = ctypes.CDLL(None, use_errno=True)
    root = os.getuid() == 0
    if not root:
        libc.unshare(0x10000000)  # CLONE_NEWUSER: lets an ordinary user chroot, and changes nothing else
    try:
        os.chroot(setup["workdir"])
        os.chdir("/")
        layers.append("chroot")
    except OSError:
        os.chdir(setup["workdir"])
    if root:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        layers.append("uid nobody")
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        layers.append("no processes")
    except (ValueError, OSError):
        pass
    if seccomp(ctypes, libc):
        layers.append("seccomp")
    return layers


def seccomp(ctypes, libc):
    arch = {"x86_64": X86_64, "aarch64": AARCH64}.get(os.uname().machine)
    if arch is None:
        return False

    class Instruction(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Instruction))]

    load, jump_equal, jump_at_least, ret = 0x20, 0x15, 0x35, 0x06
    allow, refuse, kill = 0x7FFF0000, 0x00050000 | 1, 0x80000000
    refused = REFUSED_SYSCALLS[arch]
    code = [(load, 0, 0, 4), (jump_equal, 1, 0, arch), (ret, 0, 0, kill), (load, 0, 0, 0)]
    if arch == X86_64:
        code += [(jump_at_least, 0, 1, 0x40000000), (ret, 0, 0, kill)]  # the x32 ABI's numbers
    for i, number in enumerate(refused):
        code.append((jump_equal, len(refused) - i, 0, number))
    code += [(ret, 0, 0, allow), (ret, 0, 0, refuse)]
    instructions = (Instruction * len(code))(*[Instruction(*c) for c in code])
    program = Program(len(code), instructions)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return False
    return libc.prctl(22, 2, ctypes.byref(program), 0, 0) == 0  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER


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
    if isinstance(error, OSError) and error.errno == errno.EFBIG:
        return {"ok": False, "kind": "output limit", "detail": "wrote a file larger than allowed"}
    if isinstance(error, OutputLimit):
        return {"ok": False, "kind": "output limit", "detail": "printed more than allowed"}
    return {"ok": False, "kind": "raised", "detail": describe(error)}


PLAIN_SCALARS = (str, int, float, bool, type(None))


def plain(value, budget):
    """The value if it is made of JSON's types exactly (no subclasses, no cycles), else TypeError."""
    budget[0] -= 1
    if budget[0] < 0:
        raise OverflowError("returned too many values")
    kind = type(value)
    if kind in PLAIN_SCALARS:
        if kind is float and value != value or kind is float and value in (float("inf"), float("-inf")):
            raise TypeError(f"returned {value!r}")
        return value
    if kind in (list, tuple):
        return [plain(v, budget) for v in value]
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise TypeError(f"returned a dict with a {type(k).__name__} key")
            out[k] = plain(v, budget)
        return out
    raise TypeError(f"returned a {kind.__name__}")


def serve(requests, send, allowed, setup):
    names = safe_builtins(allowed)
    code = None
    function = None
    output_bytes = setup["output_bytes"]
    for line in requests:
        request = json.loads(line)
        writer = CappedWriter(output_bytes)
        sys.stdout = sys.stderr = writer
        try:
            if request["op"] == "load":
                code = compile(request["code"], "<strategy>", "exec")
                send({"ok": True})
                continue
            if request["op"] == "start":  # a fresh module for each trial, seeded
                namespace = {"__builtins__": names, "__name__": "strategy"}
                random.seed(request["seed"])
                exec(code, namespace)
                function = namespace.get(request["function"])
                send(check_function(function, request["function"], request["arguments"]))
                continue
            result = function(*request["arguments"])
            if writer.exceeded:
                raise OutputLimit()
            try:
                send({"ok": True, "value": plain(result, [setup["max_items"]])})
            except TypeError as error:
                send({"ok": False, "kind": "wrong return type", "detail": str(error)[:300]})
            except RecursionError:
                send({"ok": False, "kind": "wrong return type", "detail": "returned a value nested too deeply"})
            except OverflowError as error:
                send({"ok": False, "kind": "output limit", "detail": str(error)[:300]})
        except SyntaxError as error:
            send({"ok": False, "kind": "syntax error", "detail": f"line {error.lineno}: {error.msg}"})
        except BaseException as error:
            send(failure(OutputLimit() if writer.exceeded else error))
    os._exit(0)


def check_function(function, name, arguments):
    if function is None:
        return {"ok": False, "kind": "wrong signature", "detail": f"no function named {name!r}"}
    if not callable(function) or not inspect.isfunction(function):
        return {"ok": False, "kind": "wrong signature", "detail": f"{name!r} is not a function"}
    if inspect.isgeneratorfunction(function) or inspect.iscoroutinefunction(function):
        return {"ok": False, "kind": "wrong signature", "detail": f"{name!r} is a generator or coroutine function"}
    try:
        inspect.signature(function).bind(*arguments)
    except TypeError as error:
        return {"ok": False, "kind": "wrong signature", "detail": f"{name}({', '.join(arguments)}): {error}"}
    return {"ok": True}


if __name__ == "__main__":
    main()
