"""The sandbox's first process: it fixes what would otherwise differ from one process to the next,
then becomes the supervisor (``runner.py``), so that a strategy's answers depend on its code, its
arguments and its trial's seed alone, whatever process runs it.

- **String hashes.** Python salts the hash of ``str`` and ``bytes`` at random in each process, and a
  set or a dict of strings iterates in hash order: the same strategy answered differently from run to
  run. ``PYTHONHASHSEED=0`` turns the salt off; it is read only when an interpreter starts, hence the
  exec, and ``-I`` or ``-E`` would ignore it, hence ``-s -S -B`` (and ``-P`` where it exists) with an
  environment that holds that one variable and nothing else.
- **Addresses.** A plain object's hash and ``id()`` are its address, so a set of such objects iterates
  in address order, and the kernel places the heap, the stack and every mapping at random unless the
  process's personality says ``ADDR_NO_RANDOMIZE``, which takes effect at exec. Where mappings go also
  depends on the stack's limit, which is therefore set to one value. A host that refuses the
  personality (Docker's default seccomp profile does) runs the sandbox with addresses that vary; the
  supervisor reports which it has. Randomized addresses guard a process against its own memory bugs;
  a strategy already runs any code it likes in its process, and what confines it is the kernel's
  allow-list, not where things are.

Started as ``python -I -S -B launch.py`` with an empty environment. Standard library only.
"""

import os
import resource
import sys

ADDR_NO_RANDOMIZE = 0x0040000
QUERY_PERSONALITY = 0xFFFFFFFF
STACK_BYTES = 8 << 20
RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runner.py")


def main():
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        persona = libc.personality(QUERY_PERSONALITY)
        if persona != -1:
            libc.personality(persona | ADDR_NO_RANDOMIZE)
    except (OSError, AttributeError):  # no personality outside Linux
        pass
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_STACK)
        soft = STACK_BYTES if hard == resource.RLIM_INFINITY else min(STACK_BYTES, hard)
        resource.setrlimit(resource.RLIMIT_STACK, (soft, hard))
    except (ValueError, OSError):
        pass
    flags = ["-s", "-S", "-B"] + (["-P"] if sys.version_info >= (3, 11) else [])
    os.execve(sys.executable, [sys.executable, *flags, RUNNER], {"PYTHONHASHSEED": "0"})


if __name__ == "__main__":
    main()
