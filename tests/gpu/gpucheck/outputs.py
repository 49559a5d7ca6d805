"""The checks of gpumon's terminal outputs: ``--once``, ``--once --json`` and ``gpumon stream``
(what ``--ssh`` reads) beside nvidia-smi, and the exporter's /metrics beside ``--once
--json``."""

from __future__ import annotations

import signal
import subprocess
import time
import urllib.request
from typing import Any

from tests.gpu.gpucheck import compare as cmp
from tests.gpu.gpucheck import readings
from tests.gpu.gpucheck.context import Context, free_port
from tests.gpu.gpucheck.results import Result, verdict, write_table


def query_smi(ctx: Context, fields: list[cmp.Field]) -> tuple[list[dict[str, str | None]],
                                                              list[cmp.Field], list[str]]:
    """nvidia-smi's GPU rows, leaving out fields this nvidia-smi refuses; (rows, fields
    asked, fields it refused)."""
    refused: list[str] = []
    while True:
        proc = ctx.run([*ctx.smi, *cmp.smi_gpu_args(fields)], timeout=30)
        if proc.returncode == 0:
            columns = ["index", *(f.smi for f in fields)]
            return cmp.parse_csv(proc.stdout, columns), fields, refused
        bad = cmp.invalid_field(proc.stdout + proc.stderr)
        if bad is None or bad not in cmp.FIELDS_BY_SMI:
            raise RuntimeError(f"nvidia-smi failed (exit {proc.returncode}): "
                               f"{(proc.stdout + proc.stderr).strip()[:300]}")
        refused.append(bad)
        fields = [f for f in fields if f.smi != bad]


def query_apps(ctx: Context) -> list[dict[str, str | None]]:
    proc = ctx.run([*ctx.smi, *cmp.smi_app_args()], timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"nvidia-smi --query-compute-apps failed (exit {proc.returncode}): "
                           f"{(proc.stdout + proc.stderr).strip()[:300]}")
    return cmp.parse_csv(proc.stdout, cmp.APP_COLUMNS)


def gpumon_output(ctx: Context, *args: str) -> str:
    proc = ctx.run(ctx.gpumon(*args), timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"gpumon {' '.join(args)} exited {proc.returncode}: "
                           f"{proc.stderr.strip()[:300]}")
    return proc.stdout


def rows_of_stream(text: str) -> readings.Readings:
    """The last snapshot of ``gpumon stream``'s output, checked by the stream's own decoder
    (a header, then documents it accepts), as ``--json`` readings."""
    from gpumon.text.json_in import decode_header, decode_snapshot

    header, *lines = text.splitlines()
    decode_header(header)
    if not lines:
        raise RuntimeError("gpumon stream printed its header and no snapshot")
    for line in lines:
        decode_snapshot(line)  # StreamError: the window would refuse it
    return readings.from_json(lines[-1])[0]


def _verdict_of(rows: list[cmp.Row], what: str) -> tuple[str, str]:
    bad = [f"{r.source} GPU {r.gpu} {r.field}: gpumon {r.gpumon!r}, reference "
           f"{r.reference_before!r}/{r.reference_after!r} ({r.note})"
           for r in rows if r.outcome == cmp.FAIL]
    return verdict(bad, f"{len(rows)} values {what} agree within their tolerances")


def check_outputs(ctx: Context, holder_pid: int | None) -> Result:
    """``--once --json`` and ``--once`` between two readings of nvidia-smi, field by field,
    and the compute processes; ``holder_pid`` is a kernel holding memory on cuda:0 now."""
    before, fields, refused = query_smi(ctx, list(cmp.GPU_FIELDS))
    apps_before = query_apps(ctx)
    json_text = gpumon_output(ctx, "--once", "--json")
    text = gpumon_output(ctx, "--once")
    stream_text = gpumon_output(ctx, "stream", "--count", "2", "--interval", "0.5")
    after, _, _ = query_smi(ctx, fields)
    apps_after = query_apps(ctx)
    files = [ctx.save("once.json", json_text), ctx.save("once.txt", text),
             ctx.save("stream.jsonl", stream_text)]
    json_readings, doc = readings.from_json(json_text)
    ref_b, ref_a = cmp.smi_reference(before, fields), cmp.smi_reference(after, fields)
    rows = cmp.compare_gpus("--once --json", fields, ref_b, ref_a, json_readings)
    rows += cmp.compare_gpus("--once", fields, ref_b, ref_a, readings.from_text(text))
    # What `gpumon --ssh` reads from this machine: the stream's header, then its last
    # snapshot, decoded as the window decodes it (text/json_in.py).
    stream_rows = rows_of_stream(stream_text)
    rows += cmp.compare_gpus("gpumon stream", fields, ref_b, ref_a, stream_rows)
    rows += cmp.compare_apps("--once --json", apps_before, apps_after, readings.json_apps(doc))
    files += write_table(ctx.out, "compare-nvidia-smi", rows)
    outcome, reason = _verdict_of(rows, "of --once and --json and nvidia-smi")
    if holder_pid is not None and not any(r.gpu.startswith(f"pid {holder_pid} ") for r in rows):
        # Not a disagreement between the two (the kernel checks judge it): in a container
        # NVML and nvidia-smi may list the host's PIDs.
        reason += (f"; note: neither lists the kernel (pid {holder_pid}) that holds 64 MiB on "
                   "cuda:0")
    if refused:
        reason += f"; this nvidia-smi does not know {', '.join(refused)}"
    return Result("--once, --json vs nvidia-smi", outcome, reason, files)


def _scrape(port: int, proc: subprocess.Popen[str], wait_s: float) -> str:
    url = f"http://127.0.0.1:{port}/metrics"
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as reply:  # loopback
                return str(reply.read().decode("utf-8"))
        except OSError as exc:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"no answer from {url}: {exc}") from exc
            time.sleep(0.2)


def check_exporter(ctx: Context) -> Result:
    """``gpumon exporter`` on a free loopback port, scraped once between two ``--json``."""
    port = free_port()
    args = ctx.gpumon("exporter", "--listen", f"127.0.0.1:{port}", "--interval", "0.5")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=ctx.child_env)
    try:
        page = _scrape(port, proc, min(30.0, ctx.left()))  # the first read opens NVML
        json_before = gpumon_output(ctx, "--once", "--json")
        page = _scrape(port, proc, 10.0)
        json_after = gpumon_output(ctx, "--once", "--json")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code: int | None = proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = None
        log = proc.stdout.read() if proc.stdout is not None else ""
    files = [ctx.save("exporter-metrics.txt", page), ctx.save("exporter-log.txt", log)]
    (b, doc_b), (a, doc_a) = readings.from_json(json_before), readings.from_json(json_after)
    got, apps = readings.from_exposition(page)
    fields = list(cmp.GPU_FIELDS)
    rows = cmp.compare_gpus("exporter", fields, cmp.gpumon_reference(b, fields),
                            cmp.gpumon_reference(a, fields), got)
    rows += cmp.compare_apps("exporter", _as_smi_apps(doc_b), _as_smi_apps(doc_a), apps)
    files += write_table(ctx.out, "compare-exporter", rows)
    outcome, reason = _verdict_of(rows, "of the exporter and --json")
    if code != 0:
        outcome, reason = cmp.FAIL, f"SIGTERM ended the exporter with {code}; {reason}"
    return Result("exporter vs --once --json", outcome, reason, files)


def _as_smi_apps(doc: dict[str, Any]) -> list[dict[str, str | None]]:
    """``--json``'s processes in nvidia-smi's columns, as the exporter's reference."""
    return [{"gpu_uuid": uuid, "pid": str(pid), "used_memory": str(used / cmp.MIB),
             "process_name": None}
            for (uuid, pid), used in readings.json_apps(doc, ("C", "G", "C+G")).items()
            if used is not None]  # the exporter leaves out a process without a figure
