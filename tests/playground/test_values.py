"""The literal-values parser: safe, rectangular, and faithful to torch.tensor(list)."""

from __future__ import annotations

import math

import hypothesis.strategies as st
import pytest
import torch
from hypothesis import given, settings

from gpumon.playground.data.values import ValuesError, format_values, parse_values


@pytest.mark.parametrize(
    ("text", "shape"),
    [("[1, 2, 3]", (3,)), ("[[1,2],[3,4]]", (2, 2)), ("5", ()), ("[]", (0,)),
     ("[[], []]", (2, 0)), ("((1, 2), (3, 4))", (2, 2)), ("[True, False]", (2,)),
     (" [-1.5, +2e3] ", (2,))],
)
def test_valid_values_have_their_shape(text: str, shape: tuple[int, ...]) -> None:
    assert parse_values(text).shape == shape


@pytest.mark.parametrize(
    ("text", "needle"),
    [("[[1, 2], [3]]", "Ragged list: item [1] has shape (1,)"),
     ("[1, [2]]", "Ragged"), ("[[[1], [2]], [[1], [2, 3]]]", "item [1][1]"),
     ("[1, 2", "Not a list of numbers"), ("", "No values"), ("__import__('os')", "found"),
     ("[None]", "found None"), ("['a']", "found 'a'"), ("[1j]", "Complex"),
     ("[-True]", "sign"), ("[x]", "found 'x'"), ("[1+2]", "found '1 + 2'"),
     ("[" * 500 + "]" * 500, "too many nested parentheses"),
     ("[" * 40 + "1" + "]" * 40, "levels deep")],
)
def test_malformed_values_are_refused_with_a_reason(text: str, needle: str) -> None:
    with pytest.raises(ValuesError) as info:
        parse_values(text)
    assert needle in str(info.value)


def test_parser_never_evaluates_code() -> None:
    hit: list[int] = []
    import builtins

    builtins._gpumon_probe = hit  # type: ignore[attr-defined]
    try:
        with pytest.raises(ValuesError):
            parse_values("[__builtins__._gpumon_probe.append(1)]")
    finally:
        del builtins._gpumon_probe  # type: ignore[attr-defined]
    assert hit == []


def test_infinite_literal_formats_as_python_that_evaluates_back() -> None:
    parsed = parse_values("[1e999, -1e999]")
    assert parsed.values == [math.inf, -math.inf]
    assert format_values(parsed.values) == "[float('inf'), -float('inf')]"


def _nest(flat: list[object], shape: tuple[int, ...]) -> object:
    if not shape:
        return flat[0]
    if shape[0] == 0:
        return []
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


scalars = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
)


@st.composite
def nested_lists(draw: st.DrawFn) -> object:
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    size = math.prod(shape)
    kind = draw(st.sampled_from(["int", "float", "bool", "mixed"]))
    element = {"int": st.integers(min_value=-(2**63), max_value=2**63 - 1),
               "float": st.floats(allow_nan=False, allow_infinity=False),
               "bool": st.booleans(), "mixed": scalars}[kind]
    flat = draw(st.lists(element, min_size=size, max_size=size))
    return _nest(flat, shape)


@settings(max_examples=150, deadline=None)
@given(nested_lists())
def test_valid_lists_round_trip_to_the_same_tensor(values: object) -> None:
    try:
        expected = torch.tensor(values)
    except (ValueError, RuntimeError, OverflowError):
        return  # torch itself refuses (e.g. a big int beside a bool); nothing to compare
    parsed = parse_values(repr(values))
    assert parsed.shape == tuple(expected.shape)
    got = torch.tensor(parsed.values)
    assert got.dtype == expected.dtype
    assert torch.equal(got, expected)
    again = parse_values(format_values(parsed.values))
    assert torch.equal(torch.tensor(again.values), expected)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200) | st.text(alphabet="[](),0123456789.-+eE TrueFalsj ", max_size=60))
def test_arbitrary_text_only_ever_returns_or_raises_values_error(text: str) -> None:
    try:
        parsed = parse_values(text)
    except ValuesError as exc:
        assert str(exc)
    else:
        assert isinstance(parsed.shape, tuple)
