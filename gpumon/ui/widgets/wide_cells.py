"""Wide characters two columns wide in a monospaced QTextDocument, as a terminal draws them.

A text box padded by terminal columns (``smi_text.cells``: a Chinese character takes two)
lines up in a terminal, but not in a Qt text view: the monospaced font has no Chinese
glyphs, and the fallback font's are narrower or wider than two of its columns (here
WenQuanYi's 主 drew 1.7 columns of DejaVu Sans Mono wide), so every row with Chinese text
ended its box short of the right border. ``even_wide_cells`` gives each wide character
letter spacing that makes its advance exactly two columns of the font around it; the
spacing is in pixels, so it is set again when the font changes (the zoom).
"""

from __future__ import annotations

import unicodedata

from PySide6.QtGui import QFont, QFontMetricsF, QTextCharFormat, QTextCursor, QTextDocument


def is_wide(c: str) -> bool:
    """Whether a terminal gives ``c`` two columns (East Asian wide or full-width)."""
    return unicodedata.east_asian_width(c) in "WF"


def even_wide_cells(doc: QTextDocument) -> int:
    """Make every wide character of ``doc``'s preformatted blocks (``<pre>``: boxes, code)
    exactly two columns of its own font wide; returns how many were set. Prose is left as
    the font draws it (spaced out to two columns, a Chinese sentence read as airy)."""
    cursor = QTextCursor(doc)
    cursor.beginEditBlock()
    count = 0
    block = doc.begin()
    while block.isValid():
        if not block.blockFormat().nonBreakableLines():
            block = block.next()
            continue
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            text = fragment.text()
            if any(is_wide(c) for c in text):
                font = fragment.charFormat().font().resolve(doc.defaultFont())
                count += _even_fragment(cursor, fragment.position(), text, font)
            it += 1
        block = block.next()
    cursor.endEditBlock()
    return count


def _even_fragment(cursor: QTextCursor, start: int, text: str, font: QFont) -> int:
    plain = QFont(font)
    plain.setLetterSpacing(QFont.SpacingType.AbsoluteSpacing, 0.0)  # measured unspaced
    metrics = QFontMetricsF(plain)
    column = metrics.horizontalAdvance("0")
    count = 0
    i = 0
    while i < len(text):
        if not is_wide(text[i]):
            i += 1
            continue
        advance = metrics.horizontalAdvance(text[i])
        j = i + 1
        while j < len(text) and is_wide(text[j]) and metrics.horizontalAdvance(text[j]) == advance:
            j += 1
        fmt = QTextCharFormat()
        fmt.setFontLetterSpacingType(QFont.SpacingType.AbsoluteSpacing)
        fmt.setFontLetterSpacing(2 * column - advance)
        cursor.setPosition(start + i)
        cursor.setPosition(start + j, QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(fmt)
        count += j - i
        i = j
    return count
