"""Safe parsing of the literal values a user types for ``torch.tensor(...)``.

Text is parsed with :func:`ast.parse` and only number, bool, list and tuple nodes are
accepted (never ``eval``), so typed text can never run code. Ragged lists are refused here,
with the position that breaks the rectangle, before torch sees them. The sentences are in
the chosen language; positions count characters from 1. No torch import.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

from gpumon.i18n import tr

Scalar = bool | int | float
Nested = Scalar | list["Nested"]

MAX_TEXT_CHARS = 200_000
MAX_DEPTH = 32


class ValuesError(ValueError):
    """The typed values are not a rectangular nested list of numbers or bools."""


@dataclass(frozen=True)
class ParsedValues:
    """Values ready for ``torch.tensor``: nested lists of Python scalars and their shape."""

    values: Nested
    shape: tuple[int, ...]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def parse_values(text: str) -> ParsedValues:
    """Parse ``text`` like ``[[1, 2], [3, 4]]``; raise :class:`ValuesError` on anything else.

    Never raises another exception type, whatever the text.
    """
    if not isinstance(text, str):
        raise ValuesError(tr("Values must be text such as [1, 2, 3]."))
    if not text.strip():
        raise ValuesError(tr("No values given: type numbers such as [1, 2, 3]."))
    if len(text) > MAX_TEXT_CHARS:
        raise ValuesError(tr(
            "The values are {length} characters long; the limit is {limit}. Create large "
            "tensors by shape (zeros, ones, rand...) instead.",
            length=f"{len(text):,}", limit=f"{MAX_TEXT_CHARS:,}"))
    lead = len(text) - len(text.lstrip())
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValuesError(tr("Not a list of numbers: {why}",
                             why=syntax_in_words(exc, lead))) from None
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise ValuesError(tr("Not a list of numbers: {why}.", why=_first_line(exc))) from None
    values = _convert(tree.body, 0, lead)
    shape = _shape(values, ())
    return ParsedValues(values, shape)


def format_values(values: Nested) -> str:
    """Render parsed values as Python source: ``[[1, 2], [3.5, True]]``."""
    if isinstance(values, list):
        return "[" + ", ".join(format_values(v) for v in values) + "]"
    if isinstance(values, float) and math.isinf(values):
        return "float('inf')" if values > 0 else "-float('inf')"
    return repr(values)


def syntax_in_words(exc: SyntaxError, lead: int = 0) -> str:
    """Python's parser message ("'[' was never closed (<unknown>, line 1)") as a sentence
    with the character it is about, counted from 1 (``lead``: characters stripped before)."""
    at = (exc.offset or 1) + lead
    msg = exc.msg or ""
    m = re.fullmatch(r"'(.)' was never closed", msg)
    if m:
        close = {"[": "]", "(": ")", "{": "}"}.get(m.group(1), "")
        return tr("the {bracket} at character {at} is never closed; end the list with "
                  "{close}.", bracket=m.group(1), at=at, close=close)
    m = re.fullmatch(r"unmatched '(.)'", msg)
    if m:
        return tr("the {bracket} at character {at} closes nothing; remove it.",
                  bracket=m.group(1), at=at)
    m = re.fullmatch(r"closing parenthesis '(.)' does not match opening parenthesis '(.)'.*", msg)
    if m:
        return tr("the {bracket} at character {at} does not match the {opening} that opened "
                  "the list.", bracket=m.group(1), at=at, opening=m.group(2))
    if "too many nested" in msg:  # Python's own words, kept as it wrote them
        return tr("{python} (more than Python reads) at character {at}.", python=msg, at=at)
    if "forgot a comma" in msg and exc.text and exc.end_offset:
        near = exc.text[(exc.offset or 1) - 1:exc.end_offset - 1]
        return tr("a comma is missing in {near} (from character {at}), as in [1, 2, 3].",
                  near=repr(near), at=at)
    return tr("something is wrong at character {at}; write numbers in brackets, as in "
              "[1, 2, 3].", at=at)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _convert(node: ast.AST, depth: int, lead: int = 0) -> Nested:
    if depth > MAX_DEPTH:
        raise ValuesError(tr("The lists are nested more than {depth} levels deep.",
                             depth=MAX_DEPTH))
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_convert(elt, depth + 1, lead) for elt in node.elts]
    if isinstance(node, ast.Constant):
        return _scalar(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = node.operand
        if isinstance(operand, ast.Constant):
            value = _scalar(operand.value)
            if isinstance(value, bool):
                raise ValuesError(tr("A sign before True or False is not a value; write 1 "
                                     "or 0."))
            return -value if isinstance(node.op, ast.USub) else value
    at = getattr(node, "col_offset", 0) + 1 + lead
    raise ValuesError(tr("Only numbers, True/False and [lists] are allowed; found {found} at "
                         "character {at}.", found=_describe(node), at=at))


def _scalar(value: object) -> Scalar:
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, complex):
        raise ValuesError(tr("Complex numbers are not offered here; use real numbers."))
    raise ValuesError(tr("Only numbers, True/False and [lists] are allowed; found {found}.",
                         found=repr(value)))


def _describe(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # unparse of odd trees; the node kind still helps
        text = type(node).__name__
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _shape(values: Nested, where: tuple[int, ...]) -> tuple[int, ...]:
    """Shape of a rectangular nesting; raise ValuesError naming the first ragged place."""
    if not isinstance(values, list):
        return ()
    if not values:
        return (0,)
    shapes = [_shape(v, (*where, i)) for i, v in enumerate(values)]
    first = shapes[0]
    for i, s in enumerate(shapes[1:], start=1):
        if s != first:
            place = "".join(f"[{k}]" for k in (*where, i))
            first_place = "".join(f"[{k}]" for k in (*where, 0))
            raise ValuesError(tr(
                "Ragged list: item {place} {what} but item {first_place} {first_what}; every "
                "row must have the same length.", place=place, what=_fmt(s),
                first_place=first_place, first_what=_fmt(first)))
    return (len(values), *first)


def _fmt(shape: tuple[int, ...]) -> str:
    return tr("is a single number") if not shape else tr("has shape {shape}", shape=shape)
