"""Ruled tables of a PDF page as Markdown rows (stage 1, PDF branch; issue 13, item 5)."""

from __future__ import annotations

from rag.ingest.layout import Line


def table_lines(page, lines: list[Line], page_h: float, block_base: int) -> tuple[list[Line], list[Line]]:
    """``(kept, tables)``: placeholder until table detection lands (no table found)."""
    return lines, []
