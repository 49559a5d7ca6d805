"""The translation catalogue: complete, placeholders kept, .mo current, and the CLI in Chinese."""

from __future__ import annotations

import gettext
import io
import os
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest

from gpumon import i18n, msgextract, msgfmt
from gpumon.telemetry.smi_text import cells, no_gpus_hint, render, wrap_cells
from gpumon.telemetry.types import SourceState, SourceStatus

ROOT = Path(__file__).resolve().parent.parent
ZH_PO = ROOT / "resources" / "locale" / "zh_CN" / "LC_MESSAGES" / "gpumon.po"


def _fields(text: str) -> set[str]:
    """The ``{name}`` placeholders and printf-style conversions of a message."""
    names = {f"{{{name}}}" for _, name, _, _ in string.Formatter().parse(text) if name}
    return names | set(re.findall(r"%(?:\(\w+\))?[sdif]", text))


def _catalogue() -> list[msgfmt.Entry]:
    return [e for e in msgfmt.parse_po(ZH_PO.read_text(encoding="utf-8")) if e.msgid]


def test_every_message_in_the_code_has_a_chinese_translation() -> None:
    found, _ = msgextract.scan()
    entries = {(e.msgid, e.msgid_plural): e for e in _catalogue()}
    missing = [key[0] for key in found if key not in entries or not entries[key].translated]
    assert found, "the scan found no messages at all"
    assert not missing, f"untranslated (run python -m gpumon.msgextract): {missing[:5]}"


def test_the_catalogue_has_no_message_the_code_no_longer_uses() -> None:
    found, _ = msgextract.scan()
    stale = [e.msgid for e in _catalogue() if (e.msgid, e.msgid_plural) not in found]
    assert not stale, f"run python -m gpumon.msgextract: {stale[:5]}"


def test_placeholders_match_between_english_and_chinese() -> None:
    wrong = []
    for e in _catalogue():
        for text in e.msgstr:
            if _fields(text) != _fields(e.msgid):
                wrong.append((e.msgid, text))
    assert not wrong, wrong[:3]


def test_accelerator_keys_survive_translation() -> None:
    """A menu title with &F in English keeps an accelerator in Chinese: 文件(&F)."""
    lost = [e.msgid for e in _catalogue() if e.msgid.startswith("&") and "&" not in e.msgstr[0]]
    assert not lost


def test_no_translation_call_builds_its_message_at_run_time() -> None:
    _, misuses = msgextract.scan()
    assert not misuses, [m.place for m in misuses]


def test_the_built_mo_is_current() -> None:
    mo = ZH_PO.with_suffix(".mo")
    assert mo.is_file()
    assert mo.read_bytes() == msgfmt.compile_po(ZH_PO.read_text(encoding="utf-8")), (
        "run python -m gpumon.msgfmt")


def test_msgfmt_output_is_read_by_gettext_with_plurals_contexts_and_fuzzy() -> None:
    po = (
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
        '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n\n'
        'msgid "one"\nmsgstr "eins"\n\n'
        'msgctxt "menu"\nmsgid "one"\nmsgstr "Eins!"\n\n'
        '#, fuzzy\nmsgid "two"\nmsgstr "zwei?"\n\n'
        'msgid ""\n"long "\n"line"\nmsgstr ""\n"lange "\n"Zeile"\n\n'
        'msgid "{n} GPU"\nmsgid_plural "{n} GPUs"\nmsgstr[0] "{n} GPU"\nmsgstr[1] "{n} GPUs!"\n'
    )
    t = gettext.GNUTranslations(io.BytesIO(msgfmt.compile_po(po)))
    assert t.gettext("one") == "eins"
    assert t.pgettext("menu", "one") == "Eins!"
    assert t.gettext("two") == "two"  # fuzzy: left out, English shows
    assert t.gettext("long line") == "lange Zeile"
    assert t.ngettext("{n} GPU", "{n} GPUs", 3) == "{n} GPUs!"


def test_a_broken_po_line_is_named() -> None:
    with pytest.raises(msgfmt.PoError, match="line 2"):
        msgfmt.parse_po('msgid "a"\nmsgstr oops\n')


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
    from gpumon.telemetry.sampler import Sampler
    from gpumon.telemetry.simulated import SimulatedSource

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
    assert "没有可用的显示器" in out.stderr
