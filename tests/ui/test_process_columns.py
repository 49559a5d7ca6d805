"""The process table's per-process columns: text, numeric sorting, the filter box, and the
hidden columns that the settings remember."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from gpumon.telemetry.model.types import GpuProcess, ProcessType
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.monitor.process.fields import format_run_time, matches
from gpumon.ui.monitor.process.pane import ProcessPane
from gpumon.ui.monitor.process.table import TITLES, ProcessModel
from gpumon.ui.window.main_window import MainWindow
from gpumon.ui.window.settings import Settings

MIB = 1024**2


def proc(gpu: int, pid: int, **kw: object) -> GpuProcess:
    return GpuProcess(gpu, pid, ProcessType.COMPUTE, 100 * MIB, name=f"p{pid}", user="ann",
                      command=f"python train{pid}.py", **kw)  # type: ignore[arg-type]


def test_run_time_as_ps_writes_it() -> None:
    assert [format_run_time(s) for s in (None, -3, 5, 65, 3600 + 62, 2 * 86400 + 3661)] == [
        "N/A", "00:00", "00:05", "01:05", "1:01:02", "2-01:01:01"]


def test_filter_words() -> None:
    p = proc(1, 77, container="docker:2403ccfe427f")
    assert matches(p, "") and matches(p, "ANN") and matches(p, "train77")
    assert matches(p, "docker gpu:1") and matches(p, "gpu=1") and matches(p, "77")
    assert not matches(p, "gpu:0") and not matches(p, "gpu:x") and not matches(p, "bob")
    assert not matches(GpuProcess(0, 5, ProcessType.GRAPHICS), "ann")  # unknown user


def test_values_sort_as_numbers_and_the_filter_keeps_matching_rows(qtbot) -> None:
    pane = ProcessPane()
    qtbot.addWidget(pane)
    table, model = pane.table, pane.table.process_model
    model.merge([proc(0, 1, sm_util_pct=9.0, started_s=1000.0, cpu_pct=150.0,
                      host_rss_bytes=2 * 1024**3, container="slurm:4242"),
                 proc(0, 2, sm_util_pct=10.0, started_s=1990.0),
                 proc(1, 3, container="docker:2403ccfe427f")], now_s=2000.0)
    sm = TITLES.index("SM %")
    run = TITLES.index("Run time")
    texts = {model.data(model.index(r, 1)): [model.data(model.index(r, c))
                                             for c in range(len(TITLES))] for r in range(3)}
    assert texts["1"][sm] == "9 %" and texts["1"][run] == "16:40"
    assert texts["1"][TITLES.index("CPU %")] == "150 %"
    assert texts["1"][TITLES.index("Host memory")] == "2.00 GiB"
    assert texts["1"][TITLES.index("Container / job")] == "slurm:4242"
    assert texts["3"][sm] == "N/A" and texts["3"][run] == "N/A"

    table.sortByColumn(sm, Qt.SortOrder.DescendingOrder)
    assert [table.proxy.index(r, 1).data() for r in range(3)] == ["2", "1", "3"]  # 10 > 9
    table.sortByColumn(run, Qt.SortOrder.DescendingOrder)
    assert [table.proxy.index(r, 1).data() for r in range(3)] == ["1", "2", "3"]

    qtbot.keyClicks(pane.filter_edit, "docker")
    assert [table.proxy.index(r, 1).data() for r in range(table.proxy.rowCount())] == ["3"]
    pane.filter_edit.setText("gpu:0 train")
    assert table.proxy.rowCount() == 2
    model.merge([proc(0, 1), proc(0, 2), proc(0, 5)], now_s=2001.0)  # rows come and go
    assert sorted(table.proxy.index(r, 1).data() for r in range(3)) == ["1", "2", "5"]
    pane.filter_edit.clear()
    assert table.proxy.rowCount() == 3


def test_hidden_columns_are_remembered(qtbot, tmp_path: Path) -> None:
    settings = Settings.ini(tmp_path / "gpumon.ini")

    def window() -> MainWindow:
        w = MainWindow(lambda: SimulatedSource(1, seed=1), 0.1, settings=settings)
        qtbot.addWidget(w)
        return w

    first = window()
    table = first.process_table
    assert table.hidden_columns() == ["Encoder %", "Decoder %"]  # the default
    menu = table.header_menu()
    actions = {a.text(): a for a in menu.actions()}
    actions["Container / job"].setChecked(False)
    actions["Encoder %"].setChecked(True)
    assert settings.hidden_process_columns == ["Decoder %", "Container / job"]
    first.close()
    settings.sync()

    again = window()
    assert again.process_table.hidden_columns() == ["Decoder %", "Container / job"]
    again.close()


def test_the_last_visible_column_stays(qtbot) -> None:
    pane = ProcessPane()
    qtbot.addWidget(pane)
    pane.table.set_hidden_columns(TITLES)
    assert pane.table.hidden_columns() == [t for t in TITLES if t != "PID"]
    (pid,) = [a for a in pane.table.header_menu().actions() if a.isChecked()]
    assert pid.text() == "PID" and not pid.isEnabled()


def test_a_running_clock_changes_only_the_run_time_cell(qtbot) -> None:
    model = ProcessModel()
    model.merge([proc(0, 1, started_s=100.0), proc(0, 2)], now_s=200.0)
    cells: list[tuple[int, int, int, int]] = []
    model.dataChanged.connect(
        lambda tl, br, _r: cells.append((tl.row(), tl.column(), br.row(), br.column())))
    model.merge([proc(0, 1, started_s=100.0), proc(0, 2)], now_s=201.0)
    run = TITLES.index("Run time")
    assert cells == [(0, run, 0, run)]
    assert model.data(model.index(0, run)) == "01:41"
