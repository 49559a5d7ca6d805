"""The whole app's CPU use: ``python -m gpumon --simulate 8`` at 1 s and 0.1 s intervals.

Each case runs the app as a subprocess (offscreen, and under Xvfb with the xcb platform
when Xvfb is installed), lets it settle 5 s, then reads the process's CPU time (user +
system, all threads; psutil) over the measuring period: CPU % of one core = CPU time /
wall time. Targets: <= 2% at 1 s, <= 15% at 0.1 s. Settings start empty (a temporary
XDG_CONFIG_HOME), so nothing remembered changes the interval.

Run from the repository root: ``python benchmarks/bench_cpu.py [--quick]`` (60 s per case;
``--quick``: 15 s).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
TARGETS = {1.0: 2.0, 0.1: 15.0}
SETTLE_S = 5.0


def start_xvfb() -> tuple[subprocess.Popen[bytes], str] | None:
    if shutil.which("Xvfb") is None:
        return None
    n = next(n for n in range(120, 400) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    xvfb = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1920x1200x24", "-nolisten", "tcp",
                             "-noreset"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists():
        if time.monotonic() > deadline or xvfb.poll() is not None:
            xvfb.kill()
            return None
        time.sleep(0.05)
    return xvfb, f":{n}"


def measure(interval: float, env: dict[str, str], seconds: float) -> float:
    app = subprocess.Popen([sys.executable, "-m", "gpumon", "--simulate", "8", "--interval",
                            str(interval)], env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        proc = psutil.Process(app.pid)
        time.sleep(SETTLE_S)
        if app.poll() is not None:
            raise RuntimeError(f"gpumon exited early ({app.returncode})")
        c0, t0 = proc.cpu_times(), time.monotonic()
        time.sleep(seconds)
        c1, t1 = proc.cpu_times(), time.monotonic()
        used = (c1.user - c0.user) + (c1.system - c0.system)
        return 100.0 * used / (t1 - t0)
    finally:
        app.send_signal(signal.SIGTERM)
        try:
            app.wait(20)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="15 s per case instead of 60")
    args = parser.parse_args()
    seconds = 15.0 if args.quick else 60.0
    ok = True
    xvfb = start_xvfb()
    try:
        with tempfile.TemporaryDirectory() as config:
            base = dict(os.environ, XDG_CONFIG_HOME=config)
            platforms = [("offscreen", dict(base, QT_QPA_PLATFORM="offscreen"))]
            if xvfb is not None:
                platforms.append(("xcb (Xvfb)", dict(base, QT_QPA_PLATFORM="xcb",
                                                     DISPLAY=xvfb[1])))
            else:
                print("Xvfb not installed: offscreen only")
            for name, env in platforms:
                for interval, target in TARGETS.items():
                    pct = measure(interval, env, seconds)
                    met = pct <= target
                    ok &= met
                    print(f"{name:11s} interval {interval:g} s: {pct:5.1f}% of one core over "
                          f"{seconds:g} s (target <= {target:g}%): {'met' if met else 'NOT met'}",
                          flush=True)
    finally:
        if xvfb is not None:
            xvfb[0].terminate()
            xvfb[0].wait()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
