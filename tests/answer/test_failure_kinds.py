"""Issue 24's failure kinds, each on a small real input: a wrong answer must never look like a right one.

Found by a new user on documents the project had never seen (a technical report, a Beamer slide deck, HTML
manual pages): false claims with a citation that passed the claim check, and a key passage standing
"verbatim" as the answer when it was a slide footer, a single word, a bibliography entry, a table of contents
or a navigation line. Each test runs the product's own functions (the claim check of
:func:`rag.answer.pipeline.check_answer`, :func:`rag.answer.key_passage.key_passage`, the excerpts the model
reads) on text shaped as the extractors write it.
"""

from __future__ import annotations

from rag.answer.cite import Citation
from rag.answer.excerpt import citation_views, prompt_excerpts
from rag.answer.key_passage import key_passage
from rag.answer.pipeline import check_answer
from rag.types import TextRole

#: The Qwen2 technical report (arXiv:2407.10671), section 2.1 and Table 1, as the PDF reader writes them.
QWEN2_TOKENIZER = (
    "Following Qwen (Bai et al., 2023a), we employ the identical tokenizer based on byte-level byte-pair "
    "encoding. Notably, this tokenizer exhibits high encoding efficiency, as evidenced by its better "
    "compression rate relative to the alternatives, facilitating the multilingual capabilities of Qwen2. "
    "Models of all sizes employ a common vocabulary consisting of 151,643 regular tokens and 3 control tokens."
)
QWEN2_TABLE_MD = (
    "| Configuration | 0.5B | 1.5B | 7B | 72B | 57B-A14B |\n|---|---|---|---|---|---|\n"
    "| Hidden Size | 896 | 1,536 | 3,584 | 8,192 | 3,584 |\n"
    "| # Layers | 24 | 28 | 28 | 80 | 28 |\n"
    "| # Query Heads | 14 | 12 | 28 | 64 | 28 |\n"
    "| # KV Heads | 2 | 2 | 4 | 8 | 4 |\n"
    "| Intermediate Size | 4,864 | 8,960 | 18,944 | 29,568 | 2,560 |\n"
    "| Embedding Tying | True | True | False | False | False |\n"
    "| # Trained Tokens | 12T | 7T | 7T | 7T | 4.5T |"
)
#: The same table where the reader found no grid: one line per row, no sentence in sight.
QWEN2_TABLE_LINES = (
    "Configuration 0.5B 1.5B 7B 72B 57B-A14B\n"
    "Hidden Size 896 1,536 3,584 8,192 3,584\n"
    "# Layers 24 28 28 80 28\n"
    "# Query Heads 14 12 28 64 28\n"
    "Vocabulary Size 151,646 151,646 151,646 151,646 151,646\n"
    "# Trained Tokens 12T 7T 7T 7T 4.5T"
)
#: A running head of the report's pages.
QWEN2_RUNNING_HEAD = "QWEN2 TECHNICAL REPORT"

#: Two slides of a Beamer deck; each ends in the deck's footer line (author, short title, date, counter).
FOOTER = "Jane Roe (Example University)   BSD Tales   Saturday, October 10, 2015   {n} / 30"
SLIDE_FORK = ("OpenBSD and NetBSD\n\nOpenBSD was forked from NetBSD in 1995.\nIts developers focus on security "
              "and code correctness.\n" + FOOTER.format(n=12))
SLIDE_PORTS = ("Ports\n\nNetBSD runs on more than 50 hardware platforms.\nThe same source tree builds for every "
               "platform.\n" + FOOTER.format(n=13))

#: A cookbook's table of contents and the recipe it points to.
COOKBOOK_TOC = ("Contents\n1 Getting started . . . . . . . . 1\n2 Boil it for 15 minutes . . . . . . 4\n"
                "3 Soft-boiled eggs . . . . . . . 7\n4 Serving . . . . . . . . . 9")
COOKBOOK_EGGS = ("Put the eggs in cold water and bring it to the boil. For soft-boiled eggs, let them simmer for six "
                 "minutes, then cool them under running water.")

#: A GNU-style manual page: its navigation line, then the text.
MANUAL_NAV = "Next: Invoking tar, Previous: Introduction, Up: Top   [Contents][Index]"
MANUAL_BODY = ("To create an archive, run tar with the --create option and name the archive file with --file. "
               "The next step is to list the files the archive should hold.")

#: A paper's reference list and a paragraph of its body.
REFERENCES = ("[11] T. de Raadt, N. Provos. The OpenBSD security audit process. In Proc. USENIX Security "
              "Symposium, pp. 115-125, 1999.\n[12] M. Kerrisk. The Linux Programming Interface. No Starch Press, 2010.")
AUDIT_BODY = ("The OpenBSD project audits its whole source tree continuously: every file is read by several "
              "developers looking for security bugs.")


def _cite(n: int, quote: str, section: tuple[str, ...] = ("Section",), name: str = "doc.pdf",
          role: TextRole = TextRole.BODY) -> Citation:
    return Citation(index=n, document_id=f"d{n}", document_name=name, locator_label=f"{name}, p. {n}",
                    fragment=f"#page={n}", quote=quote, cosine_distance=0.3, fused_rank=n, page=n, start=0,
                    end=len(quote), media_type="application/pdf", chunk_id=n, section=section, role=role)


def _stored_role(quote: str, heading: str = "References") -> TextRole:
    """The role ingest stores for ``quote`` as the body of a section titled ``heading`` (issue 36, item 3: reference
    lists are decided there alone)."""
    from rag.ingest.chunk import chunk_document
    from rag.ingest.extract import extract_bytes

    doc = extract_bytes(f"# Paper\n\nSome text.\n\n## {heading}\n\n{quote}\n".encode(), "paper.md")
    (role,) = {c.role for c in chunk_document(doc, count_tokens=lambda t: len(t.split())) if quote[:20] in c.content}
    return role


def _verdicts(question: str, answer: str, cites: list[Citation]) -> list[str]:
    return [str(s.verdict) for s in check_answer(answer, cites, None, question)[3]]


def _words(text: str) -> int:
    return len(text.split())


# ----------------------------------------------------------------------------------------------- item 1


def test_a_number_from_another_statement_does_not_support_the_claim():
    """ "The vocabulary size of the Qwen2 tokenizer is 896 [1]." (896 is the 0.5B's hidden size; both models
    said it). The source holds 896, but in the statement about the hidden size."""
    q = "What is the vocabulary size of the Qwen2 tokenizer?"
    for table in (QWEN2_TABLE_MD, QWEN2_TABLE_LINES):
        cites = [_cite(1, table, ("Model architecture",)), _cite(2, QWEN2_TOKENIZER, ("Tokenizer",))]
        att = check_answer("The vocabulary size of the Qwen2 tokenizer is 896 [1].", cites, None, q)[3]
        assert att[0].verdict == "unsupported" and "896 only in a statement about something else" in att[0].reason
        assert att[0].shown_cites == ()
    # the statement that says it supports it: in prose, and in a table row read with its header
    assert _verdicts(q, "Qwen2 models use a common vocabulary of 151,643 regular tokens [2].", cites) == ["supported"]
    assert _verdicts(q, "The vocabulary size is 151,646 [1].", [_cite(1, QWEN2_TABLE_LINES)]) == ["supported"]
    assert _verdicts("How many layers does the 0.5B model have?", "The 0.5B model has 24 layers [1].",
                     [_cite(1, QWEN2_TABLE_MD)]) == ["supported"]


def test_a_relation_between_two_names_needs_that_relation_in_the_source():
    """ "<the deck's author> is the founder of OpenBSD [2]." - the author is only in the slide footer; the
    source names OpenBSD elsewhere. Both names somewhere in the source is not the relation."""
    cites = [_cite(1, SLIDE_PORTS, ("Ports",), "bsd.pdf"), _cite(2, SLIDE_FORK, ("OpenBSD and NetBSD",), "bsd.pdf")]
    q = "Who founded OpenBSD?"
    assert _verdicts(q, "Jane Roe is the founder of OpenBSD [2].", cites) == ["unsupported"]
    assert _verdicts(q, "OpenBSD was forked from NetBSD in 1995 [2].", cites) == ["supported"]


def test_a_garbled_sentence_is_no_claim():
    cites = [_cite(1, "The first edition of the guide was published in 2015 by the foundation.")]
    att = check_answer("In 2015, was published [1]. The guide was published in 2015 [1].", cites, None,
                       "When was the guide published?")[3]
    assert [str(s.verdict) for s in att] == ["garbled", "supported"]
    assert att[0].shown_cites == () and not att[0].claim and att[0].reason.startswith("not a statement")


def test_a_claim_resting_on_a_table_of_contents_is_unsupported():
    """ "boil it for 15 minutes [4]" cited to a table of contents (seen with the threshold raised)."""
    cites = [_cite(1, COOKBOOK_EGGS, ("Eggs",)), _cite(2, COOKBOOK_TOC, ("Contents",))]
    q = "How long should I boil the eggs?"
    assert _verdicts(q, "Boil it for 15 minutes [2].", cites) == ["unsupported"]
    # the same words in a TOC chunk the section does not name as one
    assert _verdicts(q, "Boil it for 15 minutes [2].", [cites[0], _cite(2, COOKBOOK_TOC, ("Cookbook",))]) == ["unsupported"]


# ----------------------------------------------------------------------------------------------- item 2


def test_a_slide_footer_is_never_the_key_passage():
    """The key passage stood "verbatim" as the answer when it was the deck's footer."""
    cites = [_cite(1, SLIDE_FORK, ("OpenBSD and NetBSD",), "bsd.pdf"), _cite(2, SLIDE_PORTS, ("Ports",), "bsd.pdf")]
    kp = key_passage("Who is Jane Roe from Example University, and when was the BSD Tales talk?", cites)
    assert "Jane Roe" not in kp.text and "30" not in kp.text.split("[")[0]


def test_a_single_word_is_never_the_key_passage():
    """The single word "NetBSD" stood as the answer (it matches every term of "What is NetBSD?")."""
    quote = "NetBSD\n\nNetBSD is a free and portable Unix-like operating system that runs on many platforms."
    kp = key_passage("What is NetBSD?", [_cite(1, quote)])
    assert kp.text.startswith("NetBSD is a free and portable")


def test_a_bibliography_entry_is_never_the_key_passage():
    role = _stored_role(REFERENCES)
    assert role == TextRole.REFERENCES
    cites = [_cite(1, REFERENCES, ("Paper", "References"), role=role), _cite(2, AUDIT_BODY, ("Security",))]
    kp = key_passage("How does the OpenBSD security audit process work?", cites)
    assert kp.index == 2 and kp.text.startswith("The OpenBSD project audits")
    # a chunk stored as references has no answering unit, whatever it looks like
    cites = [_cite(1, "Provos and de Raadt describe the OpenBSD security audit process.", ("References",),
                   role=TextRole.REFERENCES), cites[1]]
    assert key_passage("How does the OpenBSD security audit process work?", cites).index == 2


def test_a_navigation_line_is_never_the_key_passage():
    """A manual page's "Previous: ... [Index]" line stood as the answer."""
    kp = key_passage("What is the next step after creating the archive? Previous: Introduction?",
                     [_cite(1, f"{MANUAL_NAV}\n\n{MANUAL_BODY}", ("Creating an archive",), "tar.html")])
    assert "[Index]" not in kp.text and kp.text.startswith(("To create", "The next step"))


def test_a_table_of_contents_is_never_the_key_passage():
    cites = [_cite(1, COOKBOOK_TOC, ("Cookbook",)), _cite(2, COOKBOOK_EGGS, ("Eggs",))]
    kp = key_passage("How long do I boil eggs for? 15 minutes?", cites)
    assert kp.index == 2 and "six minutes" in kp.text


def test_the_model_reads_the_answering_sentence_of_source_1():
    """Source [1] held the answer, the key passage came from another source (its running head and a TOC
    entry matched the question's words), and the 160-token excerpt skipped the sentence that answers: the
    model never saw "151,643". Now the key passage is [1]'s sentence and the excerpt always holds it."""
    filler = " ".join(f"Section {k} of the report describes the pre-training data of batch {k}." for k in range(12))
    report = f"{filler} {QWEN2_TOKENIZER}"
    toc = f"{QWEN2_RUNNING_HEAD}\n2.1 Tokenizer vocabulary size of Qwen2 . . . . . . . 3\n2.2 Model Architecture . . . . 4"
    cites = [_cite(1, report, ("Tokenizer",)), _cite(2, toc, ("Qwen2",)), _cite(3, QWEN2_TABLE_MD, ("Architecture",))]
    q = "What is the vocabulary size of the Qwen2 tokenizer?"
    kp = key_passage(q, cites)
    assert kp.index == 1 and "151,643" in kp.text
    must = [[(s.start, s.end) for s in kp.sentences if s.index == c.index] for c in cites]
    ex = prompt_excerpts(q, [c.quote for c in cites], 60, _words, views=citation_views(cites), must=must)
    assert "151,643" in ex[0].text
    assert "TECHNICAL REPORT" not in ex[1].text and ". . ." not in ex[1].text  # the model never reads a TOC or a running head


def test_the_model_never_reads_a_footer_a_navigation_line_a_bibliography_or_a_lone_title():
    """Item 2 holds for what the model reads as for the key passage: the excerpts of the sources above are their
    body text, even when the question's words are the footer's, the navigation line's or the entry's."""
    cases = [
        ("Who is Jane Roe from Example University, and when was the BSD Tales talk?",
         [_cite(1, SLIDE_FORK, ("OpenBSD and NetBSD",), "bsd.pdf"), _cite(2, SLIDE_PORTS, ("Ports",), "bsd.pdf")],
         ("Jane Roe", "Saturday", "/ 30")),
        ("What is the next step after creating the archive? Previous: Introduction?",
         [_cite(1, f"{MANUAL_NAV}\n\n{MANUAL_BODY}", ("Creating an archive",), "tar.html")], ("[Index]", "Previous:")),
        ("How does the OpenBSD security audit process work?",
         [_cite(1, REFERENCES, ("Paper", "References"), role=TextRole.REFERENCES), _cite(2, AUDIT_BODY, ("Security",))],
         ("USENIX", "de Raadt")),
        ("What is NetBSD?", [_cite(1, "NetBSD\n\nNetBSD is a free and portable Unix-like operating system.")],
         ("NetBSD\n",)),
    ]
    for q, cites, never in cases:
        ex = prompt_excerpts(q, [c.quote for c in cites], 160, _words, views=citation_views(cites))
        read = "\n".join(e.text for e in ex)
        assert read.strip() and not any(s in read for s in never), (q, read)
