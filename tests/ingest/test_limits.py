"""Issue 26, item 1: limits before work, in every reader. Each hostile kind is made here (tests/hostile_files.py),
refused with a reason naming the setting and the figure; the bombs are refused in a child process whose peak
memory stays under 1 GB (they would inflate to gigabytes)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import hostile_files as hf
import pytest
import samples

from rag.errors import ExtractionError, LimitExceeded
from rag.ingest.extract import extract_bytes, extract_path
from rag.ingest.limits import Limits, check_zip
from rag.ingest.office.docx import extract_docx
from rag.ingest.office.pptx import extract_pptx
from rag.ingest.office.sheets import extract_xlsx
from rag.ingest.web.epub import extract_epub
from rag.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
GiB = 1024 ** 3


def _refused_in_child(path: Path, name: str) -> dict:
    """Extract ``path`` in a fresh interpreter; returns its error type and reason, seconds and peak RSS (MiB)."""
    code = textwrap.dedent(f"""
        import json, resource, time
        from rag.ingest.extract import extract_bytes
        from rag.errors import ExtractionError
        data = open({str(path)!r}, "rb").read()
        t0 = time.perf_counter()
        try:
            extract_bytes(data, {name!r}); out = {{"error": None}}
        except ExtractionError as e:
            out = {{"error": type(e).__name__, "reason": e.reason, "limit": getattr(e, "limit", None)}}
        out["seconds"] = time.perf_counter() - t0
        # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so it would count the forked pytest process
        hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")]
        out["peak_mib"] = int(hwm[0].split()[1]) / 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(out))
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"{name}: {out}")  # the figures: peak memory and seconds (pytest -s shows them)
    return out


def test_limits_have_the_settings_defaults_and_names():
    s = Settings()
    for f in dataclasses.fields(Limits):
        assert getattr(Limits(), f.name) == getattr(s, f.name), f.name
    assert Limits.from_settings(s.model_copy(update={"max_pages": 7})).max_pages == 7


@pytest.mark.parametrize("kind", ["docx", "epub"])
def test_zip_bombs_are_refused_before_inflating(tmp_path, kind):
    """150 MB of XML in a DOCX's document part or an EPUB chapter: refused from the directory, peak RSS < 1 GB."""
    base, member = (samples.docx_bytes(), "word/document.xml") if kind == "docx" else (samples.epub_bytes(), "EPUB/c1.xhtml")
    bomb = hf.inflate_member(base, member, 150)
    assert len(bomb) < 2 * hf.MiB
    path = tmp_path / f"bomb.{kind}"
    path.write_bytes(bomb)
    out = _refused_in_child(path, path.name)
    assert out["error"] == "LimitExceeded" and out["limit"] == "max_zip_member_mb"
    assert f"member {member} inflates to 150 MB, over the limit of 100 MB (setting max_zip_member_mb)" in out["reason"]
    assert out["peak_mib"] < 1024


def test_zip_guard_checks_ratio_total_and_member_count():
    docx = samples.docx_bytes()
    ratio = hf.inflate_member(docx, "word/document.xml", 20)  # 20 MB of spaces from about 20 KB
    with pytest.raises(LimitExceeded, match=r"a ratio of [\d,]+, over the limit of 100 \(setting max_zip_ratio\)"):
        check_zip(ratio, "r.docx", Limits())
    check_zip(ratio, "r.docx", Limits(max_zip_ratio=100000))  # the same file passes a looser limit
    with pytest.raises(LimitExceeded, match=r"members inflate to more than .* \(setting max_zip_total_mb\)"):
        check_zip(ratio, "r.docx", Limits(max_zip_ratio=100000, max_zip_total_mb=10))
    with pytest.raises(LimitExceeded, match=r"declares \d+ members, over the limit of 3 members \(setting max_zip_members\)"):
        check_zip(docx, "m.docx", Limits(max_zip_members=3))
    check_zip(b"PK\x03\x04 not a zip at all", "x.docx", Limits())  # damage is the reader's to name


@pytest.mark.parametrize("reader, make, member", [
    (extract_docx, samples.docx_bytes, "word/document.xml"), (extract_pptx, samples.pptx_bytes, "ppt/presentation.xml"),
    (extract_xlsx, samples.xlsx_bytes, "xl/workbook.xml"), (extract_epub, samples.epub_bytes, "EPUB/c1.xhtml")])
def test_every_zip_reader_goes_through_the_guard(reader, make, member):
    """Called directly (not through extract_bytes), each ZIP reader still refuses a member over the limit."""
    bomb = hf.inflate_member(make(), member, 2)
    with pytest.raises(LimitExceeded, match=rf"member {member} inflates to 2 MB, over the limit of 1 MB"):
        reader(bomb, "bomb", limits=Limits(max_zip_member_mb=1))


def test_tiff_of_many_huge_frames_is_refused_from_its_headers(tmp_path):
    """200 frames of 7000 x 7000 in 70 KB (10 GB decoded): refused before one frame is decoded."""
    path = tmp_path / "frames.tiff"
    path.write_bytes(hf.tiff_frames(200, 7000, 7000))
    out = _refused_in_child(path, path.name)
    assert out["error"] == "LimitExceeded" and out["limit"] == "max_image_total_megapixels"
    assert "200 frames hold 9,800 megapixels, over the limit of 1,000 megapixels" in out["reason"]
    assert out["peak_mib"] < 1024


def test_image_frame_pixels_frames_and_ocr_pages_are_limited():
    one = hf.tiff_frames(1, 8000, 8000)
    with pytest.raises(LimitExceeded, match=r"the image is 8,000 x 8,000 pixels, 64 megapixels, over the limit of "
                                            r"50 megapixels \(setting max_image_megapixels\)"):
        extract_bytes(one, "big.tif")
    with pytest.raises(LimitExceeded, match=r"more frames than the limit of 5 frames \(setting max_pages\)"):
        extract_bytes(hf.tiff_frames(6, 10, 10), "many.tif", limits=Limits(max_pages=5))
    with pytest.raises(LimitExceeded, match=r"frames to read by OCR: 4 frames, over the limit of 3 frames "
                                            r"\(setting max_ocr_pages\)"):
        extract_bytes(hf.tiff_frames(4, 10, 10), "four.tif", limits=Limits(max_ocr_pages=3))


def test_sheet_dimension_is_never_trusted_and_rows_cells_are_limited():
    doc = extract_bytes(hf.sparse_xlsx(), "corners.xlsx")  # A1 and XFD1048576: two rows read, not a million
    assert "first corner" in doc.canonical and "far corner" in doc.canonical
    assert [p.number for p in doc.parts] == [1, 1048576]
    with pytest.raises(LimitExceeded, match=r"sheet 'Sheet' spans 2 rows x 16,384 columns; the tables written hold "
                                            r"32,768 cells, over the limit of 20,000 cells \(setting max_sheet_cells\)"):
        extract_bytes(hf.sparse_xlsx(), "corners.xlsx", limits=Limits(max_sheet_cells=20000))
    with pytest.raises(LimitExceeded, match=r"more rows with content than the limit of 1,000 rows \(setting max_sheet_rows\)"):
        extract_bytes(hf.csv_rows(5000), "big.csv", limits=Limits(max_sheet_rows=1000))
    with pytest.raises(LimitExceeded, match=r"the first 334 rows already hold 1,002 cells, over the limit of 1,000"):
        extract_bytes(hf.csv_rows(5000), "big.csv", limits=Limits(max_sheet_cells=1000))
    assert extract_bytes(hf.csv_rows(50), "ok.csv").canonical.count("\n") == 51  # header, separator, 50 rows


def test_pdf_pages_ocr_pages_and_page_size_are_limited():
    with pytest.raises(LimitExceeded, match=r"the PDF has 12 pages, over the limit of 10 pages \(setting max_pages\)"):
        extract_bytes(hf.pdf_pages(12), "long.pdf", limits=Limits(max_pages=10))
    with pytest.raises(LimitExceeded, match=r"pages to read by OCR: 6 pages, over the limit of 5 pages "
                                            r"\(setting max_ocr_pages\)"):
        extract_bytes(hf.pdf_pages(6, scanned=True), "scan.pdf", limits=Limits(max_ocr_pages=5))
    huge = hf.pdf_pages(1, scanned=True, size=(14400, 14400))
    with pytest.raises(LimitExceeded, match=r"page 1 is 14,400 x 14,400 pt \(508 x 508 cm\), 207 megapixels even at "
                                            r"72 dpi: too large to read by OCR, over the limit of 50 megapixels"):
        extract_bytes(huge, "poster.pdf")  # before issue 26: "no text layer (scanned?)"


def test_file_size_is_read_from_the_file_system_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "huge.txt"
    with open(path, "wb") as fh:  # a sparse 3 GiB file: reading it would take 3 GiB of memory
        fh.truncate(3 * GiB)
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read a file over the limit"))
    with pytest.raises(LimitExceeded, match=r"huge\.txt: the file is 3 GB, over the limit of 50 MB \(setting max_upload_mb\)"):
        extract_path(path)


def test_limit_exceeded_is_an_extraction_error_with_its_figures():
    e = LimitExceeded("a.pdf", "max_pages", "the PDF has", 12, 10, "pages")
    assert isinstance(e, ExtractionError)
    assert (e.name, e.limit, e.figure, e.maximum) == ("a.pdf", "max_pages", 12, 10)
    assert str(e) == "a.pdf: the PDF has 12 pages, over the limit of 10 pages (setting max_pages)"
