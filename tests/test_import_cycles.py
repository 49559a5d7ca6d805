"""No module of gpumon imports, directly or through others, a module that imports it back.

The imports are read from the source with ``ast`` (nothing is executed), including those
inside functions and under ``if TYPE_CHECKING:``: a lazy import still ties two modules
together for a reader, and a cycle hidden behind one is the first to break at import time.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "gpumon"


def module_name(path: Path, root: Path) -> str:
    """``gpumon/ui/window/menus.py`` -> ``gpumon.ui.window.menus``; packages by their folder."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(tree: ast.AST, name: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that the module ``name`` imports anywhere in ``tree``."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # ``from pkg import mod`` imports the submodule when there is one.
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            if target in known and target != name:
                found.add(target)
    return found


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, for every .py file under ``package``."""
    files = sorted((root / package).rglob("*.py"))
    names = {module_name(f, root): f for f in files}
    known = set(names)
    return {
        name: imported_modules(ast.parse(path.read_text(encoding="utf-8"), str(path)), name,
                               path.name == "__init__.py", known)
        for name, path in names.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as ``[a, b, …, a]``, or None when the graph has none (DFS colours)."""
    WHITE, GREY, BLACK = 0, 1, 2  # (names of the classic algorithm)
    colour = dict.fromkeys(graph, WHITE)
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = GREY
        stack.append(node)
        for nxt in sorted(graph[node]):
            if colour[nxt] == GREY:
                return stack[stack.index(nxt):] + [nxt]
            if colour[nxt] == WHITE:
                cycle = visit(nxt)
                if cycle is not None:
                    return cycle
        stack.pop()
        colour[node] = BLACK
        return None

    for start in sorted(graph):
        if colour[start] == WHITE:
            cycle = visit(start)
            if cycle is not None:
                return cycle
    return None


def test_gpumon_has_no_import_cycle() -> None:
    graph = import_graph(ROOT, PACKAGE)
    assert len(graph) > 40  # every module was read
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_a_cycle_is_found_and_named(tmp_path: Path) -> None:
    """The check itself fails on a cycle, through a relative import and a lazy one."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .c import x\n")
    (pkg / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\n"
                                      "if TYPE_CHECKING:\n    from pkg import a\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.a"] == {"pkg.sub", "pkg.sub.b"}
    assert find_cycle(graph) == ["pkg.a", "pkg.sub.b", "pkg.sub.c", "pkg.a"]
    (pkg / "sub" / "c.py").write_text("import os\n")
    assert find_cycle(import_graph(tmp_path, "pkg")) is None


@pytest.mark.parametrize("source", ["from gpumon.ui.window import main_window\n",
                                    "import gpumon.ui.window.main_window\n"])
def test_both_import_forms_are_read(source: str) -> None:
    known = {"gpumon.ui.window", "gpumon.ui.window.main_window"}
    found = imported_modules(ast.parse(source), "gpumon.x", False, known)
    assert "gpumon.ui.window.main_window" in found


def test_no_part_imports_the_main_window_and_the_monitor_imports_no_other_part() -> None:
    """Only the frame imports the main window: launch.py, which opens it, the cluster
    window, which is the main window over many machines, the remote window, the main
    window over one machine read over SSH, and the replay window, the main window over a
    recording; the monitor's views import
    nothing of the playground, the lesson or the window's frame."""
    graph = import_graph(ROOT, PACKAGE)
    assert sorted(m for m, deps in graph.items() if "gpumon.ui.window.main_window" in deps) == [
        "gpumon.ui.window.cluster_window", "gpumon.ui.window.launch",
        "gpumon.ui.window.remote_window", "gpumon.ui.window.replay_window"]
    parts = ("gpumon.ui.playground", "gpumon.ui.lesson", "gpumon.ui.window")
    assert {m: sorted(d for d in deps if d.startswith(parts))
            for m, deps in graph.items()
            if m.startswith("gpumon.ui.monitor") and any(d.startswith(parts) for d in deps)
            } == {}
