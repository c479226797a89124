"""Text-coverage audit of every format but PDF (issue 37, Deliver 1): no reader may lose what a person sees
silently.

The PDF reader is audited page by page against PyMuPDF's own words (:mod:`rag.ingest.pdf.audit`). For the other
formats a second, deliberately simple reader per format (an *auditor*: one small function
per media type in :data:`AUDITORS`, sharing no code with the product's reader) lists what a person sees, by placement
(:class:`rag.ingest.seen.Seen`: ``body``, ``table``, ``content control``, ``text box``, ``SmartArt``, ``chart``,
``header or footer``, ``speaker notes``, ``footnote`` ...). Its words (:func:`rag.ingest.pdf.audit.words`:
letters and digits, NFKC, case-folded) are matched against the canonical text's words as a multiset, each
canonical word used once; a piece seen twice with the same text (a page header of every section, a slide
repeated as a build step) counts once. Coverage is the share of the seen words found. A seen word the canonical
text lacks but the reader's own report of what it left out for a reason holds (:attr:`rag.types.Document.left_out`:
text hidden by CSS, counted by reason in a warning; an HTML page's navigation, sidebars and footers, and what lies
outside its main content) is not counted: the simple auditors do not read style sheets, and judging the CSS
again would be the reader's code a second time. A loss the reader did not report is still a loss.

Under :data:`MIN_COVERAGE` the document is still indexed, with a warning naming what was missed, by
placement, in characters ("text coverage 38 % of the words a reader sees: about 17,000 characters inside a
content control were not read"). :func:`audit` returns the :class:`Coverage` (``None`` for a format without
an auditor, or when the auditor itself cannot read the file: the reader's verdict stands).

Bounded like the readers (:mod:`rag.ingest.limits`): the auditors read only the members they need, each
within ``max_zip_member_mb`` (the container was checked by :func:`rag.ingest.limits.check_zip` before the
reader ran), at most :data:`rag.ingest.seen.MAX_PARTS` parts and :data:`~rag.ingest.seen.MAX_SEEN_CHARS` characters; past either the audit
stops and judges what it read.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rag.ingest import coverage_other
from rag.ingest.limits import Limits
from rag.ingest.office import coverage_ooxml
from rag.ingest.pdf.audit import words
from rag.ingest.seen import MAX_PARTS, MAX_SEEN_CHARS, Auditor, Seen
from rag.types import Document

__all__ = ["MAX_PARTS", "MAX_SEEN_CHARS", "MIN_COVERAGE", "Auditor", "Coverage", "Seen", "audit", "auditors",
           "judge"]

#: Characters that show nothing inside a word (soft hyphen, zero-width space and joiners): dropped before words are
#: taken, as every reader drops them (``Bür\u00adger`` is one word).
_UNSEEN = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060"), None)
#: Under this share (0..1) of the seen words found, the document carries a warning (issue 37).
MIN_COVERAGE = 0.95
@dataclass(frozen=True)
class Coverage:
    """The audit of one document: ``seen`` words a person sees, ``found`` of them in the canonical text,
    ``missed`` ``(place, characters)`` of the words not found, most first."""

    seen: int
    found: int
    missed: tuple[tuple[str, int], ...] = ()

    @property
    def share(self) -> float:
        """``found / seen`` (1.0 when nothing is seen)."""
        return self.found / self.seen if self.seen else 1.0

    def warning(self, floor: float = MIN_COVERAGE) -> str | None:
        """The document's warning when :attr:`share` is under ``floor``, else ``None``."""
        if self.share >= floor:
            return None
        total = sum(n for _, n in self.missed)
        parts = [f"about {_about(n)} characters {_where(place)}" for place, n in self.missed[:4]
                 if n >= 20 and n * 50 >= total]
        what = ", ".join(parts) if parts else "some text"
        return (f"text coverage {100 * self.share:.0f} % of the words a reader sees: {what} were not read "
                "(indexed anyway; questions about that text will not find it)")


def _about(n: int) -> str:
    if n >= 1000:
        return f"{round(n, -2):,}"
    return f"{round(n, -1) or n:,}"


_PLACE_WORDS = {"body": "of body text", "table": "in tables", "content control": "inside a content control",
                "text box": "in text boxes", "SmartArt": "in SmartArt graphics", "chart": "in charts",
                "header or footer": "in page headers and footers", "speaker notes": "in speaker notes",
                "footnote": "in footnotes", "endnote": "in endnotes", "slide": "on slides", "cell": "in cells"}


def _where(place: str) -> str:
    return _PLACE_WORDS.get(place, f"in {place}")


def _excused(w: str, excused: Counter, have: Counter) -> bool:
    """Whether the seen word ``w`` is text the reader left out for a reason (taken from ``excused``): the word itself,
    or two words glued where a left-out element meets its neighbour (``reset</span><span>SYSTEM`` is seen as
    "resetsystem")."""
    if excused[w] > 0:
        excused[w] -= 1
        return True
    for i in range(1, min(len(w), 40)):
        head, tail = w[:i], w[i:]
        if (excused[head] > 0 or have[head] > 0) and excused[tail] > 0 or excused[head] > 0 and have[tail] > 0:
            return True
    return False


def judge(seen: list[Seen], canonical: str, hidden: tuple[str, ...] = ()) -> Coverage:
    """Match the words of ``seen`` against ``canonical`` (rules in the module doc); a seen word the canonical text
    lacks but ``hidden`` holds (the text the reader left out as hidden, its reasons in a warning) is not counted."""
    have = Counter(words(canonical))
    excused = Counter(w for piece in hidden for w in words(piece.translate(_UNSEEN)))
    total = found = 0
    missed: Counter = Counter()
    pieces: set[str] = set()
    for s in seen:
        key = " ".join(s.text.translate(_UNSEEN).split())
        if not key or key in pieces:
            continue
        pieces.add(key)
        for w in words(key):
            if have[w] <= 0 and _excused(w, excused, have):
                continue
            total += 1
            if have[w] > 0:
                have[w] -= 1
                found += 1
            else:
                missed[s.place] += len(w) + 1
    return Coverage(total, found, tuple(missed.most_common()))


#: Media type -> auditor: the table every format adds its one function to (OOXML:
#: :mod:`rag.ingest.office.coverage_ooxml`; ODF, HTML, EPUB: :mod:`rag.ingest.coverage_other`).
AUDITORS: dict[str, Auditor] = {**coverage_ooxml.AUDITORS, **coverage_other.AUDITORS}


def auditors() -> dict[str, Auditor]:
    """The :data:`AUDITORS` table (a copy: a test may change it without changing the audit)."""
    return dict(AUDITORS)


def audit(doc: Document, data: bytes, limits: Limits) -> Coverage | None:
    """The coverage of ``doc`` (extracted from ``data``) by its format's auditor; ``None`` without one, or when
    the auditor cannot read the file."""
    auditor = AUDITORS.get(doc.media_type.value)
    if auditor is None:
        return None
    try:
        seen = auditor(data, limits)
    except Exception:  # noqa: BLE001 - the audit never fails a document the reader could read
        return None
    return judge(seen, doc.canonical, doc.left_out)
