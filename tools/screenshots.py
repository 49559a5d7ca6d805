"""Take the screenshots in docs/images/ that show the Monitor again, from today's defaults.

Each picture is the main window as ``gpumon --simulate N`` opens it (the simulated GPUs have
run a minute before the window opened, so the graphs are drawn from the first frame), at
1400x900, offscreen, one fresh process each (a language is chosen before the first widget).
The Playground's and the Lesson's pictures come from their own tests
(tests/ui/test_lesson_shots.py with GPUMON_SHOTS).

Run from the repository root: ``python tools/screenshots.py [--out DIR] [NAME ...]``
(default: every name below, into docs/images/).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIZE = (1400, 900)
# offscreen's own screen is 800x800, where a 300 % window is fitted down: a 1080p-class one
SCREEN = ('{"screens": [{"name": "shots", "x": 0, "y": 0, "width": 1920, "height": 1200, '
          '"logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}')
WINDOW_S = 60  # the graphs' span: the minute the simulated GPUs ran before the start
SETTLE_MS = 3500  # a few readings after the first, and the zoom's relayout
# name -> (language, GPUs, theme, zoom)
SHOTS: dict[str, tuple[str, int, str, float]] = {
    "screenshot-4gpus": ("en", 4, "light", 1.0),
    "screenshot-light": ("en", 4, "light", 1.0),
    "screenshot-dark": ("en", 4, "dark", 1.0),
    "screenshot-zoom-200": ("en", 4, "light", 2.0),
    "screenshot-zoom-300": ("en", 4, "light", 3.0),
    "screenshot-zh": ("zh_CN", 2, "light", 1.0),
}


def take(name: str, out: Path) -> None:
    """In this process: open the window ``SHOTS[name]`` describes and save its picture."""
    lang, gpus, theme, zoom = SHOTS[name]
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from gpumon import i18n
    from gpumon.ui.window.language import install_qt_translations
    from gpumon.ui.window.main_window import MainWindow, simulated_factory
    from gpumon.ui.window.settings import Settings

    i18n.set_language(lang)
    app = QApplication([sys.argv[0]])
    install_qt_translations(app, lang)
    window = MainWindow(simulated_factory(gpus, seed=0), 1.0, window_s=WINDOW_S,
                        settings=Settings.memory())
    window.resize(*SIZE)
    window.show()
    window.presentation.set_theme(theme)
    window.presentation.set_zoom(zoom)

    def save() -> None:
        path = out / f"{name}.png"
        if not window.grab().save(str(path)):
            raise SystemExit(f"could not write {path}")
        print(path)
        window.close()
        app.quit()

    QTimer.singleShot(SETTLE_MS, save)
    app.exec()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", choices=[*SHOTS, []], metavar="NAME",
                        help=f"which pictures (default: all of {', '.join(SHOTS)})")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process takes one
    args = parser.parse_args()
    if args.one:
        take(args.one, args.out)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    screen = Path(tempfile.mkdtemp()) / "screen.json"
    screen.write_text(SCREEN, encoding="utf-8")
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={screen}",
               PYTHONPATH=str(REPO))
    env.pop("QT_SCALE_FACTOR", None)
    failed = 0
    for name in args.names or SHOTS:
        done = subprocess.run([sys.executable, __file__, "--one", name, "--out", str(args.out)],
                              env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        if done.returncode != 0:
            failed += 1
            print(f"{name}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
        else:
            print(done.stdout.strip())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
