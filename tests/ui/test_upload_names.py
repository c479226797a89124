"""Issue 26, item 5: a NUL byte in an upload's name gives the user a message, never Streamlit's exception."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_nul_byte_in_an_upload_name_is_a_message(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("RAG_STORE", str(tmp_path / "store"))
    at = AppTest.from_file(str(ROOT / "app_pages" / "1_Documents.py"), default_timeout=300).run()
    at.file_uploader(key="uploader").set_value([("report.md\x00.exe", b"# Hi\n\nhello", "text/markdown")]).run()
    assert not at.exception
    assert any("report.md\\\\x00.exe: refused: the file name holds a NUL byte" in e.value for e in at.error), at.error
    assert not any("indexed" in s.value for s in at.success)
