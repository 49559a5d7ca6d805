"""What a Python prompt prints after a piece of code, for the lesson's transcripts.

At ``>>>`` Python echoes the value of an expression, except None, and nothing after an
assignment, ``del`` or ``import``. The lesson wants the value of an assignment seen too, so
it asks for it as one would at a prompt: ``>>> x = ...`` is followed by ``>>> x`` and then
the value. gpumon's own words about a value (its device, what varies) are comments, ``# ...``,
never text a reader could take for Python's output. No torch import.
"""

from __future__ import annotations

import ast
import re
from typing import Literal

Echo = Literal["value", "name", "nothing"]


def echo(code: str) -> tuple[Echo, str]:
    """How a prompt shows the value of ``code``: ("value", "") when its last statement is an
    expression, ("name", name) for an assignment to one name (ask for it with ``>>> name``),
    ("nothing", "") otherwise (``del``, ``import``, several names, code that does not parse)."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return "nothing", ""
    if not body:
        return "nothing", ""
    last = body[-1]
    if isinstance(last, ast.Expr):
        return "value", ""
    if isinstance(last, ast.Assign) and len(last.targets) == 1 \
            and isinstance(last.targets[0], ast.Name):
        return "name", last.targets[0].id
    return "nothing", ""


def prompt_lines(code: str, value: str | None, prompt: str = ">>> ",
                 more: str = "... ") -> list[str]:
    """``code`` at a prompt, then what Python prints for ``value`` (its repr, or None when
    there is none): nothing for None, a ``>>> name`` line first after an assignment."""
    first, *rest = code.splitlines() or [""]
    lines = [prompt + first, *(more + line for line in rest)]
    how, name = echo(code)
    if value is not None and is_error(value):  # Python stops: the statement made no value
        return lines + value.splitlines()
    if value is None or value == "" or how == "nothing":
        return lines
    if how == "value" and value == "None":
        return lines  # the prompt prints nothing for None
    if how == "name":
        lines.append(prompt + name)
    return lines + value.splitlines()


def is_error(text: str) -> bool:
    """Whether ``text`` is an exception as Python shows it (``RuntimeError: ...``)."""
    return re.match(r"[\w.]+(Error|Exception|Interrupt): ", text) is not None


def comment(text: str) -> str:
    """gpumon's words in a transcript: a Python comment."""
    return "# " + text


__all__ = ["comment", "echo", "is_error", "prompt_lines"]
