"""The lesson's words, checked against torch 2.13 and both editions of the book: each
correction a teacher asked for, in English and in Chinese, on the words the
student reads. The tests that run code are in test_lesson_runs.py."""

from __future__ import annotations

import inspect
import re

import pytest
from torch.utils import benchmark

from gpumon import i18n
from gpumon.playground.kernel.explain import EXPLANATIONS
from gpumon.playground.lesson import glossary, results
from gpumon.playground.lesson.steps import LESSON, LessonStep

STEP = {s.id: s for s in LESSON}


def zh(message: str) -> str:
    """``message`` in Chinese, as the catalogue has it."""
    i18n.set_language("zh_CN")
    try:
        return i18n.tr(message)
    finally:
        i18n.set_language("en")


def codes(step: LessonStep) -> list[str]:
    return [a.code() for a in step.actions]


def both(step_id: str) -> tuple[str, str]:
    """What a step says, in English and in Chinese: its narration, then its "More" (what a
    class may skip, in the window's fold and in a note after the step in the terminal)."""
    step = STEP[step_id]
    texts = [t for t in (step.narration, step.more) if t]
    return " ".join(texts), "".join(zh(t) for t in texts)


# 1. ---------------------------------------------------------------------------------------------

def test_1_none_means_a_cpu_only_or_a_rocm_build_and_a_mac_s_gpu_is_mps() -> None:
    en, cn = both("cuda-queries")
    assert "never sees a GPU" not in en and "永远看不到" not in cn
    for needle in ("CPU-only build", "ROCm build", "AMD GPUs", "torch.version.hip", "mps",
                   "try_gpu returns the CPU"):
        assert needle in en, needle
    for needle in ("仅支持 CPU 的版本", "ROCm", "AMD GPU", "torch.version.hip", "mps",
                   "try_gpu 在那里返回 CPU"):
        assert needle in cn, needle


# 2. ---------------------------------------------------------------------------------------------

def test_2_both_loops_are_warmed_up_then_alternated() -> None:
    from gpumon.playground.lesson.step_code import LOG_EVERY_STEP

    top = [line for line in LOG_EVERY_STEP.splitlines() if not line.startswith(" ")]
    warm = next(i for i, line in enumerate(top)
                if line.startswith("item_every_step(), copy_at_the_end()"))
    loop = next(i for i, line in enumerate(top) if line.startswith("for _ in range(3):"))
    assert warm < loop and not any("seconds(i" in line or "seconds(c" in line for line in top)
    body = LOG_EVERY_STEP.split(top[loop] + "\n", 1)[1].splitlines()
    assert body[:2] == ["    every_step.append(seconds(item_every_step))",
                        "    at_the_end.append(seconds(copy_at_the_end))"]
    en, cn = both("item-every-step")
    assert "runs once untimed, then three times in turn" in en and "noise" in en
    assert "先各运行一次（不计时）" in cn and "噪声" in cn


# 3. ---------------------------------------------------------------------------------------------

def test_3_timer_gets_all_of_torch_s_threads_and_the_text_says_why() -> None:
    from gpumon.playground.lesson.step_code import BENCHMARK

    assert inspect.signature(benchmark.Timer).parameters["num_threads"].default == 1
    assert "num_threads=torch.get_num_threads()" in BENCHMARK
    en, cn = both("timing")
    assert "num_threads=1" in en and "torch.get_num_threads()" in en
    assert "num_threads=1" in cn and "核心数" in cn


# 4. ---------------------------------------------------------------------------------------------

def test_4_cuda_visible_devices_order_uuids_and_when_it_is_read() -> None:
    en, cn = both("cuda-queries")
    for needle in ("in the order given", "=2,0 makes GPU 2 cuda:0", "GPU-<uuid>",
                   "read only when CUDA initializes", "without the GPU- prefix"):
        assert needle in en, needle
    for needle in ("按列出的顺序", "=2,0 让 GPU 2 成为 cuda:0", "GPU-<uuid>", "初始化",
                   "GPU- 前缀"):
        assert needle in cn, needle
    assert "hides GPUs and numbers the rest" not in en  # the order was not said
    uuids = codes(STEP["cuda-queries"])[-1]
    assert uuids.startswith("['GPU-' + str(torch.cuda.get_device_properties(i).uuid)")


# 5. ---------------------------------------------------------------------------------------------

def test_5_empty_cache_gives_torch_no_memory_and_del_frees_only_the_last_reference() -> None:
    en, cn = both("memory")
    assert "gives PyTorch itself no more memory" in en and "retries" in en
    assert "del frees a tensor with its last reference" in en and "Out[n] and _" in en
    assert "不会让 PyTorch 自己多得到显存" in cn and "最后一个引用" in cn
    assert "Out[n] 和 _" in cn


# 6. ---------------------------------------------------------------------------------------------

def test_6_one_rule_for_when_values_come_back() -> None:
    results_stay, copies = both("results-stay"), both("copy-to-host")
    assert "unless you ask" not in results_stay[0] and "除非你主动要求" not in results_stay[1]
    assert "without being asked" not in copies[0] and "没有明说" not in copies[1]
    en, cn = copies
    assert "whenever Python needs a number" in en
    assert "规则只有一条：Python 需要用到某个数值时" in cn
    for needle in ("printing a tensor", ".item()", ".tolist()", ".numpy()", "(if t:)",
                   "nonzero()", "mask", "waits for the GPU"):
        assert needle in en, needle
    for needle in ("打印张量", ".item()", ".tolist()", ".numpy()", "if t:", "nonzero()", "掩码"):
        assert needle in cn, needle
    assert "h[h > 1]" in codes(STEP["copy-to-host"])
    assert "step 13" in results_stay[0] and "第 13 步" in results_stay[1]
    assert LESSON[12].id == "copy-to-host"  # the step that results-stay points to


# 7. ---------------------------------------------------------------------------------------------

def test_7_glossary_streams_views_and_the_api_spelling() -> None:
    meaning = {t.term: t.meaning for t in glossary.GLOSSARY}
    sync = meaning["synchronize"]
    assert "waits for all the streams of the device" in sync and "current stream" in sync
    assert "所有流" in zh(sync) and "当前流" in zh(sync)
    kernel = meaning["CUDA kernel"]
    assert "views (view, t(), slicing)" in kernel and "launch none" in kernel
    assert "视图" in zh(kernel) and "不启动核函数" in zh(kernel)
    english = [s.narration for s in LESSON] + [t.meaning for t in glossary.GLOSSARY] + \
        [e for _, e in EXPLANATIONS] + [getattr(results, n) for n in dir(results)
                                        if n.isupper() and isinstance(getattr(results, n), str)]
    assert not [t for t in english if re.search(r"ynchronis", t)]


# 8. ---------------------------------------------------------------------------------------------

def test_8_numpy_refuses_a_tensor_that_requires_grad() -> None:
    en, cn = both("copy-to-host")
    assert "refuses a tensor that requires grad: .detach() it first" in en
    assert "requires_grad" in cn and ".detach()" in cn
    step = STEP["copy-to-host"]
    assert ["w.numpy()", "w.detach().numpy()"] == codes(step)[-2:]
    assert step.on_gpu[-2].startswith("RuntimeError: Can't call numpy() on Tensor that requires")


# 9. ---------------------------------------------------------------------------------------------

def test_9_fewer_gpus_weights_only_and_map_location_device() -> None:
    en, cn = both("save-load")
    for needle in ("fewer GPUs than the saver's", "cuda:1", "weights_only=True",
                   "map_location=device loads it anywhere, the habit to teach"):
        assert needle in en, needle
    for needle in ("GPU 更少的机器", "cuda:1", "weights_only=True", "map_location=device", "习惯"):
        assert needle in cn, needle


# 11. --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("step", [s for s in LESSON if s.on_gpu], ids=lambda s: s.id)
@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_11_gpu_transcripts_show_only_what_a_prompt_prints(step: LessonStep,
                                                           language: str) -> None:
    i18n.set_language(language)
    try:
        lines = step.gpu_text().splitlines()
    finally:
        i18n.set_language("en")
    for before, line in zip(lines, lines[1:], strict=False):
        assigned = re.match(r">>> (\w+) = ", before)
        if assigned and "... " not in line and not line.startswith("#") \
                and not re.match(r"[\w.]+Error: ", line):
            assert line == f">>> {assigned.group(1)}", (before, line)  # asked for, as at a prompt
    assert "None" not in lines  # a prompt prints nothing for None
    assert not [line for line in lines if line.startswith("(")]  # descriptions are comments
    assert not [t for t in step.on_gpu if t.startswith("(")]


# 12. --------------------------------------------------------------------------------------------

def test_12_step_3_has_a_gpu_transcript_like_the_book_s() -> None:
    step = STEP["cuda-queries"]
    assert len(step.on_gpu) == len(step.actions)
    shown = dict(zip(codes(step), step.on_gpu, strict=True))
    assert shown["torch.cuda.is_available()"] == "True"
    assert shown["torch.cuda.current_device()"] == "0"
    assert shown["torch.cuda.get_device_name(0)"].startswith("# ")  # a comment: it varies
    assert "1 in the book" in shown["torch.cuda.device_count()"]


# 13. --------------------------------------------------------------------------------------------

def test_13_window_only_words_are_not_in_the_narration() -> None:
    window_words = r"marker|[Ii]n the window|each card|\bgraphs?\b|\btabs?\b"
    assert not [s.id for s in LESSON if re.search(window_words, s.narration)]
    assert not [s.id for s in LESSON if re.search("卡片|曲线|标签页", zh(s.narration))]
    assert "marker on the graphs" in STEP["memory"].window_note
    assert "标记" in zh(STEP["memory"].window_note)


# 15, 16, 17 -------------------------------------------------------------------------------------

def test_15_the_seed_s_own_idiom_beside_try_gpu() -> None:
    idiom = "torch.device('cuda' if torch.cuda.is_available() else 'cpu')"
    assert idiom in codes(STEP["choose-device"])
    en, cn = both("choose-device")
    assert idiom in en and idiom in cn


def test_16_cpu_means_all_cores_and_main_memory_cuda_i_one_card() -> None:
    en, cn = both("choose-device")
    assert "cpu means all the CPU's cores and the main memory" in en
    assert "cuda:i is one card and its own memory" in en
    assert "全部核心" in cn and "一块卡" in cn


def test_17_each_minibatch_is_moved_in_the_loop() -> None:
    from gpumon.playground.lesson.step_code import MINIBATCHES

    assert MINIBATCHES in codes(STEP["model-on-gpu"])
    loop = MINIBATCHES.split("for X, y in loader:\n", 1)[1].splitlines()
    assert loop[0].startswith("    X, y = X.to(device), y.to(device)")
    en, cn = both("model-on-gpu")
    assert "DataLoader" in en and "at every iteration" in en
    assert "DataLoader" in cn and "每次迭代" in cn


# 14 ---------------------------------------------------------------------------------------------

def test_14_exercise_4_is_the_last_step_and_needs_two_gpus() -> None:
    step = LESSON[-1]
    assert step.id == "two-gpus-at-once" and step.min_gpus == 2
    code = step.code()
    assert "a0 @ a0" in code and "a1 @ a1" in code and "torch.cuda.synchronize(first)" in code
    assert "first, second = 'cuda:0', 'cuda:1'" in code
    en, cn = both("two-gpus-at-once")
    assert "asynchronous" in en and "two GPUs" in en and "异步" in cn
    # one GPU: both loops on cuda:0, where "at once" brings nothing, and the text says so
    assert "first, second = 'cuda:0', 'cuda:0'" in step.one_gpu_variant[0].code()
    assert "with one GPU both products go to cuda:0 and 'at once' brings nothing" in en
    assert "“同时”带不来任何好处" in cn
