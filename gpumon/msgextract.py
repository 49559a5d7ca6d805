"""Find every message gpumon's code passes to ``tr``, ``ntr`` and ``N_`` (by reading the
source with :mod:`ast`, as ``xgettext`` would) and bring the ``.po`` catalogues up to date:
new messages are added untranslated, messages no longer used are dropped, translations kept.

    python -m gpumon.msgextract        update every .po, then rebuild the .mo
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

from gpumon.msgfmt import LOCALE_DIR, Entry, catalogues, compile_po, parse_po

PACKAGE_DIR = Path(__file__).resolve().parent
FUNCTIONS = {"tr": 1, "ntr": 2, "N_": 1}
HEADER_COMMENT = (
    "# gpumon's messages. Brought up to date by `python -m gpumon.msgextract`, which also",
    "# builds the .mo beside this file; translate the empty msgstr entries it adds.",
)


@dataclass
class Message:
    """A message found in the source, with where it is used."""

    msgid: str
    msgid_plural: str | None = None
    places: list[str] = field(default_factory=list)


@dataclass
class Misuse:
    """A call of a translation function whose message is built at run time (an f-string, a
    concatenation, a ``.format``): it can never match the catalogue. A name is fine: it is a
    constant marked with ``N_()`` where it is defined."""

    place: str
    function: str


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def scan(root: Path = PACKAGE_DIR) -> tuple[dict[tuple[str, str | None], Message], list[Misuse]]:
    """Every message under ``root`` (keyed by msgid and plural), and every misuse."""
    found: dict[tuple[str, str | None], Message] = {}
    misuses: list[Misuse] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _name(node.func)
            if name not in FUNCTIONS or path.name == "i18n.py":
                continue
            n = FUNCTIONS[name]
            args = node.args[:n]
            place = f"{rel}:{node.lineno}"
            where = rel  # the catalogue names the file only, so that it does not churn
            if len(args) < n or any(isinstance(a, ast.JoinedStr | ast.BinOp | ast.Call)
                                    for a in args):
                misuses.append(Misuse(place, name))
                continue
            if not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args):
                continue  # tr(CONSTANT): the constant was marked with N_() where it is defined
            texts = [a.value for a in args if isinstance(a, ast.Constant)]
            msgid, plural = str(texts[0]), (str(texts[1]) if n == 2 else None)
            places = found.setdefault((msgid, plural), Message(msgid, plural)).places
            if where not in places:
                places.append(where)
    return found, misuses


def _quote(text: str) -> str:
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
               .replace("\n", "\\n"))
    return f'"{escaped}"'


def _field(name: str, text: str) -> list[str]:
    if "\n" not in text[:-1]:
        return [f"{name} {_quote(text)}"]
    parts = text.splitlines(keepends=True)
    return [f'{name} ""'] + [_quote(p) for p in parts]


def render_po(header: Entry | None, entries: list[tuple[Message, Entry | None]]) -> str:
    """The ``.po`` text: the header, then each message with its places and translation."""
    lines: list[str] = list(HEADER_COMMENT)
    if header is not None and header.msgstr:
        lines += ['msgid ""', 'msgstr ""']
        lines += [_quote(p) for p in header.msgstr[0].splitlines(keepends=True)]
        lines.append("")
    for message, old in entries:
        lines += [f"#: {p}" for p in message.places[:4]]
        if old is not None and "fuzzy" in old.flags:
            lines.append("#, fuzzy")
        lines += _field("msgid", message.msgid)
        if message.msgid_plural is not None:
            lines += _field("msgid_plural", message.msgid_plural)
            strings = old.msgstr if old is not None and len(old.msgstr) >= 1 else [""]
            for i, s in enumerate(strings):
                lines += _field(f"msgstr[{i}]", s)
        else:
            lines += _field("msgstr", old.msgstr[0] if old is not None and old.msgstr else "")
        lines.append("")
    return "\n".join(lines)


def update(po: Path, found: dict[tuple[str, str | None], Message]) -> str:
    """The text of ``po`` brought up to date with the messages ``found``."""
    old = parse_po(po.read_text(encoding="utf-8")) if po.is_file() else []
    header = next((e for e in old if e.msgid == ""), None)
    by_key = {(e.msgid, e.msgid_plural): e for e in old if e.msgid}
    ordered = sorted(found.values(), key=lambda m: (m.places[0], m.msgid))
    return render_po(header, [(m, by_key.get((m.msgid, m.msgid_plural))) for m in ordered])


def main(argv: list[str] | None = None) -> int:
    found, misuses = scan()
    for m in misuses:
        print(f"{m.place}: {m.function}() needs a plain string literal", file=sys.stderr)
    for po in catalogues(LOCALE_DIR):
        text = update(po, found)
        po.write_text(text, encoding="utf-8")
        po.with_suffix(".mo").write_bytes(compile_po(text))
        missing = sum(1 for e in parse_po(text) if e.msgid and not e.translated)
        print(f"{po.parent.parent.name}: {len(found)} messages, {missing} untranslated")
    return 1 if misuses else 0


if __name__ == "__main__":
    sys.exit(main())
