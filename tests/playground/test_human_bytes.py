"""human_bytes: the unit steps at 1024, and TiB is the last unit (no PiB)."""

from __future__ import annotations

import pytest

from gpumon.units import human_bytes


@pytest.mark.parametrize(("n", "text"), [
    (0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536 * 1024, "1.5 MiB"),
    (3 * 2**30, "3.0 GiB"), (2 * 2**40, "2.0 TiB"), (5 * 2**50, "5120.0 TiB"),
])
def test_human_bytes(n: float, text: str) -> None:
    assert human_bytes(n) == text
