"""``gpumon --once -q``: every field of a Snapshot per GPU, in the layout of
``nvidia-smi -q`` (UUID, memory used/reserved/free/total, utilization, encoder/decoder,
clocks, PCIe, power), so the default table can stay as narrow as nvidia-smi's."""

from __future__ import annotations

import time

from gpumon.i18n import tr
from gpumon.telemetry.types import GpuInfo, GpuSample, Snapshot
from gpumon.units import KIB, NA, format_bytes, format_run_time
from gpumon.untrusted import for_terminal

_KEY_W = 38


def _line(depth: int, key: str, value: object = None) -> str:
    pad = "    " * depth
    if value is None:
        return f"{pad}{key}"
    return f"{pad}{key:<{_KEY_W - len(pad)}}: {value}"


def _num(v: float | None, unit: str, fmt: str = "{:.0f}") -> str:
    return NA if v is None else f"{fmt.format(v)} {unit}"


def _mib(v: int | None) -> str:
    """``nvidia-smi -q``'s memory: ``1234 MiB``."""
    return format_bytes(v, "MiB", decimals=0)


def _gpu(info: GpuInfo | None, s: GpuSample | None, index: int, snap: Snapshot) -> list[str]:
    bus = info.pci_bus_id if info and info.pci_bus_id else NA
    out = [f"GPU {bus}", _line(1, "Index", index),
           _line(1, "Product Name", info.name if info else NA),
           _line(1, "GPU UUID", info.uuid if info and info.uuid else NA)]
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
        _line(2, "Tx Throughput", _num(None if s.pcie_tx_bytes_per_s is None
                                       else s.pcie_tx_bytes_per_s / KIB, "KB/s")),
        _line(2, "Rx Throughput", _num(None if s.pcie_rx_bytes_per_s is None
                                       else s.pcie_rx_bytes_per_s / KIB, "KB/s")),
        _line(1, "Fan Speed", _num(s.fan_pct, "%")),
        _line(1, "Temperature"),
        _line(2, "GPU Current Temp", _num(s.temperature_c, "C")),
        _line(1, "Power Readings"),
        _line(2, "Power Draw", _num(s.power_w, "W", "{:.2f}")),
        _line(2, "Current Power Limit", _num(s.power_limit_w, "W", "{:.2f}")),
        _line(1, "Clocks"),
        _line(2, "SM", _num(s.sm_clock_mhz, "MHz")),
        _line(2, "Memory", _num(s.mem_clock_mhz, "MHz")),
    ]
    migs = [m for m in snap.migs if m.gpu_index == index]
    if migs:
        out.append(_line(1, "MIG Devices"))
        for m in migs:
            out += [_line(2, f"GI {m.gpu_instance_id} CI {m.compute_instance_id}", m.name),
                    _line(3, "UUID", m.uuid or NA),
                    _line(3, "Memory Used / Total",
                          f"{_mib(m.mem_used_bytes)} / {_mib(m.mem_total_bytes)}")]
    procs = [p for p in snap.processes if p.gpu_index == index]
    if not s.processes_supported:
        out.append(_line(1, "Processes", "Not supported by this GPU/driver"))
    elif not procs:
        out.append(_line(1, "Processes", "None"))
    else:
        out.append(_line(1, "Processes"))
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
             _line(0, "Timestamp", time.strftime("%a %b %d %H:%M:%S %Y",
                                                 time.localtime(snap.timestamp_s))),
             _line(0, "Source", m.source_name + " (" + tr("SIMULATED") + ")" if simulated
                   else m.source_name),
             _line(0, "Driver Version", m.driver_version or NA),
             _line(0, "CUDA Version", m.cuda_driver_version or NA),
             _line(0, "Attached GPUs", len(snap.gpus)), ""]
    infos = {g.index: g for g in snap.gpus}
    for index in sorted(set(infos) | {s.index for s in snap.samples}):
        lines += _gpu(infos.get(index), snap.sample_for(index), index, snap) + [""]
    return "\n".join(lines)
