"""What the activity figures mean, in a sentence (``model/activity.py: meaning``): each rule
on the figures a real H200 gave and on made-up ones at its edges, the occupancy note, "" when
SM activity is not known, and the same in Chinese. No Qt."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gpumon import i18n
from gpumon.telemetry.model.activity import (
    ActivityState,
    meaning,
    meaning_of,
    percent,
    why_empty,
)
from gpumon.telemetry.model.types import GpuSample


@pytest.fixture
def chinese() -> Iterator[None]:
    was = i18n.language()
    i18n.set_language("zh_CN")
    yield
    i18n.set_language(was)


def test_the_h200_under_a_bf16_product_reads_as_tensor_work_and_normal_occupancy() -> None:
    # The H200: GPU-Util 100, SM 96.4, occupancy 14.3, tensor 93.6, DRAM 16.6.
    assert meaning(100, 96.4, 14.3, 93.6, 16.6) == (
        "SM activity 96 %, tensor 94 %: the tensor cores do the work. "
        "Occupancy 14 %: few warps per SM, normal for large matrix products.")


def test_the_h200_under_tiny_products_reads_as_waiting_for_launches() -> None:
    # The same H200, 10 x 10 products in a Python loop: GPU-Util 36, SM 0.24, occupancy 0.015.
    text = meaning(36, 0.24, 0.015, 0.0, 0.0)
    assert text == ("GPU-Util 36 % but SM activity 0.2 %: each GPU kernel keeps few SMs busy, "
                    "as tiny ones do while the GPU mostly waits for their launches.")
    assert "Occupancy" not in text  # the occupancy of such kernels says nothing


@pytest.mark.parametrize(("figures", "starts"), [
    ((0.0, 0.0, 0.0, 0.0, 0.0), "GPU-Util 0 %, SM activity 0 %: the GPU is idle"),
    ((4.9, 4.9, None, None, None), "GPU-Util 5 %, SM activity 5 %: the GPU is idle"),
    ((100, 24.9, 30, 0, 1), "GPU-Util 100 % but SM activity 25 %: the GPU kernels that ran"),
    ((79.9, 19.9, 30, 0, 1), "GPU-Util 80 % but SM activity 20 %: each GPU kernel keeps"),
    ((80, 19.9, 30, 0, 1), "GPU-Util 80 % but SM activity 20 %: the GPU kernels that ran"),
    ((19.9, 1.0, 30, 0, 1), "GPU-Util 20 %, SM activity 1 %: while GPU kernels ran, about 5 %"),
    ((90, 60, 40, 2, 90), "DRAM 90 %: memory-bound"),
    ((90, 60, 40, 80, 60), "DRAM 60 %: memory-bound"),  # the memory rule comes first
    ((90, 60, 40, 50, 59.9), "SM activity 60 %, tensor 50 %: the tensor cores"),
    ((90, 85, 50, 0, 20), "SM activity 85 %, tensor 0 %: the SMs work on their ordinary"),
    ((90, 40, 50, 4.9, 20), "SM activity 40 %, tensor 5 %: the SMs work on their ordinary"),
    ((60, 40, 30, 20, 10), "GPU-Util 60 %, SM activity 40 %: while GPU kernels ran, about 67 %"),
    ((60, 80, 30, None, None), "GPU-Util 60 %, SM activity 80 %: while GPU kernels ran, "
                               "about 100 %"),
])
def test_each_rule_at_its_edges(figures: tuple[float | None, ...], starts: str) -> None:
    assert meaning(*figures).startswith(starts)


def test_low_occupancy_is_explained_only_under_busy_sms() -> None:
    assert "Occupancy 20 %" in meaning(100, 80, 20, 90, 10)
    assert "Occupancy" not in meaning(100, 79.9, 20, 90, 10)
    assert "Occupancy" not in meaning(100, 95, 25, 90, 10)
    assert "Occupancy" not in meaning(100, 95, None, 90, 10)


def test_at_full_gpu_util_nothing_waited_for_launches() -> None:
    """At GPU-Util 100 % a kernel ran the whole time: the GPU did not wait. The review's
    meaning(100, 24) said it "mostly waits for their launches"."""
    text = meaning(100, 24)
    assert text == ("GPU-Util 100 % but SM activity 24 %: the GPU kernels that ran kept few "
                    "SMs busy, as tiny ones or ones with few blocks do.")
    assert "wait" not in text
    assert "waits for their launches" in meaning(36, 0.24)  # well below 100 %: it waits


def test_low_occupancy_is_normal_only_for_tensor_work() -> None:
    """A memory-bound kernel with few warps may be held back by them: 'normal for large matrix
    products' only where the tensor cores are busy (the review's meaning(100, 90, 10, 0, 70))."""
    memory_bound = meaning(100, 90, 10, 0, 70)
    assert memory_bound.startswith("DRAM 70 %: memory-bound")
    assert "normal" not in memory_bound
    assert "Occupancy 10 %: few warps per SM to switch between while they wait for memory" \
        in memory_bound
    assert "normal for large matrix products" in meaning(100, 96.4, 14.3, 93.6, 16.6)
    assert "normal" not in meaning(100, 90, 10, 49.9, 20)  # tensor cores not busy enough
    assert "Occupancy" not in meaning(100, 90, 10, 0, 20)  # nothing sure to say of it
    assert "Occupancy" not in meaning(100, 90, 10, None, None)


def test_nothing_is_said_without_sm_activity() -> None:
    assert meaning(100, None, 14, 90, 16) == ""
    assert meaning(None, None) == ""
    # GPU-Util not known (a remote series missing): only what SM activity alone says
    assert meaning(None, 96, 14, 94, 17).startswith("SM activity 96 %, tensor 94 %")
    assert meaning(None, 2) == ""


def test_a_sample_s_values_and_a_lost_gpu() -> None:
    s = GpuSample(0, 0.0, gpu_util_pct=100.0, sm_active_pct=96.4, sm_occupancy_pct=14.3,
                  tensor_active_pct=93.6, dram_active_pct=16.6,
                  activity_state=ActivityState.READING)
    assert meaning_of(s) == meaning(100, 96.4, 14.3, 93.6, 16.6)
    assert meaning_of(GpuSample(0, 0.0, lost=True, sm_active_pct=50.0)) == ""
    assert meaning_of(None) == ""
    no_gpm = GpuSample(0, 0.0, gpu_util_pct=100.0, activity_state=ActivityState.UNSUPPORTED)
    assert meaning_of(no_gpm) == "" and why_empty(no_gpm.activity_state)


def test_percent_keeps_small_figures_visible() -> None:
    assert [percent(v) for v in (0.0, 0.24, 0.96, 1.0, 14.3, 99.6, 100.0)] == [
        "0 %", "0.2 %", "1 %", "1 %", "14 %", "100 %", "100 %"]


@pytest.mark.usefixtures("chinese")
def test_the_corrected_sentences_in_chinese() -> None:
    full = meaning(100, 24)
    assert "运行的核函数只让少数 SM 忙碌" in full and "等待" not in full
    assert "等待它们启动" in meaning(36, 0.24)
    memory_bound = meaning(100, 90, 10, 0, 70)
    assert "等待显存" in memory_bound and "正常" not in memory_bound


def test_gpm_is_not_said_to_need_a_data_center_gpu() -> None:
    text = why_empty(ActivityState.UNSUPPORTED)
    assert "Hopper (H100) or newer GPU" in text and "data-center" not in text


@pytest.mark.usefixtures("chinese")
def test_in_chinese() -> None:
    text = meaning(100, 96.4, 14.3, 93.6, 16.6)
    assert "96 %" in text and "14 %" in text and "SM activity" not in text
    assert any("\u4e00" <= c <= "\u9fff" for c in text)
    assert " " not in text.split("。")[1][:1]  # no space after a Chinese full stop
