"""One Chinese word for each term in the zh_CN catalogue.

Each row of TERMS names an English term, how to find it in a msgid, the one Chinese rendering
every translation of such a message must contain, and the renderings it replaced (forbidden).
A message that uses the English word in another sense is listed in the row's exceptions, with
the reason, rather than loosening the pattern; an exception that no longer matches a message
fails too, so the list stays true.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# The catalogues are read with Babel (the test extra); without it this module skips.
pytest.importorskip("babel", reason="Babel is not installed (pip install -e '.[test]'): the "
                    "catalogues are read with it")

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

pytestmark = pytest.mark.xdist_group("test_zh_terms")  # its module fixture: made once

ZH_PO = (Path(__file__).resolve().parent.parent
         / "resources" / "locale" / "zh_CN" / "LC_MESSAGES" / "gpumon.po")


@dataclass(frozen=True)
class Term:
    english: str  # what the row is about, for the failure message
    pattern: str  # searched in the msgid, its placeholders written as {}
    chinese: str  # a regular expression every msgstr of a matching message must match
    forbidden: tuple[str, ...] = ()  # regular expressions no such msgstr may match
    exceptions: dict[str, str] = field(default_factory=dict)  # msgid start -> why


# "kernel" has two senses here: a CUDA kernel (a function running on the GPU) and the
# playground's kernel (the process that runs torch). Every occurrence must be one of these.
KERNEL_CUDA = r"\b(?:CUDA|torch|GPU) kernels?\b|\bno kernel for\b|\bone kernel was running\b"
KERNEL_PLAYGROUND = (r"\bplayground'?s? kernel\b|\bkernel process\b"
                     r"|\b(?:[Tt]he|[Aa] fresh) kernel\b|^kernel$")

TERMS = (
    Term("reserved (torch's memory_reserved)", r"(?<!Memory )\breserved\b", "已预留",
         forbidden=("保留",)),
    Term("Memory reserved (NVML: reserved by the driver)", r"\bMemory reserved\b", "驱动保留显存",
         forbidden=("预留",)),
    Term("CUDA kernel", r"\bCUDA kernels?\b", "CUDA 核函数"),
    Term("kernel (a CUDA kernel)", KERNEL_CUDA, "核函数", forbidden=("算子",)),
    Term("kernel (the playground's kernel process)", KERNEL_PLAYGROUND, "内核进程",
         forbidden=("内核(?!进程)",)),
    Term("CUDA context", r"\bcontext\b", "CUDA 上下文", forbidden=("(?<!CUDA )上下文",)),
    Term("dtype", r"\bdtypes?\b", "dtype", forbidden=("数据类型",),
         exceptions={"an array of numbers with a shape, a dtype and a device":
                     "the glossary's definition of a tensor says once what a dtype is: "
                     "dtype（数据类型）"}),
    Term("index (a GPU's number)", r"\bindex\b", "编号", forbidden=("序号",),
         exceptions={"The operands are on different devices":
                     "a CPU tensor used as an index of a GPU tensor: tensor indexing, 索引",
                     "There are exceptions, which the second and third lines show":
                     "a CPU tensor may index a GPU tensor: tensor indexing, 索引"}),
    Term("down (a cluster host)", r"\bdown\b", "离线", forbidden=("无法访问",),
         exceptions={"clocks held down": "the clocks are lowered (a GPU's clock event "
                                         "reasons), not a host that is offline: 压低"}),
    Term("recording (to CSV)", r"\b(?:REC|[Rr]ecord(?:ing|er)?)\b", "记录", forbidden=("录制",)),
    Term("time window (of the graphs)", r"\b(?:visible|time) window\b|^Window$", "时间范围",
         forbidden=("时间段",)),
    Term("CPU-only build", r"\bCPU-only build\b", "仅支持 CPU 的版本",
         forbidden=("仅 CPU 版本", "只支持 CPU", "只有 CPU 的版本")),
    Term("playground (the PyTorch tab)", r"\b[Pp]layground\b", "演练场", forbidden=("练习场",)),
    Term("seconds as a unit ({n} s)", r"(?:\{\}|\d) s\b", r"(?:\}|\d) s(?![A-Za-z])",
         forbidden=("秒",)),
)


def _placeholders_out(text: str) -> str:
    return re.sub(r"\{\w*\}", "{}", text)


def _forms(value: str | tuple[str, ...] | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def violations(catalog: Catalog) -> list[str]:
    """Every translated message that renders a term of TERMS with another word."""
    found = []
    for message in catalog:
        if not message.id or not message.string:
            continue
        ids, strings = _forms(message.id), _forms(message.string)
        for term in TERMS:
            if not any(re.search(term.pattern, _placeholders_out(i)) for i in ids):
                continue
            if any(ids[0].startswith(start) for start in term.exceptions):
                continue
            for translated in strings:
                wrong = [p for p in term.forbidden if re.search(p, translated)]
                if not re.search(term.chinese, translated) or wrong:
                    instead = f", not {', '.join(wrong)}" if wrong else ""
                    found.append(f"{term.english}: {ids[0]!r} is {translated!r} "
                                 f"(wants {term.chinese}{instead})")
    return found


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    with ZH_PO.open("rb") as f:
        return read_po(f)


def test_each_term_has_one_chinese_word(catalog: Catalog) -> None:
    found = violations(catalog)
    assert not found, "\n".join(found)


def test_every_kernel_is_either_a_cuda_kernel_or_the_playground_kernel(catalog: Catalog) -> None:
    unclassified = []
    for message in catalog:
        for msgid in _forms(message.id) if message.id else []:
            text = _placeholders_out(msgid)
            spans = [m.span() for p in (KERNEL_CUDA, KERNEL_PLAYGROUND)
                     for m in re.finditer(p, text)]
            for m in re.finditer(r"\bkernels?\b", text):
                if not any(start <= m.start() and m.end() <= end for start, end in spans):
                    unclassified.append(text)
    assert not unclassified, "say which kernel these mean (KERNEL_CUDA or KERNEL_PLAYGROUND):\n" \
        + "\n".join(unclassified)


def test_the_exceptions_still_name_messages_that_use_the_term(catalog: Catalog) -> None:
    ids = [_forms(m.id)[0] for m in catalog if m.id]
    for term in TERMS:
        for start in term.exceptions:
            matching = [i for i in ids if i.startswith(start)]
            assert matching and all(re.search(term.pattern, _placeholders_out(i))
                                    for i in matching), (term.english, start)


@pytest.mark.parametrize(("msgid", "msgstr"), [
    ("torch reserved", "torch 已保留"),
    ("Memory reserved", "保留显存"),
    ("kernel", "内核"),
    ("CUDA context", "上下文"),
    ("dtype", "数据类型"),
    ("index", "序号"),
    ("{head}, down: {reason}", "{head}，无法访问：{reason}"),
    ("REC", "录制中"),
    ("Export visible window to CSV", "将可见时间段导出为 CSV"),
    ("Waiting for the NVIDIA driver: {seconds} s", "正在等待 NVIDIA 驱动：{seconds} 秒"),
    ("This operation has no kernel for this dtype on this device.", "没有针对这种 dtype 的实现。"),
    ("{version} (CPU-only build)", "{version}（仅 CPU 版本）"),
    ("The playground kernel (pid {pid}) ended.", "练习场的内核进程（pid {pid}）已结束。"),
])
def test_a_second_word_for_a_term_is_caught(msgid: str, msgstr: str) -> None:
    catalog = Catalog(locale="zh_CN")
    catalog.add(msgid, msgstr)
    assert violations(catalog)


#: A message quoted inside a sentence: English words with a space, in quotation marks.
QUOTED_ENGLISH = re.compile(r"'([A-Za-z][^'\n]*? [^'\n]*?)'")
#: Quoted text that is code or a command line, which keeps its ASCII quotes.
CODE_LIKE = re.compile(r"[=/()\[\]{}]|--|^(?:Name|Authorization|docker|sudo)\b")


def quoted_english(catalog: Catalog) -> list[str]:
    """Translations that put an English message between ASCII quotes, not “…” (a comment in
    a transcript, ``# ...``, quotes Python's strings as Python does)."""
    found = []
    for message in catalog:
        if message.id and _forms(message.id)[0].startswith("# "):
            continue
        for translated in _forms(message.string) if message.id and message.string else []:
            for quoted in QUOTED_ENGLISH.findall(translated):
                if not CODE_LIKE.search(quoted) and re.search("[\u4e00-\u9fff]", translated):
                    found.append(f"{_forms(message.id)[0][:60]!r}: '{quoted}'")
    return found


def test_quoted_english_messages_use_chinese_quotation_marks(catalog: Catalog) -> None:
    assert not quoted_english(catalog), "\n".join(quoted_english(catalog))
    wrong = Catalog(locale="zh_CN")
    wrong.add("x", "报经典的 'Attempting to deserialize object on a CUDA device' 错误")
    assert quoted_english(wrong)
    right = Catalog(locale="zh_CN")
    right.add("y", "报经典的 “Attempting to deserialize object on a CUDA device” 错误；"
                   "请写 'cpu' 或运行 'docker run --gpus all'")
    assert not quoted_english(right)
