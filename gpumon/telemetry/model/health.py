"""Why a GPU is slow and whether it is healthy, in words; Qt-free and NVML-free, so the window,
the terminal outputs, the exporter and the cluster view say the same thing.

- ``clock_reasons``: NVML's clock event ("throttle") reasons bitmask as words.
- ``XID_TABLE``: what the common XID codes mean, after NVIDIA's XID catalogue
  (docs.nvidia.com/deploy/xid-errors), with a one-line hint.
- ``assess``: ok / warning / error for one sample, with the reasons.
- ``HealthWatch``: per GPU, the counts first seen (to notice that one rose) and the events a
  new sample brings (a new XID, a new uncorrected ECC error).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass

from gpumon.i18n import N_, ntr, tr
from gpumon.telemetry.model.types import GpuSample
from gpumon.units import format_clock

# nvmlClocksEventReason* bits (nvml.h), in the order nvidia-smi -q lists them: the full name
# (as nvidia-smi words it) and the short word of a panel's header ("clocks held down: ...").
IDLE = 0x1
CLOCK_REASONS: tuple[tuple[int, str, str], ...] = (
    (0x1, N_("GPU idle"), N_("idle")),
    (0x2, N_("applications clocks setting"), N_("application clocks")),
    (0x4, N_("SW power cap"), N_("power cap")),
    (0x8, N_("HW slowdown"), N_("hardware slowdown")),
    (0x10, N_("sync boost"), N_("sync boost")),
    (0x20, N_("SW thermal slowdown"), N_("thermal")),
    (0x40, N_("HW thermal slowdown"), N_("thermal")),
    (0x80, N_("HW power brake slowdown"), N_("power brake")),
    (0x100, N_("display clock setting"), N_("display clock")),
)


def as_mask(value: float | None) -> int | None:
    """A reasons bitmask as an int; None for a value no bitmask can be (a remote exporter's
    NaN, a negative or fractional number, more bits than NVML defines)."""
    if value is None or not math.isfinite(value) or value < 0 or value != int(value) \
            or value >= 1 << 64:
        return None
    return int(value)


def clock_reasons(mask: float | None, short: bool = False) -> list[str]:
    """The active reasons of ``mask`` in words (translated), each word once; [] for None/0."""
    mask = as_mask(mask)
    if not mask:
        return []
    words: list[str] = []
    for bit, full, brief in CLOCK_REASONS:
        word = tr(brief if short else full)
        if mask & bit and word not in words:
            words.append(word)
    return words


def held_reasons(mask: float | None) -> str:
    """'power cap, thermal': the reasons other than idle that hold the clocks down, or ''."""
    words = clock_reasons((as_mask(mask) or 0) & ~IDLE, short=True)
    return tr(", ").join(words)  # the language's own separator (Chinese enumerates with "、")


def held_down(mask: float | None) -> str:
    """'clocks held down: power cap, thermal' when a reason other than idle is active, else ''."""
    reasons = held_reasons(mask)
    return tr("clocks held down: {reasons}", reasons=reasons) if reasons else ""


@dataclass(frozen=True, slots=True)
class Xid:
    meaning: str  # N_()
    hint: str  # N_(): one line, what to do
    severe: bool  # the GPU needs a reset or service (an error, not a warning)


XID_TABLE: dict[int, Xid] = {
    13: Xid(N_("graphics engine exception"),
            N_("Usually the application (an illegal instruction or address); run it under "
               "compute-sanitizer."), False),
    31: Xid(N_("GPU memory page fault"),
            N_("Usually the application read or wrote memory it does not own."), False),
    43: Xid(N_("GPU stopped processing"),
            N_("A user application faulted; the GPU itself carries on."), False),
    45: Xid(N_("preemptive cleanup, due to previous errors"),
            N_("A process was ended (killed or crashed); look at the XID before it."), False),
    48: Xid(N_("double-bit ECC error"),
            N_("Reset the GPU; if it happens again, have the GPU serviced."), True),
    61: Xid(N_("internal micro-controller breakpoint/warning"),
            N_("Reset the GPU; update the driver if it repeats."), True),
    62: Xid(N_("internal micro-controller halt"),
            N_("Reset the GPU; update the driver if it repeats."), True),
    63: Xid(N_("ECC page retirement or row remapping recorded"),
            N_("Reset the GPU when it is idle so that the repair takes effect."), False),
    64: Xid(N_("ECC page retirement or row remapping failed"),
            N_("The memory cannot be repaired any more: have the GPU serviced."), True),
    74: Xid(N_("NVLink error"),
            N_("Check the NVLink bridges or the baseboard; reset the GPU."), True),
    79: Xid(N_("GPU has fallen off the bus"),
            N_("Check the GPU's power and seating; the machine needs a reboot."), True),
    92: Xid(N_("high single-bit ECC error rate"),
            N_("Watch the ECC counts; plan to have the GPU serviced."), False),
    94: Xid(N_("contained ECC error"),
            N_("Only the affected application was stopped; restart it, reset the GPU when "
               "idle."), False),
    95: Xid(N_("uncontained ECC error"),
            N_("Every application on the GPU was affected: reset the GPU."), True),
    119: Xid(N_("GSP RPC timeout"),
             N_("The GPU's system processor did not answer: reset the GPU, update the "
                "driver."), True),
    120: Xid(N_("GSP error"),
             N_("The GPU's system processor failed: reset the GPU, update the driver."), True),
}


def xid_meaning(code: int) -> str:
    """What an XID code means, translated; a plain sentence for codes not in the table."""
    known = XID_TABLE.get(code)
    return tr(known.meaning) if known else tr("not in gpumon's table of XID codes")


def xid_hint(code: int) -> str:
    known = XID_TABLE.get(code)
    return tr(known.hint) if known else tr("Look the code up in NVIDIA's XID catalogue.")


class Level(enum.IntEnum):
    OK = 0
    WARNING = 1
    ERROR = 2


@dataclass(frozen=True, slots=True)
class Health:
    level: Level
    reasons: tuple[str, ...] = ()  # translated, one per line

    @property
    def word(self) -> str:
        return tr({Level.OK: N_("healthy"), Level.WARNING: N_("warning"),
                   Level.ERROR: N_("error")}[self.level])


@dataclass(frozen=True, slots=True)
class Baseline:
    """The counts first seen for one GPU: a rise since then is a warning."""

    retired_pages: int | None
    pcie_replays: int | None


def _retired(s: GpuSample) -> int | None:
    known = [n for n in (s.retired_pages_sbe, s.retired_pages_dbe) if n is not None]
    return sum(known) if known else None


def baseline_of(s: GpuSample) -> Baseline:
    return Baseline(_retired(s), s.pcie_replay_count)


def assess(s: GpuSample | None, base: Baseline | None = None) -> Health:
    """ok / warning / error for one reading: uncorrected ECC errors or a failed remap are an
    error; a pending remap or page retirement, an XID since start (a severe one is an
    error), and retired pages or PCIe replays that rose since ``base`` are warnings."""
    if s is None or s.lost:
        return Health(Level.OK)
    errors: list[str] = []
    warnings: list[str] = []
    unc = s.ecc_uncorrected_volatile
    if unc:
        errors.append(ntr("{n} uncorrected ECC error since the driver loaded",
                          "{n} uncorrected ECC errors since the driver loaded", unc))
    if s.remap_failure:
        errors.append(tr("row remapping failed: the memory cannot be repaired"))
    if s.remap_pending:
        warnings.append(tr("a row remap is pending: reset the GPU when it is idle"))
    if s.retired_pages_pending:
        warnings.append(tr("a page retirement is pending: reset the GPU when it is idle"))
    if s.xid_count and s.xid_last is not None:
        line = ntr("{n} XID error since gpumon started, the last {code} ({meaning})",
                   "{n} XID errors since gpumon started, the last {code} ({meaning})",
                   s.xid_count, code=s.xid_last, meaning=xid_meaning(s.xid_last))
        known = XID_TABLE.get(s.xid_last)
        (errors if known is not None and known.severe else warnings).append(line)
    if base is not None:
        now = _retired(s)
        if now is not None and base.retired_pages is not None and now > base.retired_pages:
            warnings.append(ntr("{n} more retired page since gpumon started",
                                "{n} more retired pages since gpumon started",
                                now - base.retired_pages))
        if (s.pcie_replay_count is not None and base.pcie_replays is not None
                and s.pcie_replay_count > base.pcie_replays):
            warnings.append(ntr("{n} more PCIe replay since gpumon started",
                                "{n} more PCIe replays since gpumon started",
                                s.pcie_replay_count - base.pcie_replays))
    level = Level.ERROR if errors else Level.WARNING if warnings else Level.OK
    return Health(level, tuple(errors + warnings))


@dataclass(frozen=True, slots=True)
class HealthEvent:
    """Something new on one GPU worth a line in the status bar and the event log."""

    gpu: int
    time_s: float
    text: str  # translated, one line with its hint


class HealthWatch:
    """Per GPU: the counts first seen and the last sample, to tell what a new one brings."""

    def __init__(self) -> None:
        self._base: dict[int, Baseline] = {}
        self._last: dict[int, GpuSample] = {}

    def health(self, s: GpuSample | None) -> Health:
        if s is None:
            return Health(Level.OK)
        return assess(s, self._base.get(s.index))

    def update(self, s: GpuSample) -> list[HealthEvent]:
        """Take a new reading of a GPU; the events it brings (none on the first reading,
        except XIDs and uncorrected errors already there)."""
        if s.lost:
            return []
        before = self._last.get(s.index)
        self._last[s.index] = s
        base = self._base.get(s.index)
        if base is None or base.retired_pages is None or base.pcie_replays is None:
            known = baseline_of(s)
            self._base[s.index] = Baseline(
                known.retired_pages if base is None or base.retired_pages is None
                else base.retired_pages,
                known.pcie_replays if base is None or base.pcie_replays is None
                else base.pcie_replays)
        events: list[HealthEvent] = []
        old_xids = (before.xid_count or 0) if before is not None else 0
        old_code = before.xid_last if before is not None else None
        # a new one: the count rose, or (from an exporter, which sends no count) the code
        if s.xid_count and s.xid_last is not None and (
                s.xid_count > old_xids or (before is not None and s.xid_last != old_code)):
            at = s.xid_last_time_s or s.timestamp_s
            events.append(HealthEvent(s.index, at, tr(
                "{clock} GPU {gpu}: XID {code}, {meaning}. {hint}",
                clock=format_clock(at), gpu=s.index,
                code=s.xid_last, meaning=xid_meaning(s.xid_last), hint=xid_hint(s.xid_last))))
        old_unc = (before.ecc_uncorrected_volatile or 0) if before is not None else 0
        if s.ecc_uncorrected_volatile and s.ecc_uncorrected_volatile > old_unc:
            events.append(HealthEvent(s.index, s.timestamp_s, ntr(
                "{clock} GPU {gpu}: {n} new uncorrected ECC error. Stop the work on this "
                "GPU and reset it; if it happens again, have it serviced.",
                "{clock} GPU {gpu}: {n} new uncorrected ECC errors. Stop the work on this "
                "GPU and reset it; if it happens again, have it serviced.",
                s.ecc_uncorrected_volatile - old_unc,
                clock=format_clock(s.timestamp_s), gpu=s.index)))
        return events


_COUNTS = ("ecc_corrected_volatile", "ecc_uncorrected_volatile", "ecc_corrected_aggregate",
           "ecc_uncorrected_aggregate", "remapped_rows_correctable",
           "remapped_rows_uncorrectable", "retired_pages_sbe", "retired_pages_dbe",
           "pcie_replay_count")
_FLAGS = ("remap_pending", "remap_failure", "retired_pages_pending")
# what from_exporter makes of an exporter's numbers (not taken as they are)
HEALTH_KEYS = frozenset((*_COUNTS, *_FLAGS, "clocks_event_reasons", "xid_last"))


def from_exporter(values: Mapping[str, float]) -> dict[str, object]:
    """The health fields of a GpuSample from an exporter's numbers (gpumon's or
    dcgm-exporter's, as the cluster view reads them): counts as ints, flags as bools, the
    bitmask checked, and ``DCGM_FI_DEV_XID_ERRORS`` (the last code, 0 before any) as the last
    XID with a count of 0 or 1 (an exporter sends no count). A number that cannot be what it
    stands for (negative, fractional) is left out, as unsupported."""
    out: dict[str, object] = {}
    for key in _COUNTS:
        v = values.get(key)
        if v is not None and as_mask(v) is not None:
            out[key] = int(v)
    for key in _FLAGS:
        v = values.get(key)
        if v is not None and v in (0.0, 1.0):
            out[key] = bool(v)
    if "clocks_event_reasons" in values:
        out["clocks_event_reasons"] = as_mask(values["clocks_event_reasons"])
    xid = as_mask(values.get("xid_last"))
    if xid is not None:
        out["xid_last"] = xid or None
        out["xid_count"] = 1 if xid else 0
    return out
