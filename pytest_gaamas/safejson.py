"""Reading JSON that anyone may have written: a model's reply, a strategy's answer, a file on disk.

``json.loads`` is not total on hostile input: ``'[' * 1000`` raises ``RecursionError``, a 4,301-digit
integer ``ValueError``, ``1e400`` comes back as infinity, ``NaN`` is read, and of two equal keys the
last silently wins. :func:`loads` returns a value made of JSON's types, with finite numbers, integers
of at most :data:`MAX_INT_DIGITS` digits and at most ``max_depth`` levels of nesting, or raises
:class:`JSONError` with a one-line reason. Its cost is linear in the text.

:func:`read_file` is the same for a file the suite reads (a journal, a saved run, ``model.json``):
whatever is wrong with it comes back as one :class:`~pytest_gaamas.errors.UnreadableFile` line that
names the file and says what to do. :func:`read_bytes` reads any such file within a size limit and
without ever blocking: a FIFO, a device or a socket where a file should be is refused, not read.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
from pathlib import Path
from typing import Any

from .errors import UnreadableFile

MAX_DEPTH = 64
#: Larger integers are no decision anyone means, and ``float()`` of a 309-digit one overflows.
MAX_INT_DIGITS = 30


class JSONError(ValueError):
    """The text is not JSON that the suite accepts; the message says why, in a few words. ``told`` says
    it without quoting the text (a key, a value), for a message a model may read."""

    def __init__(self, message: str, told: str | None = None):
        super().__init__(message)
        self.told = message if told is None else told


class _Rejected(Exception):
    def __init__(self, message: str, told: str | None = None):
        super().__init__(message)
        self.told = message if told is None else told


def _integer(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _Rejected(f"an integer of {len(digits.lstrip('-'))} digits")
    return int(digits)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Rejected(f"the number {text[:40]} is out of range", told="a number is out of range")
    return value


def _constant(name: str) -> None:
    raise _Rejected(f"{name} is not a JSON number")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj and obj[key] != value:
            raise _Rejected(f"the key {key[:40]!r} appears twice with different values", told="a key appears twice with different values")
        obj[key] = value
    return obj


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object, parse_int=_integer, parse_float=_finite, parse_constant=_constant
)


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as error:
        raise JSONError(f"{error.msg} at character {error.pos}") from None
    except _Rejected as error:
        raise JSONError(str(error), told=error.told) from None
    except RecursionError:
        raise JSONError(f"nested more than {max_depth} levels deep") from None
    except (ValueError, TypeError) as error:  # what the decoder may raise beyond its own error
        raise JSONError(f"{type(error).__name__}: {str(error)[:80]}", told=type(error).__name__) from None
    _check_shape(value, max_depth)
    return value


def _check_shape(value: Any, max_depth: int) -> None:
    """Depth, and text that can be written out again (a lone surrogate cannot be encoded as UTF-8).
    Walked with a stack, not by recursion: the value may be as deep as the decoder allowed."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _encodable(item)
            continue
        if isinstance(item, dict):
            for key in item:
                _encodable(key)
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            raise JSONError(f"nested more than {max_depth} levels deep")
        stack.extend((child, depth + 1) for child in children)


def _encodable(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise JSONError("text with an unpaired surrogate escape") from None


#: What a small JSON file the suite reads (``model.json``) may weigh.
MAX_FILE_BYTES = 1 << 20

#: Opening for reading without waiting: a FIFO opens at once rather than waiting for a writer.
NONBLOCKING_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)

_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFDIR: "a directory", stat.S_IFSOCK: "a socket",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}  # fmt: skip


def read_file(path: Path, *, what: str, remedy: str, max_depth: int = MAX_DEPTH, limit: int = MAX_FILE_BYTES) -> Any:
    """The JSON in ``path``, or one line naming the file, what is wrong, and ``remedy``."""
    try:
        text = read_bytes(path, what=what, remedy=remedy, limit=limit).decode("utf-8")
    except FileNotFoundError:
        raise UnreadableFile(f"{path}: no such {what}; {remedy}") from None
    except UnicodeDecodeError as error:
        raise UnreadableFile(f"{path}: cannot read this {what} ({_short(error)}); {remedy}") from None
    try:
        return loads(text, max_depth=max_depth)
    except JSONError as error:
        raise UnreadableFile(f"{path}: not a valid {what} ({error}); {remedy}") from None


def read_bytes(path: Path, *, what: str, remedy: str, limit: int) -> bytes:
    """The content of the regular file at ``path``, if it holds at most ``limit`` bytes. It never
    blocks: the file is opened without waiting (a FIFO opens at once and is then refused) and is
    checked to be a regular file before a byte is read. A missing file raises FileNotFoundError, for
    the caller to say what that means; anything else wrong is one UnreadableFile line."""
    try:
        kind = _KINDS.get(stat.S_IFMT(os.stat(path).st_mode))
        if kind is None:  # a regular file; a FIFO is not even opened
            descriptor = os.open(path, NONBLOCKING_READ)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise UnreadableFile(f"{path}: cannot read this {what} ({_short(error)}); {remedy}") from None
    if kind is not None:
        raise UnreadableFile(f"{path}: {kind}, not a {what}; {remedy}")
    try:
        size = os.fstat(descriptor)
        if not stat.S_ISREG(size.st_mode):  # replaced between the look and the open
            raise UnreadableFile(f"{path}: {_KINDS.get(stat.S_IFMT(size.st_mode), 'not a file')}, not a {what}; {remedy}")
        if size.st_size > limit:
            raise OSError(errno.EFBIG, f"{size.st_size:,} bytes, more than the {limit:,} a {what} may hold")
        chunks, read = [], 0
        while chunk := os.read(descriptor, min(1 << 20, limit + 1 - read)):  # it may grow while it is read
            chunks.append(chunk)
            read += len(chunk)
            if read > limit:
                raise OSError(errno.EFBIG, f"more than the {limit:,} bytes a {what} may hold")
        return b"".join(chunks)
    except OSError as error:
        raise UnreadableFile(f"{path}: cannot read this {what} ({_short(error)}); {remedy}") from None
    finally:
        os.close(descriptor)


def _short(error: BaseException) -> str:
    return getattr(error, "strerror", None) or f"{type(error).__name__}: {error}"
