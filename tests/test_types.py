"""rag.types: the shared records (review 2026-12-01, defect 5: the Document's media type is a MediaType)."""

from __future__ import annotations

import pytest

from rag.types import Document, MediaType, PageSpan, page_at


def _doc(media_type) -> Document:
    return Document(id="0" * 64, name="a.pdf", media_type=media_type, canonical="one\n\ntwo", title="a",
                    size_bytes=3, extractor="test", extractor_version="1",
                    pages=(PageSpan(1, None, 0, 3), PageSpan(2, None, 5, 8)))


def test_a_documents_media_type_is_a_media_type():
    d = _doc("application/pdf")
    assert d.media_type is MediaType.PDF and d.media_type == "application/pdf"  # still equal to its JSON value
    with pytest.raises(ValueError, match="application/x-unknown"):
        _doc("application/x-unknown")


def test_the_document_docstring_names_every_media_type():
    doc = " ".join(Document.__doc__.split()).lower()
    missing = [m.name for m in MediaType if m.name.lower() not in doc]
    assert missing == [], f"Document's docstring does not name: {missing}"


def test_page_at_is_the_one_page_lookup():
    d = _doc(MediaType.PDF)
    assert [d.page_at(o) for o in (0, 3, 4, 5, 7)] == [1, 1, 1, 2, 2]
    assert page_at(d.pages, 6) == 2 and page_at((), 6) is None
