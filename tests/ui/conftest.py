"""pytest-qt fixtures for the views (``tests/qt_fixtures.py``): the GC guard, a failure for
any QThread or QTimer left running, and ``make_window``; and ``fake_lib``, the fake NVML
library (tests/telemetry/fakenvml) built once per session for the windows that read it."""

import sys
from pathlib import Path

import pytest
from qt_fixtures import (
    _gc_on_the_gui_thread,
    _no_dangling_qthreads_or_qtimers,
    make_window,
    restore_app_look,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "telemetry"))

from fakenvml import FakeNvmlUnavailable, build_fake_nvml

__all__ = ["_gc_on_the_gui_thread", "_no_dangling_qthreads_or_qtimers", "make_window",
           "restore_app_look"]


@pytest.fixture(autouse=True)
def _zoom_kept_on_a_small_screen(request: pytest.FixtureRequest,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Many tests lay out a 1400 x 900 window at 300 % on the 800 x 800 offscreen screen on
    purpose; the app would take that zoom back (presentation.py). Tests marked
    ``refuses_zoom`` keep the app's behaviour."""
    if request.node.get_closest_marker("refuses_zoom") is None:
        from gpumon.ui.window.presentation import Presentation

        monkeypatch.setattr(Presentation, "refuse_unfit", False)


@pytest.fixture(scope="session")
def fake_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Path of the compiled fake NVML; the test skips, saying why, where it cannot be built."""
    try:
        return build_fake_nvml(tmp_path_factory.mktemp("fakenvml"))
    except FakeNvmlUnavailable as err:
        pytest.skip(f"fake NVML library not available: {err}")
