"""The lesson's claims, held against what it printed: the recorded transcripts in
tests/gpu/lesson/ (README there), on every run of the tests; and the checker itself, which
must catch a transcript that contradicts a step.

The checker's CUDA claims are proven here on text made for the purpose (marked so below);
they judge a real GPU run in tests/gpu/check.py's lesson check and in
test_lesson_cuda.py, and a recorded one as soon as it is kept here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.gpu.gpucheck import runs
from tests.gpu.gpucheck.lesson_claims import GPU_LABEL, claim_problems, cuda_devices

RECORDED = sorted((Path(__file__).parent / "lesson").glob("*.txt"))
CPU_ONLY = Path(__file__).parent / "lesson" / "cpu-only.en.txt"


def _gpus(path: Path) -> int:
    count = cuda_devices(path.read_text(encoding="utf-8"))
    assert count is not None, f"{path.name}: step 3 gives no device count"
    return count


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_a_recorded_transcript_holds_what_its_steps_say(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    gpus = _gpus(path)
    assert claim_problems(text, gpus, timed=True) == []
    assert runs.lesson_problems(text, gpus) == []


def test_a_cpu_only_transcript_is_recorded() -> None:
    assert CPU_ONLY in RECORDED and _gpus(CPU_ONLY) == 0


def test_a_cuda_transcript_is_recorded() -> None:
    cuda = [p.name for p in RECORDED if _gpus(p) > 0]
    if not cuda:
        pytest.skip("no transcript from a CUDA GPU is recorded yet: tests/gpu/lesson/README.md "
                    "says how to keep one")
    assert cuda


# --- the checker catches what contradicts a step --------------------------------------------------

@pytest.mark.parametrize(("old", "new", "problem"), [
    ("    Fan: ", "    Fan speed: ", "step 1 does not explain Fan"),
    (GPU_LABEL, "On a CUDA GPU (torch 2.13), this step shows (not run here):",
     "a heading or a note names torch 2.13"),
    ("as net(torch.rand(2, 3).to(device))\n  does", "as the fourth line does",
     "a narration points at a line by its number"),
    ("Measured on an NVIDIA H200", "Seen on a GPU", "the H200's figures are not printed"),
    ("On a machine with 2 GPUs, expect:", "On two GPUs:", "what 2 GPUs print is missing"),
    ("691 W of", "591 W of", "gpu-util: the H200's figures are not printed under its name"),
])
def test_the_checker_catches_a_cpu_transcript_that_contradicts_a_step(
        old: str, new: str, problem: str) -> None:
    text = CPU_ONLY.read_text(encoding="utf-8")
    assert old in text
    found = claim_problems(text.replace(old, new), 0, timed=True)
    assert [p for p in found if problem in p], found


def test_the_checker_reads_the_cpu_s_times_only_when_told() -> None:
    text = CPU_ONLY.read_text(encoding="utf-8")
    start = text.index("Step 15 of")
    # the share, as if the CPU had returned before its work was done
    slow = text[:start] + re.sub(r"'\d+%'\)", "'40%')", text[start:], count=1)
    assert "on the CPU the two times differ" in " ".join(claim_problems(slow, 0, timed=True))
    assert not [p for p in claim_problems(slow, 0, timed=False) if "asynchronous" in p]


def _reading(process: float | None, reserved: float, allocated: float) -> str:
    """A memory line as the lesson prints it on a GPU, with or without NVML's figure."""
    if process is None:
        return f"    # cuda:0: allocated {allocated:.2f} MiB, reserved {reserved:.2f} MiB"
    return (f"    # cuda:0: this process {process:.2f} MiB (NVML, as nvidia-smi lists it), "
            f"reserved {reserved:.2f} MiB, allocated {allocated:.2f} MiB")


def made_up_memory(process: tuple[float | None, ...] = (700, 700, 636),
                   reserved: tuple[float, ...] = (98, 98, 34),
                   allocated: tuple[float, ...] = (96.01, 32.01, 32.01),
                   oom: str = "expandable_segments:True") -> str:
    """Text made here to test the checker's CUDA claims (not a recording): a memory step on
    one GPU, its readings after the tensor, del and empty_cache(), then torch's OOM."""
    codes = ("big = torch.ones(4096, 4096, device=device)", "del big",
             "torch.cuda.empty_cache()")
    lines = ["Step 14 of 18: Memory: the context, the cache, del and empty_cache()  [gpumon]", ""]
    for code, p, r, a in zip(codes, process, reserved, allocated, strict=True):
        lines += [f"  >>> {code}", _reading(p, r, a)]
        if code.startswith("big ="):  # what the line cost: the change from cuBLAS's 32 MiB
            lines.append(f"    # cuda:0: allocated +{a - 32:.2f} MiB, reserved +64.00 MiB, "
                         f"peak {a:.2f} MiB")
    lines += ["  >>> twice = 2 * torch.cuda.get_device_properties(device).total_memory",
              "  ... torch.empty(twice, dtype=torch.uint8, device=device)",
              "    torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. If "
              f"reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF={oom}",
              "", "Step 15 of 18: GPU work is asynchronous  [English edition]", ""]
    return "\n".join(lines)


def _memory_problems(text: str) -> list[str]:
    return [p for p in claim_problems(text, 1, timed=True) if p.startswith("memory")]


def test_the_checker_holds_the_three_memory_numbers_on_a_gpu() -> None:
    assert _memory_problems(made_up_memory()) == []
    assert _memory_problems(made_up_memory(allocated=(64.01, 0.01, 0.01))) == [
        "memory: the 64 MiB tensor's line does not show what it cost"]  # +32.01, not +64
    kept = made_up_memory(reserved=(98, 98, 98))
    assert _memory_problems(kept) == ["memory: empty_cache() did not lower reserved"]
    freed = made_up_memory(reserved=(98, 34, 34))
    assert "memory: del did not drop allocated by 64 MiB with reserved kept" in \
        _memory_problems(freed)
    inverted = made_up_memory(process=(90, 700, 636))
    assert any(">= reserved" in p for p in _memory_problems(inverted))
    assert "memory: no out-of-memory error naming expandable_segments" in \
        _memory_problems(made_up_memory(oom="something"))
    two = made_up_memory(process=(None, None, None))
    assert _memory_problems(two) == [
        "memory: no line gives NVML's figure for the process, nor says why"]
    said = two.replace("  >>> twice", "  NVML does not list this process here (in a\n"
                                      "  container, ...)\n  >>> twice")
    assert _memory_problems(said) == []


def test_the_checker_holds_steps_15_16_and_the_two_gpu_exercise_on_a_gpu() -> None:
    made_up = ("Step 15 of 18: GPU work is asynchronous  [English edition]\n"
               "    (0.51, 53.6, '1%')\n"
               "Step 16 of 18: Exercise: .item() at every step  [English edition]\n"
               "    (90.2, 77.9, '+16%')\n"
               "Step 18 of 18: Exercise: two GPUs at once  [English edition]\n"
               "  >>> import time\n  ... first, second = 'cuda:0', 'cuda:0'  # one GPU\n"
               "    (101.0, 100.2, '99%')\n\n  On a machine with 2 GPUs, expect:\n")
    mine = [p for p in claim_problems(made_up, 1, timed=True)
            if p.startswith(("asynchronous", "two GPUs at once"))]
    assert mine == []
    waited = made_up.replace("'1%'", "'99%'").replace("'+16%'", "'-2%'")
    assert [p for p in claim_problems(waited, 1, timed=True) if p.startswith("asynchronous")] \
        == ["asynchronous: the products returned at 99% of their work",
            "asynchronous: .item() every step was not slower (-2%)"]
    halved = made_up.replace("'99%'", "'52%'")
    assert "two GPUs at once: on one GPU 'at once' took 52% of the time" in \
        claim_problems(halved, 1, timed=True)
    assert "two GPUs at once: with one GPU, both loops did not run on cuda:0" in \
        claim_problems(made_up.replace("'cuda:0', 'cuda:0'", "'cuda:0', 'cuda:1'"), 1, True)


def made_up_busy(big: str, small: str) -> str:
    """Text made here to test the checker's CUDA claim of the GPU-Util step (not a
    recording): its two readings on one GPU, then the H200's figures."""
    return "\n".join([
        "Step 17 of 19: GPU-Util is not how busy the GPU is  [gpumon]", "",
        "  >>> busy(lambda: big @ big)", f"    {big}",
        "  >>> busy(lambda: small @ small)", f"    {small}", "",
        "  Measured on an NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130): bf16 8192 x",
        "  8192 products showed GPU-Util 100%, occupancy 14.3%, at 691 W of the 700 W power",
        "  cap.", "", "  More: On the H200, the large products' clock event reason was SW power",
        "  cap.", ""])


H200_BIG = ("{'gpu_util_pct': 100, 'sm_active_pct': 96.4, 'sm_occupancy_pct': 14.3, "
            "'tensor_active_pct': 93.6, 'dram_active_pct': 16.6, 'power_w': 691, "
            "'power_limit_w': 700, 'clock_events': ['SW power cap'], 'gpm': 'reading'}")
H200_SMALL = ("{'gpu_util_pct': 36, 'sm_active_pct': 0.2, 'sm_occupancy_pct': 0.0, "
              "'tensor_active_pct': 0.0, 'dram_active_pct': 0.0, 'power_w': 119, "
              "'power_limit_w': 700, 'clock_events': [], 'gpm': 'reading'}")


def _busy_problems(text: str, timed: bool = True) -> list[str]:
    return [p for p in claim_problems(text, 1, timed=timed) if p.startswith("gpu-util")]


def test_the_checker_holds_the_gpu_util_step_on_a_gpu() -> None:
    assert _busy_problems(made_up_busy(H200_BIG, H200_SMALL)) == []
    swapped = made_up_busy(H200_SMALL, H200_BIG)
    assert _busy_problems(swapped) == [
        "gpu-util: SM activity 0.2 under the large product is not above 96.4 under the tiny "
        "ones", "gpu-util: the tensor cores were not busier under the large product"]
    idle = H200_SMALL.replace("'gpu_util_pct': 36", "'gpu_util_pct': 0")
    assert _busy_problems(made_up_busy(H200_BIG, idle)) == [
        "gpu-util: the tiny products' GPU-Util 0 is not above their SM activity 0.2"]
    assert _busy_problems(swapped, timed=False) == []
    no_gpm = H200_BIG.replace("96.4", "None").replace("'reading'", "'unsupported'")
    assert _busy_problems(made_up_busy(no_gpm, H200_SMALL)) == []  # the H200's figures stand in
    assert _busy_problems(made_up_busy(H200_BIG, H200_SMALL).replace(
        "  >>> busy(lambda: small @ small)", "  >>> small")) == [
        "gpu-util: the two readings are not printed"]
