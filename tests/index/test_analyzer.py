"""Issue 19: stemmed BM25 terms in each document's language, and the lexical leg weighted by coverage."""

from __future__ import annotations

import numpy as np
import pytest

from rag.index.analyzer import Analyzer, acronym_terms
from rag.index.bm25 import BM25Index
from rag.index.fusion import bm25_weight, lexical_weight, rrf
from rag.language import detect_language, document_languages

EN = "The cache stores the keys and values of every previous token, so decoding reuses them."
DE = "Die Lizenz erlaubt die Bearbeitung des Werkes, solange der Urheber genannt wird und keine kommerzielle Nutzung erfolgt."


def test_detect_language_and_restriction_to_the_corpus_languages():
    assert detect_language(EN) == "en"
    assert detect_language(DE) == "de"
    # a short query is detected only among the corpus's languages; one language means no detection at all
    assert detect_language("Wann wurde das entschieden?", among=["en", "de"]) == "de"
    assert detect_language("Wann wurde das entschieden?", among=["en"]) == "en"
    assert detect_language("12345 !!", among=["de", "en"]) == "de"  # no letters: the first candidate


def test_document_languages_detected_once_per_group():
    texts = [EN, "Tokens.", DE, "Werk."]
    assert document_languages(texts, ["a", "a", "b", "b"]) == ["en", "en", "de", "de"]
    with pytest.raises(ValueError, match="2 groups for 4 texts"):
        document_languages(texts, ["a", "b"])


def test_a_document_of_numbers_and_chart_labels_is_english_not_gaelic():
    # ShapeCrawler's chart deck and XlsxWriter's chart workbooks (a walk, 2026-12-07) were called Scottish Gaelic and
    # Luxembourgish at 1-4 %, and English questions about them were refused as "in another language"
    from rag.language import text_language

    deck = "# Slide 1\n\n# Charts\n\nChart: BAR Chart\n\nChart: PIE Chart"
    sheet = "# Sheet1\n\n| 1 | 2 | 3 |\n| --- | --- | --- |\n| 2 | 4 | 6 |\n| 3 | 6 | 9 |"
    assert detect_language(deck) != "en" and detect_language(sheet) != "en"  # the detector's own reading
    assert text_language([deck]) == "en" and text_language([sheet]) == "en"
    german = "Die Verbraucherzentrale berät Sie bei Fragen zu Verträgen, Rechnungen und Reklamationen."
    assert text_language([german]) == "de"
    assert text_language(["Какие документы нужны для поступления в университет?"]) == "ru"


def test_analyzer_stems_in_the_given_language_and_plain_mode_keeps_tokens():
    a = Analyzer(languages=("de", "en"))
    assert a.terms("caching cached caches", "en") == ["cach", "cach", "cach"]
    assert a.terms("Lizenzen Lizenz", "de") == ["lizenz", "lizenz"]
    assert Analyzer(stem=False).terms("caching cached") == ["caching", "cached"]
    # a language without a Snowball stemmer keeps the plain tokens
    assert a.terms("caching", "ja") == ["caching"]


def test_bm25_stemmed_query_finds_the_inflected_form(tmp_path):
    texts = ["Reusing cached keys speeds up decoding.", "Tumor cells were counted in each sample.", DE]
    idx = BM25Index.build(texts, [10, 11, 12], groups=["d1", "d2", "d3"])
    assert idx.analyzer.languages == ("de", "en")
    assert idx.search("how does caching work", 3)[0].tolist() == [10]
    assert idx.search("Lizenzen", 3)[0].tolist() == [12]
    plain = BM25Index.build(texts, [10, 11, 12], stem=False)
    assert plain.search("how does caching work", 3)[0].size == 0
    # the analyzer travels with the files: a loaded index stems its queries the same way
    idx.save(tmp_path / "b")
    again = BM25Index.load(tmp_path / "b")
    assert again.analyzer == idx.analyzer
    assert again.search("how does caching work", 3)[0].tolist() == [10]


def test_bm25_index_saved_before_issue_19_keeps_plain_queries(tmp_path):
    import json

    plain = BM25Index.build(["cached keys"], [1], stem=False)
    plain.save(tmp_path / "b")
    p = tmp_path / "b" / "params.json"
    params = json.loads(p.read_text())
    del params["stem"], params["languages"]
    p.write_text(json.dumps(params))
    old = BM25Index.load(tmp_path / "b")
    assert old.analyzer.stem is False
    assert old.search("cached", 1)[0].tolist() == [1]


def test_coverage_is_the_idf_weighted_share_of_query_terms_in_the_chunk():
    texts = ["alpha beta gamma", "alpha delta", "alpha epsilon", "alpha zeta"]
    idx = BM25Index.build(texts, [0, 1, 2, 3], stem=False)
    assert idx.coverage("beta gamma", 0) == pytest.approx(1.0)
    assert idx.coverage("beta delta", 1) == pytest.approx(0.5)  # equal df: half the IDF
    # "alpha" is in every chunk, so it weighs little against the rare "delta"
    cov = idx.coverage("alpha delta", 0)
    assert 0.0 < cov < 0.25
    assert idx.coverage("unknownword", 0) is None
    assert idx.coverage("alpha", 99) is None


def test_lexical_weight_band_and_fusion_weights():
    assert lexical_weight(None) == 1.0
    assert lexical_weight(0.2, (0.3, 0.7)) == 0.0
    assert lexical_weight(0.5, (0.3, 0.7)) == pytest.approx(0.5)
    assert lexical_weight(0.9, (0.3, 0.7)) == 1.0
    # a zero-weight list adds nothing: the fused order is the first list's
    assert [c for c, _ in rrf([[1, 2, 3], [3, 2, 1]], weights=[1.0, 0.0])] == [1, 2, 3]
    assert [c for c, _ in rrf([[1, 2, 3], [3, 2, 1]], weights=[1.0, 1.0])][0] in (1, 3)


def test_bm25_weight_full_for_questions_the_embedder_cannot_read():
    texts = ["Reusing cached keys speeds up decoding in the transformer.", DE, "Something else entirely here."]
    idx = BM25Index.build(texts, [0, 1, 2], groups=["a", "b", "c"])
    top = int(idx.search("Wer darf das Werk bearbeiten, wenn keine kommerzielle Nutzung erfolgt?", 1)[0][0])
    assert top == 1
    # German question against an English-only embedder: BM25 keeps its full weight whatever the coverage
    assert bm25_weight("Darf ich das Foto einfach so verwenden?", idx, 1) == 1.0
    # an English question whose best lexical match holds half of its indexed terms (all df 1): coverage 0.5
    # -> weight 0.5 in the default band 0.3-0.7; words in no chunk at all do not count
    assert bm25_weight("something else about transformer keys, why", idx, 0) == pytest.approx(0.5)
    assert bm25_weight("why is my transformer so slow", idx, 0, band=None) == 1.0
    assert np.isclose(bm25_weight("cached keys decoding", idx, 0), 1.0)


# ----------------------------------------------------------------------------- issue 40: identifiers


def test_identifier_terms_keep_joined_names_whole_and_split_camel_case():
    from rag.index.analyzer import camel_parts, identifier_terms

    assert camel_parts("partialFingerprints") == ["partial", "Fingerprints"]
    assert camel_parts("HTTPServer") == ["HTTP", "Server"]
    assert camel_parts("fingerprints") == ["fingerprints"] and camel_parts("SARIF") == ["SARIF"]
    terms = identifier_terms("Do not populate result.fingerprints; use partialFingerprints, max_tokens, "
                             "x-request-id and v3.14. The end. Next")
    assert terms == ["result.fingerprints", "partial", "fingerprints", "max_tokens", "x-request-id", "v3.14"]
    # a sentence's full stop and the space after it join nothing; stop words of a camel-case word are dropped
    assert identifier_terms("It ends here. Then isValid") == ["valid"]
    # CJK words are tokenize()'s business; a chain longer than MAX_JOINED runs is cut, not dropped
    assert identifier_terms("日本.語") == []
    assert identifier_terms(".".join("abcdefghij")) == ["a.b.c.d.e.f.g.h", "i.j"]


def test_bm25_finds_a_dotted_name_and_a_camel_case_word_by_its_parts(tmp_path):
    import json

    texts = ["Do populate result.partialFingerprints where you can.",
             "Do not populate result.fingerprints.",
             "Each result has a message and a fingerprint of its location.",
             "The result of the run is written to the log."]
    idx = BM25Index.build(texts, [0, 1, 2, 3], stem=False)
    assert idx.analyzer.identifiers
    assert idx.search("should I populate result.fingerprints?", 4)[0].tolist()[0] == 1
    assert idx.search("what are partial fingerprints", 4)[0].tolist()[0] == 0
    # the coverage weight reads the plain terms only: the whole name repeats words already counted
    assert idx.coverage("result.fingerprints", 1) == pytest.approx(1.0)
    assert idx.coverage("result.fingerprints", 2) < 1.0
    # an index saved before the identifier pass reads its queries without identifier terms
    idx.save(tmp_path / "b")
    assert BM25Index.load(tmp_path / "b").analyzer.identifiers
    p = tmp_path / "b" / "params.json"
    params = json.loads(p.read_text())
    del params["identifiers"]
    p.write_text(json.dumps(params))
    assert BM25Index.load(tmp_path / "b").analyzer.identifiers is False


def test_identifier_terms_leave_product_names_and_lost_spaces_alone():
    """A helper's review (2026-12-06): "GitHub" split into "git" and "hub" put a GitHub chunk first for "How does git
    work?"; "restarts.Then" (a PDF's lost space) made a junk term."""
    from rag.index.analyzer import identifier_terms

    assert identifier_terms("GitHub, JavaScript, OpenAI and the iPhone") == []
    assert identifier_terms("getElementById and XMLHttpRequest") == ["get", "element", "id", "xml", "http", "request"]
    assert identifier_terms("The server restarts.Then the cache") == []
    assert identifier_terms("using System.Text.Json;") == ["system.text.json"]
    assert identifier_terms("aGVsbG8gd29ybGQgaGVsbG8") == []  # base64: no name has that many humps
    texts = ["GitHub Actions runs workflows on every push.", "git rebase rewrites the commits of a branch."]
    idx = BM25Index.build(texts, [0, 1], stem=False)
    assert idx.search("How does git work?", 2)[0].tolist()[0] == 1


def test_an_acronym_that_spells_a_stopword_is_a_term():
    # "IT" was dropped as the stopword "it": "Does the proposal have an IT component?" could not find the form's
    # "IT component (...)? (Yes/No)" (a new user's walk of the API, 2026-12-06)
    assert acronym_terms("Does it have an IT component? THE END of it") == ["it_", "the_"]
    assert acronym_terms("it is what it is") == []
    texts = ["IT component (databases, applications, hardware)? (Yes/No)",
             "It is a component of the beetle trap, and it is cheap.",
             "Offshore or foreign component? (Yes/No)"]
    idx = BM25Index.build(texts, [0, 1, 2], stem=True)
    assert idx.search("Does the proposal have an IT component?", 3)[0].tolist()[0] == 0
    assert idx.coverage("an IT component", 0) == pytest.approx(1.0)  # the acronym counts in the coverage
    assert idx.coverage("an IT component", 1) < 0.5


def test_a_line_in_capitals_gives_no_acronym_terms():
    # "IS IT SAFE TO DELETE THE CACHE?" turned every stopword into a term, and a licence's "WHETHER IT IS" matched
    # the acronym "IT" (an adversarial review, 2026-12-06)
    assert acronym_terms("IS IT SAFE TO DELETE THE CACHE?") == []
    assert acronym_terms("THE SOFTWARE IS PROVIDED AS IS, WHETHER IT IS") == []
    assert acronym_terms("Ask the IT desk.\nTHE END") == ["it_"]
