"""Spaces a PDF's text layer holds where the page shows no gap (stage 1, PDF branch).

Some producers write a space character inside a ligature's box: MuPDF then gives "fi elds", "diff erent",
"Th e", "soft ware" for the words a reader sees as "fields", "different", "The", "software" (Adobe's MinionPro
and Times New Roman in an Appligent white paper: 30 and more words on three pages, cut in the key passage a
user read and missed by a search for "fields"; a new user's walk, 2026-12-07). The space's box starts well
inside the glyphs before it, ending where they end, and the next glyph starts there: a space a reader cannot see.

:func:`drop_phantom_spaces` removes such spaces from the spans of ``get_text("dict")``, reading the glyph boxes
of ``rawdict`` (the same text page, asked only when a span has a space after a letter). Horizontal left-to-right
lines of left-to-right scripts only; a span whose characters do not spell its text is left as it is.
"""

from __future__ import annotations

import unicodedata

#: A space (or a run of them) between two letters is phantom when each lies inside the glyphs before it (ending at
#: most :data:`INSIDE_SHARE` of the font size past their end) ...
INSIDE_SHARE = 0.02
#: ... and the next letter starts no more than this share of the font size after that end (no visible gap).
GAP_SHARE = 0.05
#: A space or a period between letters is phantom too when the next glyph starts within this share of its width of
#: its own start (drawn on top of it: Times New Roman's "signi.ficant", "speci.f ies" in the same paper).
STACKED_SHARE = 0.1
_PHANTOM_CHARS = " ."


def _phantoms(chars: list[dict], size: float) -> set[int]:
    """The indexes of ``chars`` (one span's rawdict characters) that are phantom spaces or periods (module doc)."""
    out: set[int] = set()
    i = 1
    while i < len(chars) - 1:
        if chars[i]["c"] not in _PHANTOM_CHARS or not chars[i - 1]["c"].isalpha():
            i += 1
            continue
        j = i
        while j < len(chars) and chars[j]["c"] in _PHANTOM_CHARS:
            j += 1
        if j < len(chars) and chars[j]["c"].isalpha() and not _replacement(chars[i - 1:j + 1]):
            end = max(c["bbox"][2] for c in chars[max(0, i - 3):i])  # a ligature's pieces: the last may have no width
            nxt = chars[j]["bbox"][0]
            run = [chars[k]["bbox"] for k in range(i, j)]
            # inside, not merely overlapping: a font whose glyph boxes are wider than their advance (Comic Sans) or
            # tight tracking overlaps every space with the letter before it (a review, 2026-12-07)
            start = min(c["bbox"][0] for c in chars[max(0, i - 3):i])
            overlapped = nxt <= end + GAP_SHARE * size and all(
                start <= b[0] and b[2] <= end + INSIDE_SHARE * size for b in run)
            stacked = j == i + 1 and nxt <= run[0][0] + STACKED_SHARE * max(run[0][2] - run[0][0], 1e-3)
            if overlapped or stacked:
                out.update(range(i, j))
        i = j
    return out


def _replacement(chars: list[dict]) -> bool:
    """Whether ``chars`` (a letter, the spaces after it and the next letter) all have no width: a tagged PDF's
    replacement text (``/ActualText``), which MuPDF places at one point, and whose spaces are the words' own. The
    iPhone User Guide's "Tap the Pause button to pause the message" read "Tap thePausebuttontopausethemessage" (a walk
    over itext's test PDFs, 2026-12-07)."""
    return all(c["bbox"][2] - c["bbox"][0] < 1e-3 for c in chars)


def _candidates(text: str) -> bool:
    """Whether ``text`` has a space or period after a letter, and no right-to-left letter (Arabic and Hebrew glyphs
    are placed right to left, so a space's box lies before the letter it follows: pdf.js's ArabicCIDTrueType.pdf
    read its three words as one in a first version)."""
    if any(unicodedata.bidirectional(c) in ("R", "AL") for c in text):
        return False
    return any(text[k - 1].isalpha() for k in range(1, len(text) - 1) if text[k] in _PHANTOM_CHARS)


def drop_phantom_spaces(textpage, page_dict: dict) -> int:
    """Remove the phantom spaces (module doc) from the span texts of ``page_dict`` (``textpage.extractDICT()``) in
    place; returns how many were removed. Never raises for a text page MuPDF made."""
    spans = [(b, li, si, s) for b, block in enumerate(page_dict.get("blocks", ()))
             for li, line in enumerate(block.get("lines", ())) if _horizontal(line)
             for si, s in enumerate(line.get("spans", ())) if _candidates(s.get("text", ""))]
    if not spans:
        return 0
    try:
        raw = textpage.extractRAWDICT()["blocks"]
    except Exception:  # noqa: BLE001 - no glyph boxes: the spaces stay
        return 0
    removed = 0
    for b, li, si, span in spans:
        try:
            chars = raw[b]["lines"][li]["spans"][si]["chars"]
        except (IndexError, KeyError):
            continue
        if "".join(c["c"] for c in chars) != span["text"]:
            continue
        size = float(span.get("size") or 10.0)
        drop = _phantoms(chars, size)
        if drop:
            span["text"] = "".join(c["c"] for i, c in enumerate(chars) if i not in drop)
            removed += len(drop)
    return removed


def _horizontal(line: dict) -> bool:
    d = line.get("dir") or (1.0, 0.0)
    return line.get("wmode", 0) == 0 and d[0] > 0.99 and abs(d[1]) < 0.01
