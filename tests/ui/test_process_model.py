"""The process model merges by (gpu, pid): inserts, removes and dataChanged, never a reset."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from qt_fixtures import hidden_or_minimised, settled

from gpumon.telemetry.model.types import GpuProcess, ProcessType
from gpumon.ui.monitor.process.table import SELF_SUFFIX, ProcessModel, ProcessTable
from tests.qt_fixtures import back_in_sight, first_of_two_tabs, out_of_sight

MIB = 1024**2


def proc(gpu: int, pid: int, mib: int = 100, **kw: object) -> GpuProcess:
    return GpuProcess(gpu, pid, ProcessType.COMPUTE, mib * MIB, name=f"p{pid}", user="u",
                      command=f"python p{pid}.py", **kw)  # type: ignore[arg-type]


def rows(model: ProcessModel) -> list[tuple[int, int]]:
    return [(p.gpu_index, p.pid) for p in model.processes]


def test_model_passes_qtmodeltester(qtmodeltester):
    model = ProcessModel()
    model.merge([proc(0, 1), proc(0, 2), proc(1, 3, is_self=True),
                 GpuProcess(1, 4, ProcessType.GRAPHICS)])
    qtmodeltester.check(model, force_py=True)


def test_merge_inserts_removes_and_changes_without_reset(qtbot):
    model = ProcessModel()
    model.merge([proc(0, 1), proc(0, 2), proc(0, 3), proc(1, 4)])
    inserted: list[tuple[int, int]] = []
    removed: list[tuple[int, int]] = []
    changed: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, a, b: inserted.append((a, b)))
    model.rowsRemoved.connect(lambda _p, a, b: removed.append((a, b)))
    model.dataChanged.connect(lambda tl, br, _r: changed.append((tl.row(), br.row())))
    with qtbot.assertNotEmitted(model.modelReset), qtbot.assertNotEmitted(model.layoutChanged):
        model.merge([proc(0, 1), proc(0, 3, mib=500), proc(1, 4), proc(2, 5), proc(2, 6)])
    assert removed == [(1, 1)]  # pid 2
    assert changed == [(1, 1)]  # pid 3, now in row 1
    assert inserted == [(3, 4)]  # pids 5 and 6 at the end
    assert rows(model) == [(0, 1), (0, 3), (1, 4), (2, 5), (2, 6)]
    with qtbot.assertNotEmitted(model.modelReset):
        model.merge([])
    assert model.rowCount() == 0


def test_same_pid_on_two_gpus_is_two_rows():
    model = ProcessModel()
    model.merge([proc(0, 7), proc(1, 7)])
    assert rows(model) == [(0, 7), (1, 7)]


def test_this_app_is_bold_and_labelled():
    model = ProcessModel()
    model.merge([proc(0, 1), proc(0, 2, is_self=True)])
    name = model.index(1, 3)
    assert model.data(name).endswith(SELF_SUFFIX)
    assert model.data(name, Qt.ItemDataRole.FontRole).bold()
    assert model.data(model.index(0, 3, ), Qt.ItemDataRole.FontRole) is None


def test_missing_fields_show_na():
    model = ProcessModel()
    model.merge([GpuProcess(0, 9, ProcessType.GRAPHICS)])
    texts = [model.data(model.index(0, c)) for c in range(model.columnCount())]
    assert texts == ["0", "9", "G", "N/A", "N/A", "N/A"] + ["N/A"] * 7 + ["", "N/A"]


def test_selection_and_sort_survive_merges(qtbot):
    table = ProcessTable()
    qtbot.addWidget(table)
    model = table.process_model
    model.merge([proc(0, 1, 300), proc(0, 2, 200), proc(1, 3, 100)])
    table.sortByColumn(5, Qt.SortOrder.DescendingOrder)  # GPU memory, largest first
    target = next(r for r in range(3)
                  if table.proxy.index(r, 1).data() == "2")
    table.selectionModel().select(
        table.proxy.index(target, 0),
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
    assert table.selected_keys() == [(0, 2)]
    with qtbot.assertNotEmitted(model.modelReset):
        # pid 1 goes, pid 2 grows to the top, pid 4 arrives
        model.merge([dataclasses.replace(proc(0, 2), gpu_mem_bytes=900 * MIB), proc(1, 3, 100),
                     proc(1, 4, 50)])
    assert table.selected_keys() == [(0, 2)]
    assert table.proxy.index(0, 1).data() == "2"  # re-sorted: the largest first
    assert [table.proxy.index(r, 1).data() for r in range(3)] == ["2", "3", "4"]


def test_only_changed_cells_are_signalled_and_columns_fit_only_when_widths_change(qtbot):
    model = ProcessModel()
    resized: list[list[int]] = []
    model.widthsChanged.connect(resized.append)
    model.merge([proc(0, 1, 100), proc(0, 2, 200)])
    assert resized == [list(range(len(model.titles)))]  # the first rows: every column
    cells: list[tuple[int, int, int, int]] = []
    model.dataChanged.connect(
        lambda tl, br, _r: cells.append((tl.row(), tl.column(), br.row(), br.column())))
    model.merge([proc(0, 1, 100), proc(0, 2, 300)])  # 200 -> 300 MiB: same text length
    memory = model.titles.index("GPU memory")
    assert cells == [(1, memory, 1, memory)] and len(resized) == 1
    longer = dataclasses.replace(proc(0, 2, 300), name="a-much-longer-name")
    model.merge([proc(0, 1, 100), longer])
    assert resized[-1] == [model.titles.index("Process name")]
    model.merge([proc(0, 1, 100), longer])
    assert len(resized) == 2  # nothing changed: nothing measured


def test_process_table_measures_columns_only_when_told(qtbot):
    table = ProcessTable()
    qtbot.addWidget(table)
    table.resize(900, 300)
    table.show()
    table.process_model.merge([proc(0, 1), proc(0, 2)])
    calls: list[int] = []
    model = table.process_model
    original = model.data
    model.data = lambda index, role=Qt.ItemDataRole.DisplayRole: (  # type: ignore[method-assign]
        calls.append(role), original(index, role))[1]
    settled(lambda: len(calls))  # the first paint, not counted below
    calls.clear()
    for mib in (150, 160, 170, 180):  # the same text length: no column is measured
        asked = len(calls)
        model.merge([proc(0, 1, mib), proc(0, 2)])
        qtbot.waitUntil(  # the changed cell is painted
            lambda n=asked: Qt.ItemDataRole.DisplayRole in calls[n:], timeout=3000)
    # Painting the one changed cell asks it a handful of roles (36 calls for the 4 merges
    # here); a ResizeToContents header also asked every role of every cell (420).
    assert Qt.ItemDataRole.DisplayRole in calls  # the changed cell was painted
    assert len(calls) < 120
    assert table.horizontalHeader().sectionResizeMode(0).name == "Interactive"


def test_memory_sort_orders_sizes_across_2_and_4_gib():
    """PySide turns ints below and above 2**31 into different C++ types; the order must hold."""
    gib = 1024**3
    sizes = [180 * MIB, 40 * gib + 50 * MIB, 2 * gib - 1, 2 * gib, 2 * gib + 1, 4 * gib - 1,
             4 * gib, 4 * gib + 1, 3 * gib, 0]
    table = ProcessTable()
    table.process_model.merge([GpuProcess(0, pid, ProcessType.COMPUTE, size)
                               for pid, size in enumerate(sizes, start=1)]
                              + [GpuProcess(0, 99, ProcessType.COMPUTE, None)])
    for order, expected in ((Qt.SortOrder.DescendingOrder, sorted(sizes, reverse=True)),
                            (Qt.SortOrder.AscendingOrder, sorted(sizes))):
        table.sortByColumn(5, order)
        shown = [table.process_model.processes[table.proxy.mapToSource(
            table.proxy.index(r, 0)).row()].gpu_mem_bytes for r in range(table.proxy.rowCount())]
        known = [s for s in shown if s is not None]
        assert known == expected, order
        assert shown.index(None) == (len(shown) - 1 if order == Qt.SortOrder.DescendingOrder
                                     else 0)


def test_pid_and_gpu_sort_numerically_across_2_31():
    table = ProcessTable()
    pids = [5, 2**31 + 7, 2**31 - 1, 70000, 2**32 + 1]
    table.process_model.merge([GpuProcess(i % 2, pid, ProcessType.COMPUTE, MIB)
                               for i, pid in enumerate(pids)])
    table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    shown = [table.process_model.processes[table.proxy.mapToSource(
        table.proxy.index(r, 0)).row()].pid for r in range(table.proxy.rowCount())]
    assert shown == sorted(pids)


@pytest.mark.parametrize("how", ["tab", "minimised"])
def test_an_unseen_process_table_merges_only_the_latest_list_when_seen(qtbot, how):
    table = ProcessTable()
    tabs = first_of_two_tabs(qtbot, table)
    model = table.process_model
    table.show_processes([proc(0, 1), proc(0, 2)], 100.0)
    assert rows(model) == [(0, 1), (0, 2)]
    out_of_sight(tabs, how)
    qtbot.waitUntil(lambda: hidden_or_minimised(table), timeout=3000)
    signals = (model.rowsInserted, model.rowsRemoved, model.dataChanged, model.modelReset)
    with qtbot.assertNotEmitted(signals[0]), qtbot.assertNotEmitted(signals[1]), \
            qtbot.assertNotEmitted(signals[2]), qtbot.assertNotEmitted(signals[3]):
        for t in range(5):  # processes come and go while no one sees the table
            table.show_processes([proc(0, 2, 100 + t), proc(1, 10 + t)], 101.0 + t)
    assert rows(model) == [(0, 1), (0, 2)]
    back_in_sight(tabs, how)
    qtbot.waitUntil(lambda: rows(model) == [(0, 2), (1, 14)], timeout=3000)
    assert model.processes[0].gpu_mem_bytes == 104 * MIB


def test_a_tick_formats_only_the_rows_that_changed(monkeypatch):
    """Each row's texts are kept from the merge that made them: a tick formats the rows that
    changed, not every cell of every row twice (30 processes: most of the table's tick)."""
    from gpumon.ui.monitor.process import table

    model = ProcessModel()
    procs = [proc(0, pid) for pid in range(1, 31)]
    model.merge(procs, now_s=1000.0)
    formatted: list[int] = []
    real = table.texts_of

    def counting(p, now_s=0.0):
        formatted.append(p.pid)
        return real(p, now_s)

    monkeypatch.setattr(table, "texts_of", counting)
    widths: list[list[int]] = []
    model.widthsChanged.connect(widths.append)
    changed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda a, b: changed.append((a.row(), b.row())))
    model.merge(procs, now_s=1000.5)
    assert formatted == [] and changed == []
    renamed = [*procs[:4], dataclasses.replace(procs[4], name="a-longer-name"), *procs[5:]]
    model.merge(renamed, now_s=1001.0)
    assert formatted == [5] and changed == [(4, 4)]
    name = table.TITLES.index("Process name")
    assert model.data(model.index(4, name)) == "a-longer-name"
    assert widths == [[name]]  # the longest name is longer now
