"""The window on machines over SSH, through a real sshd on 127.0.0.1 (tests/remote/sshd.py):
one machine's whole Monitor with its name in the title and the header; two machines in the
overview, one opened; a stalled machine that turns down while the other keeps updating; and
no ssh child left once the window is closed (checked in the process table)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "remote"))

from sshd import Lab, need_openssh, remote_streams, ssh_clients

from gpumon.ssh.command import SshOptions
from gpumon.ssh.target import parse_target, parse_targets
from gpumon.ui.window.cluster_window import ClusterWindow
from gpumon.ui.window.remote_window import RemoteWindow, remote_window
from gpumon.ui.window.settings import Settings

pytestmark = pytest.mark.slow  # a real sshd and remote gpumons: seconds each


@pytest.fixture
def lab(tmp_path: Path, fake_lib: Path) -> Iterator[Lab]:
    need_openssh()
    made = Lab(tmp_path / "lab", fake_lib, {"lab1": {"FAKENVML_GPUS": "2"},
                                            "lab2": {"FAKENVML_GPUS": "3"}}).start()
    try:
        yield made
    finally:
        made.stop()


def options(lab: Lab) -> SshOptions:
    return SshOptions(config_file=str(lab.config), remote_command=str(lab.gpumon))


def test_one_machine_is_the_whole_monitor_named_for_it(qtbot, lab: Lab) -> None:
    window = RemoteWindow(parse_target("lab1"), options(lab), 0.3)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: len(window.gpu_grid.shown_panels()) == 2, timeout=30000)
    qtbot.waitUntil(lambda: window.windowTitle() == "gpumon — lab1", timeout=10000)
    assert "lab1" in window.header.machine_label.text()
    snap = window.latest_snapshot
    assert snap is not None and snap.machine.source_name == "SSH"
    assert snap.machine.driver_version == "550.54.15"  # the fake driver's, read on lab1
    assert window.smi_table.model().rowCount() >= 2
    assert not window.process_actions.enabled  # those PIDs are lab1's, not this machine's
    qtbot.waitUntil(lambda: window.history.count(0) >= 3, timeout=15000)
    assert ssh_clients(lab)
    window.close()
    assert ssh_clients(lab) == []  # within the close itself
    qtbot.waitUntil(lambda: remote_streams(lab) == [], timeout=10000)


def test_two_machines_in_the_overview_and_one_opened(qtbot, lab: Lab) -> None:
    window = remote_window(parse_targets("lab1,lab2"), options(lab), 0.3, (), Settings.memory())
    assert isinstance(window, ClusterWindow)
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    heatmap = window.overview.heatmap
    qtbot.waitUntil(lambda: [len(h.gpus) for h in heatmap.hosts] == [2, 3]
                    and all(h.up for h in heatmap.hosts), timeout=30000)
    assert window.overview.summary.text().startswith("2 machines, 5 GPUs")
    qtbot.waitUntil(lambda: len(window.gpu_grid.shown_panels()) == 2, timeout=15000)
    row = heatmap.row_height()
    qtbot.mouseClick(heatmap, Qt.MouseButton.LeftButton, pos=QPoint(10, row + row // 2))
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Monitor: lab2"
    qtbot.waitUntil(lambda: len(window.gpu_grid.shown_panels()) == 3, timeout=15000)
    panel = window.gpu_panel(0)
    assert panel is not None and "lab2 · GPU 0" in panel.title.text()

    # lab1's remote gpumon stalls: its row goes down with why; lab2 keeps updating.
    lab1 = [pid for pid in remote_streams(lab)
            if b"FAKENVML_GPUS=2" in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")]
    assert lab1
    for pid in lab1:
        os.kill(pid, signal.SIGSTOP)
    try:
        qtbot.waitUntil(lambda: not heatmap.hosts[0].up, timeout=15000)
        assert "No reading from lab1" in heatmap.hosts[0].message
        assert heatmap.hosts[1].up
        before = window.history.count(0)
        qtbot.waitUntil(lambda: window.history.count(0) > before + 2, timeout=15000)
    finally:
        for pid in lab1:
            os.kill(pid, signal.SIGCONT)
    qtbot.waitUntil(lambda: heatmap.hosts[0].up, timeout=15000)
    window.close()
    assert ssh_clients(lab) == []
    qtbot.waitUntil(lambda: remote_streams(lab) == [], timeout=10000)


def test_thirty_machines_in_one_overview(qtbot, tmp_path: Path, fake_lib: Path) -> None:
    """A lab of thirty machines of eight GPUs, each its own ssh connection to one sshd; the
    remote side replays a recorded snapshot (30 remote gpumons would only compete with the
    test for this machine's cores)."""
    from sshd import record_line, replay_remote

    need_openssh()
    names = [f"ws{i:02d}" for i in range(1, 31)]
    lab = Lab(tmp_path / "lab", fake_lib, dict.fromkeys(names, {})).start()
    try:
        command = replay_remote(lab, "replay", record_line(lab, 8), 0.5)
        window = remote_window(parse_targets(",".join(names)), SshOptions(
            config_file=str(lab.config), remote_command=str(command)), 0.5, (),
            Settings.memory())
        qtbot.addWidget(window)
        window.resize(1400, 900)
        window.show()
        heatmap = window.overview.heatmap  # type: ignore[attr-defined]
        qtbot.waitUntil(lambda: len(heatmap.hosts) == 30
                        and all(h.up and len(h.gpus) == 8 for h in heatmap.hosts),
                        timeout=90000)
        assert [h.host for h in heatmap.hosts] == names
        assert window.overview.summary.text().startswith(  # type: ignore[attr-defined]
            "30 machines, 240 GPUs")
        assert len(ssh_clients(lab)) == 30
        window.close()
        assert ssh_clients(lab) == []
    finally:
        lab.stop()


def test_a_machine_without_gpumon_says_what_nvidia_smi_does_not_give(qtbot, lab: Lab) -> None:
    from gpumon.remote.smi import missing_fields

    fake = lab.remote_path / "nvidia-smi"
    fake.write_text(f"#!{sys.executable}\n" + (Path(__file__).parents[1] / "remote"
                                              / "fake_nvidia_smi.py").read_text())
    fake.chmod(0o755)
    window = RemoteWindow(parse_target("lab1"), SshOptions(config_file=str(lab.config)), 0.3)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: len(window.gpu_grid.shown_panels()) == 2, timeout=30000)
    qtbot.waitUntil(window.fallback_note.isVisible, timeout=10000)
    assert window.fallback_note.text() == missing_fields()
    assert window.header.source_badge.text() == "SSH NVIDIA-SMI"
    window.close()
    assert ssh_clients(lab) == []


def test_file_add_machine_checks_adds_and_remembers(qtbot, lab: Lab) -> None:
    """File ▸ Add machine… refuses a name that could become an option, then adds lab2 to
    the running overview of lab1 and remembers it."""
    from PySide6.QtCore import QTimer

    from gpumon.remote.fleet import RemoteFleet
    from gpumon.ui.window import add_machine

    settings = Settings.memory()
    window = remote_window(parse_targets("lab1"), options(lab), 0.3, (), settings,
                           overview=True)
    assert isinstance(window, ClusterWindow) and isinstance(window.source, RemoteFleet)
    qtbot.addWidget(window)
    window.show()
    adder = add_machine.install(window, window.menus.file_menu,
                                window.menus.actions["actionQuit"], settings, window.source,
                                lambda targets: pytest.fail("no second window"))
    texts = [a.text() for a in window.menus.file_menu.actions()]
    assert texts.index("Add &machine…") == texts.index("&Quit") - 1
    heatmap = window.overview.heatmap
    qtbot.waitUntil(lambda: [len(h.gpus) for h in heatmap.hosts] == [2], timeout=30000)
    said: list[str] = []

    def answer() -> None:
        dialog = adder.dialog
        assert dialog is not None and dialog.isVisible()
        dialog.setTextValue("-oProxyCommand=touch /tmp/x")
        dialog.accept()
        said.append(dialog.labelText())
        assert dialog.isVisible()  # still asking
        dialog.setTextValue(" lab2 ")
        dialog.accept()

    QTimer.singleShot(0, answer)
    adder.action.trigger()
    assert len(said) == 1 and "cannot begin with '-'" in said[0]
    qtbot.waitUntil(lambda: [len(h.gpus) for h in heatmap.hosts] == [2, 3], timeout=30000)
    assert settings.ssh_machines == ["lab2"]
    adder.add(parse_target("lab2"))  # twice: still one row, one entry
    assert settings.ssh_machines == ["lab2"] and window.source.names == ["lab1", "lab2"]
    window.close()
    assert ssh_clients(lab) == []


def test_add_machine_in_a_local_window_opens_the_overview_beside(
        qtbot, make_window, lab: Lab) -> None:
    from gpumon.ui.window import add_machine

    local = make_window()
    settings = Settings.memory()
    settings.ssh_machines = ["lab1", "-bad entry"]  # remembered; the bad one never reaches ssh
    adder = add_machine.install(
        local, local.menus.file_menu, local.menus.actions["actionQuit"], settings, None,
        lambda targets: remote_window(targets, options(lab), 0.3, (), Settings.memory(),
                                      overview=True))
    adder.add(parse_target("lab2"))
    assert settings.ssh_machines == ["lab1", "-bad entry", "lab2"]
    (overview,) = adder.windows
    qtbot.addWidget(overview)
    assert isinstance(overview, ClusterWindow)
    heatmap = overview.overview.heatmap
    qtbot.waitUntil(lambda: [(h.host, len(h.gpus)) for h in heatmap.hosts]
                    == [("lab1", 2), ("lab2", 3)], timeout=30000)
    overview.close()
    assert ssh_clients(lab) == []


def test_a_remotes_words_are_shown_as_text_never_as_markup(qtbot, lab: Lab) -> None:
    """A remote whose status says '<img ...><a href=...>': the banner shows those characters,
    never its markup."""
    import json

    from sshd import record_line, replay_remote

    doc = json.loads(record_line(lab, 2))
    hostile = '<img src="/etc/passwd"><a href="http://x">click</a>'
    doc["status"] = {"state": "error", "message": hostile, "hint": "<b>bold?</b>"}
    command = replay_remote(lab, "hostile", json.dumps(doc), 0.3)
    window = RemoteWindow(parse_target("lab1"), SshOptions(
        config_file=str(lab.config), remote_command=str(command)), 0.3)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(window.banner.isVisible, timeout=30000)
    qtbot.waitUntil(lambda: hostile in window.banner.message.text(), timeout=10000)
    assert window.banner.message.text() == f"On lab1: {hostile}"
    assert window.banner.message.textFormat() == Qt.TextFormat.PlainText
    assert window.banner.hint.textFormat() == Qt.TextFormat.PlainText
    window.close()


def test_a_new_interval_is_a_new_stream_at_that_interval(qtbot, lab: Lab) -> None:
    window = RemoteWindow(parse_target("lab1"), options(lab), 0.5)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: len(window.gpu_grid.shown_panels()) == 2, timeout=30000)
    assert window.stream_interval_s == 0.5
    window.set_interval(0.2)
    def streams_at_0_2() -> bool:
        found = False
        for pid in remote_streams(lab):
            try:
                found |= b"--interval\x000.2\x00" in Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue  # it ended meanwhile
        return found

    qtbot.waitUntil(streams_at_0_2, timeout=20000)
    assert window.stream_interval_s == 0.2
    before = window.history.count(0)
    qtbot.waitUntil(lambda: window.history.count(0) >= before + 5, timeout=20000)
    window.close()
    assert ssh_clients(lab) == []


def test_the_playground_runs_its_code_on_the_machine(qtbot, lab: Lab) -> None:
    """With one machine the Playground's kernel is on it (``gpumon kernel --stdio`` over
    ssh), the page says so, and closing the window leaves no kernel there."""
    from PySide6.QtWidgets import QLabel

    from gpumon.playground.data.actions import RunCode

    window = RemoteWindow(parse_target("lab1"), options(lab), 0.3)
    qtbot.addWidget(window)
    window.show()
    # the header says it on every page, the Monitor's included (issue 50)
    assert window.tabs.currentIndex() == 0  # the Monitor
    badge = window.header.code_badge
    assert badge.isVisible() and badge.text() == "Code runs on lab1"
    assert "lab1, with its Python, PyTorch and GPUs" in badge.toolTip()
    note = window.playground.findChild(QLabel, "playgroundRunsThere")
    assert note is not None and note.text() == ("Code in the Playground and the Lesson runs on "
                                                "lab1, with its Python, PyTorch and GPUs, "
                                                "over SSH.")
    lesson_note = window.lesson.findChild(QLabel, "lessonRunsThere")
    assert lesson_note is not None and lesson_note.text() == note.text()
    engine = window.kernel_link
    with qtbot.waitSignal(engine.actionFinished, timeout=120000) as done:
        engine.submit(RunCode("import os\nos.getpid()"))
    outcome = done.args[1]
    assert outcome.ok and int(outcome.preview) == engine.kernel_pid
    assert engine.kernel_pid in remote_streams(lab)  # lab1's process (the lab's environment)
    assert engine.local_pid is None  # never taken for one of this computer's processes
    window.close()
    qtbot.waitUntil(lambda: remote_streams(lab) == [], timeout=10000)


def test_a_machine_without_torch_says_what_to_install_there(qtbot, lab: Lab) -> None:
    from sshd import ROOT, remote_script

    from gpumon.playground.client.ssh_kernel import Remote
    from gpumon.ui.playground.kernel_link import KernelLink

    blocked = lab.folder / "no-torch"
    (blocked / "torch").mkdir(parents=True)
    (blocked / "torch" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
    command = remote_script(lab.bin / "gpumon-no-torch", (
        f"export PYTHONPATH={ROOT}:{blocked} GPUMON_TEST_LAB={lab.folder}\n"
        f"exec {sys.executable} -m gpumon \"$@\""))
    engine = KernelLink(remote=Remote(parse_target("lab1"), SshOptions(
        config_file=str(lab.config), remote_command=str(command))))
    try:
        with qtbot.waitSignal(engine.loadingFinished, timeout=120000) as done:
            engine.load()
        assert done.args[0].message == (
            "PyTorch is not installed on lab1, where the playground's code runs: install it "
            "there (pip install 'gpumon[playground]'). The Monitor goes on.")
    finally:
        engine.stop()


def test_the_remote_kernels_process_is_this_process_on_its_machine(qtbot, lab: Lab) -> None:
    """The NVML memory line of "this process" follows the kernel on lab1: its process in
    lab1's stream is marked as the window's own."""
    from gpumon.playground.data.actions import RunCode

    window = RemoteWindow(parse_target("lab1"), options(lab), 0.3)
    qtbot.addWidget(window)
    window.show()
    engine = window.kernel_link
    with qtbot.waitSignal(engine.actionFinished, timeout=120000):
        engine.submit(RunCode("1"))
    pid = engine.kernel_pid
    assert pid is not None
    # lab1's NVML lists the kernel on GPU 0 from the next stream on (a new interval)
    lab.machines["lab1"] = {**lab.machines["lab1"], "FAKENVML_PROCS": f"0:{pid}:1048576"}
    lab.write_config()
    window.set_interval(0.4)

    def marked() -> bool:
        snap = window.latest_snapshot
        return snap is not None and any(p.pid == pid and p.is_self for p in snap.processes)

    qtbot.waitUntil(marked, timeout=30000)
    window.close()
