"""Records of one kind in one source (rag.answer.check.records): a value comes from the record the question names.

A new user's walk (2026-12-07) put four one-page invoices in one PDF; the PDF is one chunk, and "What is the total due
on invoice 1044?" got invoice 1043's total under "partly supported": the "Invoice 1043" ... "Invoice 1046" lines are
headings, which the model never read, so it could not tell the four totals apart, and the claim check found every
word and number of "The total due on invoice 1044 is EUR 1,250.00" in the source.
"""

from __future__ import annotations

import pymupdf as fitz

from rag.answer.check.claims import holds, specifics, statement_gaps, statements
from rag.answer.check.records import label_before, named_record, record_labels
from rag.answer.cite import Citation
from rag.answer.excerpt import citation_views, prompt_excerpts
from rag.answer.key_passage import key_passage, question_labels
from rag.answer.pipeline import with_labels
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes

INVOICES = [("1043", "Acme Tools", "1,250.00"), ("1044", "Birch Supply", "3,087.40"),
            ("1045", "Cobalt Metals", "9,912.15"), ("1046", "Delta Paints", "2,433.00")]


def _invoices_pdf() -> bytes:
    """Four invoices, one per page, as the walk's file: "Invoice NNNN" at the top of the page, the total at its foot,
    all in one font and size (a larger title would open a section, and each invoice would be a chunk of its own)."""
    doc = fitz.open()
    for number, customer, total in INVOICES:
        page = doc.new_page()
        page.insert_text((72, 60), f"Invoice {number}", fontsize=11)
        page.insert_text((72, 140), f"Customer: {customer}", fontsize=11)
        page.insert_text((72, 160), "Items as agreed in the framework contract of March.", fontsize=11)
        page.insert_text((72, 760), f"Total due: EUR {total}", fontsize=11)
    return doc.tobytes()


def _cites() -> list[Citation]:
    chunks = chunk_document(extract_bytes(_invoices_pdf(), "invoices.pdf"), "E")
    assert len(chunks) == 1  # the case: four short pages in one chunk
    c = chunks[0]
    return [Citation(index=1, document_id="d", document_name="invoices.pdf", locator_label="invoices.pdf, p. 1",
                     fragment="#page=1", quote=c.content, cosine_distance=0.4, fused_rank=1, page=1, start=c.start,
                     end=c.end, media_type="application/pdf", chunk_id=1)]


def test_a_value_of_another_record_is_a_gap():
    source = _cites()[0].quote
    q = "What is the total due on invoice 1044?"
    assert statement_gaps("The total due on invoice 1044 is EUR 1,250.00 [1].", source, ["1250.00"], q) == ["1250.00"]
    assert statement_gaps("The total due on invoice 1044 is EUR 3,087.40 [1].", source, ["3087.40"], q) == []
    q = "Which customer is on invoice 1046?"
    assert statement_gaps("The customer on invoice 1046 is Cobalt Metals [1].", source, ["cobalt"], q) == ["cobalt"]
    assert statement_gaps("The customer on invoice 1046 is Delta Paints [1].", source, ["delta"], q) == []
    # a question that names no record, or the kind only, keeps the rule off
    q = "What are the totals due on the invoices?"
    assert statement_gaps("Invoice 1045 has a total due of EUR 9,912.15 [1].", source, ["9912.15"], q) == []


def test_a_record_is_named_by_its_label_or_by_what_it_alone_holds():
    source = _cites()[0].quote
    sts = statements(source)

    def record(q):
        span = named_record(source, sts, specifics(q), specifics, holds, lambda s: s.startswith("|"))
        return source[span[0]:span[1]] if span else None

    assert record("What is on invoice 1044?").startswith("Invoice 1044\n")
    assert "3,087.40" in record("What is on invoice 1044?") and "Invoice 1045" not in record("What is on invoice 1044?")
    # a field ("Total due: EUR 3,087.40") does not open a record, but names the one that holds it
    assert record("Which invoice has a total due of EUR 3,087.40?").startswith("Invoice 1044\n")
    assert record("Which invoice is for Birch Supply?").startswith("Invoice 1044\n")
    q = "Which invoice is for Birch Supply?"
    assert statement_gaps("Invoice 1045 is for Birch Supply [1].", source, ["1045"], q) == ["1045"]
    assert statement_gaps("Invoice 1044 is for Birch Supply [1].", source, ["1044"], q) == []
    # what every record holds names none of them; two named records are the kind, not one
    assert record("What was agreed in the framework contract of March?") is None
    assert record("Compare invoice 1043 and invoice 1044.") is None


def test_labels_are_named_only_among_their_kind():
    text = "Room 11\n\nA quiet room.\n\nRoom 12\n\nA loud room.\n\nBreakfast 7 am"
    heads = [(text.index(h), text.index(h) + len(h)) for h in ("Room 11", "Room 12", "Breakfast 7 am")]
    assert [text[a:b] for a, b in record_labels(text, heads, {"12"}, specifics, holds)] == ["Room 11", "Room 12"]
    assert record_labels(text, heads, {"13"}, specifics, holds) == []  # no room named
    assert record_labels(text, heads, {"loud"}, specifics, holds) == heads[:2]  # named by what it alone holds
    assert record_labels(text, heads[:1] + heads[2:], {"11"}, specifics, holds) == []  # one room: no kind
    labels = record_labels(text, heads, {"12"}, specifics, holds)
    assert label_before(labels, heads[1][1] + 2) == heads[1] and label_before(labels, 0) is None


def test_the_key_passage_and_the_model_read_the_named_record():
    cites = _cites()
    q = "What is the total due on invoice 1044?"
    kp = key_passage(q, cites)
    assert "3,087.40" in kp.body and "Birch Supply" in kp.body
    # the model reads each total after its invoice's label (headings are otherwise never read)
    views = with_labels(cites, citation_views(cites), question_labels(q, cites))
    ex = prompt_excerpts(q, [c.quote for c in cites], 240, lambda s: len(s.split()), views=views)
    read = ex[0].text
    assert read.index("Invoice 1044") < read.index("3,087.40") < read.index("Invoice 1045")
    assert "Invoice 1043" in read and "Invoice 1046" in read
    # a question that names no invoice leaves the headings out, as before
    views = with_labels(cites, citation_views(cites), question_labels("Which customers are billed?", cites))
    assert "Invoice" not in prompt_excerpts("Which customers are billed?", [c.quote for c in cites], 240,
                                            lambda s: len(s.split()), views=views)[0].text


def test_a_label_hidden_in_the_source_stays_unread():
    # labels read by the model are text a reader sees: one inside an HTML comment stays unread (the excerpt drops
    # hidden spans after the labels are put back)
    text = ("Room 11\n\nThe quiet room costs $95 a night.\n\n<!--\nRoom 12\n-->\n\nThe loud room costs $80 a night.\n\n"
            "Room 14\n\nThe corner room costs $150 a night.\n")
    cites = [Citation(index=1, document_id="d", document_name="rooms.md", locator_label="rooms.md", fragment="",
                      quote=text, cosine_distance=0.3, fused_rank=1, page=None, start=0, end=len(text),
                      media_type="text/markdown", chunk_id=1)]
    q = "How much is room 14?"
    labels = question_labels(q, cites)
    assert [text[a:b][:7] for a, b in labels[0]] == ["Room 11", "Room 12", "Room 14"]  # headings, the hidden one too
    views = with_labels(cites, citation_views(cites), labels)
    read = prompt_excerpts(q, [text], 0, lambda s: len(s.split()), views=views)[0].text
    assert "Room 11" in read and "Room 14" in read and "Room 12" not in read
