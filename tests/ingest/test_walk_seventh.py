"""What a walk over SheetJS's spreadsheet test files (2026-12-07) found refused, or read as raw markup: each file
is written here, small, in the format found."""

import io
import struct
import zipfile

import pytest

from rag.errors import ExtractionError
from rag.ingest.extract import extract_bytes


def _zip(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, body in entries.items():
            zf.writestr(name, body)
    return buf.getvalue()


def test_an_excel_4_worksheet_is_read():
    """CRLFX5_2.XLS and CRLFR9_4.XLS (Excel 2.x-4.0, no OLE2 container) were "binary data (NUL bytes)"."""
    def rec(kind: int, body: bytes) -> bytes:
        return struct.pack("<HH", kind, len(body)) + body

    def label(r: int, c: int, text: str) -> bytes:
        raw = text.encode("latin-1")
        return rec(0x0004, struct.pack("<HH", r, c) + b"\x00\x00\x00" + bytes([len(raw)]) + raw)

    data = (rec(0x0009, struct.pack("<HH", 0x0007, 0x0010)) + rec(0x0000, struct.pack("<HHHH", 0, 2, 0, 2))
            + label(0, 0, "Item") + label(0, 1, "Price") + label(1, 0, "Bolt") + label(1, 1, "0.25 EUR") + rec(0x000A, b""))
    assert "| Bolt | 0.25 EUR |" in extract_bytes(data, "OLD.XLS").canonical


@pytest.mark.parametrize(("data", "name", "said"), [
    (_zip({"[Content_Types].xml": b"<Types/>", "xl/workbook.bin": b"\x83\x01\x00"}), "book.xlsb",
     "an Excel binary workbook (.xlsb), not read here; save it as .xlsx"),
    (_zip({"Index/Document.iwa": b"\x00", "Metadata/Properties.plist": b"<plist/>"}), "budget.numbers",
     "an Apple Numbers, Pages or Keynote file"),
    (b'<?xml version="1.0"?>\n<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
     b'office:mimetype="application/vnd.oasis.opendocument.spreadsheet"><office:body/></office:document>', "t.fods",
     "a flat OpenDocument file"),
    (b'<?xml version="1.0"?>\n<?mso-application progid="Excel.Sheet"?>\n<Workbook '
     b'xmlns="urn:schemas-microsoft-com:office:spreadsheet"><Worksheet/></Workbook>', "t.xml",
     "an Excel or Word 2003 XML file"),
    (b"ID;PWXL;N;E\nC;Y1;X1;K\"foo\"\nE\n", "write.slk", "a SYLK spreadsheet (.slk)"),
])
def test_spreadsheets_not_read_here_are_named_with_what_to_do(data, name, said):
    # before: "a ZIP archive that is not one of the formats read here", or the markup indexed as text
    with pytest.raises(ExtractionError, match=said.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        extract_bytes(data, name)
