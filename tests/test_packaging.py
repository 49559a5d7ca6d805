"""What ``pip install`` brings: a core without Qt, pyqtgraph, numpy or torch; extras for the
window, the playground and the exporter's web config; every package of gpumon/ in the wheel;
and a package-page description whose links work away from the repository.

The wheel is built from a copy of the sources, without the network (``--no-index``, the
installed setuptools), so the check reads what a user would install.
"""

from __future__ import annotations

import email
import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
EXTRAS = PROJECT["optional-dependencies"]
#: What the window and the playground bring; none of it may be in the core.
HEAVY = {"torch", "pyside6", "pyside6-essentials", "shiboken6", "pyqtgraph", "numpy"}
# A Markdown link or image target, and an HTML src/href.
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)|(?:src|href)=\"(?P<html>[^\"]+)\"")
INLINE = re.compile(r"(!?)\[[^\]]*\]\(([^)\s]+)\)")
ABSOLUTE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|#)")


def _names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def expand(extra: str) -> set[str]:
    """Every requirement an extra brings, its ``gpumon[...]`` references followed."""
    found: set[str] = set()
    for line in EXTRAS[extra]:
        req = Requirement(line)
        if canonicalize_name(req.name) == "gpumon":
            for inner in sorted(req.extras):
                found |= expand(inner)
        else:
            found.add(str(req))
    return found


def test_the_core_needs_neither_qt_nor_pyqtgraph_nor_numpy_nor_torch() -> None:
    core = _names(PROJECT["dependencies"])
    assert {"nvidia-ml-py", "psutil", "prometheus-client"} <= core
    assert core & HEAVY == set()


def test_the_gui_extra_brings_the_window() -> None:
    assert {"pyside6-essentials", "pyqtgraph", "numpy"} <= _names(sorted(expand("gui")))
    assert "torch" not in _names(sorted(expand("gui")))


def test_the_playground_brings_torch_and_the_window_it_lives_in() -> None:
    assert expand("gui") | {"torch>=2.1"} <= expand("playground")


def test_all_is_the_window_the_playground_and_the_exporter() -> None:
    assert expand("gui") | expand("playground") | expand("exporter") <= expand("all")
    assert {"bcrypt", "pyyaml", "torch", "pyqtgraph"} <= _names(sorted(expand("all")))


def test_pyqtgraph_has_an_upper_bound() -> None:
    """gpumon/ui/widgets/curve.py sets private attributes of pyqtgraph's PlotCurveItem."""
    [pyqtgraph] = [Requirement(r) for r in EXTRAS["gui"]
                   if canonicalize_name(Requirement(r).name) == "pyqtgraph"]
    assert any(spec.operator in ("<", "<=", "~=", "==") for spec in pyqtgraph.specifier)
    installed = importlib.util.find_spec("pyqtgraph")
    if installed is not None:  # the version the tests run is inside the range
        import pyqtgraph as pg

        assert pyqtgraph.specifier.contains(pg.__version__, prereleases=True)


def _setup_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpumon_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines its functions; setup() runs only as __main__
    return module


def relative_links(markdown: str) -> list[str]:
    return [t for m in LINK.finditer(markdown) if not ABSOLUTE.match(t := m["target"] or m["html"])]


def test_the_package_page_s_links_are_absolute_and_lead_to_files() -> None:
    """Every link of README.md, made absolute for the package page, names a file of the
    repository under the one URL of pyproject.toml's [project.urls]."""
    setup = _setup_module()
    repository = PROJECT["urls"]["Repository"].rstrip("/")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    page = setup.long_description()
    assert relative_links(page) == []
    inline = [(m[1] == "!", m[2]) for m in INLINE.finditer(readme) if not ABSOLUTE.match(m[2])]
    assert any(image for image, _ in inline) and any(not image for image, _ in inline)
    for image, target in inline:
        path = target.split("#")[0]
        assert (ROOT / path).is_file(), target
        assert f"{repository}/{'raw' if image else 'blob'}/{setup.BRANCH}/{target}" in page


def test_the_rewrite_keeps_absolute_links_and_anchors() -> None:
    setup = _setup_module()
    text = ("![a (b)](docs/images/x.png) [guide](docs/user-guide.md#keys) [web](https://a.b/c) "
            "[here](#set-up) [y](./tools/y.py)\n[ref]: docs/images/z.png\n")
    assert setup.absolute_links(text, "https://h/r", "main") == (
        "![a (b)](https://h/r/raw/main/docs/images/x.png) "
        "[guide](https://h/r/blob/main/docs/user-guide.md#keys) [web](https://a.b/c) "
        "[here](#set-up) [y](https://h/r/blob/main/tools/y.py)\n"
        "[ref]: https://h/r/raw/main/docs/images/z.png\n")


# --- the wheel -------------------------------------------------------------------------------

def _copy_sources(dest: Path) -> Path:
    dest.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    for name in ("gpumon", "resources"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    return dest


def build_wheel(src: Path, out: Path) -> zipfile.ZipFile:
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-index",
                           "--no-build-isolation", "-w", str(out), str(src)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = out.glob("gpumon-*.whl")
    return zipfile.ZipFile(wheel)


def missing_from_wheel(src: Path, wheel: zipfile.ZipFile) -> list[str]:
    """The Python files of ``src/gpumon`` that the wheel does not hold."""
    held = set(wheel.namelist())
    return sorted(p for p in (f.relative_to(src).as_posix() for f in (src / "gpumon").rglob("*.py")
                              if "__pycache__" not in f.parts) if p not in held)


@pytest.mark.slow  # builds a wheel: seconds
def test_the_wheel_holds_every_package_the_resources_and_a_portable_description(
        tmp_path: Path) -> None:
    src = _copy_sources((tmp_path / "src").absolute())
    wheel = build_wheel(src, tmp_path / "out")
    assert missing_from_wheel(src, wheel) == []
    names = set(wheel.namelist())
    for resource in ("gpumon.desktop", "gpumon.svg", "gpumon.png", "gpumon-exporter.service",
                     "lesson-linear-saved-on-cuda.pt", "locale/zh_CN/LC_MESSAGES/gpumon.mo"):
        assert f"gpumon/resources/{resource}" in names, resource
    [metadata_name] = [n for n in names if n.endswith(".dist-info/METADATA")]
    metadata = email.message_from_string(wheel.read(metadata_name).decode())
    core = [r for r in metadata.get_all("Requires-Dist") or [] if "extra ==" not in r]
    assert _names(core) == _names(PROJECT["dependencies"])
    assert {"gui", "playground", "exporter", "all", "test"} <= set(
        metadata.get_all("Provides-Extra") or [])
    description = metadata.get_payload()
    assert isinstance(description, str) and description.startswith("# gpumon")
    assert relative_links(description) == []
    assert PROJECT["urls"]["Repository"] in description


@pytest.mark.slow  # builds a wheel: seconds
def test_a_new_package_ships_and_a_folder_without_init_is_found_missing(tmp_path: Path) -> None:
    """A new room with an ``__init__.py`` ships without touching the build settings; a
    folder without one would be left out, and the check above says so."""
    src = _copy_sources((tmp_path / "src").absolute())
    room = src / "gpumon" / "telemetry" / "newroom"
    room.mkdir()
    (room / "__init__.py").write_text('"""A new room."""\n')
    (room / "reader.py").write_text("X = 1\n")
    loose = src / "gpumon" / "loose"
    loose.mkdir()
    (loose / "module.py").write_text("Y = 2\n")
    wheel = build_wheel(src, tmp_path / "out")
    assert "gpumon/telemetry/newroom/reader.py" in wheel.namelist()
    assert missing_from_wheel(src, wheel) == ["gpumon/loose/module.py"]
