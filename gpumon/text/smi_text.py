"""An nvidia-smi-like text rendering of a Snapshot, for ``gpumon --once`` and for copying.

The layout follows ``nvidia-smi`` so its readers find their columns where they expect them;
``N/A`` where the GPU does not report a value, ``LOST`` for a GPU that stopped answering,
and a SIMULATED banner when the numbers are not from hardware.
"""

from __future__ import annotations

import unicodedata

from gpumon import __version__
from gpumon.i18n import N_, sentences, tr
from gpumon.telemetry.model.facts import process_list_note
from gpumon.telemetry.model.types import (
    GpuInfo,
    GpuProcess,
    GpuSample,
    MigSample,
    Snapshot,
    SourceStatus,
)
from gpumon.units import NA, format_bytes, format_number, format_smi_date
from gpumon.untrusted import for_terminal

# Inner widths of the three cells of a GPU block, as nvidia-smi draws them.
_L, _M, _R = 39, 22, 20
_WIDTH = _L + _M + _R + 6  # content width of a full-width row
_RULE = f"+{'-' * (_L + 2)}+{'-' * (_M + 2)}+{'-' * (_R + 2)}+"
_DOUBLE = f"|{'=' * (_L + 2)}+{'=' * (_M + 2)}+{'=' * (_R + 2)}|"
_FULL_RULE = f"+{'-' * (_WIDTH + 2)}+"
_COMPUTE_MODES = {"Exclusive Process": "E. Process", "Exclusive Thread": "E. Thread"}
THIS_GPUMON = N_("this gpumon")  # after the process name of gpumon's own process


def _row(left: str, mid: str, right: str) -> str:
    return f"| {_fit(left, _L)} | {_fit(mid, _M)} | {_fit(right, _R)} |"


def _full(text: str) -> str:
    return f"| {_fit(text, _WIDTH)} |"


def cells(text: str) -> int:
    """Terminal columns of ``text``: Chinese and other wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap_cells(text: str, width: int) -> list[str]:
    """``textwrap.wrap`` by terminal columns: breaks at a space where there is one, else
    between any two characters (Chinese has no spaces between words)."""
    lines: list[str] = []
    for para in text.splitlines() or [""]:
        line = ""
        for c in para:
            if cells(line) + cells(c) <= width:
                line += c
                continue
            cut = line.rfind(" ")
            if cut > 0:
                lines.append(line[:cut])
                line = line[cut + 1:] + c
            else:
                lines.append(line)
                line = c.lstrip()
        if line.strip():
            lines.append(line.rstrip())
    return lines


def _fit(text: str, width: int) -> str:
    """Pad to ``width`` terminal columns; cut with '...' if longer."""
    used = cells(text)
    if used <= width:
        return text + " " * (width - used)
    out, room = [], width - 3
    for c in text:
        room -= cells(c)
        if room < 0:
            break
        out.append(c)
    cut = "".join(out)
    return cut + "." * (width - cells(cut))


def _middle(text: str, width: int, mark: str = "") -> str:
    """A long command line cut in the middle, padded to ``width`` terminal columns: the
    program and its first arguments (two thirds of the room), '...', then the end (the last
    argument, "[this gpumon]"). nvidia-smi keeps only the end, which loses the program's
    name: ``.../to/some/dataset/folder`` said nothing of ``python3 trainer_main.py``.
    ``mark`` follows the text whole ("[this gpumon]"). A Chinese name takes two columns a
    character."""
    if cells(text) + cells(mark) > width:
        room = width - 3 - cells(mark)
        head_room = room * 2 // 3
        head = ""
        for c in text:
            if cells(head) + cells(c) > head_room:
                break
            head += c
        tail = ""
        for c in reversed(text):
            if cells(head) + cells(tail) + cells(c) > room:
                break
            tail = c + tail
        text = head + "..." + tail
    return _fit(text + mark, width)


def mib(n: int | None) -> str:
    """Memory as nvidia-smi's table writes it: ``1234MiB`` (whole MiB, no space)."""
    return format_bytes(n, "MiB", decimals=0, sep="")


def _on_off(flag: bool | None) -> str:
    return NA if flag is None else ("On" if flag else "Off")


def render(snapshot: Snapshot, show_uuid: bool = False) -> str:
    """The whole snapshot as text: header, one block per GPU, then the process table;
    ``show_uuid``: a UUID line under each GPU (``gpumon --once --uuid``)."""
    lines = _header(snapshot)
    if not snapshot.status.usable:
        lines += [_FULL_RULE, *(_full(line) for line in render_status(snapshot.status)
                                .splitlines()), _FULL_RULE]
        return "\n".join(lines) + "\n"
    lines += [
        _RULE,
        _row("GPU  Name" + "Persistence-M".rjust(_L - 9), "Bus-Id" + "Disp.A".rjust(_M - 6),
             "Volatile Uncorr. ECC"),
        _row("Fan  Temp   Perf" + "Pwr:Usage/Cap".rjust(_L - 16),
             "Memory-Usage".rjust(_M), "GPU-Util  Compute M.".rjust(_R)),
        _row("", "", "MIG M.".rjust(_R)),
        _DOUBLE,
    ]
    if not snapshot.gpus and not snapshot.samples:
        lines += [_full("No GPUs found."), *_wrapped(no_gpus_hint(snapshot.status)), _FULL_RULE]
    infos = {g.index: g for g in snapshot.gpus}
    indices = sorted(set(infos) | {s.index for s in snapshot.samples})
    for index in indices:
        lines += _gpu_block(index, infos.get(index), snapshot.sample_for(index))
        if show_uuid:
            info = infos.get(index)
            uuid = for_terminal(info.uuid) if info and info.uuid else NA
            lines.append(_full(f"     UUID: {uuid}"))
        lines.append(_RULE)
    lines.append("")
    if snapshot.migs:
        lines += _mig_table(snapshot.migs) + [""]
    lines += _process_table(snapshot.processes, process_list_note(snapshot))
    return "\n".join(lines) + "\n"


def no_gpus_hint(status: SourceStatus) -> str:
    """Why no GPU is listed and what to try (the source's words when it has some)."""
    text = sentences(status.message, status.hint)
    return text or tr("The source reports no GPUs. In a container, pass the GPUs through "
                      "(e.g. 'docker run --gpus all'), or try gpumon --simulate 4.")


def _wrapped(text: str) -> list[str]:
    return [_full(line) for line in wrap_cells(text, _WIDTH)]


def render_status(status: SourceStatus) -> str:
    """One or two lines on why a source gives no data and what to do about it."""
    return status.message if not status.hint else f"{status.message}\n{status.hint}"


#: The data sources whose names are words, not names (NVML and Prometheus stay as they are).
SOURCE_WORDS = {"none": N_("none"), "simulated": N_("simulated")}


def source_words(name: str) -> str:
    """A data source's name as shown: "none" and "simulated" in the language in use."""
    return tr(SOURCE_WORDS[name]) if name in SOURCE_WORDS else name


def _header(snapshot: Snapshot) -> list[str]:
    m = snapshot.machine
    stamp = format_smi_date(snapshot.timestamp_s)
    simulated = snapshot.simulated or m.simulated
    lines = [stamp, _FULL_RULE]
    if simulated:
        lines.append(_full(tr("SIMULATED: these GPUs and numbers are simulated, not read "
                              "from hardware.")))
    lines.append(_full(
        f"gpumon {__version__}   Driver Version: {for_terminal(m.driver_version or NA)}   "
        f"CUDA Version: {for_terminal(m.cuda_driver_version or NA)}   "
        f"NVML: {for_terminal(m.nvml_version or NA)}"
    ))
    source = source_words(m.source_name)
    if simulated and m.source_name != "simulated":
        source += " " + tr("(SIMULATED)")
    lines.append(_full(tr("Host: {host}   Source: {source}", host=for_terminal(m.host_name),
                             source=source)))
    return lines


def _gpu_block(index: int, info: GpuInfo | None, sample: GpuSample | None) -> list[str]:
    name = for_terminal(info.name) if info else NA  # the driver's strings: escaped
    bus = for_terminal(info.pci_bus_id) if info else NA
    if sample is None or sample.lost:
        why = sample.message if sample is not None and sample.message else tr("No reading.")
        state = "LOST" if sample is not None else "NO DATA"
        return [
            _row(f"{index:>3}  {_fit(name, _L - 6 - len(state))} {state}", bus.rjust(_M),
                 state.rjust(_R)),
            *(_full(line) for line in wrap_cells(f"{state}: {why}", _WIDTH)),
        ]
    persistence = _on_off(sample.persistence_mode)
    first = f"{index:>3}  {_fit(name, _L - 6 - len(persistence))} {persistence}"
    fan = format_number(sample.fan_pct, "%")
    temp = format_number(sample.temperature_c, "C")
    perf = sample.pstate or NA
    draw, cap = format_number(sample.power_w, "W"), format_number(sample.power_limit_w, "W")
    power = f"{draw:>5} / {cap:>5}"
    second = f"{fan:>4}  {temp:>4}  {perf:>4}" + power.rjust(_L - 16)
    memory = f"{mib(sample.mem_used_bytes):>9} / {mib(sample.mem_total_bytes):>9}"
    util = format_number(sample.gpu_util_pct, "%")
    compute = sample.compute_mode or NA
    compute = _COMPUTE_MODES.get(compute, compute)
    return [
        _row(first, f"{bus} {_on_off(sample.display_active):>3}".rjust(_M),
             uncorrected_ecc(sample).rjust(_R)),
        _row(second, memory.rjust(_M), f"{util:>8}{compute:>12}"),
        _row("", "", mig_mode(sample).rjust(_R)),
    ]


def uncorrected_ecc(sample: GpuSample) -> str:
    """nvidia-smi's "Volatile Uncorr. ECC": the uncorrected errors since the driver loaded
    while ECC is on, "Off" while it is off, N/A where the GPU has no ECC."""
    if sample.ecc_enabled is None:
        return NA
    if not sample.ecc_enabled:
        return "Off"
    return NA if sample.ecc_uncorrected_volatile is None else str(sample.ecc_uncorrected_volatile)


def mig_mode(sample: GpuSample) -> str:
    """nvidia-smi's "MIG M.": Enabled, Disabled, or N/A on a GPU without MIG."""
    return {None: NA, True: "Enabled", False: "Disabled"}[sample.mig_mode]


def _mig_table(migs: tuple[MigSample, ...]) -> list[str]:
    """MIG devices under their parent GPU, as nvidia-smi lists them after the GPUs."""
    name_w = _WIDTH - 41  # GPU, GI, CI and a 22-wide memory cell, two spaces apart
    lines = [
        _FULL_RULE,
        _full("MIG devices:"),
        _full(f"{'GPU':>5}  {'GI':>3}  {'CI':>3}  {'Name':<{name_w}}  {'Memory-Usage':>22}"),
        f"|{'=' * (_WIDTH + 2)}|",
    ]
    for m in migs:
        memory = f"{mib(m.mem_used_bytes)} / {mib(m.mem_total_bytes)}"
        ids = [NA if v is None else str(v) for v in (m.gpu_instance_id, m.compute_instance_id)]
        lines.append(_full(f"{m.gpu_index:>5}  {ids[0]:>3}  {ids[1]:>3}  "
                           f"{_fit(for_terminal(m.name), name_w):<{name_w}}  {memory:>22}"))
    lines.append(_FULL_RULE)
    return lines


def _process_table(processes: tuple[GpuProcess, ...], note: str = "") -> list[str]:
    """nvidia-smi's process table, with each process's SM % (NVML's per-process samples) and
    host CPU % beside its GPU memory; the other per-process fields are in ``-q`` and JSON."""
    name_w = _WIDTH - 61
    lines = [
        _FULL_RULE,
        _full(tr("Processes:")),
        _full(f"{'GPU':>5}  {'PID':>9}  {'Type':>4}  {'User':<10}  {'Process name':<{name_w}}"
              f"  {'SM':>4}  {'CPU':>5}  {'GPU Memory':>10}"),
        _full(f"{'Usage':>{_WIDTH}}"),
        f"|{'=' * (_WIDTH + 2)}|",
    ]
    if note:
        lines += [_full(f"  {line}") for line in wrap_cells(note, _WIDTH - 2)]
    elif not processes:
        lines.append(_full("  " + tr("No running processes found")))
    for p in sorted(processes, key=lambda p: (p.gpu_index, p.pid)):
        label = for_terminal(p.command or p.name or NA)  # another user's text: escaped
        mark = f" [{tr(THIS_GPUMON)}]" if p.is_self else ""
        user = _fit(for_terminal(p.user or NA), 10)
        lines.append(_full(
            f"{p.gpu_index:>5}  {p.pid:>9}  {p.type.value:>4}  {user}  "
            f"{_middle(label, name_w, mark)}  {format_number(p.sm_util_pct, '%'):>4}  "
            f"{format_number(p.cpu_pct, '%'):>5}  {mib(p.gpu_mem_bytes):>10}"
        ))
    lines.append(_FULL_RULE)
    return lines
