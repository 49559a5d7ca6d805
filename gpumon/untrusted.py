"""Text from outside gpumon (remote label values, other users' command lines) made safe to show.

``for_terminal`` keeps a terminal from obeying what it prints: control characters (escape
sequences, carriage returns, newlines, bidirectional overrides) become visible escapes such as
``\\x1b``; driver strings (GPU names, UUIDs, bus ids, versions) go through it as other
users' command lines do, since a driver, a recording or a remote machine may hold anything.
``for_csv`` keeps a spreadsheet from running a cell: a cell that begins with
``= + - @`` (or a tab or carriage return) is written as text, behind an apostrophe, as OWASP
advises. JSON keeps the raw value: its readers are programs, and the encoder escapes.
"""

from __future__ import annotations

import unicodedata

# Unicode's format characters that reorder or hide text (the "Trojan Source" set) and the
# line and paragraph separators, beside the C0/C1 controls that unicodedata calls "Cc".
_INVISIBLE = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068"
                       "\u2069\u2028\u2029")
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if ch == "\r":
        return "\\r"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: str) -> str:
    """``text`` with every control or direction-changing character written as an escape;
    backslashes stay as they are (the escapes are for a person to read, not to parse)."""
    if text.isprintable():  # the common case: nothing to do (isprintable is False for all
        return text  # of Cc, Cf, Zl, Zp, and also for spaces other than " ")
    return "".join(_escape(ch) if (ch in _INVISIBLE or unicodedata.category(ch) == "Cc")
                   else ch for ch in text)


def for_csv(text: str) -> str:
    """A cell that a spreadsheet shows as the text it is, never evaluates as a formula, and
    that a terminal printing the file (``cat``, ``less -R``) shows as text too."""
    shown = for_terminal(text)
    return "'" + shown if text.startswith(_FORMULA_STARTS) else shown
