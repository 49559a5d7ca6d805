"""gpumon's GPM activity beside ``nvidia-smi dmon --gpm-metrics``, while a load runs on cuda:0.

A child process multiplies bfloat16 8192x8192 matrices on NVML GPU 0; once it is warm,
``nvidia-smi dmon --gpm-metrics 2,3,5,10 -i 0 -c 5`` and ``gpumon dmon -c 5`` run side by
side. SM activity, SM occupancy, tensor activity and DRAM activity must agree within 5
percentage points, median against median, the first row of each left out (it may still be
warming). Parsing and judging are pure functions (``test_gpucheck_activity.py``).
"""

from __future__ import annotations

import queue
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tests.gpu.gpucheck.context import REPO, Context
from tests.gpu.gpucheck.results import FAIL, PASS, SKIP, Known, Result, verdict, write_table

NAME = "GPM activity vs nvidia-smi dmon"
TOLERANCE_POINTS = 5.0
READINGS = 5
#: Seconds the load runs after it is warm: both dmons (about 5 s each, gpumon's start and its
#: GPM warm-up on top) must end while it still runs.
LOAD_SECONDS = 15.0


@dataclass(frozen=True)
class Metric:
    """One GPM metric: its name, nvidia-smi's ``--gpm-metrics`` id, gpumon dmon's column."""

    name: str
    smi_id: int
    column: str


METRICS: tuple[Metric, ...] = (
    Metric("SM activity", 2, "smact"),
    Metric("SM occupancy", 3, "smocc"),
    Metric("tensor activity", 5, "tensor"),
    Metric("DRAM activity", 10, "dram"),
)
GPM_IDS = ",".join(str(m.smi_id) for m in METRICS)
#: What a dmon prints for a value it does not have.
NO_VALUE = frozenset({"-", "N/A"})

#: One GPU's values, row by row, by gpumon dmon's column name (None: no value in that row).
Series = dict[str, list[float | None]]

LOAD = """
import sys, time, torch
seconds = float(sys.argv[1])
a = torch.randn(8192, 8192, device="cuda:0", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda:0", dtype=torch.bfloat16)
c = torch.empty_like(a)
for _ in range(3):
    torch.matmul(a, b, out=c)
torch.cuda.synchronize()
print("ready", flush=True)
end = time.monotonic() + seconds
while time.monotonic() < end:
    for _ in range(4):  # a few products queued between syncs: no idle gap worth a point
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
print("done", flush=True)
"""


def _value(cell: str, line: str) -> float | None:
    if cell in NO_VALUE:
        return None
    try:
        return float(cell)
    except ValueError:
        raise ValueError(f"not a number: {cell!r} in {line!r}") from None


def _table(text: str, what: str) -> tuple[list[str], list[list[str]]]:
    """The column names and the data rows of a dmon's output. The names are the first ``#``
    line whose first word is ``gpu`` (else the first ``#`` line); the units line after it,
    notes and repeated headers are left out. ValueError, header quoted, when the header has
    under 5 names or a row another count of cells."""
    headers = [line for line in text.splitlines() if line.lstrip().startswith("#")]
    named = [h for h in headers if h.lstrip("# ").lower().startswith("gpu")]
    header = (named or headers or [""])[0]
    names = header.lstrip().lstrip("#").split()
    if len(names) < 5:
        raise ValueError(f"{what}: expected a '#' header of 5 column names or more, "
                         f"got {header!r}")
    rows = []
    for line in text.splitlines():
        cells = line.split()
        if not cells or line.lstrip().startswith("#"):
            continue
        if cells[1:] == ["LOST"]:  # gpumon dmon: a GPU lost meanwhile has no values
            cells = [cells[0]] + ["-"] * (len(names) - 1)
        if len(cells) != len(names):
            raise ValueError(f"{what}: a row of {len(cells)} cells under a header of "
                             f"{len(names)} names: {line.strip()!r}; header {header!r}")
        rows.append(cells)
    return names, rows


def parse_smi_dmon(text: str, gpu: str = "0") -> Series:
    """``nvidia-smi dmon --gpm-metrics 2,3,5,10``'s rows for ``gpu`` (the first column).

    nvidia-smi's names for the GPM columns differ between drivers, so they are not read: the
    metrics asked are the last four columns, in the order asked (METRICS)."""
    _, rows = _table(text, "nvidia-smi dmon")
    series: Series = {m.column: [] for m in METRICS}
    for cells in rows:
        if cells[0] != gpu:
            continue
        line = " ".join(cells)
        for m, cell in zip(METRICS, cells[-len(METRICS):], strict=True):
            series[m.column].append(_value(cell, line))
    return series


def parse_gpumon_dmon(text: str, gpu: str = "0") -> Series:
    """``gpumon dmon``'s rows for ``gpu`` (not its GPU instances, ``0/1``), by column name."""
    names, rows = _table(text, "gpumon dmon")
    missing = [m.column for m in METRICS if m.column not in names]
    if missing:
        raise ValueError(f"gpumon dmon: no column {', '.join(missing)} in {names!r}")
    series: Series = {m.column: [] for m in METRICS}
    for cells in rows:
        if cells[0] != gpu:
            continue
        line = " ".join(cells)
        for m in METRICS:
            series[m.column].append(_value(cells[names.index(m.column)], line))
    return series


def median_after_first(values: Sequence[float | None]) -> float | None:
    """The median of the values after the first row (which may still be warming); None when
    none is left."""
    given = [v for v in values[1:] if v is not None]
    return statistics.median(given) if given else None


@dataclass(frozen=True)
class Compared:
    metric: str
    nvidia_smi_median: float | None
    gpumon_median: float | None
    difference: float | None
    outcome: str
    note: str = ""


def judge(smi: Series, gpumon: Series, tolerance: float = TOLERANCE_POINTS,
          smi_missing: str = "nvidia-smi printed '-' for every GPM column (GPM unsupported "
                             "here?)") -> tuple[list[Compared], str, str]:
    """Each metric's medians side by side; (rows, outcome, reason).

    SKIP when neither side has a value (the GPU has no GPM); FAIL when only gpumon has values,
    when one side lacks a metric the other gives, or when medians differ by over
    ``tolerance`` points. ``smi_missing`` says why nvidia-smi gave no value at all."""
    rows = []
    for m in METRICS:
        a, b = median_after_first(smi.get(m.column, [])), median_after_first(
            gpumon.get(m.column, []))
        if a is None and b is None:
            rows.append(Compared(m.name, a, b, None, SKIP, "neither gives a value"))
        elif a is None or b is None:
            lacks = "nvidia-smi" if a is None else "gpumon"
            rows.append(Compared(m.name, a, b, None, FAIL, f"{lacks} gives no value"))
        else:
            diff = abs(a - b)
            rows.append(Compared(m.name, a, b, diff, PASS if diff <= tolerance else FAIL,
                                 f"±{tolerance:g} points"))
    if all(r.nvidia_smi_median is None and r.gpumon_median is None for r in rows):
        return rows, SKIP, ("neither nvidia-smi nor gpumon reports GPM activity for GPU 0: "
                            "this GPU has no GPM")
    if all(r.nvidia_smi_median is None for r in rows):
        return rows, FAIL, f"{smi_missing}, but gpumon reports activity"
    problems = [f"{r.metric}: nvidia-smi {_num(r.nvidia_smi_median)}, gpumon "
                f"{_num(r.gpumon_median)}" + (f", {r.difference:g} points apart"
                                              if r.difference is not None else
                                              f" ({r.note})")
                for r in rows if r.outcome == FAIL]
    agreed = ", ".join(f"{r.metric} {_num(r.nvidia_smi_median)}/{_num(r.gpumon_median)}"
                       for r in rows if r.outcome == PASS)
    passed = f"medians (nvidia-smi/gpumon) agree within {tolerance:g} points: {agreed}"
    neither = [r.metric for r in rows if r.outcome == SKIP]
    if neither:
        passed += f"; no {', '.join(neither)} from either"
    outcome, reason = verdict(problems, passed)
    return rows, outcome, reason


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:g}"


def planned(ctx: Context, cuda_count: int, nvml_uuids: list[str]
            ) -> tuple[str, Callable[[], Result]]:
    """The check with its name; a SKIP with the reason where this machine cannot run it."""
    if ctx.dry_run or cuda_count == 0:
        why = "dry run: no CUDA GPU" if ctx.dry_run else "torch sees no CUDA GPU"
        return NAME, Known(Result(NAME, SKIP, why))
    return NAME, lambda: check_activity(ctx, nvml_uuids)


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str | None]:
    """The child's output lines as they come (None at its end); a thread, so waiting for a
    line can time out."""
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        with proc.stdout:  # closed here, at its end: the reader owns the pipe
            for line in proc.stdout:
                lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _wait_ready(lines: queue.Queue[str | None], seen: list[str], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            return False
        if line is None:
            return False
        seen.append(line)
        if line.strip() == "ready":
            return True
    return False


def _drain(lines: queue.Queue[str | None], seen: list[str], timeout: float = 2.0) -> None:
    """The rest of an ended child's output (its reader may still be at the last lines)."""
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            return
        if line is None:
            return
        seen.append(line)


def _finish(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str, int | None]:
    """(stdout, stderr, exit status); killed after ``timeout`` s (status None)."""
    try:
        out, err = proc.communicate(timeout=timeout)
        return out, err, proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return out, err + f"\n(killed after {timeout:.0f} s)", None


def check_activity(ctx: Context, nvml_uuids: list[str]) -> Result:
    """The load on NVML GPU 0, both dmons side by side while it runs, and the verdict."""
    # cuda:0 pinned to NVML GPU 0 by UUID: torch's order may differ from NVML's, and both
    # dmons read NVML GPU 0.
    env = {**ctx.child_env, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    if nvml_uuids:
        env["CUDA_VISIBLE_DEVICES"] = nvml_uuids[0]
    children: list[subprocess.Popen[str]] = []

    def start(args: list[str], child_env: dict[str, str], stderr: int) -> subprocess.Popen[str]:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=stderr,
                                text=True, cwd=REPO, env=child_env)
        children.append(proc)
        return proc

    seen: list[str] = []
    try:
        load = start([sys.executable, "-c", LOAD, str(LOAD_SECONDS)], env,
                     stderr=subprocess.STDOUT)
        lines = _lines(load)
        if not _wait_ready(lines, seen, max(1.0, min(120.0, ctx.left() - 20))):
            load.kill()
            load.wait(10)
            _drain(lines, seen)
            tail = " / ".join(line.strip() for line in seen[-3:]) or "no output"
            return Result(NAME, FAIL, f"the load on cuda:0 did not get ready (exit "
                                      f"{load.returncode}): {tail}",
                          [ctx.save("activity-load.txt", "".join(seen))])
        time.sleep(1.0)  # the load at full speed before the first reading
        smi = start([*ctx.smi, "dmon", "--gpm-metrics", GPM_IDS, "-i", "0",
                     "-c", str(READINGS)], ctx.child_env, stderr=subprocess.PIPE)
        gpumon = start(ctx.gpumon("dmon", "-c", str(READINGS)), ctx.child_env,
                       stderr=subprocess.PIPE)
        limit = max(1.0, min(30.0, ctx.left()))
        smi_out, smi_err, smi_code = _finish(smi, limit)
        gm_out, gm_err, gm_code = _finish(gpumon, limit)
        load_alive = load.poll() is None
    finally:
        for proc in children:  # the load above all: it must not outlive the check
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)
    _drain(lines, seen)
    files = [ctx.save("activity-nvidia-smi-dmon.txt", smi_out + smi_err),
             ctx.save("activity-gpumon-dmon.txt", gm_out + gm_err),
             ctx.save("activity-load.txt", "".join(seen))]
    if gm_code != 0:
        return Result(NAME, FAIL, f"gpumon dmon exited {gm_code}: {gm_err.strip()[:300]}",
                      files)
    try:
        if smi_code == 0:
            rows, outcome, reason = judge(parse_smi_dmon(smi_out), parse_gpumon_dmon(gm_out))
        else:  # GPM refused outright, say: judged as no value at all, with its words
            refused = f"nvidia-smi dmon exited {smi_code}: " + \
                " ".join((smi_out + smi_err).split())[:300]
            rows, outcome, reason = judge({}, parse_gpumon_dmon(gm_out), smi_missing=refused)
            if outcome == SKIP:
                reason += f" ({refused})"
    except ValueError as exc:  # an output not as expected: the saved files show it
        return Result(NAME, FAIL, str(exc), files)
    files += write_table(ctx.out, "compare-activity", rows)
    if not load_alive:
        outcome = FAIL if outcome == PASS else outcome
        reason = f"the load ended before both dmons did; {reason}"
    return Result(NAME, outcome, reason, files)
