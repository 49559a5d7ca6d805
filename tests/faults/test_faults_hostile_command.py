"""Another user's command line is untrusted text: a process whose argv holds terminal escapes
and a spreadsheet formula, read through the real binding from the fake driver and psutil.

``--once``, ``-q`` and ``--watch`` print the escapes as visible text (the terminal obeys
none of them); ``--json`` keeps the command line as it is (its readers are programs).
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time
from collections.abc import Iterator

import psutil
import pytest
from fakenvml import FakeNvml

from gpumon.cli.main import main
from gpumon.telemetry.model.types import GpuProcess, ProcessType
from gpumon.telemetry.procs.procinfo import ProcInfoCache
from gpumon.ui.monitor.process.table import TITLES, texts_of

# Retitles the terminal, then clears it; and a cell a spreadsheet would run.
ESCAPES = "\x1b]0;owned\x07\x1b[2J"
FORMULA = '=HYPERLINK("http://example.invalid/","click")'


@pytest.fixture
def hostile_child() -> Iterator[int]:
    """A sleeping child whose command line holds ESCAPES and FORMULA; its PID."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                              FORMULA, ESCAPES])
    try:
        deadline = time.monotonic() + 5  # until /proc shows the new argv (after exec)
        while ESCAPES not in " ".join(psutil.Process(child.pid).cmdline()):
            assert time.monotonic() < deadline, "the child never showed its command line"
            time.sleep(0.02)
        yield child.pid
    finally:
        child.kill()
        child.wait(timeout=5)


def _no_control_characters(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text


@pytest.mark.parametrize("flags", [["--once"], ["--once", "-q"],
                                   ["--watch", "0.1", "--count", "2"]])
def test_terminal_outputs_show_the_escapes(fake_nvml: FakeNvml, hostile_child: int,
                                           capfd: pytest.CaptureFixture[str],
                                           flags: list[str]) -> None:
    fake_nvml.add_process(0, hostile_child, 1 << 30)
    assert main(flags) == 0
    out = capfd.readouterr().out
    _no_control_characters(out)
    assert str(hostile_child) in out
    # The table cuts a long command line in the middle and keeps its end, escaped; -q shows
    # it whole.
    assert "\\x1b[2J" in out
    if "-q" in flags:
        assert "\\x1b]0;owned\\x07\\x1b[2J" in out
    if "-q" in flags:
        assert f"{FORMULA} \\x1b]0;owned" in out


def test_json_keeps_the_raw_command_line(fake_nvml: FakeNvml, hostile_child: int,
                                         capfd: pytest.CaptureFixture[str]) -> None:
    fake_nvml.add_process(0, hostile_child, 1 << 30)
    assert main(["--once", "--json"]) == 0
    out = capfd.readouterr().out
    _no_control_characters(out)  # the JSON encoder escapes them: \u001b
    (proc,) = json.loads(out)["processes"]
    assert proc["command"].endswith(f"{FORMULA} {ESCAPES}")


def test_csv_cell_opens_as_text(fake_nvml: FakeNvml,
                                capfd: pytest.CaptureFixture[str]) -> None:
    # No CSV output carries command lines; the GPU's name is its text cell, as hostile.
    fake_nvml.set_name(0, FORMULA)
    assert main(["--once", "--csv"]) == 0
    header, row = list(csv.reader(io.StringIO(capfd.readouterr().out)))
    assert row[header.index("name")] == "'" + FORMULA


CARRIAGE = "A\rB C\r\nD"  # psutil reads /proc/<pid>/cmdline with universal newlines


def test_a_carriage_return_is_shown_as_one(fake_nvml: FakeNvml,
                                           capfd: pytest.CaptureFixture[str]) -> None:
    """A ``\\r`` in an argument showed as ``\\n`` (and CR LF as one LF) everywhere, the
    window's table and tooltip included, which showed it raw."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", CARRIAGE])
    try:
        deadline = time.monotonic() + 5
        while len(psutil.Process(child.pid).cmdline()) < 4:
            assert time.monotonic() < deadline, "the child never showed its command line"
            time.sleep(0.02)
        fake_nvml.add_process(0, child.pid, 1 << 30)
        assert main(["--once", "-q"]) == 0
        assert "time.sleep(60) A\\rB C\\r\\nD" in capfd.readouterr().out
        assert main(["--once", "--json"]) == 0
        (proc,) = json.loads(capfd.readouterr().out)["processes"]
        assert proc["command"].endswith(f"time.sleep(60) {CARRIAGE}")
        info = ProcInfoCache().lookup_many([child.pid])[child.pid]
        shown = texts_of(GpuProcess(gpu_index=0, pid=child.pid, type=ProcessType.COMPUTE,
                                    gpu_mem_bytes=1, command=info.command))
        assert shown[TITLES.index("Command")].endswith("time.sleep(60) A\\rB C\\r\\nD")
    finally:
        child.kill()
        child.wait(timeout=5)


def test_driver_strings_are_escaped_everywhere_they_are_shown(
        fake_nvml: FakeNvml, capfd: pytest.CaptureFixture[str]) -> None:
    """A GPU name and a driver version holding escapes (issue 53) reach no terminal, CSV or
    window label raw: they are escaped as command lines are; JSON keeps them as they are."""
    from gpumon.telemetry.nvml.source import NvmlSource
    from gpumon.ui.monitor.panel_labels import title_runs

    fake_nvml.set_name(0, FORMULA + ESCAPES)
    fake_nvml.set_driver_version("580.1" + ESCAPES, "12.580" + ESCAPES)
    shown = FORMULA + "\\x1b]0;owned\\x07\\x1b[2J"
    for flags in (["--once"], ["--once", "-q"]):
        assert main(flags) == 0
        out = capfd.readouterr().out
        _no_control_characters(out)
        assert shown[:20] in out and "580.1\\x1b]0;owned" in out
    assert main(["--once", "--csv"]) == 0
    out = capfd.readouterr().out
    _no_control_characters(out)
    header, row = list(csv.reader(io.StringIO(out)))
    assert row[header.index("name")] == "'" + shown
    assert main(["--once", "--json"]) == 0
    assert json.loads(capfd.readouterr().out)["gpus"][0]["name"] == FORMULA + ESCAPES
    source = NvmlSource()
    assert source.open().usable
    try:
        info = source.gpus()[0]
    finally:
        source.close()
    title = "".join(run.text for run in title_runs(info))
    _no_control_characters(title)
    assert shown in title


def test_a_mig_device_named_with_escapes_is_escaped(fake_nvml: FakeNvml,
                                                    capfd: pytest.CaptureFixture[str]) -> None:
    fake_nvml.set_mig_mode(0, 1)
    fake_nvml.add_mig(0, 0, 1, 0, "1g" + ESCAPES, 5 << 30, 1 << 30)
    for flags in (["--once"], ["--once", "-q"]):
        assert main(flags) == 0
        out = capfd.readouterr().out
        _no_control_characters(out)
        assert "1g\\x1b]0;owned" in out
