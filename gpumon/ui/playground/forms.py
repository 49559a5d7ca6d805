"""The playground's forms: each button turns the fields into an Action and emits it.

Forms never run anything: ``actionRequested(Action)`` goes to the engine queue. Device
fields are EDITABLE combos filled from the engine's devices, so a person can also type a
wrong device (``gpu``, ``cuda:-1``, ``cuda:7``) and read torch's own answer. Only what the
Action cannot represent (a shape that is not numbers) and values that are not a list of
numbers are caught here: the sentence shows in ``formError``, under the field, across the
form. Enter in a field runs its form (``form_keys.py``); the Move form shows only the field
its method takes; device combos also offer the NVML GPUs torch does not see, marked "not
available here", so that picking one shows torch's real error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtGui import QAction, QColor, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpumon.device_ids import cuda_index
from gpumon.i18n import N_, tr
from gpumon.playground.data import actions as act
from gpumon.playground.data.device_offer import is_unavailable
from gpumon.playground.data.devices import DeviceOption
from gpumon.playground.data.form_text import parse_shape, ref_for
from gpumon.playground.data.outcome import WorkspaceEntry
from gpumon.playground.data.values import ValuesError, parse_values
from gpumon.ui.playground.form_keys import (
    AS_IS_SHOWN,
    NOTE_SEPARATOR,
    EnterRuns,
    FieldErrors,
    FieldProblem,
    device_text,
    modifier,
)
from gpumon.ui.playground.reflow import FormGrid
from gpumon.ui.widgets.combo_fit import FitToItems

DEFAULT_DTYPE = N_("(default)")  # the dtype combo's first item: no dtype argument
OPS: tuple[tuple[str, act.ComputeOp], ...] = (
    ("a ** 2", "pow"), ("a + b", "add"), ("a * b", "mul"), ("a @ b", "matmul"),
    ("a.sum()", "sum"))
MOVES: tuple[tuple[str, act.MoveHow], ...] = (
    (".to(device)", "to"), (".cuda(index)", "cuda"), (".cuda()", "cuda"), (".cpu()", "cpu"))


def _fill_code(kind: str) -> str:
    """The fill button's text: the call it makes (code, the same in every language)."""
    return f"torch.{kind}(shape)"


def _combo(name: str, editable: bool = False, items: Sequence[str] = ()) -> QComboBox:
    combo = QComboBox()
    combo.setObjectName(name)
    combo.setEditable(editable)
    combo.addItems(list(items))
    combo.setMinimumContentsLength(7)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    return combo


def _edit(name: str, text: str, placeholder: str = "") -> QLineEdit:
    edit = QLineEdit(text)
    edit.setObjectName(name)
    edit.setPlaceholderText(placeholder)
    return edit


def _spin(name: str, value: int, low: int = 0, high: int = 4096) -> QSpinBox:
    spin = QSpinBox()
    spin.setObjectName(name)
    spin.setRange(low, high)
    spin.setValue(value)
    return spin


class ActionForms(QTabWidget):
    """Tabs Create / Move / Compute / Model / Queries; emits ``actionRequested(Action)``."""

    actionRequested = Signal(object)  # Action
    codeRequested = Signal(str)  # a button's code, to edit in the code line (right-click)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("actionForms")
        self.setAccessibleName(tr("Playground actions"))
        self.buttons: list[QPushButton] = []
        self.grids: list[FormGrid] = []  # each tab's form
        self._busy = False
        self._busy_color = "#8a5a00"
        self.device_combos: list[QComboBox] = []
        self._tensor_combos: list[QComboBox] = []
        self._model_combos: list[QComboBox] = []
        self._any_combos: list[QComboBox] = []
        self._modifier_combos: list[QComboBox] = []
        self._offered: tuple[list[str], list[str]] = ([], [])  # names in the combos now
        self.error_label = QLabel()
        self.error_label.setObjectName("formError")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #c62828;")
        self.error_label.hide()
        self._errors = FieldErrors(self.error_label)
        self._enter = EnterRuns(self)
        self._build_create()
        self._build_move()
        self._build_compute()
        self._build_model()
        self._build_queries()

    # -- public --------------------------------------------------------------------------
    def set_devices(self, options: Sequence[DeviceOption]) -> None:
        """Offer these devices in every device combo, keeping what each one shows."""
        for combo in self.device_combos:
            text = combo.currentText()
            combo.clear()
            for opt in options:
                note = NOTE_SEPARATOR + tr("not available here") if is_unavailable(opt) else ""
                combo.addItem(opt.name + note)
                combo.setItemData(combo.count() - 1, opt.label, 3)  # ToolTipRole
            combo.setCurrentIndex(-1)
            combo.setEditText(text)
        mods = [tr(AS_IS_SHOWN), ".cpu()"]
        cudas = [o.name for o in options if cuda_index(o.name) is not None]
        if cudas:
            mods += [".cuda()"] + [f".cuda({cuda_index(c)})" for c in cudas]
        mods += [f".to('{o.name}')" for o in options if o.name != "cpu"]
        if not cudas:
            mods += [".cuda()", ".to('cuda:0')"]  # to see what a CPU-only torch says
        for combo in self._modifier_combos:
            text = combo.currentText()
            combo.clear()
            combo.addItems(mods)
            combo.setCurrentText(text if text in mods else mods[0])

    def set_workspace(self, entries: Sequence[WorkspaceEntry]) -> None:
        """Offer the workspace's names in the name combos (tensors, models, or any)."""
        tensors = [e.name for e in entries if e.kind == "tensor"]
        models = [e.name for e in entries if e.kind == "model"]
        if (tensors, models) == self._offered:  # a run that made no tensor: combos as they are
            return
        self._offered = (tensors, models)
        for combos, names in ((self._tensor_combos, tensors), (self._model_combos, models),
                              (self._any_combos, tensors + models)):
            for combo in combos:
                text = combo.currentText()
                combo.clear()
                combo.addItems(names)
                combo.setEditText(text)

    def use_name(self, name: str, kind: str) -> None:
        """Put a workspace name into the fields that take one of its kind."""
        combos = [*self._any_combos]
        combos += self._tensor_combos if kind == "tensor" else self._model_combos
        for combo in combos:
            combo.setEditText(name)

    def set_busy(self, busy: bool) -> None:
        """Mark the run buttons busy, in italics and amber (they stay enabled: a click
        queues the action). A palette with only ButtonText set, not a style sheet, so the
        buttons keep following the theme."""
        self._busy = busy
        for button in self.buttons:
            button.setProperty("busy", busy)
            font = button.font()
            font.setItalic(busy)
            button.setFont(font)
            palette = QPalette()  # nothing set: every colour comes from the parent
            if busy:
                palette.setColor(QPalette.ColorRole.ButtonText, QColor(self._busy_color))
            button.setPalette(palette)

    def set_busy_color(self, color: str) -> None:
        """The busy buttons' text colour (the page picks it for a light or dark theme)."""
        self._busy_color = color
        if self._busy:
            self.set_busy(True)

    def set_runnable(self, runnable: bool) -> None:
        for button in self.buttons:
            button.setEnabled(runnable)

    # -- building ------------------------------------------------------------------------
    def _button(self, name: str, text: str, make: Callable[[], act.Action], tip: str = ""
                ) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setAccessibleName(text)
        button.setToolTip(tip or text)
        button.setProperty("busy", False)
        button.clicked.connect(lambda: self._emit(make))
        edit = QAction(tr("Edit as code"), button)  # the form's code, sent to the code line
        edit.triggered.connect(lambda: self._emit(make, self.codeRequested))
        button.addAction(edit)
        button.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.buttons.append(button)
        return button

    def _emit(self, make: Callable[[], act.Action], code: SignalInstance | None = None) -> None:
        try:
            action = make()
        except FieldProblem as exc:
            self._errors.show(str(exc), exc.field)
            return
        except ValueError as exc:
            self._errors.show(str(exc), None)
            return
        self._errors.hide()
        if code is not None:
            code.emit(action.code())
        else:
            self.actionRequested.emit(action)

    def _device(self, name: str, default: str = "") -> QComboBox:
        """An editable device combo; empty text means torch's default (no device argument)."""
        combo = _combo(name, editable=True, items=["cpu"])
        FitToItems(combo)  # "cuda:0 — not available here" whole, at any zoom (combo_fit.py)
        combo.setCurrentIndex(-1)
        combo.setEditText(default)
        line = combo.lineEdit()
        if line is not None:
            line.setPlaceholderText(tr("default"))
        combo.setToolTip(tr("Pick a device or type one (try 'gpu' or 'cuda:7' to see the "
                            "error); empty: torch's default, the cpu"))
        combo.setAccessibleName(tr("device"))
        self.device_combos.append(combo)
        return combo

    def _names(self, name: str, kind: str, default: str) -> QComboBox:
        combo = _combo(name, editable=True)
        combo.setEditText(default)
        combo.setAccessibleName({"tensor": tr("tensor name"), "model": tr("model name")}
                                .get(kind, tr("name")))
        {"tensor": self._tensor_combos, "model": self._model_combos,
         "any": self._any_combos}[kind].append(combo)
        return combo

    def _modifier(self, name: str) -> QComboBox:
        combo = _combo(name, items=[tr(AS_IS_SHOWN), ".cpu()"])
        combo.setToolTip(tr("Move the operand on the fly, as in y + x.cpu(); the name keeps "
                            "its value"))
        self._modifier_combos.append(combo)
        return combo

    def _page(self, title: str, rows: Sequence[Sequence[QWidget | str]],
              enter: dict[QWidget, QPushButton] | None = None) -> FormGrid:
        """A tab of ``rows`` in a grid (an empty row is kept for an error message), side by
        side or one field a line as the column's width allows (``reflow.py``); Enter in a
        field presses the button on its row or below (``enter`` names exceptions)."""
        page = QWidget()
        grid = FormGrid([[QLabel(c) if isinstance(c, str) else c for c in row] for row in rows])
        self.grids.append(grid)
        outer = QVBoxLayout(page)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addLayout(grid)
        outer.addStretch(1)
        self.addTab(page, title)
        self._enter.wire(rows, enter)
        return grid

    def _build_create(self) -> None:
        self.name_edit = _edit("nameEdit", "x")
        self.dtype_combo = _combo("dtypeCombo", items=[tr(DEFAULT_DTYPE), *act.DTYPES])
        self.device_combo = self._device("deviceCombo")
        self.values_edit = _edit("valuesEdit", "[1, 2, 3]", "[[1, 2], [3, 4]]")
        self.fill_combo = _combo("fillCombo", items=list(act.FILL_KINDS))
        self.shape_edit = _edit("shapeEdit", "2, 3", "2, 3")

        def dtype() -> str | None:
            text = self.dtype_combo.currentText()
            return None if text in (DEFAULT_DTYPE, tr(DEFAULT_DTYPE)) else text

        def device() -> str | None:
            return device_text(self.device_combo) or None

        def values() -> str:
            text = self.values_edit.text()
            try:
                parse_values(text)
            except ValuesError as exc:
                raise FieldProblem(self.values_edit, str(exc)) from None
            return text

        def shape() -> tuple[int, ...]:
            try:
                return parse_shape(self.shape_edit.text())
            except ValueError as exc:
                raise FieldProblem(self.shape_edit, str(exc)) from None

        create = self._button(
            "runCreateButton", "torch.tensor(values)",
            lambda: act.CreateTensor(self.name_edit.text().strip(), values(), dtype(),
                                   device()))
        fill = self._button(
            "runFillButton", "torch.zeros(shape)",
            lambda: act.CreateFilled(self.name_edit.text().strip(),
                                   self.fill_combo.currentText(),  # type: ignore[arg-type]
                                   shape(), dtype(), device()))
        self.fill_combo.currentTextChanged.connect(
            lambda kind: fill.setText(_fill_code(kind)))
        grid = self._page(tr("Create"), [
            [tr("name"), self.name_edit, tr("device"), self.device_combo],
            [tr("values"), self.values_edit, tr("dtype"), self.dtype_combo],
            [],  # an error about the values shows here
            [tr("fill"), self.fill_combo, tr("shape"), self.shape_edit],
            [],  # an error about the shape shows here
            ["", create, "", fill],
        ], enter={self.fill_combo: fill, self.shape_edit: fill})
        self._errors.reserve(self.values_edit, grid, 2)
        self._errors.reserve(self.shape_edit, grid, 4)

    def _build_move(self) -> None:
        self.move_source = self._names("moveSourceCombo", "any", "x")
        self.move_how = _combo("moveHowCombo", items=[t for t, _ in MOVES])
        self.move_device = self._device("moveDeviceCombo", "cpu")
        self.move_index = _spin("moveIndexSpin", 0, 0, 63)
        self.move_dest = _edit("moveDestEdit", "", tr("same name"))

        def make() -> act.Move:
            label = self.move_how.currentText()
            how = dict(MOVES)[label]
            return act.Move(self.move_source.currentText().strip(), how,
                          device_text(self.move_device) if how == "to" else None,
                          self.move_index.value() if label == ".cuda(index)" else None,
                          self.move_dest.text().strip() or None)

        move = self._button("runMoveButton", tr("move"), make,
                            tr("dest = source.to(device) / .cuda(i) / .cpu(); says if it "
                               "copied"))
        device_label, index_label = QLabel(tr("device")), QLabel(tr("index"))

        def show_used_fields(label: str) -> None:
            """Only the field the chosen method takes: .to(device) or .cuda(index)."""
            for widget, used in ((device_label, label == ".to(device)"),
                                 (self.move_device, label == ".to(device)"),
                                 (index_label, label == ".cuda(index)"),
                                 (self.move_index, label == ".cuda(index)")):
                widget.setVisible(used)

        self.move_how.currentTextChanged.connect(show_used_fields)
        self._page(tr("Move"), [
            [tr("source"), self.move_source, tr("how"), self.move_how],
            [device_label, self.move_device, index_label, self.move_index],
            [tr("into"), self.move_dest, "", move],
        ])
        show_used_fields(self.move_how.currentText())

    def _build_compute(self) -> None:
        self.compute_result = _edit("computeResultEdit", "y")
        self.compute_op = _combo("computeOpCombo", items=[t for t, _ in OPS])
        self.compute_a = self._names("computeACombo", "tensor", "x")
        self.compute_a_mod = self._modifier("computeAModCombo")
        self.compute_b = self._names("computeBCombo", "tensor", "x")
        self.compute_b_mod = self._modifier("computeBModCombo")

        def make() -> act.Compute:
            op = dict(OPS)[self.compute_op.currentText()]
            a = ref_for(self.compute_a.currentText().strip(), modifier(self.compute_a_mod))
            b = ref_for(self.compute_b.currentText().strip(), modifier(self.compute_b_mod))
            return act.Compute(self.compute_result.text().strip(), op, a,
                             None if op in ("pow", "sum") else b)

        run = self._button("runComputeButton", tr("compute"), make,
                           tr("y = a ** 2, a + b, a * b, a @ b, a.sum(); results stay on "
                              "the inputs' device"))
        self._page(tr("Compute"), [
            [tr("result"), self.compute_result, tr("op"), self.compute_op],
            ["a", self.compute_a, "", self.compute_a_mod],
            ["b", self.compute_b, "", self.compute_b_mod],
            ["", "", "", run],
        ])

    def _build_model(self) -> None:
        self.model_name = self._names("modelNameCombo", "model", "net")
        self.model_in = _spin("modelInSpin", 3, 1)
        self.model_out = _spin("modelOutSpin", 1, 1)
        self.model_bias = QCheckBox(tr("bias"))
        self.model_bias.setObjectName("modelBiasCheck")
        self.model_bias.setChecked(True)
        self.model_device = self._device("modelDeviceCombo")
        self.call_result = _edit("callResultEdit", "out")
        self.call_input = self._names("callInputCombo", "tensor", "x")
        self.call_mod = self._modifier("callInputModCombo")

        def name() -> str:
            return self.model_name.currentText().strip()

        create = self._button(
            "runModelButton", "nn.Linear",
            lambda: act.CreateModel(name(), self.model_in.value(), self.model_out.value(),
                                  self.model_bias.isChecked(),
                                  device_text(self.model_device) or None))
        move = self._button(
            "runModelMoveButton", "net.to(device)",
            lambda: act.Move(name(), "to", device_text(self.model_device) or "cpu"))
        params = self._button("runParamsButton", tr("parameters' devices"),
                              lambda: act.ModelParameters(name()))
        call = self._button(
            "runCallButton", tr("call net(input)"),
            lambda: act.CallModel(self.call_result.text().strip(), name(),
                                ref_for(self.call_input.currentText().strip(),
                                        modifier(self.call_mod))))
        self._page(tr("Model"), [
            [tr("model"), self.model_name, tr("in"), self.model_in, tr("out"), self.model_out],
            [tr("device"), self.model_device, "", self.model_bias, "", create],
            ["", move, "", params],
            [tr("input"), self.call_input, "", self.call_mod],
            [tr("result"), self.call_result, "", call],
        ])

    def _build_queries(self) -> None:
        self.query_index = _spin("queryIndexSpin", 0, 0, 63)
        self.query_index.setPrefix("i = ")
        self.query_name = self._names("queryNameCombo", "any", "x")
        b = self._button
        self._page(tr("Queries"), [
            [b("runIsAvailableButton", "is_available()", act.IsAvailable),
             b("runDeviceCountButton", "device_count()", act.DeviceCount),
             b("runCurrentDeviceButton", "current_device()", act.CurrentDevice)],
            [b("runDeviceNameButton", "get_device_name(i)",
               lambda: act.DeviceName(self.query_index.value())),
             b("runDevicePropsButton", "get_device_properties(i)",
               lambda: act.DeviceProperties(self.query_index.value())),
             self.query_index],
            [b("runTensorDeviceButton", "name.device",
               lambda: act.TensorDevice(self.query_name.currentText().strip())),
             b("runDeleteButton", "del name",
               lambda: act.Delete(self.query_name.currentText().strip())),
             self.query_name],
            [b("runVersionsButton", tr("versions"), act.Versions),
             b("runEmptyCacheButton", "empty_cache()", act.EmptyCache,
               tr("torch.cuda.empty_cache(): give unused cached GPU memory back to the "
                  "driver"))],
        ])
