"""Text a PDF draws twice at nearly one place, which a reader sees once (stage 1, PDF branch).

A drop shadow is the same words drawn a little offset in another colour under the words; a "bold" made by
printing twice draws them again a fraction of a point to the side. MuPDF gives both drawings as spans, so the
page read "The Science The Science" and "can be far-reaching: can be far-reaching:" (a Scholastic/NIDA newsletter,
a new user's walk, 2026-12-07), and a listing printed twice had every line twice.

:func:`remove_overprints` keeps the first drawing of such a pair and removes the other from the page's
``get_text("dict")``: same text (spaces aside), same font size (within :data:`SIZE_SLACK`), boxes offset by at
most :data:`OFFSET_SHARE` of the size each way and overlapping by :data:`OVERLAP_SHARE` of the smaller box. The
removed texts are returned, for the coverage audit to count as removed on purpose.
"""

from __future__ import annotations

from rag.ingest.pdf.boxindex import BoxIndex
from rag.ingest.pdf.hidden import cut_spans

#: Font sizes within this share (0..1) of each other are one size.
SIZE_SLACK = 0.02
#: The second drawing is offset by at most this share of the font size, across and down.
OFFSET_SHARE = 0.15
#: The two boxes overlap by at least this share (0..1) of the smaller one.
OVERLAP_SHARE = 0.7
#: A span is compared with at most this many spans of the same words after it along the line (a hostile page of
#: thousands of one word in one band stays linear; a review, 2026-12-07).
MAX_CANDIDATES = 32


def _overlap(a, b) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return w * h / smaller if smaller > 0 else 0.0


def _same_place(a: dict, b: dict) -> bool:
    size = max(float(a.get("size") or 0), float(b.get("size") or 0))
    if size <= 0 or abs(float(a.get("size") or 0) - float(b.get("size") or 0)) > SIZE_SLACK * size:
        return False
    ba, bb = a["bbox"], b["bbox"]
    if abs(ba[0] - bb[0]) > OFFSET_SHARE * size or abs(ba[1] - bb[1]) > OFFSET_SHARE * size:
        return False
    return _overlap(ba, bb) >= OVERLAP_SHARE


def remove_overprints(page_dict: dict, top: float = 0.0, bottom: float = 1000.0) -> list[str]:
    """Remove the second drawing of text drawn twice (module doc) from ``page_dict`` (PyMuPDF's
    ``get_text("dict")``) in place, and the lines left without a span; returns the removed spans' texts. ``top``
    and ``bottom`` (points) are the page's vertical extent, for the box index (any values give the same result)."""
    spans = [s for block in page_dict.get("blocks", ()) for line in block.get("lines", ())
             for s in line.get("spans", ()) if len("".join(s.get("text", "").split())) >= 2]
    if len(spans) < 2:
        return []
    groups: dict[str, list[int]] = {}
    for k, span in enumerate(spans):
        groups.setdefault("".join(span["text"].split()), []).append(k)
    gone: set[int] = set()
    for members in groups.values():  # only spans of the same words are compared, each with its near neighbours
        if len(members) < 2:
            continue
        index = BoxIndex([(k, tuple(spans[k]["bbox"])) for k in members], top, bottom)
        by_x = sorted(members, key=lambda k: spans[k]["bbox"][0])
        reach = OFFSET_SHARE * max(float(spans[k].get("size") or 0) for k in members)
        for n, k in enumerate(by_x):  # the spans within reach along x and in its strips, the nearest few at most
            window = []
            for j in by_x[n + 1:n + 1 + MAX_CANDIDATES]:
                if spans[j]["bbox"][0] - spans[k]["bbox"][0] > reach:
                    break
                window.append(j)
            if not window:
                continue
            near = {j for j, _ in index.near(tuple(spans[k]["bbox"]))}
            for j in window:
                first, second = min(j, k), max(j, k)
                if j in near and first not in gone and second not in gone and \
                        _same_place(spans[first], spans[second]):
                    gone.add(second)
    if not gone:
        return []
    cut_spans(page_dict, {id(spans[j]) for j in gone})
    return [spans[j]["text"] for j in sorted(gone)]
