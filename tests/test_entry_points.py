"""The installed distribution declares `gpumon` as a console script and `gpumon-gui` as a
gui-script, and the freedesktop entry runs the gui-script."""

from __future__ import annotations

import configparser
from importlib.metadata import distribution
from pathlib import Path

import pytest

from gpumon.cli import main as cli

DESKTOP = Path(__file__).resolve().parent.parent / "resources" / "gpumon.desktop"


def _scripts(group: str) -> dict[str, str]:
    dist = distribution("gpumon")
    return {ep.name: ep.value for ep in dist.entry_points if ep.group == group}


def test_gpumon_is_a_console_script_on_every_platform() -> None:
    assert _scripts("console_scripts").get("gpumon") == "gpumon.cli.main:main"
    # A gui-script of the same name would make Windows' launcher console-less again.
    assert "gpumon" not in _scripts("gui_scripts")


def test_gpumon_gui_is_a_gui_script_for_launchers() -> None:
    assert _scripts("gui_scripts").get("gpumon-gui") == "gpumon.cli.main:main"
    assert "gpumon-gui" not in _scripts("console_scripts")


@pytest.mark.parametrize("group", ["console_scripts", "gui_scripts"])
def test_every_entry_point_loads_the_cli_main(group: str) -> None:
    dist = distribution("gpumon")
    eps = [ep for ep in dist.entry_points if ep.group == group]
    assert eps
    for ep in eps:
        assert ep.load() is cli.main


def test_desktop_entry_runs_the_gui_script() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DESKTOP, encoding="utf-8")
    assert parser["Desktop Entry"]["Exec"].split()[0] == "gpumon-gui"


@pytest.mark.slow  # subprocesses: a second or two each
@pytest.mark.parametrize("module", ["random", "socket"])
def test_python_m_gpumon_never_imports_the_current_folder_s_modules(
        tmp_path: Path, module: str) -> None:
    """``python -m`` puts the current folder first on sys.path; a ``random.py`` there stood
    in for the standard library's (the ``gpumon`` script never did)."""
    import os
    import subprocess
    import sys

    # without the tests' PYTHONPATH: its sitecustomize imports random before -m runs
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    marker = tmp_path / "imported"
    (tmp_path / f"{module}.py").write_text(
        f"open({str(marker)!r}, 'w').write('yes')\nraise SystemExit('shadowed {module}')\n")
    out = subprocess.run([sys.executable, "-m", "gpumon", "--simulate", "1", "--once"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert not marker.exists()
    assert "GPU" in out.stdout
