"""GPU health in the window, read from the fake NVML through the real nvidia-ml-py: each panel
says why its clocks are held down and shows a health mark with its reasons; a new XID is said
in the toolbar's badge and the event log with its time and meaning. In English and in Chinese;
screenshots of a panel are written where GPUMON_SHOTS points, to look at."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "telemetry"))

from fakenvml import FakeNvml, use_fake_nvml

from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.telemetry.sources.sampler import Sampler
from gpumon.ui.window import workers
from gpumon.ui.window.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("restore_app_look")
WAIT_MS = 5000



@pytest.fixture
def fake(fake_lib: Path) -> Iterator[FakeNvml]:
    with use_fake_nvml(fake_lib) as f:
        f.set_gpu_count(2)
        f.set_value(0, "clock_events", 0x4 | 0x40 | 0x1)  # power cap, HW thermal, (idle)
        f.set_value(0, "remap_pending", 1)
        yield f


def shot(w: MainWindow, name: str, whole: bool = False) -> None:
    where = os.environ.get("GPUMON_SHOTS")
    panel = w if whole else w.gpu_panel(0)
    if where and panel is not None:
        panel.grab().save(str(Path(where) / name))


def run_window(qtbot, make_window, fake: FakeNvml, words: dict[str, str],
               shot_name: str) -> None:
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.gpu_panel(1) is not None and w.snapshot_count >= 2,
                    timeout=WAIT_MS)
    p0, p1 = w.gpu_panel(0), w.gpu_panel(1)
    assert p0 is not None and p1 is not None
    qtbot.waitUntil(lambda: p0.health.held.isVisible(), timeout=WAIT_MS)
    assert p0.health.held.text() == words["held"]
    assert p0.health.mark.text() == words["warning"]
    assert words["pending"] in p0.health.mark.toolTip()
    assert not p1.health.held.isVisible()
    assert p1.health.mark.text() == words["ok"]
    assert w.event_log.count() == 0 and not w.event_dock.isVisible()
    shot(w, shot_name)

    fake.add_xid(1, 79)
    qtbot.waitUntil(lambda: w.event_log.count() == 1, timeout=WAIT_MS)
    line = w.event_log.lines()[0]
    assert words["xid"] in line and words["meaning"] in line and words["hint"] in line
    assert line[:8].count(":") == 2  # the time it came, HH:MM:SS
    assert w.health.badge.text().endswith(line) and words["one_event"] in w.health.badge.text()
    assert not w.event_dock.isVisible()  # the graphs keep their room until asked
    qtbot.waitUntil(lambda: p1.health.mark.text() == words["error"], timeout=WAIT_MS)
    assert "79" in p1.health.mark.toolTip()
    shot(w, "window_" + shot_name, whole=True)

    fake.set_value(0, "clock_events", 0x1)  # idle only: nothing is held down
    qtbot.waitUntil(lambda: not p0.health.held.isVisible(), timeout=WAIT_MS)
    assert w.event_log.count() == 1  # no new event without a new XID


def test_panel_says_why_clocks_are_down_and_an_xid_reaches_the_badge(
        qtbot, make_window, fake: FakeNvml) -> None:
    run_window(qtbot, make_window, fake, {
        "held": "clocks held down: power cap, thermal", "warning": "▲ warning",
        "ok": "● healthy", "error": "✖ error", "pending": "a row remap is pending",
        "xid": "GPU 1: XID 79", "meaning": "GPU has fallen off the bus",
        "hint": "the machine needs a reboot", "one_event": "▲ 1 event: "},
        "health_panel_en.png")


def test_the_same_in_chinese(qtbot, make_window, fake: FakeNvml,
                             chinese: None) -> None:
    run_window(qtbot, make_window, fake, {
        "held": "频率被压低：功耗上限、过热", "warning": "▲ 警告", "ok": "● 正常",
        "error": "✖ 错误", "pending": "有待生效的行重映射",
        "xid": "GPU 1：XID 79", "meaning": "GPU 已从总线上掉线", "hint": "这台机器需要重启",
        "one_event": "▲ 1 个事件："}, "health_panel_zh.png")


def test_a_lost_gpu_has_no_health_mark(qtbot, make_window, fake: FakeNvml) -> None:
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.gpu_panel(1) is not None and w.snapshot_count >= 2,
                    timeout=WAIT_MS)
    p1 = w.gpu_panel(1)
    assert p1 is not None
    # shown once the panel is laid out: snapshots queued while the GUI thread was busy can
    # come before that
    qtbot.waitUntil(p1.health.mark.isVisible, timeout=WAIT_MS)
    fake.set_lost(1)
    qtbot.waitUntil(lambda: p1.lost, timeout=WAIT_MS)
    assert not p1.health.mark.isVisible() and not p1.health.held.isVisible()


def test_a_new_uncorrected_ecc_error_reaches_the_badge_and_log(
        qtbot, make_window, fake: FakeNvml, monkeypatch: pytest.MonkeyPatch) -> None:
    # ECC counters are slow fields, read every 5 s; here every 0.5 s (the path is the test).
    monkeypatch.setattr(workers, "Sampler", functools.partial(Sampler, slow_every_s=0.5))
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.gpu_panel(1) is not None and w.snapshot_count >= 2,
                    timeout=WAIT_MS)
    p1 = w.gpu_panel(1)
    assert p1 is not None and p1.health.mark.text() == "● healthy"
    fake.set_value(1, "ecc_dbe_vol", 3)  # read on the next slow tick
    qtbot.waitUntil(lambda: w.event_log.count() == 1, timeout=WAIT_MS)
    line = w.event_log.lines()[0]
    assert "GPU 1: 3 new uncorrected ECC errors." in line and "reset it" in line
    assert w.health.badge.text().endswith(line)
    assert p1.health.mark.text() == "✖ error"
    assert "3 uncorrected ECC errors since the driver loaded" in p1.health.mark.toolTip()
