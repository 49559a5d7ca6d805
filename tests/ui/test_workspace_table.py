"""The workspace table merges each page by name: only rows that changed are touched, and the
names the kernel did not send are counted under it."""

from __future__ import annotations

from gpumon.playground.data.outcome import WorkspaceEntry, WorkspacePage
from gpumon.ui.playground.workspace_table import WorkspaceView, name_edits


def entry(name: str, n: int = 1, device: str = "cpu") -> WorkspaceEntry:
    return WorkspaceEntry(name, "tensor", (n,), "float32", device, 4 * n)


def page(entries: list[WorkspaceEntry], total: int | None = None) -> WorkspacePage:
    return WorkspacePage(tuple(entries), len(entries) if total is None else total)


def test_name_edits_last_first() -> None:
    assert name_edits("abc", "abc") == []
    assert name_edits("abc", "abcd") == [("insert", 3, 3, 3, 4)]
    assert name_edits("abcd", "abd") == [("delete", 2, 3, 2, 2)]
    assert name_edits("abcd", "xbde") == [("insert", 4, 4, 3, 4), ("delete", 2, 3, 2, 2),
                                          ("replace", 0, 1, 0, 1)]
    assert name_edits("", "ab") == [("insert", 0, 0, 0, 2)]


def test_only_changed_rows_are_touched(qtbot, qtmodeltester) -> None:
    view = WorkspaceView()
    qtbot.addWidget(view)
    table, model = view.table, view.table.workspace
    qtmodeltester.check(model)
    entries = [entry(f"t{i}") for i in range(2000)]
    view.set_page(page(entries, 200_000))
    assert table.rowCount() == 2000 and model.rows_changed == 2000
    assert table.row_texts()[1] == ("t1", "tensor", "(1,)", "float32", "cpu", "4 B")
    assert view.more_label.text() == "… and 198,000 more names"
    assert not view.more_label.isHidden()

    removed: list[tuple[int, int]] = []
    inserted: list[tuple[int, int]] = []
    changed: list[tuple[int, int]] = []
    model.rowsRemoved.connect(lambda _p, a, b: removed.append((a, b)))
    model.rowsInserted.connect(lambda _p, a, b: inserted.append((a, b)))
    model.dataChanged.connect(lambda a, b, _r=(): changed.append((a.row(), b.row())))
    view.set_page(page(list(entries), 200_000))  # the same workspace again: nothing moves
    assert (removed, inserted, changed, model.rows_changed) == ([], [], [], 2000)

    entries[7] = entry("t7", 5, "meta")  # one value changed
    del entries[100]  # one deleted
    entries.append(entry("new"))  # one made
    view.set_page(page(entries, 2000))
    # applied last first: the new name goes in after t1999, then t100 goes
    assert removed == [(100, 100)] and inserted == [(2000, 2000)] and changed == [(7, 7)]
    assert model.rows_changed == 2002  # the new row and the changed one
    assert table.row_texts()[7] == ("t7", "tensor", "(5,)", "float32", "meta", "20 B")
    assert [e.name for e in table.entries] == [e.name for e in entries]
    assert table.row_texts()[-1][0] == "new" and table.rowCount() == 2000
    assert view.more_label.isHidden()
    qtmodeltester.check(model)

    view.set_page(WorkspacePage())  # the kernel died: an empty workspace
    assert table.rowCount() == 0 and view.more_label.isHidden()


def test_one_more_name_is_singular(qtbot) -> None:
    view = WorkspaceView()
    qtbot.addWidget(view)
    view.set_page(page([entry("a")], 2))
    assert view.more_label.text() == "… and 1 more name"
