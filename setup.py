"""What pyproject.toml cannot say: which packages ship, and the package page's README.

- Packages: every folder of ``gpumon/`` with an ``__init__.py`` (``find_packages``, so a new
  one cannot be left out), plus ``gpumon.resources``, which lives in the top-level
  ``resources/`` folder (``package-dir`` in pyproject.toml). setuptools' ``packages.find``
  cannot add a package from another folder, hence this file.
- Long description: README.md with its relative links (images in docs/images, the guides in
  docs/) made absolute from ``[project.urls] Repository``, since a package page has none of
  the repository's files.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from setuptools import find_packages, setup

if sys.version_info >= (3, 11):
    import tomllib
else:  # build-system requires tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent
#: The branch the package page's links point into.
BRANCH = "main"
# A Markdown link or image: [text](target) or ![alt](target); the text may hold parentheses.
_INLINE = re.compile(r"(?P<bang>!?)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)\)")
# A reference definition: [name]: target
_REFERENCE = re.compile(r"^(?P<lead> {0,3}\[[^\]]+\]:[ \t]*)(?P<target>\S+)", re.MULTILINE)
_ABSOLUTE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|#|/)")


def repository_url() -> str:
    """``[project.urls] Repository`` of pyproject.toml, without a trailing slash."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return str(tomllib.load(f)["project"]["urls"]["Repository"]).rstrip("/")


def absolute_links(markdown: str, repository: str, branch: str = BRANCH) -> str:
    """``markdown`` (a file at the repository's root) with every relative link made absolute:
    images to their raw bytes, other files to their page in the repository."""

    def absolute(target: str, image: bool) -> str:
        if _ABSOLUTE.match(target):
            return target
        path = target[2:] if target.startswith("./") else target
        return f"{repository}/{'raw' if image else 'blob'}/{branch}/{path}"

    def inline(m: re.Match[str]) -> str:
        return f"{m['bang']}[{m['text']}]({absolute(m['target'], bool(m['bang']))})"

    def reference(m: re.Match[str]) -> str:
        image = m["target"].lower().endswith((".png", ".jpg", ".jpeg", ".gif", ".svg"))
        return m["lead"] + absolute(m["target"], image)

    return _REFERENCE.sub(reference, _INLINE.sub(inline, markdown))


def long_description() -> str:
    return absolute_links((ROOT / "README.md").read_text(encoding="utf-8"), repository_url())


if __name__ == "__main__":
    setup(
        packages=[*find_packages(include=["gpumon", "gpumon.*"]), "gpumon.resources"],
        long_description=long_description(),
        long_description_content_type="text/markdown",
    )
