"""The translation catalogue: complete, placeholders kept, .mo current, no message built at
run time, a changed message's translation kept by the catalogue tool, and the CLI in Chinese."""

from __future__ import annotations

import ast
import gettext
import importlib.util
import io
import os
import re
import string
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

# The catalogues are read with Babel (the test extra); without it this module skips.
pytest.importorskip("babel", reason="Babel is not installed (pip install -e '.[test]'): the "
                    "catalogues are read with it")

from babel.messages.catalog import Catalog, Message
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from gpumon import i18n
from gpumon.telemetry.model.types import SourceState, SourceStatus
from gpumon.text.smi_text import cells, no_gpus_hint, render, wrap_cells

pytestmark = pytest.mark.xdist_group("test_i18n")  # its module fixture: made once

ROOT = Path(__file__).resolve().parent.parent
ZH_PO = ROOT / "resources" / "locale" / "zh_CN" / "LC_MESSAGES" / "gpumon.po"
RUN_THE_TOOL = "run python tools/catalogue.py"


def _load_tool() -> ModuleType:
    """tools/catalogue.py, the catalogue tool (it runs pybabel), which is not in the package."""
    spec = importlib.util.spec_from_file_location("catalogue", ROOT / "tools" / "catalogue.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


catalogue = _load_tool()


def _fields(text: str) -> set[str]:
    """The ``{name}`` placeholders and printf-style conversions of a message."""
    names = {f"{{{name}}}" for _, name, _, _ in string.Formatter().parse(text) if name}
    return names | set(re.findall(r"%(?:\(\w+\))?[sdif]", text))


def _read_po(path: Path) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, abort_invalid=True)


def _strings(m: Message) -> list[str]:
    """A message's translation, or its translations of each plural form."""
    return list(m.string) if isinstance(m.string, (tuple, list)) else [m.string]


def _translated(m: Message) -> bool:
    return all(_strings(m)) and not m.fuzzy


def _singular(m: Message) -> str:
    return m.id[0] if isinstance(m.id, (tuple, list)) else m.id


def _catalogue() -> list[Message]:
    return [m for m in _read_po(ZH_PO) if m.id]


@pytest.fixture(scope="module")
def source_messages(tmp_path_factory: pytest.TempPathFactory) -> dict[Any, Message]:
    """Every message of the source, as the catalogue tool's extract step finds it."""
    template = tmp_path_factory.mktemp("template") / "gpumon.pot"
    assert catalogue.extract(ROOT, template) == 0
    return {m.id: m for m in _read_po(template) if m.id}


def test_every_message_in_the_code_has_a_chinese_translation(
        source_messages: dict[Any, Message]) -> None:
    entries = {m.id: m for m in _catalogue()}
    missing = [_singular(m) for key, m in source_messages.items()
               if key not in entries or not _translated(entries[key])]
    assert source_messages, "the extraction found no messages at all"
    assert not missing, f"untranslated ({RUN_THE_TOOL}, then translate): {missing[:5]}"


def test_the_catalogue_has_no_message_the_code_no_longer_uses(
        source_messages: dict[Any, Message]) -> None:
    stale = [_singular(m) for m in _catalogue() if m.id not in source_messages]
    assert not stale, f"{RUN_THE_TOOL}: {stale[:5]}"


def test_no_chinese_entry_is_untranslated_or_fuzzy() -> None:
    """A fuzzy entry (a translation kept from an earlier English wording) is left out of the
    .mo until a translator checks it and deletes the flag; so is an empty one."""
    catalog = _read_po(ZH_PO)
    left = [(_singular(m), sorted(m.flags)) for m in catalog if m.id and not _translated(m)]
    assert not left, left[:5]
    assert not catalog.fuzzy, "the header is marked fuzzy: pybabel compile would skip the file"
    assert catalog.plural_forms == "nplurals=1; plural=0;"  # Chinese has one form


def test_placeholders_match_between_english_and_chinese() -> None:
    wrong = []
    for m in _catalogue():
        for text in _strings(m):
            if _fields(text) != _fields(_singular(m)):
                wrong.append((_singular(m), text))
    assert not wrong, wrong[:3]


def test_accelerator_keys_survive_translation() -> None:
    """A menu title with &F in English keeps an accelerator in Chinese: 文件(&F)."""
    lost = [m.id for m in _catalogue() if _singular(m).startswith("&")
            and "&" not in _strings(m)[0]]
    assert not lost


# The number of message arguments of each translation function, from the tool's keywords
# ("ntr:1,2": singular and plural).
MESSAGE_ARGS = {name: len(spec.split(",")) if spec else 1
                for name, _, spec in (k.partition(":") for k in catalogue.KEYWORDS)}


def _function(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def misuses(root: Path) -> list[str]:
    """Every call of a translation function under ``root`` whose message the extraction
    cannot read, as ``file:line``:

    - a message built at run time (an f-string, a concatenation, a ``.format``): it can never
      match the catalogue. A name is fine (``tr(LABEL)``, ``tr(NAMES[key])``): it is a constant
      marked with ``N_()`` where it is defined;
    - a message missing (``ntr("one GPU", n)`` without its plural), or spread with ``*``;
    - a literal message inside an f-string's ``{...}``: Babel reads it only on Python 3.12 and
      later, so the catalogue would depend on the Python that ran the tool.
    """
    found: list[tuple[str, int]] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        in_fstring = {id(inner) for outer in ast.walk(tree) if isinstance(outer, ast.JoinedStr)
                      for inner in ast.walk(outer) if inner is not outer}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or _function(node.func) not in MESSAGE_ARGS:
                continue
            n = MESSAGE_ARGS[str(_function(node.func))]
            args = node.args[:n]
            built = any(isinstance(a, ast.JoinedStr | ast.BinOp | ast.Call | ast.Starred)
                        or (isinstance(a, ast.Constant) and not isinstance(a.value, str))
                        for a in args)
            literal = all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args)
            if len(args) < n or built or (literal and id(node) in in_fstring):
                found.append((rel, node.lineno))
    return [f"{rel}:{line}" for rel, line in sorted(found)]


def test_no_translation_call_builds_its_message_at_run_time() -> None:
    found = misuses(ROOT / "gpumon")
    assert not found, found


def test_the_misuse_scan_finds_each_kind(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "from gpumon.i18n import N_, ntr, tr\n"
        "LABEL = N_('Label')\n"
        "ok = [tr('GPU {i}', i=1), tr(LABEL), tr('Error: {e}', e=f'{LABEL}!'), ntr('a', 'b', 2)]\n"
        "a = tr(f'GPU {LABEL}')\n"
        "b = tr('GPU ' + LABEL)\n"
        "c = tr('GPU {i}'.format(i=1))\n"
        "d = ntr('one GPU', 3)\n"
        "e = f\"<b>{tr('Note:')}</b>\"\n"
        "f = tr(*[LABEL])\n",
        encoding="utf-8")
    assert misuses(tmp_path) == [f"m.py:{line}" for line in range(4, 10)]


def _entries(messages: Any) -> set[tuple[Any, ...]]:
    """(context, message, translation) of each entry but the header, lists made tuples."""
    def frozen(x: Any) -> Any:
        return tuple(x) if isinstance(x, (tuple, list)) else x

    return {(m.context, frozen(m.id), frozen(m.string)) for m in messages if m.id}


def test_the_built_mo_is_current() -> None:
    """The committed .mo holds exactly the .po's translated entries (compared as catalogues,
    since its bytes also name the Babel version that compiled it)."""
    mo = ZH_PO.with_suffix(".mo")
    assert mo.is_file()
    with mo.open("rb") as f:
        built = read_mo(f)
    po = _read_po(ZH_PO)
    assert _entries(built) == _entries(m for m in po if _translated(m)), RUN_THE_TOOL
    assert built.plural_forms == po.plural_forms
    assert built.charset == po.charset == "utf-8"


LOCALE = Path("resources", "locale")
HEADER = (
    'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
    '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n\n'
)


def _po(root: Path, language: str, entries: str) -> Path:
    """A ``.po`` of ``language`` with ``entries`` under ``root``, laid out as the project's."""
    po = root / LOCALE / language / "LC_MESSAGES" / "gpumon.po"
    po.parent.mkdir(parents=True, exist_ok=True)
    po.write_text(HEADER + entries, encoding="utf-8")
    return po


def test_the_compile_step_leaves_fuzzy_out_and_gettext_reads_plurals_and_contexts(
        tmp_path: Path) -> None:
    po = _po(tmp_path, "de", (
        'msgid "one"\nmsgstr "eins"\n\n'
        'msgctxt "menu"\nmsgid "one"\nmsgstr "Eins!"\n\n'
        '#, fuzzy\nmsgid "two"\nmsgstr "zwei?"\n\n'
        'msgid ""\n"long "\n"line"\nmsgstr ""\n"lange "\n"Zeile"\n\n'
        'msgid "{n} GPU"\nmsgid_plural "{n} GPUs"\nmsgstr[0] "{n} GPU"\nmsgstr[1] "{n} GPUs!"\n'
    ))
    assert catalogue.compile_mo(tmp_path) == 0
    t = gettext.GNUTranslations(io.BytesIO(po.with_suffix(".mo").read_bytes()))
    assert t.gettext("one") == "eins"
    assert t.pgettext("menu", "one") == "Eins!"
    assert t.gettext("two") == "two"  # fuzzy: left out, English shows
    assert t.gettext("long line") == "lange Zeile"
    assert t.ngettext("{n} GPU", "{n} GPUs", 3) == "{n} GPUs!"


def test_a_changed_message_keeps_its_old_translation_marked_fuzzy(tmp_path: Path) -> None:
    """The tool's update step matches a reworded message to its old entry, as GNU msgmerge
    does: the translation is kept for a translator to check, not thrown away."""
    source = tmp_path / "gpumon" / "words.py"
    source.parent.mkdir()
    source.write_text('from gpumon.i18n import tr\n\nSHOWN = tr("Old words here")\n',
                      encoding="utf-8")
    po = _po(tmp_path, "zh_CN", 'msgid "Old words here"\nmsgstr "旧的说法"\n')
    assert catalogue.run(tmp_path) == 0
    assert [(m.id, m.string, m.fuzzy) for m in _read_po(po) if m.id] == [
        ("Old words here", "旧的说法", False)]

    source.write_text(source.read_text(encoding="utf-8").replace("Old words", "Old wording"),
                      encoding="utf-8")
    assert catalogue.run(tmp_path) == 0
    assert [(m.id, m.string, m.fuzzy) for m in _read_po(po) if m.id] == [
        ("Old wording here", "旧的说法", True)]
    # Until a translator checks it, the .mo leaves the guess out: English shows.
    t = gettext.GNUTranslations(io.BytesIO(po.with_suffix(".mo").read_bytes()))
    assert t.gettext("Old wording here") == "Old wording here"


_QUOTED = r'"(?:[^"\\]|\\.)*"'
_PO_LINE = re.compile(rf"(?:(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?) )?{_QUOTED}")


def po_syntax_errors(text: str) -> list[str]:
    """The lines of a ``.po`` text that are neither blank, a comment, a keyword and its quoted
    string, nor a quoted string continuing one. Babel's reader takes ``msgstr oops`` for
    ``msgstr "op"`` without a word, so the catalogue is checked for that here."""
    return [f"line {number}: {line[:40]!r}"
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip() and not line.startswith("#") and not _PO_LINE.fullmatch(line)]


def test_the_catalogue_is_well_formed() -> None:
    assert po_syntax_errors(ZH_PO.read_text(encoding="utf-8")) == []


def test_a_broken_po_line_is_named() -> None:
    assert po_syntax_errors('msgid "a"\nmsgstr oops\n\nmsgid "b"\nmsgstr "b\n') == [
        "line 2: 'msgstr oops'", "line 5: 'msgstr \"b'"]


@pytest.mark.parametrize(("env", "expected"), [
    ({"LANG": "zh_CN.UTF-8"}, "zh_CN"),
    ({"LANG": "zh_SG.UTF-8"}, "zh_CN"),
    ({"LANG": "zh_TW.UTF-8"}, "en"),  # Traditional Chinese is not offered as Simplified
    ({"LANG": "C.UTF-8"}, "en"),
    ({"LANG": "de_DE.UTF-8"}, "en"),
    ({"LANGUAGE": "fr:zh_CN:en", "LANG": "fr_FR.UTF-8"}, "zh_CN"),
    ({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),  # LC_ALL wins over LANG
    ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh_CN"),
    ({}, "en"),
])
def test_language_from_the_environment(env: dict[str, str], expected: str) -> None:
    assert i18n.detect(env) == expected


def test_tr_translates_then_fills_placeholders(chinese: None) -> None:
    assert i18n.tr("driver {version}", version="550.54") == "驱动 550.54"
    assert i18n.ntr("NVML sees {n} GPU.", "NVML sees {n} GPUs.", 2) == "NVML 检测到 2 块 GPU。"
    assert i18n.tr("a message nobody translated {x}", x=1) == "a message nobody translated 1"


def test_sentences_are_joined_as_each_language_writes_them(chinese: None) -> None:
    assert i18n.sentences("GPU 1 is lost.", None, "Check the driver.") == \
        "GPU 1 is lost. Check the driver."
    assert i18n.sentences("GPU 1 已丢失。", "", "请检查驱动。") == "GPU 1 已丢失。请检查驱动。"
    assert i18n.sentences() == ""
    # The empty-grid text: NVML's status and gpumon's hint, without "。 " between them.
    status = SourceStatus(SourceState.NO_GPUS, "NVML 没有检测到 GPU。", "请检查驱动。")
    assert no_gpus_hint(status) == "NVML 没有检测到 GPU。请检查驱动。"


def test_chinese_table_keeps_its_box_aligned(chinese: None) -> None:
    from gpumon.telemetry.sources.sampler import Sampler
    from gpumon.telemetry.sources.simulated import SimulatedSource

    sampler = Sampler(SimulatedSource(n_gpus=2, seed=0))
    sampler.open()
    try:
        text = render(sampler.tick())
    finally:
        sampler.close()
    assert "模拟数据" in text and "进程：" in text
    assert "Memory-Usage" in text and "GPU-Util" in text  # nvidia-smi's column names stay
    boxed = [line for line in text.splitlines() if line.startswith(("|", "+"))]
    assert {cells(line) for line in boxed} == {cells(boxed[0])}


def test_this_gpumon_is_said_in_chinese_and_its_row_stays_in_the_box(chinese: None) -> None:
    from gpumon.telemetry.model.types import GpuProcess, MachineInfo, ProcessType, Snapshot

    me = GpuProcess(0, 4242, ProcessType.COMPUTE, 300 * 1024**2, "python", "用户甲",
                    "python -m gpumon " + "参数" * 30, is_self=True)
    other = GpuProcess(0, 7, ProcessType.COMPUTE, 1024**3, "训练", "u", "训练脚本.py")
    text = render(Snapshot(0.0, MachineInfo("box", "NVML"), SourceStatus(SourceState.OK, "ok"),
                           processes=(me, other)))
    assert "[this gpumon]" not in text and "[本 gpumon]" in text.replace("...", "")
    rows = [line for line in text.splitlines() if "4242" in line or "     7 " in line]
    assert len(rows) == 2 and {cells(line) for line in rows} == {cells(text.splitlines()[1])}


def test_no_message_counts_with_s_in_brackets(source_messages: dict[Any, Message]) -> None:
    """"error(s)" reads badly in English and cannot be translated with plural forms: a
    count takes ntr() with a singular and a plural."""
    found = [_singular(m) for m in source_messages.values()
             if re.search(r"[A-Za-z]\(s\)", _singular(m))]
    assert not found, found


def test_wrap_cells_breaks_chinese_without_spaces() -> None:
    lines = wrap_cells("这块 GPU 不再响应：对它的每一次 NVML 读取都失败了。" * 3, 30)
    assert len(lines) > 1 and all(cells(line) <= 30 for line in lines)


def _gpumon(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items()
            if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG", "DISPLAY",
                         "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    full.update(env, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-m", "gpumon", *args], capture_output=True,
                          text=True, encoding="utf-8", env=full, timeout=60, check=False)


def test_lang_option_prints_chinese_headings() -> None:
    out = _gpumon("--lang", "zh_CN", "--once", "--simulate", "2", env={})
    assert out.returncode == 0, out.stderr
    assert "主机：" in out.stdout and "进程：" in out.stdout
    assert "Driver Version:" in out.stdout  # as nvidia-smi prints it


def test_system_locale_chooses_chinese_and_the_option_overrides_it() -> None:
    zh = _gpumon("--simulate", "99", env={"LANG": "zh_CN.UTF-8"})
    assert zh.returncode == 2 and "GPU 数量必须是 1 到 16 之间的整数" in zh.stderr
    en = _gpumon("--lang", "en", "--simulate", "99", env={"LANG": "zh_CN.UTF-8"})
    assert "must be a whole number of GPUs from 1 to 16" in en.stderr


def test_an_unknown_language_is_refused_with_the_ones_spoken() -> None:
    out = _gpumon("--lang", "fr", "--once", "--simulate", "1", env={})
    assert out.returncode == 2
    assert "gpumon speaks en, zh_CN, not 'fr'" in out.stderr


def test_no_driver_message_in_chinese_without_a_display() -> None:
    out = _gpumon(env={"LANG": "zh_CN.UTF-8"})
    assert out.returncode == 1
    assert "没有图形显示环境" in out.stderr
