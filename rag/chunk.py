"""Stage 2 of the design: document -> chunks (strategy E by default; A-F for evaluation).

INTERFACE FILE (records fixed; implementation in progress, issue 3).
"""

from __future__ import annotations

from dataclasses import dataclass

STRATEGIES = ("A", "B", "C", "D", "E", "F")


@dataclass(frozen=True)
class Chunk:
    """A retrievable unit.

    ``text`` is what gets EMBEDDED (``[Doc title > Section]\\n`` + content for
    strategies E/F, else ``content``); ``content`` is what gets QUOTED, and
    ``canonical[start:end] == content`` always (0-based code points, end
    exclusive). ``section`` the heading path (may be empty); ``page`` and
    ``page_end`` the 1-based physical pages of ``start`` and of ``end - 1``
    (``None`` for text documents); ``index`` the 0-based position in the
    document; ``token_split`` whether the encoder window (256 word-pieces)
    forced a split beyond the character budget.
    """

    doc_id: str
    index: int
    text: str
    content: str
    section: tuple[str, ...]
    start: int
    end: int
    page: int | None = None
    page_end: int | None = None
    token_split: bool = False


def chunk_document(doc, strategy: str = "E", *, budget_chars: int = 512, overlap_chars: int = 64,
                   window_tokens: int = 256, count_tokens=None) -> list[Chunk]:
    """Cut ``doc`` into chunks with the named strategy. Raises ``ValueError`` for an unknown strategy."""
    raise NotImplementedError
