"""The health fields of a simulated GPU (simulated.py): clock event reasons that follow its
load, power and heat, an energy counter integrated from its power, and ECC, memory-repair and
XID fields as such a model reports them (HBM GPUs remap rows, older ones retire pages,
GeForce cards have no ECC). Always part of a Snapshot labelled simulated."""

from __future__ import annotations

from collections.abc import Callable

IDLE, SW_POWER_CAP, HW_THERMAL = 0x1, 0x4, 0x40
REMAPS = ("A100", "H100", "L40S")  # row remapping (Ampere and later data-centre GPUs)
RETIRES = ("V100", "T4")  # page retirement (earlier data-centre GPUs)
HBM = ("A100", "H100", "V100")  # memory temperature is a field of HBM GPUs


def clock_reasons(busy: bool, power_w: float, limit_w: float, temp_c: float) -> int:
    """Idle when not busy; the power cap near the limit; thermal slowdown when hot."""
    mask = 0 if busy else IDLE
    if power_w >= 0.9 * limit_w:
        mask |= SW_POWER_CAP
    if temp_c >= 83.0:
        mask |= HW_THERMAL
    return mask


def slow_health(name: str, datacenter: bool) -> dict[str, object]:
    """ECC, remapped rows, retired pages and PCIe replays of a healthy GPU of this model."""
    ecc = datacenter or "A6000" in name
    counts = 0 if datacenter else None  # ECC counts only while ECC is on
    remaps = any(m in name for m in REMAPS)
    retires = any(m in name for m in RETIRES)
    return {
        "ecc_enabled": datacenter if ecc else None,
        "ecc_corrected_volatile": counts, "ecc_uncorrected_volatile": counts,
        "ecc_corrected_aggregate": counts, "ecc_uncorrected_aggregate": counts,
        "remapped_rows_correctable": 0 if remaps else None,
        "remapped_rows_uncorrectable": 0 if remaps else None,
        "remap_pending": False if remaps else None,
        "remap_failure": False if remaps else None,
        "retired_pages_sbe": 0 if retires else None,
        "retired_pages_dbe": 0 if retires else None,
        "retired_pages_pending": False if retires else None,
        "pcie_replay_count": 0,
    }


def xids_by(t: float, scripted: tuple[tuple[float, int], ...], t0: float
            ) -> dict[str, object]:
    """The XID fields at ``t`` s after start, from (seconds after start, code) pairs."""
    seen = [(at, code) for at, code in scripted if at <= t]
    if not seen:
        return {"xid_count": 0, "xid_last": None, "xid_last_time_s": None}
    at, code = max(seen)
    return {"xid_count": len(seen), "xid_last": code, "xid_last_time_s": t0 + at}


STEP_S = 1.0  # the energy counter integrates the power on this grid


class Energy:
    """Each GPU's energy counter (mJ): its power integrated from the start (trapezoids on a
    1 s grid), so a reading depends on the time only, not on how often the GPU was read.
    Only the latest grid point is kept (time moves forward; an earlier time starts over), with
    the power there: a tick at 1 s computes the power at one new grid point."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[int, float, float]] = {}  # gpu -> (k, mJ at k s, W at k s)

    def at(self, gpu: int, t: float, power_w: Callable[[float], float], power_now: float,
           start_mj: float) -> float:
        """The counter at ``t`` s after start; ``power_now`` is ``power_w(t)``, known."""
        whole = max(0, int(t // STEP_S))
        kept = self._kept.get(gpu)
        if kept is None or kept[0] > whole:
            kept = (0, start_mj, power_w(0.0))
        k, mj, p_k = kept
        while k < whole:
            p_next = power_w((k + 1) * STEP_S)
            mj += (p_k + p_next) * STEP_S / 2 * 1000.0
            k, p_k = k + 1, p_next
        self._kept[gpu] = (k, mj, p_k)
        return mj + (p_k + power_now) * max(0.0, t - whole * STEP_S) / 2 * 1000.0
