"""The key passage (rag.answer.key_passage, issue 14) on real chapter text: verbatim, cited, and never hidden text."""

from __future__ import annotations

import json

import pytest

from rag.answer.cite import Citation
from rag.answer.excerpt import prompt_excerpts, strip_hidden, visible
from rag.answer.key_passage import MAX_CHARS, key_passage, stretches
from rag.evaluation.answers import contains_answer
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes
from rag.text import TermStats


def _cites(chunks, order=None) -> list[Citation]:
    order = order or range(len(chunks))
    return [Citation(index=n, document_id="d", document_name="doc.md", locator_label=f"doc.md > {' > '.join(c.section)}",
                     fragment=f"#char={c.start},{c.end}", quote=c.content, cosine_distance=0.3, fused_rank=n,
                     page=None, start=c.start, end=c.end, media_type="text/markdown", chunk_id=n)
            for n, c in enumerate((chunks[i] for i in order), start=1)]


def _chunks(path):
    return chunk_document(extract_bytes(path.read_bytes(), path.name), "E")


@pytest.fixture(scope="module")
def course(corpus_dir):
    """Every chunk of the 13 course chapters, by chapter name, and the term statistics over all of them."""
    chunks = {p.name: _chunks(p) for p in sorted((corpus_dir / "docs").glob("*.md"))}
    return chunks, TermStats.from_texts([c.text for cs in chunks.values() for c in cs])


def test_key_passage_is_verbatim_from_one_source_with_its_number(course, corpus_dir):
    """For every dev question, over the chunks of its own chapter: spans of one quote, at most 400 characters."""
    chunks, stats = course
    for line in (corpus_dir / "dev_questions.jsonl").read_text().splitlines():
        q = json.loads(line)
        cites = _cites(chunks[q["doc"]])
        kp = key_passage(q["query_course"], cites, stats)
        assert kp.sentences, q["id"]
        quote = cites[kp.index - 1].quote
        assert all(quote[s.start:s.end] == s.text and s.index == kp.index for s in kp.sentences)
        spans = [(s.start, s.end) for s in kp.sentences]
        assert spans == sorted(spans) and kp.body == quote[spans[0][0]:spans[-1][1]]
        items = [x for x in kp.sentences[3:] if x.text.lstrip().startswith(("-", "*", "+"))]
        assert len(kp.sentences) - len(items) <= 4
        assert len(kp.body) <= MAX_CHARS or len(kp.sentences) == 1 or kp.body.rstrip().count(":")
        assert kp.text.endswith(f"[{kp.index}]") and kp.to_json()["locator_label"].startswith("doc.md")


def test_key_passage_holds_the_answer_of_most_dev_questions(course, corpus_dir):
    """Documents' wording, each question over its own chapter's chunks (a retrieval-free bound): the key
    passage holds the answer keys for most of them (measured 2026-11-30: 21 of 24)."""
    chunks, stats = course
    keys = {json.loads(x)["id"]: json.loads(x)["answer_keys"] for x in (corpus_dir / "dev_answer_keys.jsonl").read_text().splitlines()}
    hits = 0
    for line in (corpus_dir / "dev_questions.jsonl").read_text().splitlines():
        q = json.loads(line)
        hits += contains_answer(key_passage(q["query_course"], _cites(chunks[q["doc"]]), stats).text, keys[q["id"]])
    assert hits >= 16, hits


def test_the_better_ranked_source_wins_a_tie(course):
    chunks, stats = course
    c = chunks["12-evaluation.md"]
    i = next(k for k, x in enumerate(c) if "805 carefully curated prompts" in x.content)
    cites = _cites([c[i], c[i]])  # the same text twice: the first source is taken
    assert key_passage("How many prompts does Alpaca Eval hold?", cites, stats).index == 1


def test_hidden_text_never_reaches_the_key_passage_or_the_prompt(cases_dir):
    """c24: an HTML comment holds an outdated yard limit (25 km/h); the answer is 15 km/h."""
    chunks = _chunks(cases_dir / "c24_frontmatter_post.md")
    cites = _cites(chunks)
    q = "What is the speed limit on the yard? Is it still 25 km/h as in the internal note?"
    kp = key_passage(q, cites)
    assert "15 km/h on the yard" in kp.text and "25" not in kp.text and "internal note" not in kp.text
    for budget in (0, 40, 160):  # whole chunks or excerpts: the model never reads the comment
        ex = prompt_excerpts(q, [c.quote for c in cites], budget, lambda t: len(t.split()))
        assert not any("25 km/h" in e.text or "<!--" in e.text for e in ex), budget
    # the guard works on any chunk text, also one that begins or ends inside a comment
    t = "old value --> Kept. <!-- drop this --> Also kept. <!-- unclosed"
    assert strip_hidden(t) == " Kept.  Also kept. " and len(visible(t)) == len(t)
    assert [t[a:b] for s in stretches(t) for a, b in s][:1] == ["Kept."]


def test_no_sources_give_an_empty_passage():
    kp = key_passage("anything", [])
    assert kp.sentences == () and kp.text == "" and kp.index is None


def test_a_table_header_does_not_outscore_the_row_that_answers(cases_dir):
    """A question repeats the column names; the header row alone used to win (a spreadsheet's header, found
    trying the app). The row holding the answer is the key passage; the header stays in the quoted source."""
    text = ("# Data types\n\n"
            "| Data type | Type code | Size in bytes |\n|---|---|---|\n"
            "| INT32 | 0x24 | 4 |\n| FLOAT | 0x26 | 4 |\n| DOUBLE | 0x28 | 8 |\n")
    chunks = {c.start: c for c in chunk_document(extract_bytes(text.encode(), "types.md"), "E")}
    cites = _cites(list(chunks.values()))
    kp = key_passage("Which type code does DOUBLE get?", cites)
    assert "| DOUBLE | 0x28 | 8 |" in kp.text and "Size in bytes" not in kp.text
    quote = {c.index: c.quote for c in cites}[kp.index]
    assert all(quote[s.start:s.end] == s.text for s in kp.sentences)


def test_a_passage_ending_in_a_colon_brings_the_items_of_its_list():
    """docx4j's Getting Started, asked "Which Java versions does the docx4j 11.4 series support?" in the app: the
    key passage ended "It supports the recent Java long term releases:\n  - Java 11 (released Sept 2018)" and
    Java 17, the next item, was in no passage the model read. A colon brings the items that follow, as many as fit
    the passage's characters; a paragraph after the list is not an item, and a list too long stops where it must."""
    text = ("# Versions\n\n"
            "We recommend you adopt the 11.4 series if possible. It supports the recent Java long term releases:\n\n"
            "- Java 11 (released Sept 2018)\n- Java 17 (released Sept 2021)\n- Java 21 (released Sept 2023)\n\n"
            "Older series are kept for existing users of the library.\n")
    cites = _cites(chunk_document(extract_bytes(text.encode(), "versions.md"), "E"))
    kp = key_passage("Which Java releases does the 11.4 series support?", cites)
    assert kp.body.startswith("We recommend") or kp.body.startswith("It supports")
    assert kp.body.rstrip().endswith("- Java 21 (released Sept 2023)") and "Older series" not in kp.text
    quote = {c.index: c.quote for c in cites}[kp.index]
    assert all(quote[s.start:s.end] == s.text for s in kp.sentences)
    long = text.replace("- Java 17", "- " + "Java 17 with a long note on its licence terms, " * 6 + "and more")
    kp = key_passage("Which Java releases does the 11.4 series support?", _cites(chunk_document(extract_bytes(long.encode(), "v.md"), "E")))
    assert kp.body.rstrip().endswith("- Java 11 (released Sept 2018)") and len(kp.body) <= MAX_CHARS


def test_a_follow_up_s_own_words_lead_the_key_passage_over_the_conversation_s(shared_dir):
    """A new user's walk (2026-12-06), OWASP's REST cheat sheet: "And what should happen to the token after an
    explicit logout?" read after "Which standard JWT claims should be verified?" took the passage on verifying
    claims for its key passage (the bracketed words matched it best), and the answer from it was shown as
    supported. The user's own words lead; asked alone, the claims passage is still the key passage."""
    path = shared_dir / "corpus" / "real" / "md" / "guide-owasp-rest-security.md"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    chunks = [c for c in chunk_document(extract_bytes(path.read_bytes(), path.name), "E") if c.content.strip()]
    stats = TermStats.from_texts([c.text for c in chunks])
    jwt = [k for k, c in enumerate(chunks) if "JWT" in c.section]
    claims = next(k for k in jwt if "standard claims should be verified" in chunks[k].content)
    logout = next(k for k in jwt if "explicit logout" in chunks[k].content)
    # the order the app gave them (cosine distance 0.38 and 0.47 for the logout passage, 0.65 for the claims one)
    cites = _cites(chunks, [logout, claims] + [k for k in jwt if k not in (claims, logout)][:2])
    kp = key_passage("And what should happen to the token after an explicit logout? (standard claims verified)",
                     cites, stats)
    assert "explicit" in kp.text and "standard claims" not in kp.text
    assert "standard claims should be verified" in key_passage("Which standard claims should be verified?", cites,
                                                               stats).text


def test_unit_cosines_choose_between_stretches_the_words_score_alike(course):
    """A user's words match no sentence of either source better than another's: the question's cosine to the
    units (issue 40, :data:`rag.answer.key_passage.COSINE_WEIGHT`) chooses, and the kept score stays lexical."""
    from dataclasses import replace

    from rag.answer.key_passage import RANK_WEIGHT, scored_stretches

    chunks, stats = course
    c = chunks["12-evaluation.md"]
    i = next(k for k, x in enumerate(c) if "805 carefully curated prompts" in x.content)
    j = next(k for k, x in enumerate(c) if k != i and len(x.content) > 200)
    question = "zzz qqq?"  # no word of it in any source: every stretch scores only its rank bonus
    plain = _cites([c[j], c[i]])
    assert key_passage(question, plain, stats).index == 1  # the better rank wins the tie
    quote = plain[1].quote
    a = quote.index("805 carefully curated prompts")
    end = a + len("805 carefully curated prompts")
    cosines = [replace(plain[0], unit_cosines=((0, len(plain[0].quote), 0.1),)),
               replace(plain[1], unit_cosines=((a, end, 0.8),))]
    kp = key_passage(question, cosines, stats)
    assert kp.index == 2 and "805 carefully curated prompts" in kp.text
    assert kp.sentences[0].score == pytest.approx(RANK_WEIGHT / 2)  # lexical share 0 plus the rank bonus only
    best = scored_stretches(question, cosines, stats)[0]
    assert best.cosine == pytest.approx(0.8) and best.rank_score > best.score


def test_a_source_without_unit_vectors_counts_its_own_cosine(course):
    from dataclasses import replace

    from rag.answer.key_passage import stretch_cosine

    chunks, _ = course
    cite = _cites(chunks["12-evaluation.md"][:1])[0]
    assert stretch_cosine(cite, 0, 10) == pytest.approx(0.7)  # 1 - cosine distance 0.3
    assert stretch_cosine(replace(cite, unit_cosines=((0, 5, 0.9), (20, 30, 0.2))), 25, 40) == pytest.approx(0.2)
