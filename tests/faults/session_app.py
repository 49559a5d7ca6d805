"""gpumon's own start (``launch.run``) with its window in a chosen state, for the session-end
tests: ``python session_app.py MODE CSV``.

MODE ``lesson``: the Lesson tab shown, so its kernel starts (prints ``kernel PID`` when it
has, ``ready`` once torch loaded there). MODE ``record``: a CSV recording to the file CSV at
0.1 s, 4 simulated GPUs (prints ``ready`` once 40 rows are written). The process then runs
until something ends it; its exit status is ``launch.run``'s.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QTimer

from gpumon.ui.window import launch
from gpumon.ui.window.main_window import MainWindow, simulated_factory
from gpumon.ui.window.settings import Settings


def _say(line: str) -> None:
    print(line, flush=True)


def _lesson(window: MainWindow) -> None:
    window.kernel_link.kernelStarted.connect(lambda pid: _say(f"kernel {pid}"))
    window.kernel_link.loadingFinished.connect(lambda _status: _say("ready"))
    window.show_tab("Lesson")


def _record(window: MainWindow, path: str) -> None:
    window.files.start_recording(path)
    poll = QTimer(window)

    def look() -> None:
        if window.files.recorder.rows >= 40:
            poll.stop()
            _say("ready")

    poll.timeout.connect(look)
    poll.start(50)


def main(mode: str, path: str) -> int:
    def make(interval_s: float, settings: Settings) -> MainWindow:
        window = MainWindow(simulated_factory(4), 0.1 if mode == "record" else interval_s,
                            settings=settings)
        if mode == "lesson":
            _lesson(window)
        else:
            QTimer.singleShot(0, window, lambda: _record(window, path))
        return window

    return launch.run(4, make_window=make)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
