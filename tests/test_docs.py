"""The README stays short and its guides stay whole: README.md at most 250 lines, at least
three guides in docs/, every relative link of README.md and docs/*.md leads to a file, every
picture in docs/images is shown by some page, and the development guide's Layout names every
module of gpumon/ (and none that is gone)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
# A Markdown link or image target, and an HTML src/href.
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)|(?:src|href)=\"(?P<html>[^\"]+)\"")
ABSOLUTE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|#)")


def relative_links(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    targets = [m["target"] or m["html"] for m in LINK.finditer(text)]
    return [t for t in targets if not ABSOLUTE.match(t)]


def test_the_readme_is_at_most_250_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250


def test_there_are_at_least_three_guides() -> None:
    guides = [p for p in DOCS.glob("*.md") if p.stat().st_size > 0]
    assert len(guides) >= 3, guides


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    broken = [t for t in relative_links(page)
              if not (page.parent / t.split("#")[0]).resolve().is_file()]
    assert broken == []


def anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces
    as hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_link_to_a_heading_finds_it(page: Path) -> None:
    targets = [t.split("#", 1) for t in relative_links(page) if "#" in t]
    targets += [["", m[1]] for m in re.finditer(r"\]\(#([^)\s]+)\)", page.read_text("utf-8"))]
    missing = [f"{path}#{anchor}" for path, anchor in targets
               if anchor not in anchors(page.parent / path if path else page)]
    assert missing == []


def test_every_picture_is_shown_by_a_page() -> None:
    shown = {(page.parent / t.split("#")[0]).resolve() for page in PAGES
             for t in relative_links(page)}
    pictures = {p.resolve() for p in (DOCS / "images").iterdir()}
    assert pictures and pictures - shown == set()


def test_no_picture_lies_outside_docs_images() -> None:
    loose = [p.name for p in DOCS.iterdir() if p.suffix.lower() in (".png", ".jpg", ".svg")]
    assert loose == []


# --- the Layout section of docs/development.md ------------------------------------------------

def layout_entries(markdown: str) -> set[str]:
    """The modules the Layout's tree lists, as paths (``gpumon/ui/window/menus.py``).

    In the tree a folder is a line whose first word ends in ``/``, a module a line whose first
    word ends in ``.py``; each belongs to the nearest folder above it that is less indented.
    Lines indented deeper than their entry continue its description."""
    block = markdown.split("## Layout", 1)[1].split("```", 2)[1]
    entries: set[str] = set()
    stack: list[tuple[int, str]] = []
    for line in block.splitlines():
        words = line.split()
        if not words:
            continue
        indent = len(line) - len(line.lstrip())
        first = words[0]
        if not (first.endswith("/") or first.endswith(".py")):
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if stack and first.endswith(".py") and "/" not in first:
            entries.add("/".join([*(name for _, name in stack), first]))
        elif first.endswith("/"):
            stack.append((indent, first.rstrip("/")))
    return entries


def test_the_layout_names_every_module_and_no_module_that_is_gone() -> None:
    listed = layout_entries((DOCS / "development.md").read_text(encoding="utf-8"))
    actual = {p.relative_to(ROOT).as_posix() for p in (ROOT / "gpumon").rglob("*.py")
              if "__pycache__" not in p.parts and p.name != "__init__.py"}
    actual.add("gpumon/__init__.py")
    assert sorted(actual - listed) == [], "modules the Layout does not describe"
    assert sorted(p for p in listed - actual if p.startswith("gpumon/")) == [], \
        "modules the Layout names that do not exist"


def test_the_layout_reader_finds_a_missing_and_a_stale_module() -> None:
    text = ("## Layout\n\n```\ngpumon/\n  cli/\n    main.py   the entry\n"
            "                      ui/x.py and more.py in a description\n"
            "    gone.py   removed\n  units.py   bytes\n```\n")
    assert layout_entries(text) == {"gpumon/cli/main.py", "gpumon/cli/gone.py",
                                    "gpumon/units.py"}
