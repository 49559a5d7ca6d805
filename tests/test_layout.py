"""The package's layout keeps the processes apart: the window imports nothing that runs in the
playground's kernel, and the data both sides share imports neither side.

Two checks: the import graph read from the source (every import, lazy ones and those under
``if TYPE_CHECKING:`` included, as tests/test_import_cycles.py reads it), and a fresh
interpreter that imports every module of the window and then lists what it loaded.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.test_import_cycles import import_graph

ROOT = Path(__file__).resolve().parent.parent
KERNEL = "gpumon.playground.kernel"
# The window's process: the Qt views and the playground's client, with the data and the
# lesson's texts they use.
WINDOW_SIDE = ("gpumon.ui", "gpumon.playground.client", "gpumon.playground.data",
               "gpumon.playground.lesson")
# Shared by both processes: may import neither.
SHARED = ("gpumon.playground.data",)


def _in(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def offending_imports(graph: dict[str, set[str]], importers: tuple[str, ...],
                      forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    """``{module: [forbidden modules it imports]}`` for the modules under ``importers``."""
    found = {m: sorted(d for d in deps if _in(d, forbidden))
             for m, deps in graph.items() if _in(m, importers)}
    return {m: deps for m, deps in found.items() if deps}


def test_the_window_side_imports_no_kernel_module() -> None:
    graph = import_graph(ROOT, "gpumon")
    assert sum(_in(m, WINDOW_SIDE) for m in graph) > 40  # every module was read
    assert offending_imports(graph, WINDOW_SIDE, (KERNEL,)) == {}


def test_the_shared_data_imports_neither_side() -> None:
    graph = import_graph(ROOT, "gpumon")
    sides = (KERNEL, "gpumon.playground.client", "gpumon.playground.lesson", "gpumon.ui")
    assert offending_imports(graph, SHARED, sides) == {}


def test_the_kernel_imports_no_window_module() -> None:
    graph = import_graph(ROOT, "gpumon")
    assert offending_imports(graph, (KERNEL,), ("gpumon.ui", "gpumon.playground.client")) == {}


def test_the_check_finds_a_window_module_that_imports_the_kernel(tmp_path: Path) -> None:
    """The check itself fails on a lazy import from the window into the kernel."""
    for folder in ("gpumon/ui", "gpumon/playground/kernel"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "gpumon" / "__init__.py").write_text("")
    (tmp_path / "gpumon" / "playground" / "__init__.py").write_text("")
    (tmp_path / "gpumon/playground/kernel/engine.py").write_text("")
    (tmp_path / "gpumon/ui/view.py").write_text(
        "def f():\n    from gpumon.playground.kernel.engine import Engine\n")
    graph = import_graph(tmp_path, "gpumon")
    assert offending_imports(graph, WINDOW_SIDE, (KERNEL,)) == {
        "gpumon.ui.view": ["gpumon.playground.kernel.engine"]}


@pytest.mark.parametrize("package", ["gpumon.ui", "gpumon.playground.client"])
def test_importing_every_window_module_loads_no_kernel_module_and_no_torch(
        package: str) -> None:
    script = textwrap.dedent(f"""
        import importlib, pkgutil, sys
        import {package} as pkg
        names = [m.name for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
        for name in names:
            importlib.import_module(name)
        print(len(names))
        print("\\n".join(sys.modules))
        """)
    env_root = str(ROOT)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=env_root,
                          env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin",
                               "PYTHONPATH": env_root})
    assert done.returncode == 0, done.stderr
    count, *loaded = done.stdout.split()
    assert int(count) >= (30 if package == "gpumon.ui" else 2)
    assert [m for m in loaded if _in(m, (KERNEL,))] == []
    assert "torch" not in loaded


# telemetry/'s rooms and the rooms each may import: the model is the floor everything stands
# on; nothing below the views imports the exporter or the cluster client.
TELEMETRY_ROOMS: dict[str, set[str]] = {
    "model": set(),
    "procs": set(),
    "nvml": {"model", "procs"},
    "sources": {"model"},
    "history": {"model"},
    "exporter": {"model", "sources"},
    "cluster": {"model"},
}


def _telemetry_room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[:2] == ["gpumon", "telemetry"] else None


def test_telemetry_rooms_import_only_the_rooms_below_them() -> None:
    graph = import_graph(ROOT, "gpumon")
    rooms = {r for r in map(_telemetry_room, graph) if r}
    assert rooms == set(TELEMETRY_ROOMS)  # every room is named, and no other exists
    wrong = {f"{m} -> {d}" for m, deps in graph.items() for d in deps
             if (room := _telemetry_room(m)) and (other := _telemetry_room(d))
             and other != room and other not in TELEMETRY_ROOMS[room]}
    assert wrong == set()


def test_telemetry_keeps_at_most_eight_modules_at_its_top() -> None:
    top = sorted(p.name for p in (ROOT / "gpumon" / "telemetry").glob("*.py"))
    assert len(top) <= 8, top
    assert all((ROOT / "gpumon" / "telemetry" / room / "__init__.py").is_file()
               for room in TELEMETRY_ROOMS)


def test_telemetry_and_text_import_no_view() -> None:
    graph = import_graph(ROOT, "gpumon")
    assert offending_imports(graph, ("gpumon.telemetry", "gpumon.text"),
                             ("gpumon.ui", "gpumon.cli", "gpumon.playground")) == {}


def test_the_ssh_transport_stands_below_telemetry_and_the_playground() -> None:
    """``ssh/`` is shared by the remote source and the remote kernel: it imports neither,
    nor any view; ``remote/`` (the remote source) imports no view, the CLI or the
    playground."""
    graph = import_graph(ROOT, "gpumon")
    assert sum(_in(m, ("gpumon.ssh",)) for m in graph) >= 5
    assert offending_imports(graph, ("gpumon.ssh",), (
        "gpumon.telemetry", "gpumon.playground", "gpumon.remote", "gpumon.text", "gpumon.ui",
        "gpumon.cli")) == {}
    assert offending_imports(graph, ("gpumon.remote",), (
        "gpumon.ui", "gpumon.cli", "gpumon.playground")) == {}


def test_recordings_stand_below_the_cli_and_the_window() -> None:
    """``recording/`` (the file format, its reader, the replay source, the writer) imports no
    view, the CLI, the playground or the SSH transport; the telemetry and text below it do not
    import it."""
    graph = import_graph(ROOT, "gpumon")
    assert sum(_in(m, ("gpumon.recording",)) for m in graph) >= 4
    assert offending_imports(graph, ("gpumon.recording",), (
        "gpumon.ui", "gpumon.cli", "gpumon.playground", "gpumon.ssh", "gpumon.remote")) == {}
    assert offending_imports(graph, ("gpumon.telemetry", "gpumon.text"),
                             ("gpumon.recording",)) == {}


MAX_MODULE_LINES = 450


def test_no_module_is_over_450_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "gpumon").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_the_app_on_this_machine_loads_nothing_of_ssh_or_the_cluster_before_its_window() -> None:
    """What only a window over SSH or a cluster window uses is imported when one opens: a
    plain start does not pay for it (issue 52: start-up)."""
    script = textwrap.dedent("""
        import sys
        import gpumon.ui.window.launch
        print("\\n".join(sys.modules))
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=str(ROOT),
                          env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin",
                               "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert [m for m in loaded if m.startswith(("gpumon.remote", "gpumon.telemetry.cluster.prom"))
            or m in ("ssl", "http.client")] == []
