"""Objects embedded in an OpenDocument file (``draw:object``, OpenDocument 1.3 part 3, 10.4.6): a chart, a
spreadsheet or a text placed in a frame, each a sub-document of the package (``Object 1/content.xml``).

LibreOffice stores every chart this way. The readers of :mod:`rag.ingest.office.odf` wrote nothing for them: a slide
showing a 3 x 4 table kept only its title, with nothing said (odfpy's ``emb_spreadsheet.odp``, a new user's walk,
2026-12-07). :func:`object_lines` reads one as a reader sees it in its frame:

* a chart: its title and subtitle, its axes' titles, and its data (the chart's own table, ``table:table`` inside
  ``chart:chart``: categories down, series across) as a Markdown table;
* a spreadsheet: each sheet's rows with text as a Markdown table (:func:`rag.ingest.office.odf_tables.sheet_rows`);
* a text: its paragraphs;
* a formula (LibreOffice Math: its ``content.xml`` is MathML): one line, :func:`rag.ingest.mathml.linear`
  (``E = m ⋅ c^2``). odfdo gives such a part no body and raised, and the whole document was refused as damaged
  (kreuzberg's ``formula.odt``, a walk, 2026-12-07).

At most :data:`MAX_ROWS` rows of an object are read, counted against the document's reader limits
(:class:`rag.ingest.limits.RowBudget`), and an object shown in several frames is read once, where it first stands (a
review, 2026-12-07: one 1,000-row object in 50 frames made 50,000 rows). An object that cannot be read (missing part,
damaged XML, an OLE object of another program) reads nothing.
"""

from __future__ import annotations

from rag.errors import LimitExceeded
from rag.ingest.canonical import clean_inline, markdown_table, table_cell
from rag.ingest.limits import RowBudget
from rag.ingest.mathml import linear
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


def _formula(doc, el) -> list[str]:
    """The formula of a MathML object ``el`` as one line (``[]`` when its part is missing or not MathML)."""
    href = _attr(el, "xlink:href").strip()
    path = href[2:] if href.startswith("./") else href
    if not path or path.startswith(("/", "..")) or ":" in path:
        return []
    try:
        from lxml import etree

        raw = doc.container.get_part(f"{path.rstrip('/')}/content.xml")
        root = etree.fromstring(raw, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))
    except Exception:  # noqa: BLE001 - a missing or damaged object reads nothing
        return []
    text = linear(root) if root.tag.rsplit("}", 1)[-1] == "math" else ""
    return [text] if text.strip() else []


def _rows(table, budget: RowBudget | None) -> list[str]:
    rows = sheet_rows(table, budget)[:MAX_ROWS]
    return markdown_table([[table_cell(c) for c in cells] for _, cells in rows]) if rows else []


class Objects:
    """The embedded objects of one odfdo document ``doc``, each read once (:meth:`lines`), its rows counted by
    ``budget``."""

    def __init__(self, doc, budget: RowBudget | None = None) -> None:
        self.doc, self.budget, self.seen = doc, budget, set()

    def lines(self, el) -> list[str]:
        """The lines of ``draw:object`` ``el`` the first time its object is met, else ``[]``."""
        href = _attr(el, "xlink:href").strip()
        if href in self.seen:
            return []
        self.seen.add(href)
        return object_lines(self.doc, el, self.budget)


def object_lines(doc, el, budget: RowBudget | None = None) -> list[str]:
    """The lines a reader sees of embedded object ``el`` (a ``draw:object`` of odfdo document ``doc``), its rows
    counted by ``budget`` (:class:`rag.errors.LimitExceeded` past it): rules in the module doc; ``[]`` when it reads
    nothing."""
    part = _part(doc, el)
    try:
        body = part.body if part is not None else None
    except Exception:  # noqa: BLE001 - odfdo has no body for a formula (MathML) object: read the formula instead
        return _formula(doc, el)
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
                    out += _rows(table, budget)
        elif body.tag == "office:spreadsheet":
            for table in body.get_elements("table:table"):
                out += _rows(table, budget)
        elif body.tag == "office:text":
            out += [clean_inline(inline_text(p), keep_newlines=False) for p in body.get_elements("descendant::text:p")]
    except LimitExceeded:
        raise
    except Exception:  # noqa: BLE001 - a damaged object must not lose the document
        return []
    return [line for line in out if line.strip()]
