"""pytest-qt fixtures for the views (``tests/qt_fixtures.py``): the GC guard, a failure for
any QThread or QTimer left running, and ``make_window``."""

from qt_fixtures import (
    _gc_on_the_gui_thread,
    _no_dangling_qthreads_or_qtimers,
    make_window,
    restore_app_look,
)

__all__ = ["_gc_on_the_gui_thread", "_no_dangling_qthreads_or_qtimers", "make_window",
           "restore_app_look"]
