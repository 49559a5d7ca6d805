"""What ``gpumon --lang en lesson`` printed, held against what its steps say, on the kind of
machine it ran on: without CUDA, with one GPU, with two or more.

Used by the GPU check on a live run (``runs.lesson_problems``) and by the tests on recorded
transcripts (tests/gpu/lesson/). Steps are found by their titles, not their numbers, so a step
added to the lesson moves nothing here; a claim about a new step is one more function in
``CLAIMS``. ``timed`` claims read durations: on a GPU their margins are wide (the H200: a
1% share against the 50% a claim allows), on a CPU they hold on a quiet machine only, so a
live run without CUDA leaves them out.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

_STEP = re.compile(r"^Step (\d+) of (\d+): (.*?)  \[[^\]]*\]$", re.MULTILINE)
GPU_LABEL = "On a CUDA GPU, this step shows (not run here):"
TWO_GPUS_LABEL = "On a machine with 2 GPUs, expect:"
MEASURED = "Measured on an NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130):"
_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
_SIZE = r"(-?[\d.]+ (?:B|KiB|MiB|GiB|TiB))"
_THREE = re.compile(r"# cuda:0: this process " + _SIZE + r" \(NVML, as nvidia-smi lists it\), "
                    r"reserved " + _SIZE + ", allocated " + _SIZE)
_TWO = re.compile(r"# cuda:0: allocated " + _SIZE + ", reserved " + _SIZE)
_SHARE = re.compile(r"^    \(([\d.]+), ([\d.]+), '([+-]?\d+)%'\)$", re.MULTILINE)
_BUSY = re.compile(r">>> busy\(lambda: (big|small) @ (?:big|small)\)\n\s+(\{[^\n]*\})")
BUSY_TITLE = "GPU-Util is not how busy the GPU is"
ITEM_TITLE = "Exercise: .item() at every step"
_ORDINAL_LINE = re.compile(r"\b(?:first|second|third|fourth|fifth|sixth|seventh) line\b")


def nbytes(size: str) -> float:
    """``"96.01 MiB"`` in bytes (format_bytes' own spelling)."""
    number, unit = size.split()
    return float(number) * _UNITS[unit]


@dataclass(frozen=True)
class Lesson:
    """A transcript cut into its steps, each found by its title."""

    text: str
    cuda: int  # CUDA devices torch saw where it ran
    timed: bool  # the durations it printed may be judged
    blocks: dict[str, str]  # title -> the step's text

    def step(self, title: str) -> str:
        return self.blocks.get(title, "")

    @staticmethod
    def flat(text: str) -> str:
        return " ".join(text.split())


def read(text: str, cuda: int, timed: bool) -> Lesson:
    marks = list(_STEP.finditer(text))
    blocks = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        blocks[m.group(3)] = text[m.start():end]
    return Lesson(text, cuda, timed, blocks)


def cuda_devices(text: str) -> int | None:
    """How many CUDA devices torch saw in the run that printed ``text`` (step 3's answer)."""
    m = re.search(r">>> torch\.cuda\.device_count\(\)\n\s+(\d+)\n", text)
    return int(m.group(1)) if m else None


# --- the claims, a function each: the lesson, what is wrong (empty when it holds) -------------

def nvidia_smi_columns(lesson: Lesson) -> list[str]:
    block = lesson.step("See the GPUs with nvidia-smi")
    problems = [f"step 1 does not explain {column}" for column in
                ("Fan", "Perf", "MIG M.", "GI ID, CI ID")
                if not re.search(rf"^    {re.escape(column)}: ", block, re.MULTILINE)]
    perf = lesson.flat(block.split("    Perf: ", 1)[-1].split("\n    Compute M.", 1)[0])
    if "P8" not in perf or "data-centre GPUs often stay at P0" not in perf:
        problems.append("step 1's Perf does not say both: desktop GPUs drop, data-centre "
                        "GPUs often stay at P0")
    return problems


def headings(lesson: Lesson) -> list[str]:
    problems = []
    if "(torch 2.13)" in lesson.text or "torch 2.13," in lesson.text:
        problems.append("a heading or a note names torch 2.13")
    if lesson.cuda and GPU_LABEL in lesson.text:
        problems.append("with a CUDA GPU, a step says what a CUDA GPU would show")
    for title in ("Copy between GPUs", "Exercise: two GPUs at once"):
        shown = TWO_GPUS_LABEL in lesson.step(title)
        if shown != (lesson.cuda < 2):
            problems.append(f"{title}: what 2 GPUs print is {'shown' if shown else 'missing'} "
                            f"with {lesson.cuda} CUDA GPU(s)")
    if lesson.cuda and "The same rule on the meta device:" in lesson.text:
        problems.append("with a CUDA GPU, the meta device appears")
    return problems


def lines_by_what_they_are(lesson: Lesson) -> list[str]:
    problems = []
    if _ORDINAL_LINE.search(lesson.flat(lesson.text)):
        problems.append("a narration points at a line by its number")
    block = lesson.step("Run the model on the GPU")
    if "as net(torch.rand(2, 3).to(device)) does" not in lesson.flat(block) or \
            ">>> net(torch.rand(2, 3).to(device))" not in block:
        problems.append("step 11 does not name its fix by the line that makes it")
    return problems


def measured_figures(lesson: Lesson) -> list[str]:
    return [f"{title}: the H200's figures are not printed under its name"
            for title in ("Memory: the context, the cache, del and empty_cache()",
                          "GPU work is asynchronous", ITEM_TITLE,
                          "Time the products properly, on every device", BUSY_TITLE)
            if lesson.flat(MEASURED) not in lesson.flat(lesson.step(title))]


def memory(lesson: Lesson) -> list[str]:
    block = lesson.step("Memory: the context, the cache, del and empty_cache()")
    made = block.split(">>> big = torch.ones(4096, 4096, device=device)", 1)[-1]
    made = made.split("  >>> ", 1)[0]  # what the 64 MiB tensor's line printed
    if not lesson.cuda:
        gpu = block.split(GPU_LABEL, 1)
        if len(gpu) < 2 or "recorded on an H200" not in gpu[1] or ">>> twice" not in gpu[1]:
            return ["memory: without CUDA, what an H200 recorded is not shown"]
        if not re.search(r"# cpu: RSS \+6\d\.\d\d MiB, peak \+6\d\.\d\d MiB", made):
            return ["memory: the 64 MiB tensor's line does not show what it cost"]
        return ["memory: the out-of-memory line ran without CUDA"] if ">>> twice" in gpu[0] \
            else []
    problems = []
    if not re.search(r"# cuda:0: allocated \+64\.0\d MiB, reserved [^,]+, peak ", made):
        problems.append("memory: the 64 MiB tensor's line does not show what it cost")
    three = [tuple(map(nbytes, m)) for m in _THREE.findall(block)]
    if not three and "NVML does not list this process" not in lesson.flat(block):
        problems.append("memory: no line gives NVML's figure for the process, nor says why")
    problems += [f"memory: process {p:.0f} >= reserved {r:.0f} >= allocated {a:.0f} fails"
                 for p, r, a in three if not p >= r >= a]
    after = {code: reading for code, reading in _readings(block.split(GPU_LABEL, 1)[0])}
    made, deleted, emptied = (after.get(code) for code in (
        "big = torch.ones(4096, 4096, device=device)", "del big", "torch.cuda.empty_cache()"))
    if made is None or deleted is None or emptied is None:
        problems.append("memory: no reading of cuda:0 after the tensor, del or empty_cache()")
    else:
        if not 60 * 2**20 <= made[0] - deleted[0] <= 68 * 2**20 or deleted[1] != made[1]:
            problems.append("memory: del did not drop allocated by 64 MiB with reserved kept")
        if not emptied[1] < deleted[1]:
            problems.append("memory: empty_cache() did not lower reserved")
    if "torch.OutOfMemoryError: CUDA out of memory" not in block or \
            "expandable_segments" not in block:
        problems.append("memory: no out-of-memory error naming expandable_segments")
    return problems


def _readings(block: str) -> list[tuple[str, tuple[float, float]]]:
    """(the code at each prompt, (allocated, reserved) on cuda:0 after it) in ``block``."""
    found = []
    for chunk in re.split(r"^  >>> ", block, flags=re.MULTILINE)[1:]:
        code = chunk.split("\n", 1)[0]
        three, two = _THREE.search(chunk), _TWO.search(chunk)
        if three:
            found.append((code, (nbytes(three[3]), nbytes(three[2]))))
        elif two:
            found.append((code, (nbytes(two[1]), nbytes(two[2]))))
    return found


def asynchronous(lesson: Lesson) -> list[str]:
    found = _SHARE.findall(lesson.step("GPU work is asynchronous"))[:1] + \
        _SHARE.findall(lesson.step(ITEM_TITLE))[:1]
    if len(found) < 2:
        return ["asynchronous: its two results are not printed"]
    if not lesson.timed:
        return []
    share, slower = found[0][2], found[1][2]  # returned and finished: the share says it
    problems = []
    if lesson.cuda and not int(share) < 50:
        problems.append(f"asynchronous: the products returned at {share}% of their work")
    if not lesson.cuda and not int(share) >= 90:
        problems.append(f"asynchronous: on the CPU the two times differ ({share}%)")
    if lesson.cuda and not int(slower) > 0:
        problems.append(f"asynchronous: .item() every step was not slower ({slower}%)")
    return problems


def timing(lesson: Lesson) -> list[str]:
    block = lesson.step("Time the products properly, on every device")
    threads = re.search(r">>> torch\.get_num_threads\(\)\n\s+(\d+)\n", block)
    speeds = re.search(r"\{'float32': ([\d.e+-]+), 'tf32': ([\d.e+-]+), "
                       r"'bfloat16': ([\d.e+-]+|'[^'\n]*')\}", block)
    problems = [] if threads else ["timing: torch's threads are not printed"]
    if not speeds:
        return problems + ["timing: no TFLOP/s by precision"]
    if speeds[3].startswith("'"):  # a Pascal GPU: torch's error in place of bf16's figure
        return problems
    fp32, tf32, bf16 = map(float, speeds.groups())
    tensor_cores = re.search(r"NVIDIA (?:H100|H200|A100|B200)", lesson.text)
    if lesson.timed and lesson.cuda and tensor_cores and not fp32 < min(tf32, bf16):
        problems.append(f"timing: float32 ({fp32}) not below TF32 ({tf32}) and bf16 ({bf16})")
    return problems


def two_gpus_at_once(lesson: Lesson) -> list[str]:
    block = lesson.step("Exercise: two GPUs at once")
    ran = block.split(TWO_GPUS_LABEL, 1)[0]
    found = _SHARE.findall(ran)
    if lesson.cuda == 0:
        return [] if "so it was not run" in lesson.flat(block) else [
            "two GPUs at once: ran without a GPU"]
    if lesson.cuda == 1 and "first, second = 'cuda:0', 'cuda:0'" not in ran:
        return ["two GPUs at once: with one GPU, both loops did not run on cuda:0"]
    if not found:
        return ["two GPUs at once: no times printed"]
    share = int(found[0][2])
    if lesson.timed and lesson.cuda == 1 and not share >= 80:
        return [f"two GPUs at once: on one GPU 'at once' took {share}% of the time"]
    if lesson.timed and lesson.cuda >= 2 and not share < 80:
        return [f"two GPUs at once: two GPUs at once took {share}% of the time"]
    return []


def copy_between_gpus(lesson: Lesson) -> list[str]:
    block = lesson.flat(lesson.step("Copy between GPUs"))
    if lesson.cuda == 1 and ("invalid device ordinal" not in block or
                             "they do not apply to this one" not in block):
        return ["copy between GPUs: torch's error, or why its footer does not apply, missing"]
    return ["copy between GPUs: 'so it ran anyway'"] if "so it ran anyway" in block else []


def gpu_util_is_not_busy(lesson: Lesson) -> list[str]:
    """The H200's figures under its name everywhere; NVML's two readings only with CUDA, and
    there, where GPM answered: the large product keeps more of the SMs (and of the tensor
    cores) busy than the tiny ones, and the tiny ones' GPU-Util is above their SM activity."""
    block = lesson.step(BUSY_TITLE)
    if not block:
        return ["gpu-util: the step is missing"]
    problems = []
    after = lesson.flat(block).split(lesson.flat(MEASURED), 1)[-1]
    if not all(figure in after for figure in ("GPU-Util 100%", "occupancy 14.3%",
                                              "691 W of the 700 W", "SW power cap")):
        problems.append("gpu-util: the H200's figures are not printed under its name")
    readings = {which: ast.literal_eval(text)
                for which, text in _BUSY.findall(block.split(GPU_LABEL, 1)[0])}
    if not lesson.cuda:
        return problems + (["gpu-util: NVML's readings ran without CUDA"] if readings else [])
    if set(readings) != {"big", "small"}:
        return problems + ["gpu-util: the two readings are not printed"]
    big, small = readings["big"], readings["small"]
    if not lesson.timed or big.get("sm_active_pct") is None or \
            small.get("sm_active_pct") is None:
        return problems  # no GPM here: the H200's figures stand in
    if not big["sm_active_pct"] > small["sm_active_pct"]:
        problems.append(f"gpu-util: SM activity {big['sm_active_pct']} under the large product "
                        f"is not above {small['sm_active_pct']} under the tiny ones")
    if big.get("tensor_active_pct") is not None and small.get("tensor_active_pct") is not None \
            and not big["tensor_active_pct"] > small["tensor_active_pct"]:
        problems.append("gpu-util: the tensor cores were not busier under the large product")
    if small.get("gpu_util_pct") is not None and \
            not small["gpu_util_pct"] > small["sm_active_pct"]:
        problems.append(f"gpu-util: the tiny products' GPU-Util {small['gpu_util_pct']} is not "
                        f"above their SM activity {small['sm_active_pct']}")
    return problems


CLAIMS: tuple[Callable[[Lesson], list[str]], ...] = (
    nvidia_smi_columns, headings, lines_by_what_they_are, measured_figures, memory,
    asynchronous, timing, two_gpus_at_once, copy_between_gpus, gpu_util_is_not_busy)


def claim_problems(text: str, cuda: int, timed: bool) -> list[str]:
    """Every claim of the lesson that ``text`` (its English transcript) contradicts."""
    lesson = read(text, cuda, timed)
    return [problem for claim in CLAIMS for problem in claim(lesson)]
