"""tools/screenshots.py takes a picture of the window as the defaults open it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QImage

ROOT = Path(__file__).resolve().parent.parent


def test_the_tool_takes_the_readme_picture_with_its_graphs_drawn(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "screenshots.py"), "--out",
                           str(tmp_path), "screenshot-4gpus"], capture_output=True, text=True,
                          timeout=180, cwd=str(ROOT), check=False)
    assert done.returncode == 0, done.stderr
    image = QImage(str(tmp_path / "screenshot-4gpus.png"))
    assert (image.width(), image.height()) == (1400, 900)
    # the first memory graph's fill (the panel's blue at 25 %) reaches its left end: the
    # minute before the start is drawn, not an empty graph
    fill = image.pixelColor(70, 250)
    assert fill.blue() > fill.red() + 20, fill.name()
