"""The health words: clock event reasons, the XID table, ok / warning / error, and the events
a new reading brings; values from a remote exporter (floats, NaN, nonsense) never raise."""

from __future__ import annotations

import math

import pytest

from gpumon.telemetry.model.health import (
    XID_TABLE,
    HealthWatch,
    Level,
    as_mask,
    assess,
    clock_reasons,
    held_down,
    xid_meaning,
)
from gpumon.telemetry.model.types import GpuSample


def test_reasons_in_words_idle_alone_holds_nothing_down() -> None:
    assert clock_reasons(0x44) == ["SW power cap", "HW thermal slowdown"]
    assert held_down(0x44 | 0x1) == "clocks held down: power cap, thermal"
    assert held_down(0x20 | 0x40) == "clocks held down: thermal"  # said once
    assert held_down(0x1) == "" and held_down(0) == "" and held_down(None) == ""
    assert held_down(68.0) == "clocks held down: power cap, thermal"  # as Prometheus sends it


@pytest.mark.parametrize("bad", [math.nan, math.inf, -4.0, 4.5, 2.0**70])
def test_a_mask_no_gpu_sends_is_no_mask(bad: float) -> None:
    assert as_mask(bad) is None and held_down(bad) == "" and clock_reasons(bad) == []


def test_the_common_xids_are_in_the_table() -> None:
    assert {13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120} <= set(XID_TABLE)
    assert xid_meaning(79) == "GPU has fallen off the bus"
    assert xid_meaning(12345) == "not in gpumon's table of XID codes"


def sample(**fields: object) -> GpuSample:
    return GpuSample(0, 100.0, **fields)  # type: ignore[arg-type]


def test_levels_and_reasons() -> None:
    assert assess(sample()).level == Level.OK
    assert assess(sample(ecc_uncorrected_volatile=0, remap_pending=False)).level == Level.OK
    h = assess(sample(remap_pending=True))
    assert h.level == Level.WARNING and "row remap is pending" in h.reasons[0]
    assert assess(sample(ecc_uncorrected_volatile=2)).level == Level.ERROR
    assert assess(sample(remap_failure=True)).level == Level.ERROR
    assert assess(sample(xid_count=1, xid_last=13)).level == Level.WARNING
    assert assess(sample(xid_count=1, xid_last=79)).level == Level.ERROR
    assert assess(sample(lost=True, remap_failure=True)).level == Level.OK  # lost says it


def test_a_rise_since_start_is_a_warning_and_new_errors_are_events() -> None:
    watch = HealthWatch()
    first = sample(retired_pages_sbe=3, retired_pages_dbe=0, pcie_replay_count=10,
                   xid_count=0, ecc_uncorrected_volatile=0)
    assert watch.update(first) == [] and watch.health(first).level == Level.OK
    later = sample(retired_pages_sbe=4, retired_pages_dbe=0, pcie_replay_count=12,
                   xid_count=1, xid_last=31, xid_last_time_s=101.0, ecc_uncorrected_volatile=1)
    events = watch.update(later)
    assert len(events) == 2
    assert "XID 31, GPU memory page fault." in events[0].text and events[0].time_s == 101.0
    assert "1 new uncorrected ECC error." in events[1].text  # singular, not "error(s)"
    reasons = "\n".join(watch.health(later).reasons)
    assert "1 more retired page since" in reasons and "2 more PCIe replays since" in reasons
    assert watch.update(later) == []  # nothing new


def test_an_exporters_numbers_become_fields_and_nonsense_is_left_out() -> None:
    from gpumon.telemetry.model.health import from_exporter

    got = from_exporter({"ecc_uncorrected_volatile": 2.0, "remap_pending": 1.0,
                         "clocks_event_reasons": 68.0, "xid_last": 79.0,
                         "pcie_replay_count": -3.0, "remap_failure": 0.5,
                         "retired_pages_sbe": 1.5})
    assert got == {"ecc_uncorrected_volatile": 2, "remap_pending": True,
                   "clocks_event_reasons": 68, "xid_last": 79, "xid_count": 1}
    assert isinstance(got["ecc_uncorrected_volatile"], int)
    assert from_exporter({"xid_last": 0.0}) == {"xid_last": None, "xid_count": 0}
    assert from_exporter({}) == {}
