"""What each action cost in memory (issue 51): the change of torch's allocated and reserved
memory, the peak allocated during it and the change of NVML's figure for the process on a GPU;
the change and the peak of the kernel's RSS on the CPU. The words are checked on readings a GPU
gives (made here, as in the H200 review); the CPU's on the real engine and torch."""

from __future__ import annotations

import ctypes
import re

import pytest
import torch

from gpumon import i18n
from gpumon.playground.data import actions as act
from gpumon.playground.data.memory_change import device_change, memory_change, signed_bytes
from gpumon.playground.data.outcome import MemoryReading, Outcome
from gpumon.playground.kernel import memory
from gpumon.playground.kernel.engine import Engine
from gpumon.ui.playground.style import marker_tip, outcome_plain

MIB = 2**20


def outcome(before: tuple[MemoryReading, ...], after: tuple[MemoryReading, ...],
            code: str = "big = torch.ones(4096, 4096, device=device)") -> Outcome:
    return Outcome(act.RunCode(code), code, True, 0.0, 0.001, memory_before=before,
                   memory_after=after)


#: The H200's step 14, first line: 32 MiB of cuBLAS's workspace allocated, then a 64 MiB
#: tensor (96.01 MiB allocated, 98.00 reserved), the process 712 MiB in NVML then 776.
H200_BIG = outcome((MemoryReading("cuda:0", 32 * MIB + 10240, 34 * MIB, process_bytes=712 * MIB),),
                   (MemoryReading("cuda:0", int(96.01 * MIB), 98 * MIB, process_bytes=776 * MIB,
                                  peak_bytes=int(96.01 * MIB)),))


def test_a_gpu_line_gives_each_change_and_the_peak() -> None:
    assert device_change(H200_BIG, "cuda:0") == (
        "cuda:0: allocated +64.00 MiB, reserved +64.00 MiB, peak 96.01 MiB; this process "
        "+64.00 MiB (NVML)")
    assert memory_change(H200_BIG) == device_change(H200_BIG, "cuda:0")
    freed = outcome(H200_BIG.memory_after,
                    (MemoryReading("cuda:0", 32 * MIB, 98 * MIB, process_bytes=776 * MIB,
                                   peak_bytes=int(96.01 * MIB)),), "del big")
    assert device_change(freed, "cuda:0") == (
        "cuda:0: allocated -64.01 MiB, reserved 0 B, peak 96.01 MiB; this process 0 B (NVML)")


def test_a_gpu_first_used_by_the_action_changes_from_nothing() -> None:
    """No reading before: CUDA was not started there, so this process held nothing on it;
    where NVML does not list the process, its figure is left out."""
    first = outcome((), (MemoryReading("cuda:1", 4096, 2 * MIB, process_bytes=500 * MIB,
                                       peak_bytes=4096),))
    assert device_change(first, "cuda:1") == (
        "cuda:1: allocated +4.00 KiB, reserved +2.00 MiB, peak 4.00 KiB; this process "
        "+500.00 MiB (NVML)")
    unlisted = outcome((MemoryReading("cuda:0", 0, 0),),
                       (MemoryReading("cuda:0", MIB, 2 * MIB, peak_bytes=MIB),))
    assert device_change(unlisted, "cuda:0") == (
        "cuda:0: allocated +1.00 MiB, reserved +2.00 MiB, peak 1.00 MiB")


def test_the_cpu_line_gives_the_rss_change_and_its_peak_above_the_start() -> None:
    temporary = outcome((MemoryReading("cpu", rss_bytes=400 * MIB),),
                        (MemoryReading("cpu", rss_bytes=400 * MIB, peak_bytes=464 * MIB),))
    assert device_change(temporary, "cpu") == "cpu: RSS 0 B, peak +64.00 MiB"
    unknown = outcome((MemoryReading("cpu", rss_bytes=400 * MIB),),
                      (MemoryReading("cpu", rss_bytes=336 * MIB, peak_bytes=399 * MIB),))
    assert device_change(unknown, "cpu") == "cpu: RSS -64.00 MiB, peak 0 B"  # never below
    assert device_change(unknown, "cuda:0") == ""  # no reading there
    assert [signed_bytes(n) for n in (MIB, 0, -MIB)] == ["+1.00 MiB", "0 B", "-1.00 MiB"]


def test_the_card_and_the_marker_say_it_in_chinese_too() -> None:
    i18n.set_language("zh_CN")
    try:
        line = device_change(H200_BIG, "cuda:0")
        tip = marker_tip(H200_BIG, "cuda:0")
    finally:
        i18n.set_language("en")
    assert line == ("cuda:0：已分配 +64.00 MiB，已预留 +64.00 MiB，峰值 96.01 MiB；"
                    "本进程 +64.00 MiB（NVML）")
    assert tip == f"{H200_BIG.code}\n{line}"
    assert "memory: cuda:0: allocated +64.00 MiB" in outcome_plain(H200_BIG)


def _trim() -> None:
    """Give the C heap's resident free blocks back first: a 64 MiB tensor may be served from
    one, and RSS would not move (tests/playground/test_engine.py says how that was found)."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # glibc's
    if trim is not None:
        trim(0)


CPU_LINE = re.compile(r"cpu: RSS ([+-]?[\d.]+ \w+), peak ([+-]?[\d.]+ \w+)")


def _mib(text: str) -> float:
    number, unit = text.split()
    return float(number) * {"B": 1 / MIB, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[unit]


@pytest.mark.skipif(not memory.start_peaks(), reason="no /proc/self/clear_refs here")
def test_on_the_cpu_a_64_mib_tensor_s_card_shows_plus_64_mib() -> None:
    engine = Engine()
    engine.run(act.RunCode("warm = torch.ones(8) + 1"))  # the first line loads what it needs
    _trim()
    made = engine.run(act.RunCode("x = torch.ones(4096, 4096)"))  # 64 MiB of float32
    card = outcome_plain(made)
    found = CPU_LINE.search(card)
    assert found, card
    change, peak = _mib(found[1]), _mib(found[2])
    assert 64 <= change < 64.5 and change <= peak < 64.5, card  # "+64.00 MiB"
    assert found[1].startswith("+64.0")
    # a temporary: the RSS is back where it was, the peak shows what it held meanwhile
    _trim()
    temporary = engine.run(act.RunCode("torch.ones(4096, 4096).sum()"))
    found = CPU_LINE.search(outcome_plain(temporary))
    assert found, outcome_plain(temporary)
    assert abs(_mib(found[1])) < 1 and 60 <= _mib(found[2]) < 80, found[0]  # ~64 MiB held
    # a form's action says the same
    _trim()
    form = engine.run(act.CreateFilled("y", "ones", (4096, 4096)))
    found = CPU_LINE.search(outcome_plain(form))
    assert found and found[1].startswith("+64.0"), outcome_plain(form)


def test_the_peaks_are_reset_only_where_cuda_runs() -> None:
    """start_peaks asks torch to reset a GPU's peak only where CUDA was initialised (no new
    context); without CUDA it resets the RSS high-water mark alone."""
    if torch.cuda.is_initialized():
        pytest.skip("CUDA is running in this process")
    assert memory.torch_memory_counters() == {}
    assert memory.start_peaks() in (True, False)
    assert not torch.cuda.is_initialized()
