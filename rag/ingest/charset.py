"""Which legacy encoding a text file's bytes are in, when no byte-order mark, probe or UTF-8 decides it.

:func:`guess` asks chardet 7 (``chardet.detect_all``: byte-pair models of each language and code page) for its
candidates and takes the first, unless reading the bytes that way gives mojibake a reader would not accept and
another candidate does not: a word that mixes scripts ("cafй", Latin with Cyrillic), a control, private-use or
replacement character, half-width katakana or a letter of no script :data:`SCRIPTS` knows (:func:`badness`).
Chardet's byte statistics decide wherever there is enough text; the script test rescues the short note whose few
accented letters the statistics read as another alphabet ("Le café est très bon" came out as Mac Cyrillic).

Measured against charset-normalizer (what decoded these files before), 2026-12-07, on 2,256 readings of 1,071
files (chardet's own test files, 385 in 40 encodings, plus 686 made by writing real text of trafilatura's German
and French pages and of chardet's Cyrillic, Central European and Greek files in the sibling code pages, each whole
and cut to its first 400, 150 and 60 bytes): right 1,845 with charset-normalizer and the product's Windows-1252
preference, 2,155 with chardet's first candidate, 2,100 with :func:`guess` (2,160 without :data:`PREFER_WESTERN`:
on texts of under :data:`WESTERN_EVIDENCE` accented bytes it reads short Mac Roman snippets as Windows-1252, 154 -> 92
of 169, and gains 2 other readings); on 39 short sentences written for the test in 20 languages' legacy encodings: 24,
30 and 36 (docs/extraction.md, seventh session). Windows-1252 is by far the commoner of the two today.
"""

from __future__ import annotations

import unicodedata

#: Scripts a word is written in; a word (a run of letters) with letters of two of them is mojibake, except
#: Japanese, which mixes kanji and kana by nature.
SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "HEBREW", "ARABIC", "CJK", "HIRAGANA", "KATAKANA", "HANGUL", "THAI",
           "ARMENIAN", "GEORGIAN", "DEVANAGARI")
_JAPANESE = frozenset({"CJK", "HIRAGANA", "KATAKANA"})
#: How many of chardet's candidates are read (each is a decode of the sample and a pass over it).
CANDIDATES = 10
#: The first candidate stands unless more than this share of its words are bad (:func:`badness`): a long Greek
#: article with a Greek-and-Latin word or two is Greek, not the Baltic code page that makes it all Latin.
BAD_WORDS_SHARE = 0.05
#: Windows-1252, the commonest legacy encoding of text files, is taken over chardet's choice when it reads as
#: cleanly, scores at least this share of the choice's confidence and the text holds little evidence either way ("Café crème brûlée": Windows-1250, 0.065,
#: "crčme"; Windows-1252, 0.063).
PREFER_WESTERN = 0.95
#: ... when the sample holds fewer non-ASCII bytes than this (its first 4 KiB): on more, chardet's statistics decide.
WESTERN_EVIDENCE = 8
#: Characters of each reading the mojibake test reads (ten readings of a 200 KB sample took about a second).
BADNESS_CHARS = 65_536
#: Bytes chardet reads (its own default): a larger file's encoding is decided on its start.
SAMPLE_BYTES = 200_000


def _script(ch: str) -> str:
    name = unicodedata.name(ch, "")
    if name.startswith("HALFWIDTH KATAKANA"):
        return "HALFWIDTH"
    for s in SCRIPTS:
        if name.startswith(s):
            return s
    return "OTHER"


def badness(text: str) -> tuple[int, int]:
    """``(bad, words)`` of ``text``: ``words`` the runs of letters; ``bad`` the words mixing two scripts, plus each
    control (but tab and line ends), private-use, unassigned or replacement character, plus each letter in
    half-width katakana or in no script of :data:`SCRIPTS`. Linear in ``len(text)``; no regular expression."""
    bad = words = 0
    seen: set[str] = set()
    for ch in text + " ":
        if ch.isalpha():
            s = _script(ch)
            seen.add(s)
            bad += s in ("HALFWIDTH", "OTHER")
            continue
        if seen:
            words += 1
            bad += len(seen) > 1 and not seen <= _JAPANESE
            seen = set()
        cat = unicodedata.category(ch)
        bad += (cat == "Cc" and ch not in "\t\n\r") or cat in ("Co", "Cn") or ch == "\ufffd"
    return bad, words


def guess(data: bytes) -> str | None:
    """The Python codec name ``data`` (not UTF-8, no byte-order mark) is most likely in, or ``None`` when chardet
    offers no candidate. Latin-1 is read as Windows-1252, as browsers do (WHATWG Encoding Standard: its bytes
    0x80-0x9F are Windows-1252's quotes and dashes). Bounded: :data:`CANDIDATES` decodes of at most
    :data:`SAMPLE_BYTES` bytes."""
    import chardet

    sample = data[:SAMPLE_BYTES]
    scored: list[tuple[int, int, str, int, float]] = []  # (bad, chardet's order, codec, words, confidence)
    for order, cand in enumerate(chardet.detect_all(sample, ignore_threshold=True, compat_names=False,
                                                    max_bytes=SAMPLE_BYTES)[:CANDIDATES]):
        enc = cand.get("encoding")
        if not enc:
            continue
        if enc.replace("-", "_").lower() in ("latin_1", "iso8859_1", "iso_8859_1"):
            enc = "cp1252"
        try:
            text = sample.decode(enc, errors="replace")
        except LookupError:
            continue
        bad, words = badness(text[:BADNESS_CHARS])
        scored.append((bad, order, enc, words, float(cand.get("confidence") or 0.0)))
    if not scored:
        return None
    first = scored[0]
    if first[1] == 0 and first[0] <= BAD_WORDS_SHARE * max(first[3], 1):
        best, pool = first, [x for x in scored if x[0] <= first[0]]
    else:
        best = min(scored, key=lambda x: (x[0], x[1]))
        pool = [x for x in scored if x[0] == best[0]]
    few = sum(1 for byte in sample[:4096] if byte > 0x7F) < WESTERN_EVIDENCE
    for x in pool:  # Windows-1252 when the statistics hardly tell it from the best, on little evidence
        if few and x[2] == "cp1252" and x[4] >= PREFER_WESTERN * best[4]:
            return x[2]
    return best[2]
