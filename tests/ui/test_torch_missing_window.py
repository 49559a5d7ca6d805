"""Without a working torch the window opens, samples, and the playground says why: where
torch is not installed, in one sentence that names the extra that brings it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

BLOCK_TORCH = 'import sys\nsys.modules["torch"] = None  # any "import torch" now fails\n'


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``code`` where torch cannot be imported, in it and in the kernel it starts (both
    read the sitecustomize on PYTHONPATH)."""
    (tmp_path / "sitecustomize.py").write_text(BLOCK_TORCH)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120)


def test_window_opens_and_playground_says_torch_is_missing(tmp_path: Path) -> None:
    proc = _run("""
        import os
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication, QLabel
        from gpumon.playground.data import actions as act
        from gpumon.ui.window.main_window import MainWindow, simulated_factory
        app = QApplication([])
        w = MainWindow(simulated_factory(2), 0.1)
        w.show()
        done = []
        w.kernel_link.actionFinished.connect(lambda ticket, outcome: done.append(outcome))
        w.kernel_link.submit(act.CreateTensor("x", "[1, 2]"))
        deadline = QTimer()
        deadline.setSingleShot(True)
        deadline.timeout.connect(app.quit)
        deadline.start(20000)
        poll = QTimer()
        poll.timeout.connect(lambda: app.quit() if done and w.snapshot_count >= 3 else None)
        poll.start(50)
        app.exec()
        poll.stop()
        assert w.findChild(QLabel, "playgroundStatus") is None  # the page is built on first use
        w.tabs.setCurrentWidget(w.playground)  # opened after torch failed to load
        status = w.findChild(QLabel, "playgroundStatus")
        print(w.snapshot_count >= 3, bool(done) and not done[0].ok)
        print(status.text() if status is not None else "no status label")
        w.close()
    """, tmp_path)
    assert proc.returncode == 0, proc.stderr
    sampled_and_refused, status = proc.stdout.splitlines()[-2:]
    assert sampled_and_refused == "True True"
    assert status == ("The playground needs PyTorch, which comes with the playground extra: "
                      "pip install 'gpumon[playground]'")
    assert "Traceback" not in proc.stderr
