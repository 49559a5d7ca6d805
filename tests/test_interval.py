"""IntervalRange: one range and one check for the seconds between readings, at its edges."""

from __future__ import annotations

import argparse
import math

import pytest

from gpumon.cli.argtypes import seconds
from gpumon.interval import EXPORTER, SAMPLING, IntervalRange


@pytest.mark.parametrize(("text", "value"), [
    ("0.1", 0.1), ("10", 10.0), ("1", 1.0), ("0.25", 0.25), (" 2.5 ", 2.5), ("1e-1", 0.1),
    ("0.125", 0.13), ("0.145", 0.14), ("9.999", 10.0),  # to two places, as the spin box
])
def test_the_sampling_range_takes_0_1_to_10_seconds(text: str, value: float) -> None:
    assert SAMPLING.parse(text) == value


@pytest.mark.parametrize("text", [
    "0", "0.0999", "0.05", "10.001", "11", "-1", "nan", "inf", "-inf", "soon", "", "1 s",
])
def test_anything_else_is_refused_with_the_range_in_the_sentence(text: str) -> None:
    with pytest.raises(ValueError, match=r"^must be a number of seconds from 0\.1 to 10, got "):
        SAMPLING.parse(text)


@pytest.mark.parametrize(("value", "clamped"), [
    (0.0, 0.1), (-5.0, 0.1), (0.1, 0.1), (0.25, 0.25), (10.0, 10.0), (99.0, 10.0),
    (math.inf, 10.0), (-math.inf, 0.1), (math.nan, 1.0), (0.125, 0.13), (3, 3.0),
])
def test_clamp_keeps_a_value_in_range_and_nan_at_the_default(value: float,
                                                             clamped: float) -> None:
    assert SAMPLING.clamp(value) == clamped


def test_what_parse_accepts_clamp_leaves_alone() -> None:
    for text in ("0.1", "0.11", "0.125", "0.5", "1", "3.33", "9.99", "10"):
        assert SAMPLING.clamp(SAMPLING.parse(text)) == SAMPLING.parse(text)


def test_the_exporter_reads_at_most_once_a_minute() -> None:
    assert (EXPORTER.low, EXPORTER.high, EXPORTER.default) == (0.1, 60.0, 1.0)
    assert EXPORTER.parse("60") == 60.0
    with pytest.raises(ValueError, match="from 0.1 to 60, got '61'"):
        EXPORTER.parse("61")


def test_the_argument_type_says_argparse_s_error_in_the_range_s_words() -> None:
    arg = seconds(IntervalRange(0.5, 2.0))
    assert arg("2") == 2.0
    with pytest.raises(argparse.ArgumentTypeError, match=r"^must be a number of seconds from "
                                                         r"0\.5 to 2, got '3'$"):
        arg("3")
