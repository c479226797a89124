"""Characters of the symbol fonts Office draws from byte codes: Symbol, Wingdings, Wingdings 2.

A Word checklist's tick is ``<w:sym w:font="Wingdings" w:char="F0FC"/>`` or the letter "ü" in a run set in
Wingdings; a formula's Greek letters are Latin letters in the Symbol font. A reader sees ✓ and α; the text holds a
private-use code or "ü". :func:`symbol_char` gives the Unicode character a reader sees, or ``""`` for a glyph with no
Unicode meaning a reader would search for (a clock face, a leaf). Codes are the font's byte (``0x20``-``0xFF``) or
that byte in the private-use area at ``0xF000`` (as Word writes them).

Sources: Adobe's Symbol encoding (Unicode's ``VENDORS/ADOBE/symbol.txt``, the letters and the common mathematical
signs), and the Wingdings and Wingdings 2 charts of Alan Wood's Unicode resources (the tables Unicode 7.0 followed
when it added these dingbats); only the marks documents use as text are kept: ticks, crosses, check boxes,
bullets, arrows, circled numbers.
"""

from __future__ import annotations

_GREEK_UPPER = "ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖ"
_GREEK_LOWER = "αβχδεφγηιϕκλμνοπθρστυϖωξψζ"

#: Symbol font byte -> character (letters A-Z and a-z are Greek; digits and most punctuation are themselves).
SYMBOL = {
    **{0x41 + i: c for i, c in enumerate(_GREEK_UPPER)},
    **{0x61 + i: c for i, c in enumerate(_GREEK_LOWER)},
    0x22: "∀", 0x24: "∃", 0x27: "∋", 0x2A: "∗", 0x2D: "−", 0x40: "≅", 0x5E: "⊥",
    0xA2: "′", 0xA3: "≤", 0xA5: "∞", 0xAB: "↔", 0xAC: "←", 0xAD: "↑", 0xAE: "→", 0xAF: "↓", 0xB0: "°", 0xB1: "±",
    0xB2: "″", 0xB3: "≥", 0xB4: "×", 0xB5: "∝", 0xB6: "∂", 0xB7: "•", 0xB8: "÷", 0xB9: "≠", 0xBA: "≡", 0xBB: "≈",
    0xBC: "…", 0xC6: "∅", 0xC7: "∩", 0xC8: "∪", 0xC9: "⊃", 0xCC: "⊂", 0xCE: "∈", 0xCF: "∉", 0xD1: "∇", 0xD6: "√",
    0xD7: "⋅", 0xD8: "¬", 0xD9: "∧", 0xDA: "∨", 0xDB: "⇔", 0xDC: "⇐", 0xDE: "⇒", 0xE5: "∑", 0xF2: "∫",
}
#: Wingdings byte -> character.
WINGDINGS = {
    0x43: "👍", 0x44: "👎", 0x45: "☜", 0x46: "☞", 0x4A: "☺", 0x4C: "☹",
    0x6C: "●", 0x6E: "■", 0x6F: "□", 0x71: "❑", 0x72: "❒", 0x75: "◆", 0x76: "❖", 0x77: "⬥", 0x78: "⌧",
    **{0x80 + i: c for i, c in enumerate("⓪①②③④⑤⑥⑦⑧⑨⑩")},
    **{0x8C + i: c for i, c in enumerate("❶❷❸❹❺❻❼❽❾❿")},
    0x9E: "·", 0x9F: "•", 0xA0: "▪", 0xA1: "○", 0xA7: "▪", 0xA8: "◻", 0xAB: "★", 0xD8: "➢", 0xE8: "➔",
    0xEF: "⇦", 0xF0: "⇨", 0xF1: "⇧", 0xF2: "⇩", 0xFB: "✗", 0xFC: "✓", 0xFD: "☒", 0xFE: "☑",
}
#: Wingdings 2 byte -> character (its light tick and crosses read as the common ✓ and ✗).
WINGDINGS_2 = {
    0x4F: "✗", 0x50: "✓", 0x51: "✗", 0x52: "☑", 0x53: "☒", 0x54: "☒", 0x55: "☒", 0xA2: "■", 0xA3: "□",
    **{0x6A + i: c for i, c in enumerate("①②③④⑤⑥⑦⑧⑨⑩")},
    **{0x75 + i: c for i, c in enumerate("❶❷❸❹❺❻❼❽❾❿")},
}
_FONTS = {"symbol": SYMBOL, "wingdings": WINGDINGS, "wingdings 2": WINGDINGS_2}


def symbol_font(name: str | None) -> bool:
    """Whether ``name`` (a font name, any case) is one of the symbol fonts read here."""
    return bool(name) and name.strip().casefold() in _FONTS


def symbol_char(font: str | None, code: int) -> str:
    """The character a reader sees for byte ``code`` (or ``0xF000 + code``) drawn in ``font``; for another font, the
    code's own character unless it is a private-use or control code (then ``""``)."""
    table = _FONTS.get((font or "").strip().casefold())
    if table is None:
        return "" if 0xE000 <= code <= 0xF8FF or code < 0x20 else chr(code)
    byte = code - 0xF000 if 0xF020 <= code <= 0xF0FF else code
    if table is SYMBOL and byte < 0x80 and byte not in SYMBOL:
        return chr(byte) if byte >= 0x20 else ""  # digits, space and punctuation are themselves
    return table.get(byte, "")


def symbol_text(font: str | None, text: str) -> str:
    """``text`` set in ``font`` as a reader sees it, when ``font`` is a symbol font: its private-use codes
    (``U+F020``-``U+F0FF``) and ASCII characters through :func:`symbol_char`, and for Wingdings its Latin-1 ones too
    (Word's legacy "ü" for ✓); any other character is a real Unicode character a newer file wrote as itself ("θ",
    "≤", "µ", "✓"), kept (a review, 2026-12-07: they were dropped or read as another sign). Else ``text`` unchanged."""
    if not symbol_font(font):
        return text
    latin1 = (font or "").strip().casefold() != "symbol"
    return "".join(symbol_char(font, ord(ch)) if (0xF020 <= ord(ch) <= 0xF0FF or 0x21 <= ord(ch) <= 0x7E
                                                   or (latin1 and 0xA1 <= ord(ch) <= 0xFF)) else ch
                   for ch in text)
