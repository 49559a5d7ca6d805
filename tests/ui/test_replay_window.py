"""A recording in the window: made with ``-l --json`` or in the window itself, replayed, the
History holds at every time exactly the recorded values; the title says it is a recording."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication

from gpumon.recording.reader import Recording
from gpumon.telemetry.model.metrics import value_of
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.window.replay_window import ReplayWindow

ROOT = Path(__file__).resolve().parents[2]
KEYS = ("mem_used_bytes", "gpu_util_pct", "power_w", "temperature_c")


def _open(qtbot, path: Path) -> ReplayWindow:
    w = ReplayWindow(Recording(path), play=False)
    qtbot.addWidget(w)
    w.show()
    return w


def _history_matches(w: ReplayWindow, rec: Recording, upto: int) -> None:
    """Every recorded snapshot up to index ``upto`` is in the History with its values."""
    recorded = dict(rec.read_range(0, upto))
    for key in KEYS:
        for gpu in (0, 1):
            times, values = w.history.series(gpu, key)
            assert list(times) == [recorded[i].sample_for(gpu).timestamp_s
                                   for i in sorted(recorded)]
            for t, v, i in zip(times, values, sorted(recorded), strict=True):
                want = value_of(recorded[i].sample_for(gpu), key)
                assert (math.isnan(v) and want is None) or v == want, (key, gpu, t)


def _replays_exactly(qtbot, path: Path) -> None:
    w = _open(qtbot, path)
    rec = w.recording
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=10000)
    assert w.windowTitle().startswith("gpumon — recording of ")
    assert w.latest_snapshot.timestamp_s == rec.start_s
    middle = len(rec) // 2
    w.time_bar.seek(rec.times[middle])  # a jump: the window before it, at once
    qtbot.waitUntil(lambda: w.latest_snapshot.timestamp_s == rec.times[middle], timeout=10000)
    _history_matches(w, rec, middle)
    w.time_bar.speed_combo.setCurrentIndex(2)  # 60x: to the end, every snapshot on the way
    w.time_bar.set_playing(True)
    qtbot.waitUntil(lambda: w.latest_snapshot.timestamp_s == rec.end_s, timeout=15000)
    _history_matches(w, rec, len(rec) - 1)
    # the clock stands at the end: the snapshots still sampled bring nothing new, and the
    # History keeps what it has (they once cleared it down to the last tick's backfill)
    after_end: list[object] = []
    w.sampling.snapshot.connect(after_end.append)
    qtbot.waitUntil(lambda: len(after_end) >= 3, timeout=10000)
    _history_matches(w, rec, len(rec) - 1)
    assert not w.time_bar.clock.playing  # it stands at the end
    qtbot.waitUntil(lambda: w.time_bar.play_button.text() == "Play", timeout=5000)
    w.close()


def test_a_recording_made_with_watch_json_replays_exactly(qtbot, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "gpumon", "--simulate", "2", "-l", "0.1",
                          "--count", "12", "--json"], capture_output=True, text=True,
                         timeout=60, env=env, check=True)
    path = tmp_path / "watch.jsonl"
    path.write_text(out.stdout)
    _replays_exactly(qtbot, path)


def test_a_recording_made_in_the_window_replays_exactly(qtbot, make_window, tmp_path):
    live = make_window(lambda: SimulatedSource(2, seed=4))
    qtbot.waitUntil(lambda: live.latest_snapshot is not None, timeout=5000)
    path = tmp_path / "window.jsonl.gz"
    assert live.files.start_recording(path)
    qtbot.waitUntil(lambda: live.files.recorder.rows >= 12, timeout=10000)
    live.files.stop_recording()
    live.close()
    rec = Recording(path)
    assert len(rec) >= 12 and rec.problems() == [] and rec.header is not None
    rec.close()
    _replays_exactly(qtbot, path)


def test_health_events_are_recorded_as_marks_and_replayed_as_markers(qtbot, make_window,
                                                                     tmp_path):
    from gpumon.recording.lines import MarkKind
    from gpumon.telemetry.sources.simulated import SimulatedFaults

    faults = SimulatedFaults(xids={1: ((1.0, 79),)})
    live = make_window(lambda: SimulatedSource(2, seed=4, faults=faults))
    qtbot.waitUntil(lambda: live.latest_snapshot is not None, timeout=5000)
    path = tmp_path / "xid.jsonl"
    assert live.files.start_recording(path)
    qtbot.waitUntil(lambda: live.event_log.count() >= 1, timeout=10000)
    qtbot.waitUntil(lambda: live.files.recorder.rows >= 3, timeout=10000)
    live.files.stop_recording()
    live.close()
    rec = Recording(path)
    marks = [m for m in rec.marks if m.kind is MarkKind.HEALTH]
    assert len(marks) == 1 and marks[0].gpu_index == 1 and "79" in marks[0].text
    rec.close()
    w = _open(qtbot, path)
    qtbot.waitUntil(lambda: w.gpu_panel(1) is not None, timeout=10000)
    assert [t for t, _ in w.gpu_panel(1)._markers] == [marks[0].timestamp_s]
    assert w.gpu_panel(0)._markers == []
    w.close()


def test_space_plays_and_pauses_and_a_bad_jump_is_a_sentence(qtbot, tmp_path):
    w = _open(qtbot, ROOT / "tests" / "data" / "simulated-2gpus.jsonl.gz")
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=10000)
    assert not w.time_bar.clock.playing
    w.menus.toggle_pause()  # what Space does
    assert w.time_bar.clock.playing
    w.menus.toggle_pause()
    assert not w.time_bar.clock.playing
    w.time_bar.jump_edit.setText("yesterday")
    w.time_bar.jump_edit.returnPressed.emit()
    assert "is not a time" in w.time_bar.note.text()
    QApplication.processEvents()
    w.close()


def _shifted(src: Path, dest: Path, days: int, mem_less: int, util_factor: float) -> Path:
    """``src`` as another run: ``days`` later, each GPU ``mem_less`` bytes lower and its
    GPU-Util times ``util_factor``."""
    import gzip
    import json

    out = []
    with gzip.open(src, "rt", encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            if "gpus" in doc:
                doc["timestamp_epoch_s"] += days * 86400
                for g in doc["gpus"]:
                    g["timestamp_epoch_s"] += days * 86400
                    g["mem_used_bytes"] -= mem_less
                    g["gpu_util_pct"] *= util_factor
            out.append(json.dumps(doc))
    dest.write_text("\n".join(out) + "\n")
    return dest


def test_compare_draws_the_second_run_and_the_differences_of_the_means(qtbot, tmp_path):
    data = ROOT / "tests" / "data" / "simulated-2gpus.jsonl.gz"
    other = _shifted(data, tmp_path / "yesterday.jsonl", days=-1, mem_less=1 << 30,
                     util_factor=0.5)
    w = ReplayWindow(Recording(data), play=False, compare=Recording(other))
    qtbot.addWidget(w)
    w.show()
    rec = w.recording
    w.time_bar.seek(rec.end_s)
    qtbot.waitUntil(lambda: w.latest_snapshot is not None
                    and w.latest_snapshot.timestamp_s == rec.end_s, timeout=10000)
    qtbot.waitUntil(lambda: len(w.compare_views) == 2, timeout=10000)
    assert "compared with yesterday.jsonl" in w.windowTitle()
    recorded = [s for _, s in rec.read_range(0, len(rec) - 1)]
    for panel, view in w.compare_views:
        gpu = panel.index
        mem = [s.sample_for(gpu).mem_used_bytes for s in recorded]
        util = [s.sample_for(gpu).gpu_util_pct for s in recorded]
        qtbot.waitUntil(lambda v=view: v.differences.get("mem_used_bytes") is not None,
                        timeout=5000)
        # the first run's mean minus the second's: 1 GiB, and half the first's GPU-Util
        assert math.isclose(view.differences["mem_used_bytes"], 1 << 30, rel_tol=1e-9)
        assert math.isclose(view.differences["gpu_util_pct"], sum(util) / len(util) / 2,
                            rel_tol=1e-9)
        assert "+1.00 GiB" in view.label.text()
        curve, _ = view.curves["mem_used_bytes"]
        x, y = curve.getData()
        assert len(x) == len(mem)  # the whole second run, aligned onto the first's times
        assert [round(v * (1 << 30)) for v in y] == [m - (1 << 30) for m in mem]
        # shown by Qt a turn of the event loop after it joined the visible panel's layout
        qtbot.waitUntil(view.isVisible, timeout=5000)
    w.close()


def test_file_menu_opens_and_compares_recordings_and_says_why_not(qtbot, tmp_path):
    from PySide6.QtGui import QAction

    from gpumon.ui.window.launch import install_recordings

    data = ROOT / "tests" / "data" / "simulated-2gpus.jsonl.gz"
    w = _open(qtbot, data)
    opener = install_recordings(w)
    assert w.findChild(QAction, "actionOpenRecording") is not None
    assert w.findChild(QAction, "actionCompareRecording") is not None
    opener.read(str(data), opener.open)
    qtbot.waitUntil(lambda: len(opener.windows) == 1, timeout=10000)
    opened = opener.windows[0]
    assert opened.windowTitle().startswith("gpumon — recording of ")
    opener.read(str(data), w.compare_with)
    qtbot.waitUntil(lambda: len(w.compare_views) == 2, timeout=10000)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not a recording\n")
    opener.read(str(tmp_path / "missing.jsonl"), opener.open)
    qtbot.waitUntil(lambda: opener.box is not None, timeout=10000)
    assert "Cannot read missing.jsonl" in opener.box.text()
    opener.read(str(garbage), opener.open)  # readable, nothing to show: the window says why
    qtbot.waitUntil(lambda: len(opener.windows) == 2, timeout=10000)
    empty = opener.windows[1]
    qtbot.waitUntil(lambda: "holds no snapshot" in empty.time_bar.note.text(), timeout=5000)
    for window in opener.windows:
        window.close()
    opener.box.close()
    w.close()


def test_a_lesson_step_that_ran_is_recorded_as_a_lesson_mark(qtbot, make_window, tmp_path):
    from gpumon.playground.lesson.results import StepResult
    from gpumon.playground.lesson.steps import LESSON
    from gpumon.recording.lines import Mark, MarkKind

    live = make_window(lambda: SimulatedSource(1, seed=4))
    qtbot.waitUntil(lambda: live.latest_snapshot is not None, timeout=5000)
    path = tmp_path / "lesson.jsonl"
    assert live.files.start_recording(path)
    live.files.add_lesson_mark(StepResult(3, LESSON[2], ()))
    live.files.add_lesson_mark(StepResult(4, LESSON[3], (), ran=False))  # not run: no mark
    live.files.stop_recording()
    live.close()
    rec = Recording(path)
    assert [(m.kind, m.text, m.gpu_index) for m in rec.marks] == [
        (MarkKind.LESSON, f"Lesson step 3: {LESSON[2].title}", None)]
    assert isinstance(rec.marks[0], Mark)
    rec.close()
