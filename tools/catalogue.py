"""Bring gpumon's translation catalogues up to date with Babel.

    python tools/catalogue.py

runs these three commands in the repository root (you may type them there yourself; the tool
only hides their progress lines and Babel's warnings about f-strings as placeholder values):

    pybabel extract -F babel.cfg --no-default-keywords -k tr -k ntr:1,2 -k N_ --add-location=file --no-wrap -o build/gpumon.pot .
    pybabel update -i build/gpumon.pot -d resources/locale -D gpumon --ignore-obsolete --ignore-pot-creation-date --no-wrap
    pybabel compile -d resources/locale -D gpumon --statistics

``extract`` collects every message the source passes to ``tr``, ``ntr`` (singular, plural) and
``N_`` into a template, ``build/gpumon.pot`` (not committed). ``update`` merges it into each
``resources/locale/<lang>/LC_MESSAGES/gpumon.po``: new messages come in untranslated, messages
no longer used are dropped, and a message whose English changed keeps its old translation
marked ``#, fuzzy``. ``compile`` writes the ``.mo`` beside each ``.po`` (committed too: gettext
reads it at run time), leaving out untranslated and fuzzy entries, so English shows for them.
Then it prints what is left for a translator to do.
"""  # noqa: E501 (the commands are given whole, to be copied)

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAPPING = ROOT / "babel.cfg"
DOMAIN = "gpumon"  # gpumon/i18n.py's DOMAIN: the catalogues are gpumon.po and gpumon.mo
LOCALE_DIR = "resources/locale"
TEMPLATE = "build/gpumon.pot"
# gpumon.i18n's functions that take a message: tr(message), ntr(singular, plural, n), N_(message).
KEYWORDS = ("tr", "ntr:1,2", "N_")
# Babel warns about any f-string among a tr() call's arguments, even a placeholder's value
# (tr("Sampling error: {error}", error=f"{exc}")), which is fine. A message that is itself built
# at run time is what tests/test_i18n.py looks for, with the call's syntax tree.
NOISE = "Skipping f-string with substitutions"


def pybabel(root: Path, *args: str) -> int:
    """Run ``pybabel args`` in ``root``, as typed there; its exit status."""
    done = subprocess.run([sys.executable, "-m", "babel.messages.frontend", *args], cwd=root,
                          stderr=subprocess.PIPE, text=True, encoding="utf-8", check=False)
    for line in done.stderr.splitlines():
        if NOISE not in line:
            print(line, file=sys.stderr)
    return done.returncode


def extract(root: Path, template: Path | str = TEMPLATE) -> int:
    """Every message of ``root``'s ``gpumon`` package into ``template`` (relative to ``root``)."""
    (root / template).parent.mkdir(parents=True, exist_ok=True)
    keywords = [arg for keyword in KEYWORDS for arg in ("-k", keyword)]
    return pybabel(root, "-q", "extract", "-F", str(MAPPING), "--no-default-keywords", *keywords,
                   "--add-location=file", "--no-wrap", "-o", str(template), ".")


def update(root: Path, template: Path | str = TEMPLATE) -> int:
    """Every ``.po`` of ``root`` merged with ``template``."""
    return pybabel(root, "-q", "update", "-i", str(template), "-d", LOCALE_DIR, "-D", DOMAIN,
                   "--ignore-obsolete", "--ignore-pot-creation-date", "--no-wrap")


def compile_mo(root: Path) -> int:
    """The ``.mo`` of every ``.po`` of ``root``."""
    return pybabel(root, "compile", "-d", LOCALE_DIR, "-D", DOMAIN, "--statistics")


def left_to_do(root: Path) -> list[str]:
    """For each catalogue of ``root``, how many messages are untranslated or fuzzy."""
    from babel.messages.pofile import read_po

    lines = []
    for po in sorted((root / LOCALE_DIR).glob(f"*/LC_MESSAGES/{DOMAIN}.po")):
        with po.open("rb") as f:
            catalog = read_po(f)
        messages = [m for m in catalog if m.id]
        empty = sum(1 for m in messages if not all(m.string if isinstance(m.string, tuple)
                                                   else [m.string]))
        fuzzy = sum(1 for m in messages if m.fuzzy)
        line = (f"{po.relative_to(root).as_posix()}: {len(messages)} messages, "
                f"{empty} untranslated, {fuzzy} fuzzy")
        if fuzzy:
            line += " (a fuzzy one kept an older wording's translation: check it, edit it, " \
                    "then delete the flag)"
        lines.append(line)
    return lines


def run(root: Path = ROOT) -> int:
    """Extract, update and compile in ``root``: 0 when every step succeeded."""
    for step in (extract, update, compile_mo):
        status = step(root)
        if status != 0:
            print(f"pybabel {step.__name__.split('_')[0]} failed ({status})", file=sys.stderr)
            return status
    print("\n".join(left_to_do(root)))
    return 0


if __name__ == "__main__":
    sys.exit(run())
