"""No sentence the playground shows bypasses the catalogue: an AST scan of the Qt-free modules
for literal English given to the values that carry words to a person (a refusal, an
ErrorInfo's message and explanation, a value or shape error, a device's label)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PLAYGROUND = Path(__file__).resolve().parents[2] / "gpumon" / "playground"
#: The modules scanned: every module of the playground apart from the lesson's own.
MODULES = tuple(sorted(p.relative_to(PLAYGROUND).as_posix() for p in PLAYGROUND.rglob("*.py")
                       if p.parent.name != "lesson" and p.name != "__init__.py"))
#: Call name -> the positions and keywords of its arguments that are shown as sentences.
SHOWN = {"Refusal": ((0, 1), ("message", "explanation")),
         "ErrorInfo": ((1, 2), ("message", "explanation")),
         "ValuesError": ((0,), ()), "ValueError": ((0,), ()),
         "DeviceOption": ((1,), ("label",))}
#: Calls whose words only ever reach a developer (an internal error's traceback).
DEVELOPER_ONLY = {("main.py", "ValueError")}  # "unknown kernel request": a bug of ours
#: Words that are code or units, not prose: they may stand in a literal.
CODE_WORDS = {"cuda", "cpu", "meta", "mps", "KiB", "MiB", "GiB", "TiB"}


def _literal_words(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(v.value for v in node.values
                       if isinstance(v, ast.Constant) and isinstance(v.value, str))
    else:
        return []
    return [w for w in re.findall(r"[A-Za-z]{3,}", text) if w not in CODE_WORDS]


def untranslated(path: Path) -> list[str]:
    """``file:line`` of each call that gives a shown argument literal English words."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in SHOWN or (path.name, name) in DEVELOPER_ONLY:
            continue
        positions, keywords = SHOWN[name]
        args = [a for i, a in enumerate(node.args) if i in positions]
        args += [k.value for k in node.keywords if k.arg in keywords]
        if any(_literal_words(a) for a in args):
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_playground_sentence_bypasses_the_catalogue() -> None:
    modules = [PLAYGROUND / name for name in MODULES]
    assert len(modules) >= 30 and "kernel/main.py" in MODULES
    offenders = [hit for p in modules for hit in untranslated(p)]
    assert not offenders


def test_the_scan_finds_literal_english(tmp_path: Path) -> None:
    """The scan itself can fail: untranslated refusals and labels are caught, code is not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        'raise Refusal("No such name.")\n'
        'raise Refusal(tr("No such name."))\n'
        'ErrorInfo("RuntimeError", msg, f"Move {x} to the GPU")\n'
        'DeviceOption(f"cuda:{i}", f"cuda:{i} — {name}")\n'
        'DeviceOption("cpu", label="cpu — main memory")\n', encoding="utf-8")
    assert untranslated(sample) == ["sample.py:1", "sample.py:3", "sample.py:5"]
