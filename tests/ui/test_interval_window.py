"""The command line and the window agree on the sampling interval at its edges: what
``--interval`` accepts the window shows and samples at (two decimals, not the spin box's
own rounding), and the window stops where the command line does."""

from __future__ import annotations

import pytest

from gpumon.cli.main import build_parser
from gpumon.interval import SAMPLING
from gpumon.ui.window.controls import Controls
from gpumon.ui.window.settings import Settings

ACCEPTED = ["0.1", "0.15", "0.25", "0.125", "0.145", "1", "2.75", "9.99", "9.995", "10"]
REFUSED = ["0.09", "0.05", "0", "10.01", "11", "-1", "nan", "inf"]


def cli(text: str) -> float | None:
    """``gpumon --interval TEXT``'s value; None when the command line refuses it."""
    try:
        return float(build_parser().parse_args(["--interval", text]).interval)
    except SystemExit:
        return None


def test_what_the_command_line_accepts_the_window_shows_and_samples_at(
        make_window) -> None:
    first = cli("0.25")
    w = make_window(interval_s=first, show=False)
    assert w.interval_s == w.controls.interval_spin.value() == first == 0.25
    for text in ACCEPTED:
        value = cli(text)
        assert value is not None, text
        w.set_interval(value)
        assert (w.interval_s, w.controls.interval_spin.value()) == (value, value), text


def test_the_window_stops_where_the_command_line_does(
        make_window, capsys: pytest.CaptureFixture[str]) -> None:
    w = make_window(show=False)
    spin = w.controls.interval_spin
    assert (spin.minimum(), spin.maximum()) == (cli("0.1"), cli("10"))
    assert [cli(text) for text in REFUSED] == [None] * len(REFUSED)
    assert "from 0.1 to 10" in capsys.readouterr().err
    for typed in (0.05, 11.0, 0.125, 0.145, 0.375, 9.995, 10.001):
        spin.setValue(typed)
        assert w.interval_s == spin.value() == SAMPLING.clamp(typed), typed


def test_a_remembered_interval_is_read_in_the_same_range(tmp_path) -> None:
    for i, (stored, read) in enumerate((("99", 10.0), ("0.01", 0.1), ("0.25", 0.25),
                                        ("0.125", 0.13), ("nan", None))):
        path = tmp_path / f"gpumon{i}.ini"  # QSettings caches a file it has read
        path.write_text(f"[sampling]\ninterval_s={stored}\n")
        assert Settings.ini(path).interval_s == read, stored
    settings = Settings.memory()
    settings.interval_s = SAMPLING.parse("0.15")
    assert settings.interval_s == cli("0.15") == 0.15


def test_the_spin_box_rounds_every_value_as_the_interval_does(qtbot) -> None:
    controls = Controls(1.0, 60)
    qtbot.addWidget(controls)
    spin = controls.interval_spin
    typed = [i / 1000 for i in range(0, 10_200)] + [i / 8 for i in range(90)]
    shown = []
    for value in typed:
        spin.setValue(value)
        shown.append(spin.value())
    assert shown == [SAMPLING.clamp(value) for value in typed]
