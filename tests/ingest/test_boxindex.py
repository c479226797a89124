"""The page's strip index (rag.ingest.pdf.boxindex): what it returns for a box holds every item whose height meets
the box's, so the hidden-text checks that read it decide exactly as if they read the whole page, and on a page of
thousands of lines it hands a span its neighbours, not the page."""

from __future__ import annotations

import math
import random

import pymupdf

from rag.ingest.pdf.boxindex import BoxIndex
from rag.ingest.pdf.hidden import _Paint, remove_hidden


def _meets(a, b) -> bool:
    return min(a[3], b[3]) - max(a[1], b[1]) >= 0


def test_near_holds_every_item_meeting_the_box_in_the_given_order():
    rng = random.Random(7)
    boxes = []
    for _ in range(600):
        y = rng.uniform(-100, 900)
        boxes.append((0.0, y, 10.0, y + rng.choice([0.0, 2.0, 9.0, 40.0, 700.0])))
    boxes += [(0, -math.inf, 5, 3), (0, 500, 5, math.inf), (0, math.nan, 5, 10), (0, 20, 5, 10)]  # odd ones
    index = BoxIndex([(k, b) for k, b in enumerate(boxes)], 0.0, 792.0)
    for _ in range(300):
        y = rng.uniform(-200, 1000)
        q = (0.0, y, 10.0, y + rng.choice([0.0, 3.0, 30.0]))
        got = [k for k, _ in index.near(q)]
        assert got == sorted(got)
        want = {k for k, b in enumerate(boxes) if _meets(b, q)}
        assert want <= set(got), (q, want - set(got))


def test_a_box_off_the_page_or_not_a_number_is_still_found():
    index = BoxIndex([("below", (0, 900, 5, 910)), ("above", (0, -50, 5, -40)), ("nan", (0, math.nan, 5, 1))],
                     0.0, 792.0)
    assert "below" in dict(index.near((0, 905, 5, 906)))
    assert "above" in dict(index.near((0, -45, 5, -44)))
    assert "nan" in dict(index.near((0, 400, 5, 401)))
    assert {v for v, _ in index.near((0, math.nan, 1, 1))} == {"below", "above", "nan"}


def _long_page(lines: int, twice: bool) -> pymupdf.Page:
    """One page of ``lines`` lines of 3-pt Courier, each its own text object (as a printed listing writes them);
    with ``twice``, each drawn again 0.3 pt to the right (a "bold" made by printing twice)."""
    doc = pymupdf.open()
    height = lines * 3.4 + 40
    page = doc.new_page(width=612, height=height)
    page.insert_text((20, 20), "x", fontname="cour", fontsize=3)  # puts the font in the page's resources
    ops = []
    for i in range(lines):
        word = f"{i:05d} if (x > {i * 7}) {{ call(); }}".replace("(", r"\(").replace(")", r"\)")
        for dx in (0.0, 0.3) if twice else (0.0,):
            ops.append(f"BT /cour 3 Tf 1 0 0 1 {20 + dx} {height - 20 - 3.4 * i:.1f} Tm ({word}) Tj ET")
    doc.update_stream(page.get_contents()[0], "\n".join(ops).encode())
    return pymupdf.open(stream=doc.tobytes(), filetype="pdf")[0]


def test_a_span_of_a_long_page_is_compared_with_its_neighbours_only():
    page = _long_page(1500, twice=True)
    paint = _Paint(page)
    spans = [s for b in page.get_text("dict")["blocks"] for ln in b.get("lines", ()) for s in ln["spans"]]
    assert len(paint.text) >= 3000
    for span in spans[::150]:
        assert len(paint._near_text.near(span["bbox"])) <= 12  # the span's line and the lines beside it
        assert len(paint._chars().near(span["bbox"])) <= 400  # about three lines' characters, drawn twice
        assert not paint.painted_over(span["bbox"], span["text"])


def test_remove_hidden_on_a_long_page_drawn_twice_keeps_every_line():
    page = _long_page(1500, twice=True)
    d = page.get_text("dict")
    assert not remove_hidden(page, d)
    text = " ".join(s["text"] for b in d["blocks"] for ln in b.get("lines", ()) for s in ln["spans"])
    assert "01499 if (x > 10493)" in text
