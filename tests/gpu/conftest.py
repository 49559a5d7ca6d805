"""The GPU tests run under the same guards as tests/ui (``tests/qt_fixtures.py``): Python's
garbage collection on the GUI thread only, and a failure for any QThread or QTimer a test
leaves running (a real GPU's slow calls make a thread that outlives its test likelier)."""

from qt_fixtures import _gc_on_the_gui_thread, _no_dangling_qthreads_or_qtimers

__all__ = ["_gc_on_the_gui_thread", "_no_dangling_qthreads_or_qtimers"]
