"""Objects embedded in an OpenDocument file (``draw:object``, OpenDocument 1.3 part 3, 10.4.6): a chart, a
spreadsheet or a text placed in a frame, each a sub-document of the package (``Object 1/content.xml``).

LibreOffice stores every chart this way. The readers of :mod:`rag.ingest.office.odf` wrote nothing for them: a slide
showing a 3 x 4 table kept only its title, with nothing said (odfpy's ``emb_spreadsheet.odp``, a new user's walk,
2026-12-07). :func:`object_lines` reads one as a reader sees it in its frame:

* a chart: its title and subtitle, its axes' titles, and its data (the chart's own table, ``table:table`` inside
  ``chart:chart``: categories down, series across) as a Markdown table;
* a spreadsheet: each sheet's rows with text as a Markdown table (:func:`rag.ingest.office.odf_tables.sheet_rows`);
* a text: its paragraphs.

At most :data:`MAX_ROWS` rows of an object are read. An object that cannot be read (missing part, damaged XML, an
OLE object of another program) reads nothing.
"""

from __future__ import annotations

from rag.ingest.canonical import clean_inline, markdown_table, table_cell
from rag.ingest.office.odf_inline import inline_text
from rag.ingest.office.odf_numbers import attr as _attr
from rag.ingest.office.odf_tables import sheet_rows

#: Rows of one embedded object's tables read at most (a chart's data or a small sheet; a huge one is cut).
MAX_ROWS = 1000


def _part(doc, el):
    href = _attr(el, "xlink:href").strip()
    path = href[2:] if href.startswith("./") else href
    if not path or path.startswith(("/", "..")) or ":" in path:
        return None
    try:
        return doc.get_part(f"{path.rstrip('/')}/content.xml")
    except Exception:  # noqa: BLE001 - a missing or damaged object reads nothing
        return None


def _rows(table) -> list[str]:
    rows = sheet_rows(table)[:MAX_ROWS]
    return markdown_table([[table_cell(c) for c in cells] for _, cells in rows]) if rows else []


def object_lines(doc, el) -> list[str]:
    """The lines a reader sees of embedded object ``el`` (a ``draw:object`` of odfdo document ``doc``): rules in
    the module doc; ``[]`` when it reads nothing."""
    part = _part(doc, el)
    body = getattr(part, "body", None) if part is not None else None
    if body is None:
        return []
    out: list[str] = []
    try:
        if body.tag == "office:chart":
            for chart in body.get_elements("chart:chart"):
                for child in chart.children:
                    if child.tag in ("chart:title", "chart:subtitle"):
                        out += [clean_inline(inline_text(p), keep_newlines=False) for p in child.get_elements("text:p")]
                for axis in chart.get_elements("descendant::chart:axis"):
                    out += [clean_inline(inline_text(p), keep_newlines=False)
                            for t in axis.get_elements("chart:title") for p in t.get_elements("text:p")]
                for table in chart.get_elements("table:table"):
                    out += _rows(table)
        elif body.tag == "office:spreadsheet":
            for table in body.get_elements("table:table"):
                out += _rows(table)
        elif body.tag == "office:text":
            out += [clean_inline(inline_text(p), keep_newlines=False) for p in body.get_elements("descendant::text:p")]
    except Exception:  # noqa: BLE001 - a damaged object must not lose the document
        return []
    return [line for line in out if line.strip()]
