"""tests/gpu/check.py --dry-run, as CI runs it on a machine without a GPU: every check that
can run here passes against the fake NVML library, every GPU-only check is SKIP with its
reason, the summary says it was a dry run, and a disagreement makes the exit status 1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "telemetry"))
from fakenvml import find_nvml_header  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    shutil.which("gcc") is None or find_nvml_header() is None,
    reason="the dry run builds the fake NVML library: needs gcc and nvidia-nvml-dev")]


def _check(out: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "tests" / "gpu" / "check.py"), "--dry-run", "--out",
         str(out), *args],
        cwd=REPO, capture_output=True, text=True, timeout=280, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(  # tests/conftest.py's path kept
            filter(None, [str(REPO), os.environ.get("PYTHONPATH")])), **env})


def test_the_dry_run_passes_what_it_can_and_skips_the_gpu_checks(tmp_path: Path) -> None:
    out = tmp_path / "gpu-check"
    proc = _check(out, "--pytest-dirs", "tests/gpu/test_playground_cuda.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((out / "results.json").read_text())
    assert doc["dry_run"] is True
    outcomes = {r["name"]: (r["outcome"], r["reason"]) for r in doc["results"]}
    assert {name: o for name, (o, _) in outcomes.items()} == {
        "--once, --json vs nvidia-smi": "PASS",
        "exporter vs --once --json": "PASS",
        "GPM activity vs nvidia-smi dmon": "SKIP",
        "gpumon lesson": "PASS",
        "kernel on cpu (dry run)": "PASS",
        "kernel on cuda:0": "SKIP",
        "kernel on cuda:1 only": "SKIP",
        "CUDA_VISIBLE_DEVICES reordered": "SKIP",
        "pytest tests/gpu/test_playground_cuda.py": "PASS",
    }
    assert outcomes["kernel on cuda:1 only"][1] == "dry run: no CUDA GPU"
    assert outcomes["GPM activity vs nvidia-smi dmon"][1] == "dry run: no CUDA GPU"
    for result in doc["results"]:
        for name in result["files"]:
            assert (out / name).is_file(), name
    summary = (out / "summary.md").read_text()
    assert "**DRY RUN, no GPU.**" in summary and "stand-in" in summary
    assert "| torch imported by the check itself | no |" in summary
    compared = (out / "compare-nvidia-smi.csv").read_text()
    # both GPUs of the fake, every output, and the one compute process the fake lists
    assert "--once --json,1,temperature.gpu" in compared and "--once,0,power.draw" in compared
    assert "gpumon stream,1,temperature.gpu" in compared and (out / "stream.jsonl").is_file()
    assert ",used_memory,300,300,300," in compared  # FAKENVML_PROCS: 300 MiB on GPU 0
    assert "6 skipped" in (out / "pytest-output.txt").read_text()
    assert "Step 1 of" in (out / "lesson.txt").read_text()


def test_a_value_that_disagrees_with_nvidia_smi_fails_the_check(tmp_path: Path) -> None:
    out = tmp_path / "gpu-check"
    proc = _check(out, "--only", "outputs", GPUMON_FAKE_SMI_SKEW="temperature.gpu=10")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    summary = (out / "summary.md").read_text()
    assert "| --once, --json vs nvidia-smi | FAIL |" in summary
    assert "GPU 0 temperature.gpu: gpumon 40.0, reference 50.0/50.0" in summary
    assert "**0 PASS, 1 FAIL, 0 SKIP**" in summary


def test_a_check_without_time_left_is_skip_and_a_known_skip_keeps_its_reason(
        tmp_path: Path) -> None:
    out = tmp_path / "gpu-check"
    proc = _check(out, "--only", "kernel,activity", "--budget", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((out / "results.json").read_text())
    reasons = {r["name"]: (r["outcome"], r["reason"]) for r in doc["results"]}
    assert reasons["kernel on cpu (dry run)"][0] == "SKIP"
    assert reasons["kernel on cpu (dry run)"][1].startswith("out of time:")
    assert reasons["kernel on cuda:0"] == ("SKIP", "dry run: no CUDA GPU")
    assert reasons["GPM activity vs nvidia-smi dmon"] == ("SKIP", "dry run: no CUDA GPU")
    assert list(reasons)[0] == "GPM activity vs nvidia-smi dmon"  # before the kernel's


def test_a_wrong_option_is_one_sentence(tmp_path: Path) -> None:
    proc = _check(tmp_path / "x", "--only", "everything")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "check.py: --only takes outputs,exporter,activity,lesson,kernel,pytest, got 'everything'"]
