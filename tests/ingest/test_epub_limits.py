"""The reader limits apply to what is read (issue 37): an EPUB whose picture inflates past the compression-ratio
limit is read, with a warning, and the picture never inflated; an EPUB chapter that does so is still refused, and
so is the same picture inside any other ZIP container. Books are written here with ebooklib."""

from __future__ import annotations

import io
import zipfile

import pytest
import samples

from rag.errors import LimitExceeded
from rag.ingest.extract import extract_bytes
from rag.ingest.limits import Limits, check_zip
from rag.ingest.web.epub import without_media

BLANK_PNG = b"\x89PNG\r\n\x1a\n" + bytes(3 * 1024 * 1024)  # 3 MB of zeros: inflates about 1,000:1


def _with_member(data: bytes, name: str, body: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        dst.writestr(name, body)
    return buf.getvalue()


def test_a_picture_over_the_ratio_limit_no_longer_refuses_the_book():
    book = _with_member(samples.epub_bytes(), "EPUB/images/cover.png", BLANK_PNG)
    assert check_zip(book, "storm.epub") and "cover.png" in check_zip(book, "storm.epub")[0]
    got = extract_bytes(book, "storm.epub", limits=Limits())
    assert "The wind rose at dawn over the harbour." in got.canonical
    assert any(w.startswith("not read: 1 picture(s)") and "cover.png" in w for w in got.warnings)
    with zipfile.ZipFile(io.BytesIO(without_media(book))) as zf:  # what ebooklib is given
        assert zf.getinfo("EPUB/images/cover.png").file_size == 0 and zf.infolist()[0].filename == "mimetype"


def test_what_is_read_is_still_bounded():
    chapter_bomb = _with_member(samples.epub_bytes(), "EPUB/bomb.xhtml", b"<p>" + bytes(3 * 1024 * 1024))
    with pytest.raises(LimitExceeded, match="max_zip_ratio"):
        extract_bytes(chapter_bomb, "storm.epub", limits=Limits())
    not_an_epub = _with_member(samples.docx_bytes(), "word/media/image1.png", BLANK_PNG)
    with pytest.raises(LimitExceeded, match="max_zip_ratio"):
        extract_bytes(not_an_epub, "letter.docx", limits=Limits())
