"""The desktop the suite runs on (tests/desktop_env.py): a desktop's scale variables are
cleared, a scale is set only where a pass asks for one, and the fonts are pinned by a
fontconfig file that really puts them first."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from desktop_env import FONTS, pin_fonts_and_scale


def test_a_desktop_s_scale_is_cleared_and_a_pass_s_scale_kept() -> None:
    env = {"QT_SCREEN_SCALE_FACTORS": "1.5", "QT_SCALE_FACTOR": "2", "QT_FONT_DPI": "144",
           "GPUMON_TEST_FONTS": "system"}
    pin_fonts_and_scale(env)
    assert env == {"GPUMON_TEST_FONTS": "system"}
    env = {"QT_SCREEN_SCALE_FACTORS": "2", "GPUMON_TEST_SCALE": "1.5",
           "GPUMON_TEST_FONTS": "noto"}
    pin_fonts_and_scale(env)
    assert env["QT_SCALE_FACTOR"] == "1.5" and "QT_SCREEN_SCALE_FACTORS" not in env
    assert env["QT_QPA_PLATFORM"].startswith("offscreen:configfile=")
    assert env["FONTCONFIG_FILE"] == str(FONTS / "noto.conf")
    with pytest.raises(ValueError):
        pin_fonts_and_scale({"GPUMON_TEST_FONTS": "comic"})


def test_this_run_has_no_scale_it_did_not_ask_for(qapp) -> None:
    asked = os.environ.get("GPUMON_TEST_SCALE")
    assert os.environ.get("QT_SCALE_FACTOR") == asked
    assert "QT_SCREEN_SCALE_FACTORS" not in os.environ
    screen = qapp.primaryScreen()
    assert screen.devicePixelRatio() == float(asked or 1)
    if qapp.platformName() == "offscreen":  # 800 px square at every scale
        assert (screen.geometry().width(), screen.geometry().height()) == (800, 800)


@pytest.mark.skipif(shutil.which("fc-match") is None, reason="fontconfig's fc-match is missing")
@pytest.mark.parametrize(("config", "sans", "mono"), [
    ("pinned", "DejaVu Sans", "DejaVu Sans Mono"),
    ("noto", "Noto Sans", "Noto Sans Mono")])
def test_the_fontconfig_files_put_their_fonts_first(config: str, sans: str, mono: str) -> None:
    env = dict(os.environ, FONTCONFIG_FILE=str(FONTS / f"{config}.conf"))

    def match(pattern: str) -> str:
        return subprocess.run(["fc-match", "-f", "%{family[0]}", pattern], env=env,
                              capture_output=True, text=True, timeout=30).stdout

    installed = subprocess.run(["fc-list", ":", "family"], env=env, capture_output=True,
                               text=True, timeout=30).stdout
    if sans not in installed or mono not in installed:
        pytest.skip(f"{sans} or {mono} is not installed here")
    assert (match("sans-serif"), match("monospace")) == (sans, mono)
    assert match("Sans Serif") == sans  # Qt's default family on X11 and offscreen
