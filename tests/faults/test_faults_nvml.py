"""NVML faults end to end: the real NvmlSource on the fake library, in the window and --once.

Source-level behaviour is tested in tests/telemetry; here each fault must reach the person
at the screen as words (banner, LOST, N/A), with the other GPUs still updating, and no
traceback anywhere.
"""

from __future__ import annotations

import logging

import pynvml
import pytest
from fakenvml import FakeNvml
from faults_helpers import once_gpu_block, panel_text, run_once, smi_row

from gpumon.telemetry.nvml.source import NvmlSource

WAIT_MS = 5000


def _banner_window(qtbot, make_window):
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.banner.isVisible(), timeout=WAIT_MS)
    assert "(no GPU data)" in w.windowTitle()
    assert w.header.status_line.text() == "No GPU data"
    assert w.header.source_badge.text() == "NVML — unavailable"
    assert w.gpu_grid.panels == []
    return w


def test_library_missing(qtbot, make_window, no_nvml_library: None,
                         capfd: pytest.CaptureFixture[str]) -> None:
    w = _banner_window(qtbot, make_window)
    assert "No NVIDIA driver was found" in w.banner.text()
    assert "--simulate" in w.banner.text()
    rc, out, err = run_once(capfd)
    assert (rc, out) == (1, "")
    assert err.startswith("gpumon: No NVIDIA driver was found") and "--simulate" in err


@pytest.mark.parametrize(("code", "words"), [
    (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, "The NVIDIA driver is installed but not running."),
    (pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, "driver/library version mismatch"),
    (pynvml.NVML_ERROR_NO_PERMISSION, "not allowed to talk to the NVIDIA driver"),
], ids=["driver-not-loaded", "version-mismatch", "no-permission"])
def test_driver_cannot_be_used(qtbot, make_window, fake_nvml: FakeNvml, code: int, words: str,
                               capfd: pytest.CaptureFixture[str]) -> None:
    fake_nvml.set_init_error(code)
    w = _banner_window(qtbot, make_window)
    assert words in w.banner.text()
    assert w.banner.hint.isVisible() and w.banner.hint.text()
    rc, out, err = run_once(capfd)
    assert (rc, out) == (1, "")
    assert err.startswith("gpumon: ") and words in err
    assert 2 <= len(err.strip().splitlines()) <= 3  # what happened, what to do


# NVML function (as the C library names it) -> (panel text, GPU-table column, --once text)
# that read N/A when the driver says "not supported" for it.
UNSUPPORTED = {
    "nvmlDeviceGetFanSpeed": ("Fan N/A", "Fan", "N/A"),
    "nvmlDeviceGetTemperature": ("Temp N/A", "Temp", "N/A"),
    "nvmlDeviceGetPowerUsage": ("Power N/A /", "Pwr:Usage/Cap", "N/A /"),
    "nvmlDeviceGetEnforcedPowerLimit": ("/ N/A · Fan", "Pwr:Usage/Cap", "/   N/A"),
    "nvmlDeviceGetUtilizationRates": ("GPU N/A Mem ctrl N/A", "GPU-Util", "N/A"),
    "nvmlDeviceGetMemoryInfo": ("Memory N/A / N/A", "Memory-Usage", "N/A /"),
    "nvmlDeviceGetClockInfo": ("SM N/A · Mem N/A", None, None),
    "nvmlDeviceGetPerformanceState": ("Perf N/A", "Perf", "N/A"),
    "nvmlDeviceGetPersistenceMode": (None, "Persistence-M", "N/A"),
    "nvmlDeviceGetComputeMode": (None, "Compute M.", "N/A"),
}
ALSO = {"nvmlDeviceGetTemperature": ["nvmlDeviceGetTemperatureV"],
        "nvmlDeviceGetMemoryInfo": ["nvmlDeviceGetMemoryInfo_v2"]}


@pytest.mark.parametrize("func", sorted(UNSUPPORTED))
def test_unsupported_function_shows_na_and_the_rest_updates(
        qtbot, make_window, fake_nvml: FakeNvml, func: str,
        capfd: pytest.CaptureFixture[str]) -> None:
    fake_nvml.set_gpu_count(2)
    for name in [func, *ALSO.get(func, [])]:
        fake_nvml.set_unsupported(name, gpu=1)
    panel_needle, column, once_needle = UNSUPPORTED[func]
    rc, out, _ = run_once(capfd)
    assert rc == 0
    if once_needle is not None:
        assert once_needle in once_gpu_block(out, 1)
        assert "N/A" not in once_gpu_block(out, 0).replace("NVML: N/A", "")
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.history.count(0) >= 2, timeout=WAIT_MS)
    if panel_needle is not None:
        assert panel_needle in panel_text(w, 1)
        assert "N/A" not in panel_text(w, 0)
    if column is not None:
        assert "N/A" in smi_row(w, 1)[column]
        assert "N/A" not in smi_row(w, 0)[column]
    assert not w.gpu_panel(1).lost and not w.banner.isVisible()
    fake_nvml.set_value(0, "util_gpu", 71)
    qtbot.waitUntil(lambda: "GPU 71 %" in panel_text(w, 0), timeout=WAIT_MS)


def test_function_the_driver_lacks_is_na_and_logged_once(
        qtbot, make_window, fake_nvml: FakeNvml, caplog: pytest.LogCaptureFixture,
        capfd: pytest.CaptureFixture[str]) -> None:
    fake_nvml.set_error("nvmlDeviceGetFanSpeed", pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
    rc, out, _ = run_once(capfd)
    assert rc == 0 and once_gpu_block(out, 0).split("\n")[1].startswith("|  N/A")
    caplog.clear()
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.history.count(0) >= 4, timeout=WAIT_MS)
    assert "Fan N/A" in panel_text(w, 0) and "Temp 40 °C" in panel_text(w, 0)
    missing = [r for r in caplog.records if "nvmlDeviceGetFanSpeed" in r.getMessage()]
    assert len(missing) == 1 and "not in this driver" in missing[0].getMessage()
    assert missing[0].levelno <= logging.INFO  # a fact about the driver, not a warning


def test_old_driver_without_newer_functions_still_shows_everything(
        qtbot, make_window, fake_nvml_old: FakeNvml,
        capfd: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_once(capfd)
    assert rc == 0 and "40C" in out and "1280MiB /" in out  # v1 memory counts reserved
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.history.count(0) >= 2, timeout=WAIT_MS)
    text = panel_text(w, 0)
    assert "Temp 40 °C" in text and "Memory 1.25 / 16.00 GiB" in text, text
    assert not w.banner.isVisible()


def test_gpu_lost_mid_run(qtbot, make_window, fake_nvml: FakeNvml,
                          capfd: pytest.CaptureFixture[str]) -> None:
    fake_nvml.set_gpu_count(3)
    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.history.count(2) >= 2, timeout=WAIT_MS)
    fake_nvml.set_lost(1)
    qtbot.waitUntil(lambda: w.gpu_panel(1).lost, timeout=WAIT_MS)
    text = panel_text(w, 1)
    assert "LOST — The GPU stopped answering (NVML: GPU is lost)" in text
    assert w.gpu_panel(1).lost_label.isVisible()
    assert smi_row(w, 1)["GPU-Util"] == "ERR! (lost)"
    assert "1 lost" in w.header.status_line.text()
    for gpu, util in ((0, 61), (2, 63)):
        fake_nvml.set_value(gpu, "util_gpu", util)
    qtbot.waitUntil(lambda: "GPU 61 %" in panel_text(w, 0) and "GPU 63 %" in panel_text(w, 2),
                    timeout=WAIT_MS)
    assert not w.gpu_panel(0).lost and not w.gpu_panel(2).lost
    rc, out, _ = run_once(capfd)
    assert rc == 0
    lost_block = once_gpu_block(out, 1)
    assert "LOST" in lost_block and "GPU is lost" in lost_block
    assert "63%" in once_gpu_block(out, 2) and "LOST" not in once_gpu_block(out, 2)
