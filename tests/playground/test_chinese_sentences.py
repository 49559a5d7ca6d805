"""The playground's own sentences in Chinese: forms, typed values, devices, sizes, threads.

Positions, code, device strings and units stay as they are; the words around them change.
"""

from __future__ import annotations

import pytest

from gpumon import i18n
from gpumon.playground.data import actions as act
from gpumon.playground.data.device_offer import NOT_HERE, is_unavailable, offered
from gpumon.playground.data.devices import DeviceOption, cuda_index_problem
from gpumon.playground.data.errors import Refusal
from gpumon.playground.data.form_text import AS_IS, parse_shape, ref_for
from gpumon.playground.data.values import ValuesError, parse_values
from gpumon.playground.kernel import memory
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.printed import BoundedText
from gpumon.playground.kernel.threads import ThreadPlan
from gpumon.playground.kernel.torch_devices import list_devices


def test_a_malformed_shape_is_named_with_its_position(chinese: None) -> None:
    with pytest.raises(ValueError) as caught:
        parse_shape("2, x3")
    assert str(caught.value) == ("形状是用逗号分隔的整数，例如 2, 3：第 4 个字符处的 'x3' "
                                 "不是整数。")


def test_the_same_shape_sentence_in_english() -> None:
    with pytest.raises(ValueError, match=r"'x3' at character 4 is not a whole number"):
        parse_shape("2, x3")


def test_as_is_works_in_either_language(chinese: None) -> None:
    assert i18n.tr(AS_IS) == "（不变）"
    assert ref_for("x", i18n.tr(AS_IS)) == "x"
    assert ref_for("x", AS_IS) == "x"
    assert ref_for("x", ".cpu()") == act.Ref("x", "cpu")


@pytest.mark.parametrize(("text", "expected"), [
    ("[1, 2", "不是数字列表：第 1 个字符处的 [ 没有闭合；请用 ] 结束列表。"),
    ("  [1, 2]]", "不是数字列表：第 9 个字符处的 ] 没有对应的开括号；请删掉它。"),
    ("[1, (2]", "不是数字列表：第 7 个字符处的 ] 与列表开头的 ( 不匹配。"),
    ("[1 2]", "不是数字列表：'1 2' 中缺少逗号（从第 2 个字符起），应写成 [1, 2, 3] 这样。"),
    ("[1, x]", "只允许数字、True/False 和 [列表]；在第 5 个字符处发现了 'x'。"),
    ("[[1, 2], [3]]", "列表不规整：元素 [1] 的形状是 (1,)，而元素 [0] 的形状是 (2,)；"
                      "每一行的长度必须相同。"),
    ("[[1, 2], 3]", "列表不规整：元素 [1] 是单个数，而元素 [0] 的形状是 (2,)；"
                    "每一行的长度必须相同。"),
    ("", "没有给出数值：请输入数字，例如 [1, 2, 3]。"),
    ("[1j]", "这里不支持复数；请使用实数。"),
])
def test_typed_values_are_refused_in_chinese_with_the_position(chinese: None, text: str,
                                                               expected: str) -> None:
    with pytest.raises(ValuesError) as caught:
        parse_values(text)
    assert str(caught.value) == expected


def test_the_engine_refuses_typed_values_in_chinese(chinese: None) -> None:
    out = Engine().run(act.CreateTensor("t", "[1, 2"))
    assert out.error is not None and not out.error.by_torch
    assert out.error.message == "不是数字列表：第 1 个字符处的 [ 没有闭合；请用 ] 结束列表。"
    assert out.error.explanation == "torch.tensor 需要由数字组成、各行长度一致的嵌套列表。"


def test_device_offer_in_chinese(chinese: None) -> None:
    cpu = DeviceOption("cpu", "cpu — 内存")
    options = offered([cpu], nvml_gpus=2)
    assert [o.name for o in options] == ["cpu", "cuda:0", "cuda:1"]
    assert options[1].label == ("cuda:0 — 本机不可用（PyTorch 看不到任何 CUDA 设备）；"
                                "选择它可以看看 torch 怎么说")
    assert all(is_unavailable(o) for o in options[1:]) and not is_unavailable(cpu)
    assert i18n.tr(NOT_HERE) in options[1].label
    some = offered([cpu, DeviceOption("cuda:0", "cuda:0 — H100", "a" * 32)], nvml_gpus=2)
    assert some[2].label.startswith("cuda:1 — 本机不可用（PyTorch 只看到其中 1 个）")


def test_device_offer_in_english_is_unchanged() -> None:
    options = offered([DeviceOption("cpu", "cpu — main memory")], nvml_gpus=1)
    assert options[1].label == ("cuda:0 — not available here (PyTorch sees no CUDA device); "
                                "pick it to see what torch says")
    assert is_unavailable(options[1])


def test_where_it_lives_in_chinese(chinese: None) -> None:
    labels = {o.name: o.label for o in list_devices()}
    assert labels["cpu"] == "cpu — 内存"
    if "meta" in labels:
        assert labels["meta"] == "meta — 只有形状、没有数据（此处没有 GPU）"
    assert cuda_index_problem(2, 1) == "没有 cuda:2：PyTorch 只看到 1 个 CUDA 设备，即 cuda:0。"
    assert cuda_index_problem(4, 2) == ("没有 cuda:4：PyTorch 看到 2 个 CUDA 设备，从 cuda:0 到 "
                                        "cuda:1。")


def test_to_numpy_details_in_chinese(chinese: None) -> None:
    engine = Engine()
    engine.run(act.CreateTensor("x", "[1.0, 2.0]"))
    out = engine.run(act.ToNumpy("x"))
    assert out.ok and dict(out.details) == {"所在位置": "内存（一个 numpy 数组）",
                                            "与张量共用内存": "是"}
    params = Engine()
    params.run(act.CreateModel("net", 3, 1))
    shown = dict(params.run(act.ModelParameters("net")).details)
    assert shown["weight"] == "cpu，形状 (1, 3)，float32"  # parameter names stay


def test_a_host_size_refusal_in_chinese(chinese: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 1024**3)
    with pytest.raises(Refusal) as caught:
        memory.check_fits(2 * 1024**3, "cpu", None)
    assert str(caught.value) == "未分配：当前可用内存只有 1.00 GiB，放不下 2.00 GiB。"
    assert caught.value.explanation == "对于空闲内存放不下的张量，gpumon 会在分配之前就拒绝。"


def test_thread_note_and_printed_remainder_in_chinese(chinese: None) -> None:
    assert ThreadPlan(2, 1, "lowered").text() == "2 个核心中的 1 个给 torch 使用，让窗口保持流畅"
    assert ThreadPlan(4, 2, "env", "OMP_NUM_THREADS=2").text() == \
        "4 个核心中的 2 个给 torch 使用（OMP_NUM_THREADS=2）"
    out = BoundedText(limit=3)
    out.write("abcdef")
    assert out.text() == "abc\n… 另有 3 个字符已打印（未保留）"


def test_thread_note_in_english_keeps_its_plural() -> None:
    assert ThreadPlan(1, 1, "kept").text() == \
        "1 of 1 core for torch: long actions may slow the window"
    assert ThreadPlan(2, 1, "lowered").text() == \
        "1 of 2 cores for torch, so the window stays responsive"
