"""Properties of the values parser that tests/playground/test_values.py does not cover.

That file checks round trips of valid lists and that arbitrary text only ever raises
ValuesError. Here: code hidden anywhere in a nesting is refused and never run; any ragged
nesting is refused and the place named is really ragged; depth is limited exactly at
MAX_DEPTH; layout (spaces, newlines, trailing commas) never changes the result.
"""

from __future__ import annotations

import ast
import builtins
import math
import re
from collections.abc import Iterator

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from gpumon.playground.data.values import MAX_DEPTH, ValuesError, parse_values

PROBE = "_gpumon_values_probe"
NUMBERS = st.one_of(st.integers(-10**6, 10**6).map(str),
                    st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
                    st.sampled_from(["True", "False", "-0.0", "+3", "1e300"]))
CODE = st.sampled_from([
    f"__builtins__.{PROBE}.append(1)", f"[__builtins__.{PROBE}.append(2)][0]",
    f"__import__('builtins').{PROBE}.append(3)", "x", "nan", "inf", "None", "'1'", "b'1'",
    "{1}", "{1: 2}", "1 + 2", "2 ** 3", "-x", "not 1", "1 if 1 else 0", "(lambda: 1)()",
    "[i for i in (1,)]", "...", "f'{1}'", "open('/dev/null')", "(yield)", "1j", "[1][0]",
])


@pytest.fixture(autouse=True)
def probe() -> Iterator[list[int]]:
    hits: list[int] = []
    setattr(builtins, PROBE, hits)
    yield hits
    delattr(builtins, PROBE)


def _nesting(leaves: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]")
        | st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ")"),
        max_leaves=12)


@st.composite
def with_code_inside(draw: st.DrawFn) -> str:
    """A nesting of numbers with one piece of code put at a random leaf."""
    text = draw(_nesting(NUMBERS | st.just("@")))
    code = draw(CODE)
    if "@" not in text:
        return f"[{text}, {code}]" if draw(st.booleans()) else code
    spots = [m.start() for m in re.finditer("@", text)]
    k = draw(st.integers(0, len(spots) - 1))
    pieces = text.split("@")
    filler = draw(NUMBERS)
    return "".join(p + (code if i == k else filler) for i, p in enumerate(pieces[:-1])) \
        + pieces[-1]


@settings(max_examples=300, deadline=None)
@given(with_code_inside())
def test_code_anywhere_is_refused_and_never_run(text: str) -> None:
    hits = getattr(builtins, PROBE)
    with pytest.raises(ValuesError) as info:
        parse_values(text)
    assert str(info.value)
    assert hits == []


@st.composite
def ragged(draw: st.DrawFn) -> tuple[str, tuple[int, ...]]:
    """A rectangular nesting with one row made one longer or shorter; (text, that row)."""
    shape = draw(st.lists(st.integers(1, 3), min_size=2, max_size=4))
    depth = draw(st.integers(0, len(shape) - 2))  # the broken list holds lists
    shape[depth] = max(2, shape[depth])  # and has a sibling to differ from
    where = tuple(draw(st.integers(0, shape[d] - 1)) for d in range(depth + 1))

    def build(level: int, path: tuple[int, ...]) -> str:
        if level == len(shape):
            return "1"
        n = shape[level]
        if path == where:
            n = n + 1 if n == 1 or draw(st.booleans()) else n - 1
        return "[" + ", ".join(build(level + 1, (*path, i)) for i in range(n)) + "]"

    return build(0, ()), where


@settings(max_examples=200, deadline=None)
@given(ragged())
def test_any_ragged_nesting_is_refused_naming_a_ragged_place(case: tuple[str, tuple[int, ...]]
                                                              ) -> None:
    text, _where = case
    with pytest.raises(ValuesError) as info:
        parse_values(text)
    message = str(info.value)
    assert message.startswith("Ragged list: item ")
    place = re.match(r"Ragged list: item ((?:\[\d+\])+)", message)
    assert place is not None, message
    # The named item really differs in shape from its first sibling.
    nested = ast.literal_eval(text)
    path = [int(i) for i in re.findall(r"\d+", place.group(1))]
    parent = nested
    for i in path[:-1]:
        parent = parent[i]
    assert _shape(parent[path[-1]]) != _shape(parent[0])


def _shape(v: object) -> object:
    return [_shape(x) for x in v] if isinstance(v, list) else None


@settings(max_examples=60, deadline=None)
@given(st.integers(0, MAX_DEPTH + 20))
def test_depth_is_limited_exactly(depth: int) -> None:
    text = "[" * depth + "7" + "]" * depth
    if depth <= MAX_DEPTH:
        assert parse_values(text).shape == (1,) * depth
    else:
        with pytest.raises(ValuesError, match="nested more than"):
            parse_values(text)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_layout_never_changes_the_result(data: st.DataObject) -> None:
    rows = data.draw(st.integers(1, 3))
    cols = data.draw(st.integers(1, 3))
    numbers = data.draw(st.lists(NUMBERS, min_size=rows * cols, max_size=rows * cols))
    plain = "[" + ", ".join("[" + ", ".join(numbers[r * cols:(r + 1) * cols]) + "]"
                            for r in range(rows)) + "]"
    space = st.sampled_from(["", " ", "\n", "\t", "  \n  "])

    def sp() -> str:
        return data.draw(space)

    messy = sp() + "[" + sp() + ("," + sp()).join(
        "[" + sp() + ("," + sp()).join(numbers[r * cols:(r + 1) * cols]) + sp()
        + ("," if data.draw(st.booleans()) else "") + "]"
        for r in range(rows)) + sp() + "]" + sp()
    a, b = parse_values(plain), parse_values(messy)
    assert a.shape == b.shape == (rows, cols)
    flat_a = [x for row in a.values for x in row]  # type: ignore[union-attr]
    flat_b = [x for row in b.values for x in row]  # type: ignore[union-attr]
    assert all((math.isnan(x) and math.isnan(y)) or x == y and type(x) is type(y)
               for x, y in zip(flat_a, flat_b, strict=True))
