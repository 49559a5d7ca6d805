"""An nvidia-smi-style table of all GPUs: one row per GPU, the columns people know, in
nvidia-smi's order, with its Disp.A, Volatile Uncorr. ECC and MIG M. (a count of uncorrected
ECC errors above 0 shows in bold red, with the health's reasons in its tooltip).

While no one can see it (another tab in front, the window minimised or not exposed) the
table keeps only the latest snapshot and shows it when it is seen again."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QWidget

from gpumon.i18n import tr
from gpumon.telemetry.model.health import assess
from gpumon.telemetry.model.readouts import implausible_lines
from gpumon.telemetry.model.types import GpuInfo, GpuSample, Snapshot
from gpumon.text.smi_text import mib, mig_mode, uncorrected_ecc
from gpumon.ui.widgets.table_model import FittedTableView, TitledTableModel
from gpumon.units import NA, format_number

Index = QModelIndex | QPersistentModelIndex
Row = tuple[GpuInfo, GpuSample | None]


def _ok(s: GpuSample | None) -> GpuSample | None:
    return None if s is None or s.lost else s


def _power(r: Row) -> str:
    s = _ok(r[1])
    if s is None:
        return NA
    return f"{format_number(s.power_w, 'W')} / {format_number(s.power_limit_w, 'W')}"


def _memory(r: Row) -> str:
    s = _ok(r[1])
    used = None if s is None else s.mem_used_bytes
    total = s.mem_total_bytes if s is not None and s.mem_total_bytes else r[0].mem_total_bytes
    return f"{mib(used)} / {mib(total)}"


def _name(r: Row) -> str:
    return r[0].name


def _metric(attr: str, unit: str) -> Callable[[Row], str]:
    def get(r: Row) -> str:
        s = _ok(r[1])
        return NA if s is None else format_number(getattr(s, attr), unit)
    return get


def _text(attr: str) -> Callable[[Row], str]:
    def get(r: Row) -> str:
        s = _ok(r[1])
        value = None if s is None else getattr(s, attr)
        return str(value) if value else NA
    return get


def _of_sample(text: Callable[[GpuSample], str]) -> Callable[[Row], str]:
    def get(r: Row) -> str:
        s = _ok(r[1])
        return NA if s is None else text(s)
    return get


def _on_off(attr: str) -> Callable[[Row], str]:
    return _of_sample(lambda s: {None: NA, True: "On", False: "Off"}[getattr(s, attr)])


COLUMNS: tuple[tuple[str, Callable[[Row], str]], ...] = (
    ("GPU", lambda r: str(r[0].index)),
    ("Name", _name),
    ("Persistence-M", _on_off("persistence_mode")),
    ("Bus-Id", lambda r: r[0].pci_bus_id),
    ("Disp.A", _on_off("display_active")),
    ("Volatile Uncorr. ECC", _of_sample(uncorrected_ecc)),
    ("Fan", _metric("fan_pct", "%")),
    ("Temp", _metric("temperature_c", "C")),
    ("Perf", _text("pstate")),
    ("Pwr:Usage/Cap", _power),
    ("Memory-Usage", _memory),
    ("GPU-Util", _metric("gpu_util_pct", "%")),
    ("Compute M.", _text("compute_mode")),
    ("MIG M.", _of_sample(mig_mode)),
)
ECC_COLUMN = 5
ERROR_COLOR = "#c62828"
LOST_TEXT = "ERR! (lost)"


def _ecc_errors(r: Row) -> bool:
    """Uncorrected ECC errors since the driver loaded on this row's GPU."""
    s = _ok(r[1])
    return s is not None and bool(s.ecc_uncorrected_volatile)


def mig_lines(snap: Snapshot) -> dict[int, list[str]]:
    """Per parent GPU, one line per MIG device: ids, name, memory, UUID."""
    lines: dict[int, list[str]] = {}
    for m in snap.migs:
        lines.setdefault(m.gpu_index, []).append(
            f"MIG GI {m.gpu_instance_id} CI {m.compute_instance_id}: {m.name}, "
            f"{mib(m.mem_used_bytes)} / {mib(m.mem_total_bytes)}, {m.uuid}")
    return lines


def _is_lost(r: Row) -> bool:
    return r[1] is not None and r[1].lost


def _row_texts(r: Row) -> list[str]:
    lost = _is_lost(r)
    return [LOST_TEXT if lost and col >= 4 else get(r) for col, (_, get) in enumerate(COLUMNS)]


class SmiTableModel(TitledTableModel):
    """Rows follow the snapshot's GPUs; values change with dataChanged, never a reset,
    unless the set of GPUs itself changes. Cell texts are computed once per snapshot, and
    dataChanged covers only the rows and columns whose text changed. ``widthsChanged``
    names the columns whose longest text changed length, for the view to resize."""

    titles = tuple(title for title, *_ in COLUMNS)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[Row] = []
        self._texts: list[list[str]] = []
        self._migs: dict[int, list[str]] = {}

    def update_snapshot(self, snap: Snapshot) -> None:
        rows = [(g, snap.sample_for(g.index)) for g in snap.gpus]
        texts = [_row_texts(r) for r in rows]
        self._migs = mig_lines(snap)
        for i, (g, _) in enumerate(rows):
            if g.index in self._migs:  # a GPU in MIG mode says how many devices it has
                texts[i][1] += f" · MIG ×{len(self._migs[g.index])}"
        if [r[0] for r in rows] != [r[0] for r in self._rows]:
            self.beginResetModel()
            self._rows, self._texts = rows, texts
            self.endResetModel()
            self._note_widths(texts, every=True)
            return
        old_rows, old_texts = self._rows, self._texts
        self._rows, self._texts = rows, texts
        cells = []
        for i, (new, old) in enumerate(zip(texts, old_texts, strict=True)):
            if _is_lost(rows[i]) != _is_lost(old_rows[i]):
                cells += [(i, 0), (i, len(COLUMNS) - 1)]  # colour and tooltip of the row
            else:
                cells += [(i, c) for c, (a, b) in enumerate(zip(new, old, strict=True))
                          if a != b]
        if cells:  # one signal for the box around the changed cells
            rs, cs = [r for r, _ in cells], [c for _, c in cells]
            self.dataChanged.emit(self.index(min(rs), min(cs)), self.index(max(rs), max(cs)))
        self._note_widths(texts)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        lost = _is_lost(row)
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._texts[index.row()][col]
        ecc = col == ECC_COLUMN and _ecc_errors(row)
        if role == Qt.ItemDataRole.ForegroundRole and (lost or ecc):
            return QColor(ERROR_COLOR)
        if role == Qt.ItemDataRole.FontRole and ecc:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            if lost and row[1] is not None:
                return row[1].message or tr("The GPU is lost.")
            if ecc:
                return "\n".join(assess(row[1]).reasons)
            return "\n".join([row[0].uuid, *self._migs.get(row[0].index, []),
                              *implausible_lines(row[1])])
        if role == Qt.ItemDataRole.TextAlignmentRole and col not in (1, 3):
            return int(Qt.AlignmentFlag.AlignCenter)
        return None


class SmiTable(FittedTableView):
    """The table view; ``model()`` is a SmiTableModel."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("gpuTable")
        self.setAccessibleName(tr("GPU table (nvidia-smi)"))
        self.smi_model = SmiTableModel(self)
        self.setModel(self.smi_model)
        self.watch_widths(self.smi_model)

    def show_snapshot(self, snap: Snapshot) -> None:
        """Show ``snap`` now, or when the table is seen again (``when_seen``)."""
        self.when_seen(lambda: self.smi_model.update_snapshot(snap))
