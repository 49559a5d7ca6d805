"""Where the suite's CPU goes: ``python -m pytest -n auto --dist loadgroup -p tests.cpu_account``.

For each test: the CPU of its test process while it ran (``time.process_time``: every thread
of the process) and that of the child processes it started and waited for (with theirs:
``os.times``' children fields). At the end, summed by test file, the most first. A child
that outlives its test (a fork server kept for the session) counts when it is waited for,
and its forked kernels with it: the fork server's tests show less than they cost, the test
running when it ends more. The run's whole CPU (every process) is ``/usr/bin/time -v``'s.

Each xdist worker writes its rows to a folder that the run makes (``GPUMON_CPU_ACCOUNT_DIR``,
inherited by the workers); the run that prints them reads it and removes it. A folder given
in that variable is used and kept.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path

import pytest

ENV = "GPUMON_CPU_ACCOUNT_DIR"
SHOWN = 25  # test files in the summary
_made: list[Path] = []  # the folder this run made (removed after the summary)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    if not _is_worker(config) and not os.environ.get(ENV):
        os.environ[ENV] = tempfile.mkdtemp(prefix="gpumon-cpu-")  # before the workers start
        _made.append(Path(os.environ[ENV]))


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None
                            ) -> Generator[None, None, None]:
    cpu, children, wall = time.process_time(), _children_cpu(), time.monotonic()
    yield
    row = {"file": item.nodeid.split("::")[0], "cpu": time.process_time() - cpu,
           "children": _children_cpu() - children, "wall": time.monotonic() - wall}
    with (Path(os.environ[ENV]) / f"{os.getpid()}.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            config: pytest.Config) -> None:
    if _is_worker(config):
        return
    folder = Path(os.environ[ENV])
    rows = [json.loads(line) for path in sorted(folder.glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line]
    if folder in _made:
        shutil.rmtree(folder, ignore_errors=True)
    by_file: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for row in rows:
        total = by_file[row["file"]]
        total[0] += 1
        total[1] += row["cpu"]
        total[2] += row["children"]
        total[3] += row["wall"]
    write = terminalreporter.write_line
    terminalreporter.section("CPU by test file (tests.cpu_account)")
    write(f"{len(rows)} tests: their processes {sum(r['cpu'] for r in rows):.1f} CPU-s, "
          f"the children they waited for {sum(r['children'] for r in rows):.1f} CPU-s")
    write(" in test  children  wall (s)  tests  file")
    for name, (count, cpu, children, wall) in sorted(
            by_file.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))[:SHOWN]:
        write(f"{cpu:8.1f}  {children:8.1f}  {wall:8.1f}  {count:5.0f}  {name}")
