"""Read GNU gettext ``.po`` catalogues and build their ``.mo``, in pure Python (what GNU
``msgfmt`` does, for the subset gpumon's catalogues use: contexts, plurals, multi-line
strings, the ``fuzzy`` flag).

    python -m gpumon.msgfmt            rebuild every .mo under gpumon/resources/locale
    python -m gpumon.msgfmt --check    exit 1 if a .mo is missing or older than its .po's text
"""

from __future__ import annotations

import ast
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

LOCALE_DIR = Path(__file__).resolve().parent.parent / "resources" / "locale"


@dataclass
class Entry:
    """One message of a catalogue."""

    msgid: str
    msgid_plural: str | None = None
    msgctxt: str | None = None
    msgstr: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    line: int = 0

    @property
    def translated(self) -> bool:
        return bool(self.msgstr) and all(self.msgstr) and "fuzzy" not in self.flags


class PoError(ValueError):
    """A line of a ``.po`` file that is not gettext syntax; says which line."""


def _unquote(text: str, line: int) -> str:
    text = text.strip()
    if not (len(text) >= 2 and text[0] == text[-1] == '"'):
        raise PoError(f"line {line}: expected a quoted string, got {text!r}")
    try:
        value = ast.literal_eval(text)
    except (SyntaxError, ValueError) as exc:
        raise PoError(f"line {line}: {exc}") from None
    if not isinstance(value, str):
        raise PoError(f"line {line}: expected a string")
    return value


def parse_po(text: str) -> list[Entry]:
    """Every entry of a ``.po`` text, the header (msgid "") included, in file order."""
    entries: list[Entry] = []
    current: Entry | None = None
    key: str | None = None  # the field the next continuation line belongs to
    flags: set[str] = set()

    def finish() -> None:
        nonlocal current
        if current is not None:
            entries.append(current)
        current = None

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#,"):
            finish()
            key = None
            flags |= {f.strip() for f in line[2:].split(",") if f.strip()}
            continue
        if line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if line.startswith('"'):
            if current is None or key is None:
                raise PoError(f"line {number}: a string continues nothing")
            value = _unquote(line, number)
            if key.startswith("msgstr["):
                current.msgstr[int(key[7:-1])] += value
            elif key == "msgstr":
                current.msgstr[0] += value
            else:
                setattr(current, key, (getattr(current, key) or "") + value)
            continue
        if word in ("msgctxt", "msgid"):
            if not (word == "msgid" and key == "msgctxt"):  # a new entry starts
                finish()
                current = Entry(msgid="", flags=flags, line=number)
                flags = set()
            assert current is not None
            setattr(current, word, _unquote(rest, number))
            key = word
        elif word == "msgid_plural" and current is not None:
            current.msgid_plural = _unquote(rest, number)
            key = word
        elif word == "msgstr" and current is not None:
            current.msgstr = [_unquote(rest, number)]
            key = word
        elif word.startswith("msgstr[") and current is not None:
            index = int(word[7:-1])
            while len(current.msgstr) <= index:
                current.msgstr.append("")
            current.msgstr[index] = _unquote(rest, number)
            key = word
        else:
            raise PoError(f"line {number}: unexpected {line[:40]!r}")
    finish()
    return entries


def compile_entries(entries: list[Entry]) -> bytes:
    """The ``.mo`` bytes (little-endian, no hash table) of the translated entries and the
    header; untranslated and fuzzy entries are left out, so gettext falls back to English."""
    pairs: dict[bytes, bytes] = {}
    for e in entries:
        if e.msgid != "" and not e.translated:
            continue
        if e.msgid == "" and not e.msgstr:
            continue
        key = e.msgid if e.msgid_plural is None else f"{e.msgid}\0{e.msgid_plural}"
        if e.msgctxt is not None:
            key = f"{e.msgctxt}\x04{key}"
        pairs[key.encode("utf-8")] = "\0".join(e.msgstr).encode("utf-8")
    keys = sorted(pairs)
    count = len(keys)
    originals_at = 7 * 4
    translations_at = originals_at + count * 8
    data_at = translations_at + count * 8
    blob = bytearray()
    originals, translations = [], []
    for k in keys:
        originals.append((len(k), data_at + len(blob)))
        blob += k + b"\0"
    for k in keys:
        v = pairs[k]
        translations.append((len(v), data_at + len(blob)))
        blob += v + b"\0"
    head = struct.pack("<7I", 0x950412DE, 0, count, originals_at, translations_at, 0, 0)
    table = b"".join(struct.pack("<2I", n, at) for n, at in originals + translations)
    return head + table + bytes(blob)


def compile_po(text: str) -> bytes:
    """A ``.po`` text's ``.mo`` bytes."""
    return compile_entries(parse_po(text))


def catalogues(root: Path = LOCALE_DIR) -> list[Path]:
    """Every ``.po`` under ``root``."""
    return sorted(root.glob("*/LC_MESSAGES/*.po"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    stale = []
    for po in catalogues():
        mo = po.with_suffix(".mo")
        data = compile_po(po.read_text(encoding="utf-8"))
        if check:
            if not mo.is_file() or mo.read_bytes() != data:
                stale.append(mo)
        else:
            mo.write_bytes(data)
            print(f"wrote {mo.relative_to(LOCALE_DIR.parent.parent)}")
    for mo in stale:
        print(f"out of date: {mo.name} of {mo.parent.parent.name}; run python -m gpumon.msgfmt",
              file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
