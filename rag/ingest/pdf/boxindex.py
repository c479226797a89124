"""Boxes of one page filed by the horizontal strips they touch, so that a question about one span reads the boxes
near it, not every box of the page.

A page's checks that compare each span with the page's other painted items (:mod:`rag.ingest.pdf.hidden`) were
quadratic: a page of 2,000 monospaced lines took 19 s in 8 million box intersections (a new user's walk,
2026-12-07, found such pages taking 24-65 s). :class:`BoxIndex` answers "which items may overlap this box's
height?" from the strips the box touches; the answer is a superset (callers still test the overlap), so the
checks decide exactly as before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
Box = tuple[float, float, float, float]

#: Strips per page at most: the page's height (points) is cut in equal bands as high as the items' median box
#: (a page of 3-pt characters in bands of 3 pt), and in no more bands than this.
MAX_STRIPS = 65536
#: An item touching more strips than this is kept on one list that every question reads (a column-wide text
#: object, a page-high background): filing it in every strip would cost more than reading it each time.
TALL = 16


class BoxIndex(Generic[T]):
    """``items`` (``(value, box)`` pairs, box ``(x0, y0, x1, y1)`` in points, page space) filed by the strips of
    ``[top, bottom]`` (points) they touch, bands as high as the median item; boxes above or below that range are filed in its first or last strip,
    and a box with a coordinate that is not a number is read by every question. Building costs
    O(items x strips touched); :meth:`near` costs the items in the strips asked, not the page's."""

    def __init__(self, items: Sequence[tuple[T, Box]], top: float, bottom: float) -> None:
        self.items = list(items)
        self._top = float(top) if math.isfinite(top) else 0.0
        bottom = float(bottom) if math.isfinite(bottom) else self._top + 1.0
        span = max(bottom - self._top, 1e-6)
        heights = sorted(h for _, box in self.items if math.isfinite(h := box[3] - box[1]) and h > 0)
        band = heights[len(heights) // 2] if heights else span
        self._n = max(1, min(MAX_STRIPS, math.ceil(span / max(band, span / MAX_STRIPS))))
        self._h = span / self._n
        self._strips: list[list[int]] = [[] for _ in range(self._n)]
        self._tall: list[int] = []
        for k, (_, box) in enumerate(self.items):
            a, b = self._strip(box[1]), self._strip(box[3])
            if a is None or b is None or b - a >= TALL:
                self._tall.append(k)
                continue
            for s in range(a, b + 1):
                self._strips[s].append(k)

    def _strip(self, y: float) -> int | None:
        if y != y:  # NaN
            return None
        pos = (y - self._top) / self._h
        if pos <= 0:
            return 0
        if pos >= self._n:
            return self._n - 1
        return int(pos)

    def near(self, box: Box) -> list[tuple[T, Box]]:
        """The items whose boxes may overlap ``box``'s height, in the order they were given (a superset of those
        that do: every item whose vertical extent meets ``box``'s is in it)."""
        a, b = self._strip(box[1]), self._strip(box[3])
        if a is None or b is None:
            return list(self.items)
        keys = set(self._tall)
        for s in range(min(a, b), max(a, b) + 1):
            keys.update(self._strips[s])
        return [self.items[k] for k in sorted(keys)]
