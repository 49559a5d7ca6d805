"""The lesson's claims, checked on its text: each sentence a teacher found wrong is gone, and
the right one is there (the narration, the code shown, and the error explanations)."""

from __future__ import annotations

import re

import pytest

from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.playground.kernel.explain import EXPLANATIONS, explanation_msgid
from gpumon.playground.lesson.steps import LESSON, LessonStep, is_comment

STEP = {s.id: s for s in LESSON}
ALL_TEXT = " ".join([t for s in LESSON for t in (s.narration, s.more)]
                    + [e for _, e in EXPLANATIONS])


def said(step: LessonStep) -> str:
    """What a step says in English: its narration, then its "More" (what a class may skip)."""
    return " ".join(t for t in (step.narration, step.more) if t)

#: torch 2.13's CUDA out-of-memory message, as its caching allocator writes it.
OOM = ("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB "
       "of which 1.06 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB "
       "memory in use. Of the allocated memory 77.50 GiB is allocated by PyTorch, and 120.00 MiB "
       "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
       "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")


def codes(step: LessonStep) -> list[str]:
    return [a.code() for a in step.actions]


def test_step_ids_and_the_cut_repeat() -> None:
    assert "device-attr" not in STEP  # x.device alone: step 4 already shows it
    assert "x.device" in codes(STEP["tensor-on-cpu"])


def test_nvidia_smi_cuda_version_and_utilization() -> None:
    text = STEP["nvidia-smi"].narration
    assert "newest CUDA this driver supports" in text
    assert "not the CUDA toolkit installed nor the one PyTorch was built with" in text
    assert "at least one kernel was running (not the share of the GPU's cores in use)" in text


def test_is_available_causes_visible_devices_and_order() -> None:
    step = STEP["cuda-queries"]
    for needle in ("driver is missing or too old", "no GPU is visible", "CUDA_VISIBLE_DEVICES",
                   "CUDA_DEVICE_ORDER=PCI_BUS_ID", "UUID", "torch.version.cuda"):
        assert needle in said(step), needle
    assert act.Versions() in step.actions and step.show_uuids
    assert any("get_device_properties(i).uuid" in c for c in codes(step))
    assert any("CUDA_DEVICE_ORDER" in c and "CUDA_VISIBLE_DEVICES" in c for c in codes(step))


def test_device_is_chosen_once_right_after_the_queries_and_used_later() -> None:
    order = [s.id for s in LESSON]
    assert order.index("choose-device") == order.index("cuda-queries") + 1
    assert "device = try_gpu()" in codes(STEP["choose-device"])
    using = [s.id for s in LESSON if any("device=device" in c or ".to(device)" in c
                                          or "device)" in c for c in codes(s))]
    assert {"create-on-device", "model-on-gpu", "copy-to-host", "memory", "asynchronous",
            "save-load"} <= set(using)


def test_step_6_factories_versus_torch_tensor() -> None:
    step = STEP["create-on-device"]
    assert "Creating a tensor where it will be used avoids a copy" not in ALL_TEXT
    assert "then copies it to the device" in step.narration
    assert "allocate a tensor directly on the device" in step.narration
    assert not any(isinstance(a, act.Move) for a in step.actions)  # no .to() of what is there


def test_x_cuda_copies_and_net_cuda_moves_in_place_then_the_optimizer() -> None:
    assert "the copy must be assigned: x = x.cuda(0)" in STEP["to-gpu"].narration
    assert codes(STEP["to-gpu"])[:2] == ["x.cuda(0)", "x.device"]  # x unchanged: still cpu
    step = STEP["model-device"]
    assert "moves the model's parameters in place" in step.narration
    assert "Build the optimizer after the move" in step.narration
    assert codes(step).index("net.cuda()") < \
        codes(step).index("opt = torch.optim.SGD(net.parameters(), lr=0.1)")


def test_same_device_explanation() -> None:
    assert "torch never copies between devices by itself" not in ALL_TEXT
    same = explanation_msgid("RuntimeError", "Expected all tensors to be on the same device, "
                             "but found at least two devices, cuda:0 and cpu!")
    assert "0-dim CPU tensor" in same and "index" in same
    assert "the input to the model's device" in same and ".cpu()" not in same
    assert explanation_msgid(
        "RuntimeError", "Tensor on device cpu is not on the expected device meta!") == same
    mixed = STEP["mixed-devices"]
    assert "0-dim CPU tensor" in said(mixed) and "index a GPU" in said(mixed)
    assert "y + torch.tensor(10)" in codes(mixed) and "y[torch.tensor([0, 2])]" in codes(mixed)
    assert "move the input to the model's device" in STEP["model-on-gpu"].narration
    assert "net(torch.rand(2, 3).to(device))" in codes(STEP["model-on-gpu"])


def test_printing_item_and_tolist_copy_implicitly() -> None:
    step = STEP["copy-to-host"]
    assert "whenever Python needs a number" in step.narration
    assert {"h.sum().item()", "h.tolist()", "h.numpy(force=True)"} <= set(codes(step))


def test_numpy_shares_storage_and_force_copies() -> None:
    assert "never does that copy silently" not in ALL_TEXT
    cuda = explanation_msgid("TypeError", "can't convert cuda:0 device type tensor to numpy. "
                             "Use Tensor.cpu() to copy the tensor to host memory first.")
    assert "shares the tensor's memory" in cuda and "numpy(force=True)" in cuda
    meta = explanation_msgid("TypeError", "can't convert meta device type tensor to numpy. "
                             "Use Tensor.cpu() to copy the tensor to host memory first.")
    assert "Cannot copy out of meta tensor" in meta and meta != cuda
    assert "shares the CPU tensor's memory" in said(STEP["copy-to-host"])


def test_small_copies_cost_synchronization_not_bytes() -> None:
    text = said(STEP["copy-to-host"])
    assert "the synchronization, not the bytes moved" in text
    assert "Many small copies like these can slow a training loop a lot" not in ALL_TEXT


def test_out_of_memory_advice() -> None:
    advice = explanation_msgid("torch.OutOfMemoryError", OOM)
    assert "delete names, call torch.cuda.empty_cache()" not in advice
    assert "empty_cache() is no cure" in advice
    for needle in ("reserved but unallocated", "other processes", "del", "smaller batch",
                   "torch.no_grad()", "expandable_segments:True", "max_memory_allocated()"):
        assert needle in advice, needle


def test_asynchronous_execution_comes_before_any_timing() -> None:
    order = [s.id for s in LESSON]
    timed = [s.id for s in LESSON if s.show_time or "perf_counter" in s.code()
             or "benchmark" in s.code()]
    assert timed[0] == "asynchronous" and order.index("asynchronous") < order.index("timing")
    step, item = STEP["asynchronous"], STEP["item-every-step"]
    assert order.index("item-every-step") == order.index("asynchronous") + 1
    assert "torch.cuda.synchronize()" in step.code()
    assert "[train_step().item() for _ in range(100)]" in item.code()  # the loss, logged
    assert "torch.stack([train_step().detach() for _ in range(100)]).tolist()" in item.code()
    assert "with .item() at every step, Python waits for each step's work" in item.narration
    assert "gpumon itself synchronizes after every action" in step.narration


def test_timing_uses_benchmark_timer_for_every_size_on_every_device() -> None:
    step = STEP["timing"]
    assert all(isinstance(a, RunCode) for a in step.actions)
    assert codes(step)[0] == "torch.get_num_threads()"  # what Timer is given, printed
    code = step.code()
    assert "benchmark.Timer('a @ a'" in code and "blocked_autorange" in code
    assert "for dev in dict.fromkeys([torch.device('cpu'), device])" in code
    assert "for n in (10, 1000)" in code
    assert "only the big product is warmed up" not in ALL_TEXT
    assert not any(isinstance(a, act.Compute) and a.op == "matmul"
                   for s in LESSON for a in s.actions)  # no single-run timings are left


def test_save_and_load_across_devices_is_labelled_truthfully() -> None:
    step = STEP["save-load"]
    assert "torch.load(SAVED_ON_CUDA)" in codes(step)
    assert "torch.load(SAVED_ON_CUDA, map_location='cpu')" in codes(step)
    assert "written with that tag on a machine without a GPU" in step.narration
    assert "Attempting to deserialize object on a CUDA device" in step.narration


def test_meta_wording_differs_and_is_said() -> None:
    from gpumon.playground.lesson.results import META_RAN

    assert "worded differently from CUDA's" in META_RAN


@pytest.mark.parametrize("step", [s for s in LESSON if s.on_gpu], ids=lambda s: s.id)
def test_gpu_transcripts_have_one_line_per_action(step: LessonStep) -> None:
    assert len(step.on_gpu) == len(step.actions)
    exact = [t for t in step.on_gpu if not is_comment(t)]
    for text in exact:  # torch's reprs and messages, never a figure made up for the text
        assert re.fullmatch(r"[\w.]+Error: .+|tensor\(.+|device\(.+|\[.+\]|array\(.+|True|"
                            r"None|[\d.]+|Linear\(.+", text, re.S), text
