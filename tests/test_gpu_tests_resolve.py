"""The GPU tests cannot rot unseen: CI has no GPU, so it never runs tests/gpu's CUDA tests,
but it checks here that what they name of gpumon exists.

- Every ``import gpumon...`` and ``from gpumon... import name`` of every module under
  tests/gpu (at any depth in the file: inside functions too) names a module that imports,
  and each name is an attribute or a submodule of it.
- Every piece of code the GPU tests send to a kernel as a string that names gpumon (any
  string constant with ``gpumon.`` in it) is parsed: its imports are checked the same way, and
  ``__import__('gpumon.x').name``; a string that is not Python has each dotted ``gpumon.``
  path checked, as far as it is a module and then its attributes.

A GPU test rotted this way once: ``gpumon.playground.kernel.checkpoint`` moved and its test
failed only on the first GPU machine that ran it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GPU_TESTS = sorted((ROOT / "tests" / "gpu").rglob("*.py"))
DOTTED = re.compile(r"\bgpumon(?:\.[A-Za-z_]\w*)+")


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def _has(module: str, name: str) -> bool:
    """Whether ``from module import name`` works: an attribute or a submodule."""
    if _module_exists(f"{module}.{name}"):
        return True
    return hasattr(importlib.import_module(module), name)


def _problems_of_path(path: str) -> list[str]:
    """A dotted ``gpumon.a.b.c`` in text: the longest prefix that is a module, then each
    further part an attribute of what came before."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if _module_exists(module):
            break
    else:
        return [f"no module {path}"]
    if cut == 1 and len(parts) > 1 and not _has("gpumon", parts[1]):
        return [f"no module {'.'.join(parts[:2])}"]
    value: object = importlib.import_module(module)
    for part in parts[cut:]:
        if not hasattr(value, part):
            return [f"{module} has no {part} (in {path})"]
        value = getattr(value, part)
    return []


def _problems_of_tree(tree: ast.AST) -> Iterator[str]:
    """Every gpumon import of ``tree`` that does not resolve."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "gpumon" and not _module_exists(alias.name):
                    yield f"import {alias.name}: no such module"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                node.module.split(".")[0] == "gpumon":
            if not _module_exists(node.module):
                yield f"from {node.module} import ...: no such module"
                continue
            for alias in node.names:
                if alias.name != "*" and not _has(node.module, alias.name):
                    yield f"from {node.module} import {alias.name}: no such name"
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call):
            call = node.value  # __import__('gpumon.x', fromlist=[...]).name
            if isinstance(call.func, ast.Name) and call.func.id == "__import__" and \
                    call.args and isinstance(call.args[0], ast.Constant) and \
                    isinstance(call.args[0].value, str) and \
                    call.args[0].value.startswith("gpumon"):
                yield from _problems_of_path(f"{call.args[0].value}.{node.attr}")


def _code_strings(tree: ast.AST) -> Iterator[str]:
    """The string constants of ``tree`` that name gpumon (adjacent literals are one)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                DOTTED.search(node.value):
            yield node.value


def problems(path: Path) -> list[str]:
    """What ``path`` names of gpumon that does not exist, in its imports and code strings."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = list(_problems_of_tree(tree))
    for code in _code_strings(tree):
        try:
            inner = ast.parse(code)
        except SyntaxError:  # prose or a fragment: each dotted path on its own
            found += [p for dotted in DOTTED.findall(code) for p in _problems_of_path(dotted)]
            continue
        found += [f"in the code string {code!r}: {p}" for p in _problems_of_tree(inner)]
    return found


@pytest.mark.parametrize("path", GPU_TESTS, ids=[str(p.relative_to(ROOT)) for p in GPU_TESTS])
def test_what_a_gpu_test_names_of_gpumon_exists(path: Path) -> None:
    assert problems(path) == []


def test_the_check_finds_a_moved_module_in_an_import_and_in_a_code_string(
        tmp_path: Path) -> None:
    """The rot of issue 40, both ways it can be written."""
    rotten = tmp_path / "test_rotten.py"
    rotten.write_text(
        "from gpumon.playground.kernel.checkpoint import SAVED_ON_CUDA\n"
        "from gpumon.telemetry.nvml.source import NvmlSource, NoSuchThing\n"
        "CODE = ('from gpumon.playground.kernel.checkpoint import SAVED_ON_CUDA\\n'\n"
        "        'torch.load(SAVED_ON_CUDA)')\n"
        "MEM = \"__import__('gpumon.playground.kernel.memory', fromlist=['_']).gone()\"\n"
        "TEXT = 'see gpumon.playground.kernel.memory.torch_memory_counters, gpumon.nothing.x'\n",
        encoding="utf-8")
    found = problems(rotten)
    assert found == [
        "from gpumon.playground.kernel.checkpoint import SAVED_ON_CUDA: no such name",
        "from gpumon.telemetry.nvml.source import NoSuchThing: no such name",
        "in the code string 'from gpumon.playground.kernel.checkpoint import SAVED_ON_CUDA\\n"
        "torch.load(SAVED_ON_CUDA)': from gpumon.playground.kernel.checkpoint import "
        "SAVED_ON_CUDA: no such name",
        "in the code string \"__import__('gpumon.playground.kernel.memory', fromlist=['_'])"
        ".gone()\": gpumon.playground.kernel.memory has no gone (in "
        "gpumon.playground.kernel.memory.gone)",
        "no module gpumon.nothing"], found
