"""``gpumon --once -q``: every field of a Snapshot per GPU, in the layout of
``nvidia-smi -q`` (UUID, memory used/reserved/free/total, utilization, encoder/decoder,
clocks, PCIe, power, clock event reasons, ECC, retired pages, remapped rows, XID errors),
then gpumon's own: GPM's activity and the NVLinks, so the default table can stay as narrow
as nvidia-smi's."""

from __future__ import annotations

from functools import partial

from gpumon.i18n import tr
from gpumon.telemetry.model.activity import ActivityState, why_empty
from gpumon.telemetry.model.health import xid_meaning
from gpumon.telemetry.model.readouts import read_every_text
from gpumon.telemetry.model.types import GpuInfo, GpuSample, MigSample, Snapshot
from gpumon.units import (
    KIB,
    MIB,
    NA,
    format_bytes,
    format_clock,
    format_number,
    format_run_time,
    format_smi_date,
)
from gpumon.untrusted import for_terminal

_KEY_W = 38


def _line(depth: int, key: str, value: object = None) -> str:
    pad = "    " * depth
    if value is None:
        return f"{pad}{key}"
    return f"{pad}{key:<{_KEY_W - len(pad)}}: {value}"


_num = partial(format_number, sep=" ")  # nvidia-smi -q writes "87 %", its table "87%"


def _mib(v: int | None) -> str:
    """``nvidia-smi -q``'s memory: ``1234 MiB``."""
    return format_bytes(v, "MiB", decimals=0)


def _every(s: GpuSample, key: str, text: str) -> str:
    """``text`` and, where the source reads ``key`` less often than each reading, how often."""
    return text + read_every_text(s, key) if text != NA else text


def _count(v: int | None) -> str:
    return NA if v is None else str(v)


def _yes(v: bool | None) -> str:
    return {True: "Yes", False: "No", None: NA}[v]


# nvidia-smi -q's "Clocks Event Reasons" rows, by bit (nvmlClocksEventReason*)
_REASON_ROWS = ((0x1, 2, "Idle"), (0x2, 2, "Applications Clocks Setting"),
                (0x4, 2, "SW Power Cap"), (0x8, 2, "HW Slowdown"),
                (0x40, 3, "HW Thermal Slowdown"), (0x80, 3, "HW Power Brake Slowdown"),
                (0x10, 2, "Sync Boost"), (0x20, 2, "SW Thermal Slowdown"),
                (0x100, 2, "Display Clock Setting"))


def _health(s: GpuSample) -> list[str]:
    """Clock event reasons, ECC, retired pages, remapped rows and XID errors, as
    ``nvidia-smi -q`` words them (the XID part is gpumon's)."""
    mask = s.clocks_event_reasons
    out = [_line(1, "Clocks Event Reasons")]
    out += [_line(depth, name, NA if mask is None else "Active" if mask & bit else "Not Active")
            for bit, depth, name in _REASON_ROWS]
    out += [_line(1, "ECC Mode"), _line(2, "Current", {True: "Enabled", False: "Disabled",
                                                        None: NA}[s.ecc_enabled]),
            _line(1, "ECC Errors"),
            _line(2, "Volatile"),
            _line(3, "DRAM Correctable", _count(s.ecc_corrected_volatile)),
            _line(3, "DRAM Uncorrectable", _count(s.ecc_uncorrected_volatile)),
            _line(2, "Aggregate"),
            _line(3, "DRAM Correctable", _count(s.ecc_corrected_aggregate)),
            _line(3, "DRAM Uncorrectable", _count(s.ecc_uncorrected_aggregate)),
            _line(1, "Retired Pages"),
            _line(2, "Single Bit ECC", _count(s.retired_pages_sbe)),
            _line(2, "Double Bit ECC", _count(s.retired_pages_dbe)),
            _line(2, "Pending Page Blacklist", _yes(s.retired_pages_pending)),
            _line(1, "Remapped Rows"),
            _line(2, "Correctable Error", _count(s.remapped_rows_correctable)),
            _line(2, "Uncorrectable Error", _count(s.remapped_rows_uncorrectable)),
            _line(2, "Pending", _yes(s.remap_pending)),
            _line(2, "Remapping Failure Occurred", _yes(s.remap_failure)),
            _line(1, "XID Errors"),
            _line(2, "Since gpumon Started", _count(s.xid_count))]
    if s.xid_last is not None:
        at = format_clock(s.xid_last_time_s or s.timestamp_s)
        out.append(_line(2, "Last", f"{s.xid_last} ({xid_meaning(s.xid_last)}) at {at}"))
    return out


# GPM's rows of "GPU Activity": (name, GpuSample/MigSample field)
_ACTIVITY_ROWS = (("Graphics", "graphics_active_pct"), ("SM", "sm_active_pct"),
                  ("SM Occupancy", "sm_occupancy_pct"), ("Tensor", "tensor_active_pct"),
                  ("Tensor HMMA", "tensor_hmma_active_pct"),
                  ("Tensor IMMA", "tensor_imma_active_pct"),
                  ("Tensor DFMA", "tensor_dfma_active_pct"), ("DRAM", "dram_active_pct"),
                  ("FP64", "fp64_active_pct"), ("FP32", "fp32_active_pct"),
                  ("FP16", "fp16_active_pct"), ("Integer", "int_active_pct"),
                  ("NVDEC", "nvdec_active_pct"), ("NVJPG", "nvjpg_active_pct"),
                  ("NVOFA", "nvofa_active_pct"), ("NVENC", "nvenc_active_pct"))


def _mibs(v: float | None) -> str:
    return _num(None if v is None else v / MIB, "MiB/s", decimals=1)


def _activity(s: GpuSample | MigSample, depth: int = 1) -> list[str]:
    """GPM's activity (or why there is none) and, for a GPU, its NVLinks."""
    state = s.activity_state
    if state is not ActivityState.READING:
        why = why_empty(state) if state is not None else NA
        out = [_line(depth, "GPU Activity (GPM)", why or NA)]
    else:
        out = [_line(depth, "GPU Activity (GPM)")]
        out += [_line(depth + 1, name, _num(getattr(s, key), "%", decimals=1))
                for name, key in _ACTIVITY_ROWS]
    if isinstance(s, GpuSample) and (s.nvlink_links or s.nvlink_rx_bytes_per_s is not None):
        out += [_line(depth, "NVLink"),
                _line(depth + 1, "Rx Throughput", _mibs(s.nvlink_rx_bytes_per_s)),
                _line(depth + 1, "Tx Throughput", _mibs(s.nvlink_tx_bytes_per_s))]
        out += [_line(depth + 1, f"Link {r.link}",
                      f"{_mibs(r.rx_bytes_per_s)} rx, {_mibs(r.tx_bytes_per_s)} tx")
                for r in s.nvlink_links]
    return out


def _gpu(info: GpuInfo | None, s: GpuSample | None, index: int, snap: Snapshot) -> list[str]:
    bus = for_terminal(info.pci_bus_id) if info and info.pci_bus_id else NA
    out = [f"GPU {bus}", _line(1, "Index", index),  # the driver's strings: escaped
           _line(1, "Product Name", for_terminal(info.name) if info else NA),
           _line(1, "GPU UUID", for_terminal(info.uuid) if info and info.uuid else NA)]
    if s is None or s.lost:
        why = s.message if s is not None and s.message else tr("No reading.")
        return out + [_line(1, "State", f"LOST: {why}" if s is not None else "NO DATA")]
    on_off = {True: "Enabled", False: "Disabled", None: NA}
    out += [
        _line(1, "Persistence Mode", on_off[s.persistence_mode]),
        _line(1, "Compute Mode", s.compute_mode or NA),
        _line(1, "Performance State", s.pstate or NA),
        _line(1, "FB Memory Usage"),
        _line(2, "Total", _mib(s.mem_total_bytes)),
        _line(2, "Reserved", _mib(s.mem_reserved_bytes)),
        _line(2, "Used", _mib(s.mem_used_bytes)),
        _line(2, "Free", _mib(s.mem_free_bytes)),
        _line(1, "Utilization"),
        _line(2, "Gpu", _num(s.gpu_util_pct, "%")),
        _line(2, "Memory", _num(s.mem_util_pct, "%")),
        _line(2, "Encoder", _num(s.encoder_util_pct, "%")),
        _line(2, "Decoder", _num(s.decoder_util_pct, "%")),
        _line(1, "PCI"),
        _line(2, "Bus Id", bus),
        _line(2, "Replays Since Reset", _count(s.pcie_replay_count)),
        _line(2, "Tx Throughput", _every(s, "pcie_tx_bytes_per_s", _num(
            None if s.pcie_tx_bytes_per_s is None else s.pcie_tx_bytes_per_s / KIB, "KB/s"))),
        _line(2, "Rx Throughput", _every(s, "pcie_rx_bytes_per_s", _num(
            None if s.pcie_rx_bytes_per_s is None else s.pcie_rx_bytes_per_s / KIB, "KB/s"))),
        _line(1, "Fan Speed", _num(s.fan_pct, "%")),
        _line(1, "Temperature"),
        _line(2, "GPU Current Temp", _num(s.temperature_c, "C")),
        _line(2, "Memory Current Temp", _num(s.mem_temperature_c, "C")),
        _line(1, "Power Readings"),
        _line(2, "Power Draw", _num(s.power_w, "W", decimals=2)),
        _line(2, "Current Power Limit", _num(s.power_limit_w, "W", decimals=2)),
        _line(2, "Energy Since Driver Load", _every(s, "energy_mj", _num(
            None if s.energy_mj is None else s.energy_mj / 1000, "J", decimals=3))),
        _line(1, "Clocks"),
        _line(2, "SM", _num(s.sm_clock_mhz, "MHz")),
        _line(2, "Memory", _num(s.mem_clock_mhz, "MHz")),
        *_health(s),
        *_activity(s),
    ]
    migs = [m for m in snap.migs if m.gpu_index == index]
    if migs:
        out.append(_line(1, "MIG Devices"))
        for m in migs:
            out += [_line(2, f"GI {m.gpu_instance_id} CI {m.compute_instance_id}",
                          for_terminal(m.name)),  # the driver's strings: escaped
                    _line(3, "UUID", for_terminal(m.uuid) if m.uuid else NA),
                    _line(3, "Memory Used / Total",
                          f"{_mib(m.mem_used_bytes)} / {_mib(m.mem_total_bytes)}"),
                    *_activity(m, 3)]
    procs = [p for p in snap.processes if p.gpu_index == index]
    if not s.processes_supported:
        out.append(_line(1, "Processes", "Not supported by this GPU/driver"))
    elif not procs:
        out.append(_line(1, "Processes", "None"))
    else:
        out.append(_line(1, "Processes"))
        every = dict(s.read_every_s).get("processes")
        if every is not None:  # the per-process utilization below: a costly call
            out.append(_line(2, "Utilization", tr("read every {seconds} s",
                                                  seconds=f"{every:.0f}")))
        for p in procs:
            out += [_line(2, "Process ID", p.pid), _line(3, "Type", p.type.value),
                    _line(3, "Name", for_terminal(p.command or p.name or NA)),
                    _line(3, "Used GPU Memory", _mib(p.gpu_mem_bytes)),
                    _line(3, "SM Utilization", _num(p.sm_util_pct, "%")),
                    _line(3, "Memory Utilization", _num(p.mem_bw_util_pct, "%")),
                    _line(3, "Encoder Utilization", _num(p.enc_util_pct, "%")),
                    _line(3, "Decoder Utilization", _num(p.dec_util_pct, "%")),
                    _line(3, "Host CPU", _num(p.cpu_pct, "%")),
                    _line(3, "Host Memory", _mib(p.host_rss_bytes)),
                    _line(3, "Run Time", format_run_time(
                        None if p.started_s is None else snap.timestamp_s - p.started_s)),
                    _line(3, "Container / Job", for_terminal(p.container or NA))]
    return out


def render_detail(snap: Snapshot) -> str:
    """The whole snapshot, one block of "key : value" lines per GPU."""
    m = snap.machine
    simulated = snap.simulated or m.simulated
    lines = ["==============GPUMON LOG==============", "",
             _line(0, "Timestamp", format_smi_date(snap.timestamp_s)),
             _line(0, "Source", m.source_name + " (" + tr("SIMULATED") + ")" if simulated
                   else m.source_name),
             _line(0, "Driver Version", for_terminal(m.driver_version or NA)),
             _line(0, "CUDA Version", for_terminal(m.cuda_driver_version or NA)),
             _line(0, "Attached GPUs", len(snap.gpus)), ""]
    infos = {g.index: g for g in snap.gpus}
    for index in sorted(set(infos) | {s.index for s in snap.samples}):
        lines += _gpu(infos.get(index), snap.sample_for(index), index, snap) + [""]
    return "\n".join(lines)
