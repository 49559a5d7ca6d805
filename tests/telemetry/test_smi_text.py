"""smi_text: the nvidia-smi-like rendering, with N/A, LOST and the SIMULATED label."""

from __future__ import annotations

import re

from gpumon.telemetry.model.types import (
    GpuInfo,
    GpuProcess,
    GpuSample,
    MachineInfo,
    ProcessType,
    Snapshot,
    SourceState,
    SourceStatus,
)
from gpumon.telemetry.sources.simulated import SimulatedFaults, SimulatedSource
from gpumon.text.smi_text import cells, render, render_status
from gpumon.units import GIB, MIB

_REAL = MachineInfo("box", "NVML", "550.54.15", "12.4", "12.550.54.15")
_OK = SourceStatus(SourceState.OK, "ok")
COLUMNS = ("GPU", "Name", "Persistence-M", "Bus-Id", "Fan", "Temp", "Perf", "Pwr:Usage/Cap",
           "Memory-Usage", "GPU-Util", "Compute M.", "PID", "Type", "Process name",
           "GPU Memory", "User")


def _gpu(i: int, name: str = "NVIDIA GeForce RTX 4090") -> GpuInfo:
    return GpuInfo(i, name, f"GPU-{i}", f"00000000:0{i + 1}:00.0", 24 * GIB)


def _full_sample(i: int) -> GpuSample:
    return GpuSample(
        index=i, timestamp_s=0.0, mem_total_bytes=24564 * MIB, mem_used_bytes=1234 * MIB,
        gpu_util_pct=37.0, temperature_c=61.0, power_w=123.4, power_limit_w=450.0,
        fan_pct=44.0, pstate="P2", persistence_mode=True, compute_mode="Exclusive Process",
        display_active=False, mig_mode=False, ecc_enabled=True, ecc_uncorrected_volatile=0,
    )


def test_columns_values_and_processes() -> None:
    proc = GpuProcess(0, 4242, ProcessType.COMPUTE, 1000 * MIB, "python", "alice",
                      "python train.py", sm_util_pct=71.0, cpu_pct=250.0)
    snap = Snapshot(0.0, _REAL, _OK, gpus=(_gpu(0),), samples=(_full_sample(0),),
                    processes=(proc,))
    text = render(snap)
    for col in COLUMNS:
        assert col in text, col
    for value in ("NVIDIA GeForce RTX 4090", "00000000:01:00.0", "44%", "61C", "P2",
                  "123W /  450W", "1234MiB /  24564MiB", "37%", "E. Process", " On ",
                  "Driver Version: 550.54.15", "CUDA Version: 12.4", "NVML: 12.550.54.15",
                  "Host: box", "Source: NVML", "4242", "alice", "python train.py", "1000MiB"):
        assert value in text, value
    assert "SIMULATED" not in text and "N/A" not in text
    row = next(line for line in text.splitlines() if "4242" in line)
    assert re.search(r"python train\.py +71%  +250%  +1000MiB \|$", row), row  # SM, CPU
    widths = {len(line) for line in text.splitlines()[1:] if line}
    assert widths == {91}, "every box line has the same width"


def test_the_box_has_nvidia_smis_ecc_disp_and_mig_cells_in_their_places() -> None:
    """Volatile Uncorr. ECC over the count (Off while ECC is off, N/A without ECC), Disp.A
    after the bus id, MIG M. in a third line, as nvidia-smi draws them (the third column
    was blank under an empty heading)."""
    samples = (
        GpuSample(0, 0.0, ecc_enabled=True, ecc_uncorrected_volatile=1, display_active=False,
                  mig_mode=False),
        GpuSample(1, 0.0, ecc_enabled=False, display_active=True, mig_mode=True),
        GpuSample(2, 0.0),  # none of them reported
    )
    text = render(Snapshot(0.0, _REAL, _OK, gpus=tuple(_gpu(i) for i in range(3)),
                           samples=samples))
    lines = text.splitlines()
    top = lines.index(next(line for line in lines if "Persistence-M" in line))
    assert lines[top:top + 3] == [
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A "
        "| Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage "
        "| GPU-Util  Compute M. |",
        "|                                         |                        "
        "|               MIG M. |"]
    rows = [i for i, line in enumerate(lines) if re.match(r"\|   \d  NVIDIA", line)]
    cells = [(lines[i].split("|")[2].strip(), lines[i].split("|")[3].strip(),
              lines[i + 2].split("|")[3].strip()) for i in rows]
    assert cells == [("00000000:01:00.0 Off", "1", "Disabled"),
                     ("00000000:02:00.0  On", "Off", "Enabled"),  # as nvidia-smi aligns it
                     ("00000000:03:00.0 N/A", "N/A", "N/A")]
    # right-aligned under their headings, as nvidia-smi has them
    heading = lines[top]
    assert lines[rows[0]].index("Off |") + 3 == heading.index("Disp.A |") + 6
    assert lines[rows[0]].rindex("1 |") == heading.rindex("C |")
    assert {len(line) for line in lines[1:] if line} == {91}


def test_none_fields_show_na() -> None:
    bare = GpuSample(index=0, timestamp_s=0.0, mem_used_bytes=10 * MIB)
    text = render(Snapshot(0.0, MachineInfo("box", "NVML"), _OK, gpus=(_gpu(0),),
                           samples=(bare,)))
    row = next(line for line in text.splitlines() if "10MiB" in line)
    assert row.count("N/A") >= 6  # fan, temp, perf, power, cap, total, util, compute
    assert "Driver Version: N/A" in text
    assert "No running processes found" in text


def test_simulated_faults_render_na_and_lost() -> None:
    clock = [1000.0]
    src = SimulatedSource(3, faults=SimulatedFaults(unsupported={"fan_pct", "power_w"},
                                                    lost_after_s={2: 5.0}),
                          clock=lambda: clock[0])
    src.open()
    clock[0] += 6.0
    text = render(src.sample())
    assert "SIMULATED" in text and "simulated" in text.splitlines()[2]
    assert "LOST" in text and "fell off the bus" in text
    gpu_rows = [line for line in text.splitlines() if "MiB /" in line]
    assert len(gpu_rows) == 2  # the lost GPU has no memory row
    assert all(row.lstrip("| ").startswith("N/A") for row in gpu_rows)  # fan column
    assert all("N/A /" in row for row in gpu_rows)  # power usage


def test_vanished_process_and_self_are_marked() -> None:
    procs = (GpuProcess(0, 7, ProcessType.GRAPHICS, None),
             GpuProcess(0, 8, ProcessType.COMPUTE, 5 * MIB, "gpumon", "me", "gpumon",
                        is_self=True))
    text = render(Snapshot(0.0, _REAL, _OK, gpus=(_gpu(0),), samples=(_full_sample(0),),
                           processes=procs))
    vanished = next(line for line in text.splitlines() if "     7 " in line)
    assert vanished.count("N/A") == 5  # user, name, SM, CPU, memory
    assert "[this gpumon]" in text


def _row_of(command: str, find: str, *, is_self: bool = False) -> str:
    proc = GpuProcess(0, 1, ProcessType.COMPUTE, MIB, "python", "u", command, is_self=is_self)
    text = render(Snapshot(0.0, _REAL, _OK, gpus=(_gpu(0),), samples=(_full_sample(0),),
                           processes=(proc,)))
    return next(line for line in text.splitlines() if find in line)


def test_long_command_keeps_its_program_and_end() -> None:
    """Cut in the middle (issue 54, item 10): the program and its first arguments, then the
    end; nvidia-smi's cut from the left showed only ``.../to/some/dataset/folder``."""
    cmd = ("python3 -c import trainer_main; trainer_main.run() --data "
           "/very/long/path/to/some/dataset/folder")
    row = _row_of(cmd, "folder")
    assert re.search(r"  u +python3 -c imp\S*\.\.\.\S*folder +N/A +N/A +1MiB \|$", row), row
    assert len(row) == len(_row_of("python3 short.py", "short.py"))  # the table's width
    wide = _row_of("python " + "x" * 100 + " --the-end", "python x")
    assert re.search(r"  u +python x+\.\.\.x* ?-*the-end +N/A", wide), wide


def test_a_cut_command_keeps_this_gpumon_mark_and_wide_characters_fit() -> None:
    row = _row_of("python -m gpumon " + "训练" * 40, "gpumon]", is_self=True)
    assert re.search(r"  u +python\S*\.\.\.练 \[this gpumon\] +N/A", row), row
    assert cells(row) == cells(_row_of("python3 short.py", "short.py"))  # wide chars: 2 cells


def test_unusable_status_is_rendered_instead_of_gpus() -> None:
    status = SourceStatus(SourceState.LIBRARY_NOT_FOUND, "NVML was not found.", "Install it.")
    text = render(Snapshot(0.0, MachineInfo("box", "NVML"), status))
    assert "NVML was not found." in text and "Install it." in text
    assert "Bus-Id" not in text


def test_no_gpus() -> None:
    text = render(Snapshot(0.0, _REAL, SourceStatus(SourceState.NO_GPUS, "No GPUs.")))
    assert "No GPUs found." in text


def test_render_status_is_one_or_two_lines() -> None:
    assert render_status(SourceStatus(SourceState.ERROR, "Broke.")) == "Broke."
    two = render_status(SourceStatus(SourceState.ERROR, "Broke.", "Fix it."))
    assert two.splitlines() == ["Broke.", "Fix it."]
