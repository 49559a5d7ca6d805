"""What watching a lab over SSH costs this side: thirty machines of eight GPUs at 1 s.

A real OpenSSH server on 127.0.0.1 (``/usr/sbin/sshd``, started here as the current user,
with keys made for the run: tests/remote/sshd.py) and an ssh_config with one Host alias per
machine (``ws01`` ... ``ws30``), each its own ssh connection (no ControlMaster: the costly
case). ``gpumon --ssh ws01,...,ws30`` runs as a child with its window offscreen, on the
Overview tab (the machine in focus has panels, out of sight), as a user opens it.

The far side of each connection replays a recorded ``gpumon stream`` line of 8 fake GPUs
(the fake NVML of tests/telemetry/fakenvml) once a second: the remote side's own cost is
what ``gpumon -l`` costs there (bench_cpu.py), and thirty real remote gpumons on this one
machine would take the cores this side is measured on. ``--remote gpumon`` runs the real
``gpumon stream`` behind each alias instead.

Measured after a settling time, over the measuring period: the CPU time of the gpumon
process (all threads) and, apart, of its ssh children, per remote GPU per second; the
gpumon process's RSS with 30 machines and with 2 (RSS per machine beyond the first =
the difference / 28), and the RSS of one ssh child. Targets (issue 49): <= 0.5 ms of
gpumon's CPU per remote GPU per second, RSS <= 2 MB per machine beyond the first.

Run from the repository root: ``python benchmarks/bench_ssh.py [--quick]`` (30 s of
measuring per case; ``--quick``: 10 s).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "remote"))
sys.path.insert(0, str(ROOT / "tests" / "telemetry"))

from fakenvml import build_fake_nvml  # noqa: E402
from sshd import Lab, record_line, replay_remote  # noqa: E402

GPUS = 8


def cpu_s(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return float(t.user + t.system)


def ssh_children(proc: psutil.Process) -> list[psutil.Process]:
    return [c for c in proc.children(recursive=True) if c.name() == "ssh"]


def measure(lab: Lab, names: list[str], command: Path, settle_s: float,
            measure_s: float) -> dict[str, Any]:
    hosts = lab.folder / f"hosts-{len(names)}.txt"
    hosts.write_text("\n".join(names) + "\n")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT),
               XDG_CONFIG_HOME=tempfile.mkdtemp(prefix="gpumon-bench-config-"))
    child = subprocess.Popen([sys.executable, "-m", "gpumon", "--ssh", f"@{hosts}",
                              "--ssh-config", str(lab.config), "--ssh-command", str(command),
                              "--interval", "1"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    try:
        proc = psutil.Process(child.pid)
        deadline = time.monotonic() + 120
        while len(ssh_children(proc)) < len(names) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(settle_s)
        kids = ssh_children(proc)
        c0, k0, t0 = cpu_s(proc), sum(cpu_s(k) for k in kids), time.monotonic()
        time.sleep(measure_s)
        c1, k1, t1 = cpu_s(proc), sum(cpu_s(k) for k in kids), time.monotonic()
        wall = t1 - t0
        gpus = GPUS * len(names)
        return {"machines": len(names), "ssh_children": len(kids),
                "cpu_pct": 100 * (c1 - c0) / wall,
                "ms_per_gpu_s": 1e3 * (c1 - c0) / wall / gpus,
                "ssh_ms_per_gpu_s": 1e3 * (k1 - k0) / wall / gpus,
                "rss_mb": proc.memory_info().rss / 2**20,
                "ssh_rss_mb": (kids[0].memory_info().rss / 2**20) if kids else float("nan")}
    finally:
        child.terminate()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 s of measuring per case")
    parser.add_argument("--machines", type=int, default=30)
    parser.add_argument("--remote", choices=("replay", "gpumon"), default="replay")
    args = parser.parse_args()
    measure_s, settle_s = (10.0, 5.0) if args.quick else (30.0, 10.0)
    work = Path(tempfile.mkdtemp(prefix="gpumon-bench-ssh-"))
    (work / "fakenvml").mkdir()
    lib = build_fake_nvml(work / "fakenvml")
    names = [f"ws{i:02d}" for i in range(1, args.machines + 1)]
    lab = Lab(work / "lab", lib, {n: {"FAKENVML_GPUS": str(GPUS)} for n in names}).start()
    try:
        command = (lab.gpumon if args.remote == "gpumon"
                   else replay_remote(lab, "replay", record_line(lab, GPUS), 1.0))
        rows = [measure(lab, names[:2], command, settle_s, measure_s),
                measure(lab, names, command, settle_s, measure_s)]
    finally:
        lab.stop()
    print(f"gpumon --ssh, {GPUS} GPUs a machine at 1 s, remote: {args.remote}, "
          f"{measure_s:g} s measured after {settle_s:g} s")
    print(f"{'machines':>8} {'ssh':>4} {'CPU %':>6} {'ms/GPU/s':>9} {'ssh ms/GPU/s':>13} "
          f"{'RSS MB':>7} {'ssh RSS MB':>10}")
    for r in rows:
        print(f"{r['machines']:>8} {r['ssh_children']:>4} {r['cpu_pct']:>6.1f} "
              f"{r['ms_per_gpu_s']:>9.3f} {r['ssh_ms_per_gpu_s']:>13.3f} {r['rss_mb']:>7.1f} "
              f"{r['ssh_rss_mb']:>10.1f}")
    few, many = rows
    per_machine = (many["rss_mb"] - few["rss_mb"]) / max(1, many["machines"] - few["machines"])
    print(f"RSS per machine beyond the first: {per_machine:.2f} MB (target <= 2 MB); "
          f"CPU per remote GPU per second: {many['ms_per_gpu_s']:.3f} ms (target <= 0.5 ms)")
    met = per_machine <= 2.0 and many["ms_per_gpu_s"] <= 0.5
    print("targets met" if met else "a target was missed")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
