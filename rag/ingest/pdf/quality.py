"""What kind of text layer a PDF page has (stage 1, PDF branch; issue 13, items 6-7).

:func:`classify_page` gives one of

* ``text`` - a usable text layer;
* ``blank`` - no text and (almost) no image: an empty page, never called "scanned";
* ``scanned`` - no usable text, and images cover a large part of the page: read by OCR
  (:mod:`rag.ingest.ocr`) where the engine is installed;
* ``sparse-image`` - a few words (a header, a page number) over a large image: the image is OCR'd
  too and what it adds is kept (``03`` p1 of pdf-dev, a key-figure table drawn as a picture);
* ``unreadable`` - text whose glyphs map to the wrong characters (a font without a usable ToUnicode
  map: "Wkh txlfn" for "The quick"): flagged in the warnings, and OCR'd when the engine is there.

Unreadable text is found with two cheap statistics of the page's letters, measured on the corpora
(``docs/extraction.md``): the share of vowels among letters (English 0.37-0.40, German 0.35, French
0.45; a Caesar-shifted English page 0.10) and the share of words found whole in the embedder's
vocabulary (English prose 0.82-0.99, the German brochure 0.30-0.46, shifted English 0.10). A page
is unreadable when both are low, or when over 10 % of its characters are U+FFFD or private-use code
points. Pages with under 20 words are never judged. The two letter statistics describe Latin-script text
only: a page whose letters are mostly of another script (Chinese, Japanese, Greek, Cyrillic, Arabic ...)
is judged by the U+FFFD / private-use share alone (issue 28: a Chinese text layer was called unreadable
and replaced by OCR that kept only its Latin letters and digits).

OCR replaces an unreadable layer only when it reads the layer's own script at least half as well
(:func:`ocr_reads_worse`); otherwise the layer stays, flagged. Pages with U+FFFD or private-use characters
below the unreadable level are counted (:func:`garbled_chars`) and named in a warning, so no garbled
text is indexed without a word.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter

from rag.tokens import get_tokenizer

#: Images covering at least this share (0..1) of a page with no text make it "scanned".
SCANNED_IMAGE_SHARE = 0.3
#: A page with fewer text-layer words than this over images covering ``SPARSE_IMAGE_SHARE`` is OCR'd too.
SPARSE_WORDS = 30
SPARSE_IMAGE_SHARE = 0.4
_MIN_WORDS = 20
_VOWELS = set("aeiouyàáâäãåæèéêëìíîïòóôöõøœùúûüýÿ")
_WORD = re.compile(r"[^\W\d_]{2,}")
_NON_LETTER = re.compile(r"[\W\d_]+")


@functools.lru_cache(maxsize=1)
def _vocabulary() -> frozenset[str]:
    try:
        return frozenset(w for w in get_tokenizer().get_vocab() if w.isalpha())
    except Exception:  # noqa: BLE001 - no tokenizer: the vowel statistic alone decides
        return frozenset()


def vowel_share(text: str) -> float:
    """Share (0..1) of vowels among the letters of ``text`` (NFC, case-folded); 0.0 without letters."""
    letters = _NON_LETTER.sub("", unicodedata.normalize("NFC", text).casefold())
    return sum(letters.count(v) for v in _VOWELS) / len(letters) if letters else 0.0


def vocabulary_share(text: str) -> float:
    """Share (0..1) of the words (2+ letters) of ``text`` that are whole words of the embedder's vocabulary."""
    vocab = _vocabulary()
    words = [w.lower() for w in _WORD.findall(text)]
    if not words or not vocab:
        return 1.0
    return sum(w in vocab for w in words) / len(words)


def garbage_share(text: str) -> float:
    """Share (0..1) of non-space characters that are U+FFFD or private-use code points."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    return sum(c == "\ufffd" or unicodedata.category(c) == "Co" for c in chars) / len(chars)


def garbled_chars(text: str) -> int:
    """How many characters of ``text`` are U+FFFD or private-use code points (glyphs with no Unicode mapping)."""
    return sum(c == "\ufffd" or unicodedata.category(c) == "Co" for c in text)


def script_of(ch: str) -> str:
    """The script of letter ``ch`` as a coarse name: ``LATIN``, ``CJK`` (Han, kana), ``HANGUL``, ``CYRILLIC``,
    ``GREEK``, ``ARABIC`` ... (the first word of its Unicode name); ``""`` for a character without a name."""
    try:
        first = unicodedata.name(ch).split(" ", 1)[0]
    except ValueError:
        return ""
    return "CJK" if first in ("CJK", "HIRAGANA", "KATAKANA", "IDEOGRAPHIC") else first


def script_counts(text: str) -> Counter:
    """Letters of ``text`` per script (:func:`script_of`)."""
    return Counter(script_of(c) for c in text if c.isalpha())


def main_script(text: str) -> str:
    """The script most letters of ``text`` are written in (``""`` without letters)."""
    counts = script_counts(text)
    return counts.most_common(1)[0][0] if counts else ""


def unreadable(text: str) -> bool:
    """Whether a page's text layer looks like wrongly mapped glyphs (rule in the module doc)."""
    if len(_WORD.findall(text)) < _MIN_WORDS and garbage_share(text) <= 0.1:
        return False
    if garbage_share(text) > 0.1:
        return len(text.split()) >= 5
    counts = script_counts(text)
    if counts and counts["LATIN"] < 0.8 * sum(counts.values()):
        return False  # the letter statistics describe Latin-script text only
    return vowel_share(text) < 0.25 and vocabulary_share(text) < 0.25


def ocr_reads_worse(layer: str, ocr: str) -> bool:
    """Whether OCR text ``ocr`` reads the main script of text layer ``layer`` worse than the layer: fewer
    than half as many letters of that script (a Chinese layer OCR'd into Latin letters and digits). A
    layer without letters is never better."""
    script = main_script(layer.replace("\ufffd", ""))
    if not script:
        return False
    have = script_counts(layer)[script]
    return script_counts(ocr)[script] < 0.5 * have


def image_share(page) -> float:
    """Share (0..1) of the page's area covered by images (bounding boxes, overlaps counted once at most
    as the page's area)."""
    area = abs(page.rect)
    if not area:
        return 0.0
    try:
        boxes = [info["bbox"] for info in page.get_image_info()]
    except Exception:  # noqa: BLE001
        return 0.0
    r = page.rect
    covered = 0.0
    for x0, y0, x1, y1 in boxes:
        w = max(0.0, min(x1, r.x1) - max(x0, r.x0))
        h = max(0.0, min(y1, r.y1) - max(y0, r.y0))
        covered += w * h
    return min(1.0, covered / area)


def classify_page(page, text: str) -> str:
    """``text``, ``blank``, ``scanned``, ``sparse-image`` or ``unreadable`` (module doc) for ``page``
    whose text layer reads ``text``."""
    n_words = len(_WORD.findall(text)) + len(re.findall(r"\d+", text))
    if n_words == 0:
        return "scanned" if image_share(page) >= SCANNED_IMAGE_SHARE else "blank"
    if unreadable(text):
        return "unreadable"
    if n_words < SPARSE_WORDS and image_share(page) >= SPARSE_IMAGE_SHARE:
        return "sparse-image"
    return "text"
