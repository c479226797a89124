"""Design stage 8/9: numbered sources, locators and URL fragments (server-side citations).

INTERFACE FILE (record fixed; implementation in progress, issue 4).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Citation:
    """One numbered source, as the server attaches it after generation.

    ``index`` is the ``n`` of ``[n]`` (1-based); ``document_id`` the content
    hash; ``document_name`` the user's file name (display only);
    ``locator_label`` e.g. ``"paper.pdf, p. 5"`` or ``"guide.md > Install > Linux"``;
    ``fragment`` ``"#page=N"`` (1-based physical page) for PDFs or
    ``"#char=START,END"`` (0-based code points into the canonical text) for
    text; ``quote`` the chunk's ``content`` (never its embedded ``text``);
    ``cosine_distance`` in ``[0, 2]``; ``fused_rank`` 1-based rank after
    reciprocal rank fusion; ``page`` 1-based or ``None``; ``start``/``end``
    canonical offsets; ``media_type`` of the document; ``chunk_id`` the
    store's chunk row id.
    """

    index: int
    document_id: str
    document_name: str
    locator_label: str
    fragment: str
    quote: str
    cosine_distance: float
    fused_rank: int
    page: int | None
    start: int
    end: int
    media_type: str
    chunk_id: int
    section: tuple[str, ...] = ()
