"""Table rows read with their column names (rag.answer.tables): what the model and the claim check read of a
spreadsheet's or a CSV file's source (a new user's walk over a 56-column CSV, 2026-12-07)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag.answer.check.attribute import attribute, lexical_support
from rag.answer.cite import Citation, with_columns
from rag.answer.excerpt import Excerpt, with_column_names
from rag.answer.tables import rows_as_records, split_cells, table_columns, with_header

WIDE = ("Countries\n\n| Code | Dial | Name | Capital |\n| --- | --- | --- | --- |\n"
        "| KEN | 254 | Kenya | Nairobi |\n| MLI | 223 | Mali | Bamako |\n")


def test_cells_split_on_bars_but_not_on_escaped_ones():
    assert split_cells("| a | b \\| c |  |") == ["a", "b \\| c", ""]
    assert split_cells("254 | Kenya | Nairobi |") == ["254", "Kenya", "Nairobi"]  # a piece that starts mid-row


def test_a_chunk_inside_a_table_gets_its_header_and_the_column_it_starts_in():
    row = WIDE.index("| MLI")
    assert table_columns(WIDE, row) == (("Code", "Dial", "Name", "Capital"), 0)
    mid = WIDE.index("223")  # a wide row cut in two: the second piece starts at "Dial"
    assert table_columns(WIDE, mid) == (("Code", "Dial", "Name", "Capital"), 1)
    assert table_columns(WIDE, 0) is None  # prose, not a table
    titled = "| Summer School 2016 Budget |  |  |\n| --- | --- | --- |\n| Participants | 30 |  |\n"
    assert table_columns(titled, titled.index("| Part")) is None  # a title row names no column


def test_what_is_not_a_row_of_column_names_is_read_as_it_is():
    """An adversarial review: a one-row box, a key-value table, a merged header and a title row lost their data or
    paired values with the wrong names once every first row was taken for column names."""
    box = "x\n\n| Total Budget | $331,404 | CHF |\n| --- | --- | --- |\n\ny"
    assert table_columns(box, box.index("| Total")) is None and rows_as_records(box, 0, len(box)) is None
    infobox = "| Country | Switzerland |\n| --- | --- |\n| Canton | Bern |\n| Population | 134,591 |"
    assert table_columns(infobox, infobox.index("| Canton")) is None  # two columns: a key-value box
    merged = "| Item | 2023 |  | 2024 |  |\n| --- | --- | --- | --- | --- |\n| Planned | Spent | Planned | Spent |\n| Reagents | 12000 | 11500 | 15000 | 14000 |"
    assert table_columns(merged, merged.index("| Reagents")) is None
    titled = "| Regional sales report |  |  | Period: 2024 Q3 |\n| --- | --- | --- | --- |\n| North | 3 | 5 | 7 |"
    assert table_columns(titled, titled.index("| North")) is None
    pivot = "|  | Sunday | Monday | Tuesday |  |\n| --- | --- | --- | --- | --- |\n| Lunch | a | b | c |  |"
    assert table_columns(pivot, pivot.index("| Lunch")) == (("", "Sunday", "Monday", "Tuesday", ""), 0)
    wide = "| " + " | ".join(f"c{i}" for i in range(101)) + " |\n|" + "---|" * 101 + "\n| " + " | ".join("1" * 101) + " |"
    assert table_columns(wide, wide.rindex("\n") + 1) is None  # past MAX_COLUMNS: read without names


def test_rows_are_read_as_records_from_the_first_column_of_the_piece():
    names = ("Code", "Dial", "Name", "Capital")
    quote = WIDE[WIDE.index("223"):].rstrip("\n")  # "223 | Mali | Bamako |"
    assert rows_as_records(quote, 0, len(quote), names, 1) == "Dial: 223; Name: Mali; Capital: Bamako"
    whole = WIDE[WIDE.index("| Code"):].rstrip("\n")  # the header inside the quote: its own names, header left out
    assert rows_as_records(whole, 0, len(whole)) == ("Code: KEN; Dial: 254; Name: Kenya; Capital: Nairobi\n"
                                                     "Code: MLI; Dial: 223; Name: Mali; Capital: Bamako")
    assert rows_as_records("Just a sentence.", 0, 16) is None


def test_the_check_reads_a_piece_under_its_header_lined_up():
    viewed = with_header("223 | Mali | Bamako |", ("Code", "Dial", "Name", "Capital"), 1)
    assert viewed.split("\n")[0] == "| Code | Dial | Name | Capital |"
    assert split_cells(viewed.split("\n")[2]) == ["", "223", "Mali", "Bamako"]  # Dial's value under Dial


def _cite(quote: str, columns=(), first=0, n=1) -> Citation:
    return Citation(index=n, document_id=f"d{n}", document_name="requirements.csv", locator_label=f"row {n}",
                    fragment="", quote=quote, cosine_distance=0.3, fused_rank=n, page=None, start=0, end=len(quote),
                    media_type="text/csv", chunk_id=n, section=("requirements",), columns=columns, first_column=first)


def test_the_model_reads_each_cell_after_its_column_name():
    names = ("Code", "Dial", "Name", "Capital")
    quote = "| KEN | 254 | Kenya | Nairobi |"
    ex = with_column_names(_cite(quote, names), Excerpt(quote, ((0, len(quote)),), True))
    assert ex.text == "Code: KEN; Dial: 254; Name: Kenya; Capital: Nairobi" and ex.spans == ((0, len(quote)),)


def test_a_claim_about_the_asked_requirement_from_another_row_is_not_supported():
    """The 0.5B answered "Which level does requirement V1.2.1 have?" from another requirement's row."""
    other = "| V6 | Authentication | V6.3.3 | Relaxing this requires a fully documented rationale. | 2 |"
    asked = "| V1 | Encoding | V1.2.1 | Verify that output encoding is relevant for the context. | 1 |"
    q = "Which level does requirement V1.2.1 have?"
    wrong = "Requirement V1.2.1 requires a fully documented rationale [1]."
    got = attribute([wrong], [1], lexical_support([wrong], [other], q), question=q, quotes=[other],
                    places=["requirements.csv requirements"])[0]
    assert got.verdict == "unsupported" and "v1.2.1" in got.reason
    right = "Requirement V1.2.1 asks that output encoding is relevant for the context [1]."
    assert attribute([right], [1], lexical_support([right], [asked], q), question=q, quotes=[asked],
                     places=["requirements.csv requirements"])[0].passed


COUNTRIES = ("Code", "Dial", "Name", "Capital", "Population")


def _check(q: str, sentence: str, quote: str, columns=COUNTRIES) -> str:
    from rag.answer.pipeline import check_answer

    return check_answer(sentence, [_cite(quote, columns)], None, q)[3][0].verdict


def test_a_value_of_another_column_of_the_row_is_not_supported():
    """An adversarial review: read with its column names, the row "supported" a population for a dialing code."""
    row = "| KEN | 254 | Kenya | Nairobi | 55 million |"
    q = "What is the dialing code for Kenya?"
    assert _check(q, "The dialing code for Kenya is 55 [1].", row) == "unsupported"
    assert _check(q, "The dialing code for Kenya is 254 [1].", row) == "supported"
    assert _check("How many people live in Kenya?", "Kenya has a population of 55 million [1].", row) == "supported"


def test_a_table_row_of_another_name_does_not_answer_for_the_asked_one():
    """Nigeria's row does not give Niger's capital (the question's plain names must be in a table source; in
    prose a source says "it" for them, so there they are not asked for)."""
    q = "What is the capital of Niger?"
    assert _check(q, "The capital of Niger is Abuja [1].", "| NGA | 234 | Nigeria | Abuja | 223 million |") == "unsupported"
    assert _check(q, "The capital of Niger is Niamey [1].", "| NER | 227 | Niger | Niamey | 26 million |") == "supported"


def test_identifiers_and_how_a_source_names_them():
    from rag.answer.check.names import identifiers, names_it

    assert identifiers("Which ASVS 5.0 level does V1.2.1 of BibTeX have at Springer, FY2023, 100?") == {
        "asvs", "v1.2.1", "bibtex", "fy2023"}
    assert names_it("Overview of Data Types", "datatype") and names_it("the World Health Organization", "who")
    assert names_it("fiscal year 2023", "fy2023") and names_it("owasp-asvs-5.0.0.csv", "asvs")
    assert not names_it("| V11.2.1 | x |", "v1.2.1") and not names_it("Nigeria is large", "niger")
    assert not names_it("who said what", "whx")


@pytest.fixture(scope="module")
def country_store(tmp_path_factory, corpus_dir, hash_embedder):
    from rag.settings import get_settings
    from rag.store.store import Store

    path = corpus_dir / "real" / "csv" / "dataset-country-codes.csv"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    s = Store(tmp_path_factory.mktemp("country-codes"), settings=get_settings(), embedder=hash_embedder)
    assert s.ingest_path(path).status == "ready"
    return s


def test_every_cell_of_a_real_wide_csv_is_named_by_its_own_column(country_store):
    """The real 56-column CSV of the walk: each row is cut into pieces, and every piece's cells are read after
    the names of the columns they sit in (the truth: the canonical rows split against the header)."""
    doc = country_store.documents()[0]
    canonical = country_store.canonical_text(doc.id)
    lines = [x for x in canonical.split("\n") if x.startswith("|")]
    names = split_cells(lines[0])
    truth = {(n, v) for line in lines[2:] for n, v in zip(names, split_cells(line)) if v}
    chunks = country_store.document_chunks(doc.id)
    cites = with_columns([replace(_cite(ch.content, n=i + 1), start=ch.start, end=ch.end) for i, ch in enumerate(chunks)],
                         lambda _id: canonical)
    mid_row = 0
    for c in cites[3:]:  # the first pieces are the header's own
        got = table_columns(canonical, c.start)
        assert got is not None and got[0] == tuple(names)
        mid_row += got[1] > 0
        rec = rows_as_records(c.quote, 0, len(c.quote), c.columns, c.first_column)
        pairs = [tuple(p.split(": ", 1)) for line in rec.split("\n") for p in line.split("; ")]
        wrong = [p for p in pairs if len(p) == 2 and p[0] in names and p not in truth
                 and not any(n == p[0] and (v.startswith(p[1]) or v.endswith(p[1])) for n, v in truth)]  # cut mid-cell
        assert not wrong, c.quote[:80]
    assert mid_row > 100  # most rows are cut: the check is about the pieces that start mid-row
    kenya = next(c for c in cites if c.quote.lstrip("| ").startswith("KEN |"))
    assert rows_as_records(kenya.quote, 0, len(kenya.quote), kenya.columns, kenya.first_column).startswith(
        "FIFA: KEN; Dial: 254; ISO3166-1-Alpha-3: KEN")


def test_a_document_deleted_since_the_search_is_read_without_names():
    from rag.errors import StoreError

    def gone(doc_id: str) -> str:
        raise StoreError(f"no canonical text for document {doc_id}")

    quote = "| KEN | 254 | Kenya | Nairobi |"
    assert with_columns([_cite(quote)], gone)[0].columns == ()
    assert with_columns([_cite(quote)], lambda _id: WIDE)[0].columns == ()  # offset 0 of WIDE is prose, not a row
