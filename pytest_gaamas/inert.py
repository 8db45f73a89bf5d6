"""Text that a model wrote, made inert before anyone sees it.

A model's reply, a strategy's exception, a value it returned, and anything read back from a run log
may hold control characters: escape sequences that a terminal obeys (write to the clipboard with
OSC 52, clear the screen, colour a forged ``=== 40 passed ===``), a carriage return that overwrites
the line, a line break that starts a line of its own, bidirectional overrides that reorder what is
shown. :func:`terminal` shows each of them escaped, as Python writes it (``\\x1b``, ``\\n``,
``\\u202e``), so the text reads as what it is and does nothing. :func:`markdown` does the same for
a Markdown document, where links, images, HTML and a table's ``|`` are the controls.

Every place the suite prints such text goes through here: the MISSED lines, failure and skip
lines, the tables, the progress lines and the comparison's notes.
"""

from __future__ import annotations

import re
import string
import unicodedata

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(char: str) -> str:
    code = ord(char)
    return _SHORT.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")


def _shown(char: str) -> str:
    # Not printable: controls (C0, DEL, C1), formats (bidirectional overrides, zero-width and tag
    # characters), line and paragraph separators, surrogates, private and unassigned code points.
    # Spaces other than " " (no-break, ideographic) are kept: they move nothing.
    return char if char.isprintable() or unicodedata.category(char) == "Zs" else _escaped(char)


def terminal(value: object) -> str:
    """``value`` as text a terminal shows and never obeys, on one line."""
    text = str(value)
    if text.isprintable():  # the common case, at C speed
        return text
    return "".join(map(_shown, text))


def lines(value: object) -> str:
    """``value`` as :func:`terminal` shows it, but keeping its line breaks and tabs: for text shown
    as written over many lines (a reply in the HTML report's ``<pre>``), where a line break moves
    nothing that is not the text's own."""
    text = str(value)
    if text.isprintable():
        return text
    return "\n".join("\t".join(map(terminal, line.split("\t"))) for line in text.split("\n"))  # each piece at C speed


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def whole(text: str) -> str:
    """``text`` with each lone surrogate (JSON's ``"\\ud800"``, which no UTF-8 file can hold)
    replaced by U+FFFD, as a decoder replaces what it cannot read: a reply that holds one is read
    as the model's words, and written, replayed and reported like any other."""
    return text if text.isascii() else _LONE_SURROGATE.sub("\ufffd", text)


#: Every ASCII punctuation character may be backslash-escaped in CommonMark, and none then does
#: anything: no link, image, HTML, emphasis, code span, heading, list, quote or table cell boundary;
#: and with ':', '.' and '@' escaped, GitHub does not make a bare URL or address a link either.
_PUNCTUATION = re.compile("[" + re.escape(string.punctuation) + "]")


def markdown(value: object) -> str:
    """``value`` as Markdown text that shows as written, on one line, in a paragraph or a table cell."""
    return _PUNCTUATION.sub(lambda match: "\\" + match.group(0), terminal(value))
