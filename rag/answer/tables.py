"""Table rows read with their column names: what the model and the claim check read of a table's source.

Spreadsheets, CSV files and the tables of documents are stored as Markdown tables (``| a | b |`` rows under a
header row and its ``|---|`` rule, :mod:`rag.ingest.canonical`). A chunk of a long table starts after its header,
and a wide row is cut into pieces, so the model used to read ``| KEN | 254 | KEN | ke | Yes | ...`` with no column
name in sight: asked for Kenya's dialing code it wrote "1", asked for Mali's capital it wrote "Malí" (a new user's
walk over a 56-column CSV and four spreadsheets, 2026-12-07). Here each row is read as a record, every non-empty
cell after the name of its column: ``FIFA: KEN; Dial: 254; ISO3166-1-Alpha-3: KEN; ...``.

The cell values stay verbatim (only the names and ``; `` are added), and what the user is shown and quoted is
still the chunk's own text. The names come from the stored canonical text (:func:`table_columns`), kept on the
citation (:attr:`rag.answer.cite.Citation.columns`).
"""

from __future__ import annotations

from rag.text import TABLE_RULE, markdown_literal, table_head

#: Column names are read from a header row of at least this many named cells, none missing between the first
#: column and the last named one and none twice. Else it is a title row ("| Summer School 2016 Budget |  |  |"),
#: a merged header ("| Item | 2023 |  | 2024 |  |" over "Planned | Spent"), or a two-column key-value box whose
#: first row is data ("| Country | Switzerland |"): its rows are read as they are (an adversarial review,
#: 2026-12-07). A first cell left empty (a row-label column) and empty cells after the last name are allowed.
MIN_NAMED = 3

#: A table with more columns is read without names: its header above every source cost the claim check 78 s at
#: 16,000 columns (an adversarial review, 2026-12-07); the walk's widest real table has 56.
MAX_COLUMNS = 100

#: Rows above a chunk searched for its table's header (a table longer than this is read without names).
MAX_ROWS_UP = 20_000


def split_cells(line: str) -> list[str]:
    """The cells of one Markdown table row (``| a | b \\| c |`` -> ``["a", "b \\| c"]``), trimmed.

    Linear in the line; an escaped ``\\|`` stays inside its cell. A line without its leading ``|`` (a row's
    piece that starts mid-row) is split the same way.
    """
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells, cur, i = [], [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cur.append("\\|")
            i += 2
            continue
        if ch == "|":
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    cells.append("".join(cur).strip())
    return cells


def column_at(text: str, pos: int) -> int:
    """0-based column of the cell holding offset ``pos`` of a Markdown row in ``text`` (unescaped ``|`` before it
    on its line, less the row's leading one)."""
    line_start = text.rfind("\n", 0, pos) + 1
    head = text[line_start:pos]
    bars = head.count("|") - head.count("\\|")
    return max(0, bars - (1 if head.lstrip().startswith("|") else 0))


def _is_row(line: str) -> bool:
    return line.lstrip().startswith("|")


def table_columns(canonical: str, start: int) -> tuple[tuple[str, ...], int] | None:
    """``(names, first)`` for a chunk that starts at offset ``start`` of ``canonical`` inside a Markdown table:
    the cells of the table's header row, and the 0-based column of the chunk's first cell (0 when the chunk
    starts a row). ``None`` when ``start`` is not on a table row, the table has no ``|---|`` rule under its
    first row or no row under the rule, its first row is not column names (:data:`MIN_NAMED`,
    :data:`MAX_COLUMNS`), or its top is more than :data:`MAX_ROWS_UP` rows up. Bounded: at most that many lines
    are read.
    """
    head = table_head(canonical, start, MAX_ROWS_UP)
    if head is None:
        return None
    top, first_end, rule_end = head
    line_start = canonical.rfind("\n", 0, start) + 1
    names = tuple(split_cells(canonical[top:first_end]))
    below_end = canonical.find("\n", rule_end + 1)
    below = canonical[rule_end + 1:len(canonical) if below_end == -1 else below_end]
    if not _names_columns(names) or not _is_row(below):
        return None  # not names, or a header with no row under it (a one-row "| Total | $331,404 |" box)
    on_bar = start > line_start and canonical.startswith("|", start)  # a piece cut just before a cell's bar
    return names, column_at(canonical, start + 1 if on_bar else start)


def _names_columns(names: tuple[str, ...]) -> bool:
    """Whether a header row's cells are column names (:data:`MIN_NAMED`, :data:`MAX_COLUMNS`)."""
    filled = [n for n in names if n]
    if len(names) > MAX_COLUMNS or len(filled) < MIN_NAMED or len(set(filled)) < len(filled):
        return False
    last = max(k for k, n in enumerate(names) if n)
    return all(names[1:last + 1])


def record(cells: list[str], names: tuple[str, ...], first: int = 0) -> str:
    """One row as a record: each non-empty cell after its column's name (``Dial: 254``), joined by ``; ``;
    ``cells[0]`` is column ``first``. A cell past the header's last column is given without a name."""
    out = []
    for j, value in enumerate(cells, start=first):
        if not value:
            continue
        name = names[j] if j < len(names) else ""
        out.append(f"{name}: {value}" if name and name != value else value)
    return "; ".join(out)


def as_records(piece: str, names: tuple[str, ...], first: int = 0) -> str:
    """``piece`` (a stretch of a table's text) with each row as a :func:`record`; the header row and its rule are
    left out (the names are in every record), other lines kept. ``first``: the column of the piece's first cell
    (for a piece that starts mid-row)."""
    out = []
    for k, line in enumerate(piece.split("\n")):
        mid_row = k == 0 and first > 0
        if not mid_row and not _is_row(line):
            out.append(line)
            continue
        if TABLE_RULE.match(line):
            continue
        cells = split_cells(line)
        if not mid_row and tuple(cells) == names:
            continue
        rec = record(cells, names, first if mid_row else 0)
        if rec:
            out.append(rec)
    return "\n".join(out)


def _lead_end(quote: str, first: int) -> int:
    """The offset where the table ``quote`` starts in ends (0 when the quote does not start in a table)."""
    end, pos = 0, 0
    for k, line in enumerate(quote.split("\n")):
        if not (_is_row(line) or (k == 0 and first > 0)):
            break
        end = pos + len(line)
        pos = end + 1
    return end


def rows_as_records(quote: str, a: int, b: int, columns: tuple[str, ...] = (), first: int = 0) -> str | None:
    """``quote[a:b]`` with each table row as a :func:`record`, or ``None`` when no row of it has column names.

    A row's names are ``columns`` for the table ``quote`` starts in (``first``: the column of the quote's first
    cell), else those of its table's header inside ``quote`` (:func:`table_columns` over the quote). Header rows
    and rules are left out, other lines kept as they are.
    """
    lead = _lead_end(quote, first) if columns else 0
    out, named, pos = [], False, a
    for seg in quote[a:b].split("\n"):
        line_start = quote.rfind("\n", 0, pos) + 1
        names: tuple[str, ...] = ()
        col = 0
        if line_start < lead or (line_start == 0 and lead > 0):
            names, col = columns, column_at(quote, pos) + (first if line_start == 0 else 0)
        elif _is_row(quote[line_start:line_start + 1 + (pos - line_start) + len(seg)]):
            own = table_columns(quote, line_start)
            if own is not None:
                names, col = own[0], column_at(quote, pos)
        pos += len(seg) + 1
        if not names:
            out.append(seg)
            continue
        named = True
        if TABLE_RULE.match(seg) or (col == 0 and tuple(split_cells(seg)) == names):
            continue
        rec = record(split_cells(seg), names, col)
        if rec:
            out.append(rec)
    return "\n".join(out) if named else None


def with_header(view: str, columns: tuple[str, ...], first: int = 0) -> str:
    """``view`` (a table chunk's text, or a view of it with the same lines) under its table's header row and rule
    when it does not start with them: what the claim check reads, so each row is read with its column names
    (:func:`rag.answer.check.claims.statements`). A first line that starts mid-row (``first`` > 0) is led by
    ``first`` empty cells, so every row lines up with the names."""
    if not columns:
        return view
    line_end = view.find("\n")
    head = view if line_end == -1 else view[:line_end]
    if first == 0 and tuple(split_cells(head)) == columns:
        return view
    if first > 0:
        view = "|  " * first + (view if _is_row(head) else "| " + view)
    return "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n" + view


def as_table(quote: str, start: int, end: int, columns: tuple[str, ...], first: int = 0
             ) -> tuple[tuple[str, ...], list[list[str]]] | None:
    """The rows of ``quote[start:end]`` as a small table of the columns they fill: ``(names, rows)``, each row's
    cells lined up under ``names`` (``""`` where a row has no cell). ``first``: the column of the quote's first
    cell. ``None`` without ``columns`` or when a line of the stretch is not a table row. What the app shows for a
    key passage of a table: its rows under their column names, cells verbatim (a walk, 2026-12-07)."""
    if not columns:
        return None
    placed: list[tuple[int, list[str]]] = []
    pos = start
    for seg in quote[start:end].split("\n"):
        line_start = quote.rfind("\n", 0, pos) + 1
        mid = line_start == 0 and first > 0
        if not seg.strip():
            pos += len(seg) + 1
            continue
        if not (mid or _is_row(quote[line_start:pos + len(seg)])) or TABLE_RULE.match(seg):
            return None
        col = column_at(quote, pos) + (first if line_start == 0 else 0)
        cells = split_cells(seg)
        if not (col == 0 and tuple(cells) == columns):
            placed.append((col, cells))
        pos += len(seg) + 1
    if not placed:
        return None
    lo = min(c for c, _ in placed)
    hi = max(c + len(cells) for c, cells in placed)
    names = tuple(columns[lo:hi]) + ("",) * max(0, hi - max(lo, len(columns)))  # a cell past the header keeps a column
    rows = [[""] * (c - lo) + cells + [""] * (hi - c - len(cells)) for c, cells in placed]
    return names, rows


def markdown_table(names: tuple[str, ...] | list[str], rows: list[list[str]]) -> str:
    """:func:`as_table`'s ``(names, rows)`` as a Markdown table, every cell inert (:func:`rag.text.markdown_literal`,
    which escapes a bar; a cell's own escaped ``\\|`` stays one bar): what the app and the chat export show."""
    def cell(text: str) -> str:
        return markdown_literal(text.replace("\\|", "|"), blocks=False) or " "

    lines = ["| " + " | ".join(cell(n) for n in names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)
