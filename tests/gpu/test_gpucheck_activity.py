"""The GPU check's activity comparison without a GPU: nvidia-smi dmon's output read by position,
gpumon dmon's read by name (rendered by gpumon's own code from simulated GPUs), the judging
of the medians, and the check's plumbing with a stand-in load and nvidia-smi."""

from __future__ import annotations

import ast
import os
import sys
import time
from pathlib import Path

import pytest

from gpumon.telemetry.model.types import Snapshot
from gpumon.telemetry.sources.sampler import Sampler
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.text import dmon_text
from tests.gpu.gpucheck import activity as act
from tests.gpu.gpucheck.context import Context, child_env
from tests.gpu.gpucheck.results import FAIL, PASS, SKIP, Known

# Default columns first, the four GPM ones last as asked; names as some driver prints them.
SMI_DMON = """\
# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk smutil  smocc mmaact   dram
# Idx      W      C      C      %      %      %      %    MHz    MHz      %      %      %      %
    0    412     61     70    100     38      0      0   2619   1980      -      -      -      -
    1     80     40     45      0      0      0      0   2619    345      0      1      0      2
    0    655     63     72    100     41      0      0   2619   1980     97     41     83     27
# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk smutil  smocc mmaact   dram
# Idx      W      C      C      %      %      %      %    MHz    MHz      %      %      %      %
    0    660     64     73    100     42      0      0   2619   1980     98      -     84     28
"""


def test_nvidia_smi_dmon_is_read_by_position_for_the_gpu_asked() -> None:
    assert act.parse_smi_dmon(SMI_DMON) == {
        "smact": [None, 97.0, 98.0], "smocc": [None, 41.0, None],
        "tensor": [None, 83.0, 84.0], "dram": [None, 27.0, 28.0]}
    assert act.parse_smi_dmon(SMI_DMON, gpu="1") == {
        "smact": [0.0], "smocc": [1.0], "tensor": [0.0], "dram": [2.0]}


def test_an_unexpected_nvidia_smi_output_is_an_error_that_quotes_the_header() -> None:
    with pytest.raises(ValueError, match="5 column names or more, got '# gpu pwr smutil'"):
        act.parse_smi_dmon("# gpu pwr smutil\n# Idx W %\n    0  100  97\n")
    short_row = SMI_DMON + "    0    660     64\n"
    with pytest.raises(ValueError, match=r"3 cells under a header of 14 names.*# gpu +pwr"):
        act.parse_smi_dmon(short_row)
    with pytest.raises(ValueError, match="not a number: 'ERR!'"):
        act.parse_smi_dmon(SMI_DMON.replace("     98 ", "   ERR! "))
    with pytest.raises(ValueError, match="got ''"):
        act.parse_smi_dmon("No devices were found\n")


def _dmon_output(ticks: int = 3) -> tuple[str, list[Snapshot]]:
    """``gpumon dmon``'s output for two simulated GPUs (an H100 or H200 among them has GPM),
    as gpumon prints it."""
    sampler = Sampler(SimulatedSource(n_gpus=2, seed=3))
    try:
        snaps = [sampler.tick() for _ in range(ticks)]
    finally:
        sampler.close()
    text = dmon_text.header(snaps[0].simulated) + "\n" + \
        "\n".join(dmon_text.rows(s) for s in snaps) + "\n"
    return text, snaps


def _printed(v: float | None) -> float | None:
    return None if v is None else float(f"{v:.0f}")  # dmon prints whole numbers


def test_gpumon_dmon_is_read_by_column_name() -> None:
    text, snaps = _dmon_output()
    fields = {"smact": "sm_active_pct", "smocc": "sm_occupancy_pct",
              "tensor": "tensor_active_pct", "dram": "dram_active_pct"}
    with_values = 0
    for gpu in (0, 1):
        want = {col: [_printed(getattr(s.samples[gpu], key)) for s in snaps]
                for col, key in fields.items()}
        assert act.parse_gpumon_dmon(text, gpu=str(gpu)) == want
        with_values += any(v is not None for v in want["smact"])
    assert with_values == 1, "the simulated pair should be one GPU with GPM, one without"


def test_gpumon_dmon_rows_of_gpu_instances_and_lost_gpus_are_not_the_gpus() -> None:
    text, _ = _dmon_output()
    plain = act.parse_gpumon_dmon(text, gpu="1")
    cells = len(dmon_text.COLUMNS)
    mig = "  1/2 " + " ".join(["3"] * cells) + "\n"
    lost = "    1    LOST\n"
    assert act.parse_gpumon_dmon(text + mig, gpu="1") == plain
    assert act.parse_gpumon_dmon(text + lost, gpu="1") == {
        col: [*values, None] for col, values in plain.items()}


def test_gpumon_dmon_without_an_activity_column_is_an_error() -> None:
    text, _ = _dmon_output()
    with pytest.raises(ValueError, match="no column tensor"):
        act.parse_gpumon_dmon(text.replace(" tensor", " tensr"))


def test_the_metrics_are_gpumon_dmon_columns_and_nvidia_smi_ids_in_order() -> None:
    columns = [name for name, _, _ in dmon_text.COLUMNS]
    assert all(m.column in columns for m in act.METRICS)
    assert act.GPM_IDS == "2,3,5,10"
    ast.parse(act.LOAD)


def test_the_median_leaves_out_the_first_row_and_missing_values() -> None:
    assert act.median_after_first([0.0, 90.0, None, 94.0]) == 92.0
    assert act.median_after_first([50.0]) is None
    assert act.median_after_first([50.0, None]) is None


def _series(*rows: tuple[float | None, ...]) -> act.Series:
    """Rows of (smact, smocc, tensor, dram) as a Series."""
    return {m.column: [r[i] for r in rows] for i, m in enumerate(act.METRICS)}


def test_medians_within_five_points_pass_and_the_warming_row_is_left_out() -> None:
    # Counted, the first rows would put the SM activity medians 52.5 points apart.
    smi = _series((0, 0, 0, 0), (90, 14, 85, 17))
    gpumon = _series((100, 100, 100, 100), (95, 10, 90, 12))
    rows, outcome, reason = act.judge(smi, gpumon)
    assert outcome == PASS, reason
    assert [(r.metric, r.difference, r.outcome) for r in rows] == [
        ("SM activity", 5.0, PASS), ("SM occupancy", 4.0, PASS),
        ("tensor activity", 5.0, PASS), ("DRAM activity", 5.0, PASS)]
    assert "SM activity 90/95" in reason


def test_six_points_apart_fails_and_names_the_metric() -> None:
    smi = _series((0, 0, 0, 0), (96, 14, 80, 17))
    gpumon = _series((0, 0, 0, 0), (96, 14, 86, 17))
    rows, outcome, reason = act.judge(smi, gpumon)
    assert outcome == FAIL
    assert reason == "tensor activity: nvidia-smi 80, gpumon 86, 6 points apart"
    assert [r.outcome for r in rows] == [PASS, PASS, FAIL, PASS]


def test_a_metric_only_one_side_gives_fails() -> None:
    smi = _series((0, 0, 0, 0), (96, 14, 80, 17))
    gpumon = _series((0, 0, 0, 0), (96, 14, None, 17))
    _, outcome, reason = act.judge(smi, gpumon)
    assert (outcome, reason) == (FAIL, "tensor activity: nvidia-smi 80, gpumon - "
                                       "(gpumon gives no value)")


def test_no_value_from_nvidia_smi_fails_when_gpumon_has_some() -> None:
    smi = _series((None,) * 4, (None,) * 4)
    gpumon = _series((0, 0, 0, 0), (96, 14, 80, 17))
    _, outcome, reason = act.judge(smi, gpumon)
    assert outcome == FAIL
    assert reason.startswith("nvidia-smi printed '-' for every GPM column")
    _, outcome, reason = act.judge({}, gpumon, smi_missing="nvidia-smi dmon exited 2: nope")
    assert (outcome, reason) == (FAIL, "nvidia-smi dmon exited 2: nope, but gpumon reports "
                                       "activity")


def test_no_value_from_either_is_skip() -> None:
    rows, outcome, reason = act.judge(_series((None,) * 4, (None,) * 4), {})
    assert outcome == SKIP
    assert "this GPU has no GPM" in reason
    assert {r.outcome for r in rows} == {SKIP}


def _context(tmp_path: Path, dry_run: bool = False, smi: list[str] | None = None) -> Context:
    return Context(tmp_path, dry_run, time.monotonic() + 120, child_env(False, None),
                   smi or ["nvidia-smi"])


def test_without_a_gpu_the_check_is_a_known_skip(tmp_path: Path) -> None:
    for dry_run, cuda_count, why in ((True, 2, "dry run: no CUDA GPU"),
                                     (False, 0, "torch sees no CUDA GPU")):
        name, check = act.planned(_context(tmp_path, dry_run), cuda_count, [])
        assert isinstance(check, Known)
        assert (name, check().outcome, check().reason) == (act.NAME, SKIP, why)
    _, check = act.planned(_context(tmp_path), 1, ["GPU-0"])
    assert not isinstance(check, Known)


class _SimulatedGpumon(Context):
    """gpumon dmon on two simulated GPUs, fast: GPU 0 has no GPM, as a pre-Hopper GPU."""

    def gpumon(self, *args: str) -> list[str]:
        return [*super().gpumon(*args), "--simulate", "2", "--seed", "0", "-d", "0.1"]


@pytest.mark.parametrize(("smi_gpm", "outcome", "says"), [
    ("-", SKIP, "this GPU has no GPM"),
    ("50", FAIL, "SM activity: nvidia-smi 50, gpumon - (gpumon gives no value)"),
])
def test_the_check_runs_both_dmons_during_the_load_and_ends_the_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, smi_gpm: str, outcome: str,
        says: str) -> None:
    pid_file, argv_file = tmp_path / "load.pid", tmp_path / "smi-argv"
    monkeypatch.setattr(act, "LOAD", "import os, time\n"
                        f"open({str(pid_file)!r}, 'w').write(str(os.getpid()) + ' ' + "
                        "os.environ['CUDA_VISIBLE_DEVICES'])\n"
                        "print('warming', flush=True)\nprint('ready', flush=True)\n"
                        "time.sleep(60)\n")
    header = "# gpu pwr sm a b c d\n# Idx W % % % % %\n"
    row = f"    0 400 100 {smi_gpm} {smi_gpm} {smi_gpm} {smi_gpm}\n"
    fake_smi = tmp_path / "fake_smi.py"
    fake_smi.write_text(f"import sys\nopen({str(argv_file)!r}, 'w').write(' '.join(sys.argv[1:]))"
                        f"\nprint({header + row * 5!r}, end='')\n")
    out = tmp_path / "out"
    out.mkdir()
    ctx = _SimulatedGpumon(out, False, time.monotonic() + 120, child_env(False, None),
                           [sys.executable, str(fake_smi)])
    result = act.check_activity(ctx, ["GPU-nvml-0", "GPU-nvml-1"])
    assert result.outcome == outcome, result.reason
    assert says in result.reason
    assert argv_file.read_text() == "dmon --gpm-metrics 2,3,5,10 -i 0 -c 5"
    for name in result.files:
        assert (out / name).is_file(), name
    assert "ready" in (out / "activity-load.txt").read_text()
    assert "smact" in (out / "activity-gpumon-dmon.txt").read_text()
    pid, visible = pid_file.read_text().split()
    assert visible == "GPU-nvml-0"  # the load's cuda:0 is NVML GPU 0, which both dmons read
    with pytest.raises(ProcessLookupError):  # the load was ended, not left to its 60 s
        os.kill(int(pid), 0)


def test_a_load_that_never_gets_ready_fails_with_its_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(act, "LOAD", "raise SystemExit('CUDA error: no kernel image')")
    result = act.check_activity(_context(tmp_path), [])
    assert result.outcome == FAIL
    assert "did not get ready (exit 1): CUDA error: no kernel image" in result.reason
    assert result.files == ["activity-load.txt"]
