"""Time from showing the Playground tab to the first result, typing at human speed.

The kernel starts when the Playground tab is shown (or when the pointer rests on it, which
this script does not do), not at launch. So the first action typed after showing the tab may
have to wait for ``import torch``. This measures how much of that wait a person sees.

Each run is a fresh process with empty settings (a temporary XDG_CONFIG_HOME), like a first
launch. MainWindow runs on 4 simulated GPUs, offscreen. After the first frame with data,
the Playground tab is shown. Then ``torch.ones(3).sum()`` is typed into the code line, one
key at a time at the given speed, and Enter is pressed. The clock stops when the result's
card is in the log.

Cases:
- pasted at once (0 s typing);
- typed at 5 and at 3 characters a second (19 characters: 3.8 s and 6.3 s);
- baseline, same run: the kernel started and torch loaded before the tab is shown, as at a
  launch after a session that used the playground.

Printed for each case: from the tab shown to the result, from Enter to the result, and how
much of the Enter-to-result time is waiting beyond the warm baseline's.

Run from the repository root: ``python benchmarks/bench_first_result.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CODE = "torch.ones(3).sum()"

RUN = r"""
import json, sys, time
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
from gpumon.ui.window.main_window import MainWindow, simulated_factory

CODE, CPS, WARM = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "warm"

def wait(cond, timeout=180.0):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise SystemExit("timed out")
        app.processEvents()
        time.sleep(0.002)

def pause(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.002)

w = MainWindow(simulated_factory(4))
w.resize(1400, 900)
w.show()
wait(lambda: w.snapshot_count > 0)
if WARM:
    w.kernel_link.load()
    wait(lambda: w.kernel_link.load_status is not None)
shown = time.monotonic()
w.tabs.setCurrentWidget(w.playground)
panel = w.playground
edit = panel.code_bar.edit
edit.setFocus()
for ch in CODE:
    QTest.keyClicks(edit, ch)
    if CPS > 0:
        pause(1.0 / CPS)
enter = time.monotonic()
QTest.keyClick(edit, Qt.Key.Key_Return)
wait(lambda: panel.log.count() >= 1)
done = time.monotonic()
outcome = panel.log.outcomes()[0]
assert outcome.ok and outcome.preview == "tensor(3.)", outcome
print(json.dumps({"shown_to_result": done - shown, "enter_to_result": done - enter}))
w.close()
"""


def run(cps: float, warm: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as config:
        env = dict(os.environ, XDG_CONFIG_HOME=config, QT_QPA_PLATFORM="offscreen",
                   GPUMON_KERNEL_FORKSERVER="0", PYTHONPATH=str(REPO))
        done = subprocess.run([sys.executable, "-c", RUN, CODE, str(cps),
                               "warm" if warm else "cold"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the run failed:\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 runs a case instead of 5")
    runs = 2 if parser.parse_args().quick else 5
    cases = [("pasted at once", 0.0, False), ("typed, 5 characters/s", 5.0, False),
             ("typed, 3 characters/s", 3.0, False), ("warm kernel, 5 characters/s", 5.0, True)]
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in cases}
    for _ in range(runs):  # alternated, so a slow moment of the machine hits every case
        for name, cps, warm in cases:
            results[name].append(run(cps, warm))
    warm_enter = statistics.median(r["enter_to_result"] for r in results[cases[-1][0]])
    print(f"{CODE!r}, {runs} runs a case, medians (4 simulated GPUs, offscreen)")
    print(f"{'case':32} {'tab shown to result':>20} {'Enter to result':>16} "
          f"{'wait beyond warm':>17}")
    for name, _, _ in cases:
        shown = statistics.median(r["shown_to_result"] for r in results[name])
        enter = statistics.median(r["enter_to_result"] for r in results[name])
        print(f"{name:32} {shown * 1e3:17.0f} ms {enter * 1e3:13.0f} ms "
              f"{max(0.0, enter - warm_enter) * 1e3:14.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
