"""The desktop the tests run on, made the same everywhere (Qt-free; ``tests/conftest.py``
calls it before Qt is imported, so that every test process, and every program a test
starts, inherits it).

- Scale: Qt reads ``QT_SCALE_FACTOR``, ``QT_SCREEN_SCALE_FACTORS`` (KDE exports it to every
  program) and the like once, when the application starts. The tests compare widget sizes
  with numbers written at scale 1, so those variables are cleared, unless
  ``GPUMON_TEST_SCALE`` asks for a scale: then ``QT_SCALE_FACTOR`` is that (a pass of the
  layout and zoom tests at 150 %, which measure in device pixels where they read images),
  and the offscreen screen has that many more device pixels (a configuration file), so it
  stays 800×800 logical pixels as at scale 1 instead of shrinking to 533×533.
- Fonts: with Noto installed, fontconfig prefers Noto Sans and Noto Sans Mono to DejaVu on
  Debian, and Noto Sans CJK to WenQuanYi for Chinese, and text grows taller. A fontconfig
  file (``tests/fonts/``) puts the suite's fonts first: ``GPUMON_TEST_FONTS`` = ``pinned``
  (the default: DejaVu and WenQuanYi Micro Hei, where both are installed), ``noto``, or
  ``system`` (whatever the machine chooses). A ``FONTCONFIG_FILE`` already set is kept.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import MutableMapping
from pathlib import Path

FONTS = Path(__file__).resolve().parent / "fonts"
SCALE_VARIABLES = ("QT_SCALE_FACTOR", "QT_SCREEN_SCALE_FACTORS", "QT_AUTO_SCREEN_SCALE_FACTOR",
                   "QT_ENABLE_HIGHDPI_SCALING", "QT_FONT_DPI", "QT_USE_PHYSICAL_DPI",
                   "QT_SCALE_FACTOR_ROUNDING_POLICY")
PINNED_FAMILIES = ("DejaVu Sans", "DejaVu Sans Mono", "WenQuanYi Micro Hei")
OFFSCREEN_SIZE = 800  # Qt's offscreen screen, in pixels square


def pin_fonts_and_scale(env: MutableMapping[str, str]) -> None:
    scale = env.get("GPUMON_TEST_SCALE", "")
    for name in SCALE_VARIABLES:
        env.pop(name, None)
    if scale:
        env["QT_SCALE_FACTOR"] = scale
        if env.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
            env["QT_QPA_PLATFORM"] = f"offscreen:configfile={_offscreen_screen(float(scale))}"
    fonts = env.get("GPUMON_TEST_FONTS", "pinned")
    if "FONTCONFIG_FILE" in env or fonts == "system":
        return
    if fonts == "pinned" and not _installed(PINNED_FAMILIES):
        return  # another machine's fonts: measured as they are
    config = FONTS / f"{fonts}.conf"
    if not config.is_file():
        raise ValueError(f"GPUMON_TEST_FONTS={fonts!r}: expected pinned, noto or system")
    env["FONTCONFIG_FILE"] = str(config)


def _offscreen_screen(scale: float, logical: int = OFFSCREEN_SIZE) -> Path:
    """A configuration of Qt's offscreen platform: one screen of ``logical`` pixels square
    at ``scale`` (its default is 800 device pixels square)."""
    side = round(logical * scale)
    path = Path(tempfile.gettempdir()) / f"gpumon-tests-offscreen-{side}.json"
    config = {"synchronousWindowSystemEvents": False, "windowFrameMargins": True,
              "screens": [{"name": "OffscreenScreen", "x": 0, "y": 0, "width": side,
                           "height": side, "logicalDpi": 96, "logicalBaseDpi": 96,
                           "dpr": 1}]}
    text = json.dumps(config)
    if not path.is_file() or path.read_text() != text:
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(text)
        temporary.replace(path)  # whole, for the test processes that read it meanwhile
    return path


def _installed(families: tuple[str, ...]) -> bool:
    """Whether fontconfig knows every one of ``families`` (False without fc-list)."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return False
    try:
        listed = subprocess.run([fc_list, ":", "family"], capture_output=True, text=True,
                                timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    known = {name.strip() for line in listed.splitlines() for name in line.split(",")}
    return all(family in known for family in families)
