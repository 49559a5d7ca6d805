"""format_bytes: the unit steps at 1024, two decimals above bytes, TiB is the last unit (no
PiB); a fixed unit, precision or spelling is a parameter of the same function."""

from __future__ import annotations

import math
import time

import pytest

from gpumon.units import (
    GIB,
    MIB,
    NA,
    TIB,
    format_bytes,
    format_clock,
    format_number,
    format_smi_date,
)


@pytest.mark.parametrize(("n", "text"), [
    (0, "0 B"), (1, "1 B"), (1023, "1023 B"), (1024, "1.00 KiB"), (1536, "1.50 KiB"),
    (1536 * 1024, "1.50 MiB"), (256 * MIB, "256.00 MiB"), (3 * GIB, "3.00 GiB"),
    (int(12.34 * GIB), "12.34 GiB"), (2 * TIB, "2.00 TiB"), (5 * 2**50, "5120.00 TiB"),
    (-1536 * MIB, "-1.50 GiB"), (-5, "-5 B"), (1.5 * GIB, "1.50 GiB"),
])
def test_the_unit_steps_at_1024_with_two_decimals(n: float, text: str) -> None:
    assert format_bytes(n) == text


@pytest.mark.parametrize(("n", "text"), [
    (1023.6, "1.00 KiB"),  # not "1024 B"
    (MIB - 1, "1.00 MiB"),  # 1023.999 KiB: not "1024.00 KiB"
    (GIB - 1, "1.00 GiB"),
    (MIB - 6, "1023.99 KiB"),  # 1023.994 KiB still reads in KiB
])
def test_an_amount_that_rounds_to_1024_of_a_unit_is_shown_in_the_next(
        n: float, text: str) -> None:
    assert format_bytes(n) == text


@pytest.mark.parametrize("n", [None, math.nan, math.inf, -math.inf])
def test_no_amount_is_na(n: float | None) -> None:
    assert format_bytes(n) == NA == "N/A"
    assert format_bytes(n, "MiB", decimals=0, sep="") == NA


def test_a_huge_amount_stays_in_tib() -> None:
    assert format_bytes(1e30) == f"{1e30 / TIB:.2f} TiB"


def test_a_fixed_unit_precision_and_spelling_are_parameters() -> None:
    assert format_bytes(GIB // 2, "GiB") == "0.50 GiB"  # a graph in GiB
    assert format_bytes(int(12.34 * GIB), "GiB", suffix=False) == "12.34"
    assert format_bytes(1234 * MIB, "MiB", decimals=0, sep="") == "1234MiB"  # nvidia-smi
    assert format_bytes(1234 * MIB + MIB // 2 + 1, "MiB", decimals=0) == "1235 MiB"
    assert format_bytes(85_520_809_984, "GiB", decimals=0) == "80 GiB"  # an H100's size
    assert format_bytes(0, "GiB") == "0.00 GiB"
    assert format_bytes(1023, "B") == "1023 B"
    with pytest.raises(ValueError, match="unknown byte unit"):
        format_bytes(1, "GB")


def test_a_reading_with_its_unit_or_na() -> None:
    assert format_number(87.4, "%") == "87%"
    assert format_number(215.5, "W", decimals=2, sep=" ") == "215.50 W"
    assert format_number(7000.1234, "J", decimals=3, sep=" ") == "7000.123 J"
    assert format_number(1905) == "1905"
    for missing in (None, math.nan, math.inf):
        assert format_number(missing, "%") == NA


def test_a_moment_as_a_clock_time_and_as_nvidia_smi_s_date() -> None:
    t = time.mktime((2024, 3, 5, 14, 3, 12, 0, 0, -1)) + 0.9  # local time; not rounded up
    assert format_clock(t) == "14:03:12"
    assert format_smi_date(t) == "Tue Mar 05 14:03:12 2024"
