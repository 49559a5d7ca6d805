"""The GPU tests run under the same guards as tests/ui (``tests/qt_fixtures.py``): Python's
garbage collection on the GUI thread only, and a failure for any QThread or QTimer a test
leaves running (a real GPU's slow calls make a thread that outlives its test likelier).

A GPU machine may have torch and NVML but no Qt (PySide6, pytest-qt): there the guards are
left out, test_ui_cuda.py skips itself, and the Qt-free tests here run as they are."""

import pytest

__all__: list[str] = []


@pytest.fixture(autouse=True)
def _ordinary_kernels(kernels_import_torch: None) -> None:
    """Every kernel here starts the ordinary way, as a window's first kernel does; the one
    test of a kernel forked from the fork server turns it back on for itself."""

try:
    import PySide6  # noqa: F401
    import pytestqt  # noqa: F401
except ImportError:
    pass
else:
    from qt_fixtures import _gc_on_the_gui_thread, _no_dangling_qthreads_or_qtimers

    __all__ += ["_gc_on_the_gui_thread", "_no_dangling_qthreads_or_qtimers"]
