"""The one vocabulary (rag.text, issue 12): sentences, markers, claim words and IDF on real strings."""

from __future__ import annotations

import math

from rag.text import CLAIM_STOPWORDS, STOPWORDS, TermStats, content_words, sentence_spans, strip_markers, tokenize


def _sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text)]


def test_sentences_end_at_a_full_stop_before_a_word_that_is_not_lower_case():
    assert _sentences("Models such as e.g. GPT-2 work. 3 layers are used. See Fig. 2 below.") == [
        "Models such as e.g. GPT-2 work.", "3 layers are used.", "See Fig. 2 below."]
    # a lower-case next word (any script) is no new sentence; closing quotes and emphasis stay with theirs
    assert _sentences("It ends here. élan follows. **Bold.** “Quoted.” Next") == [
        "It ends here. élan follows.", "**Bold.**", "“Quoted.”", "Next"]
    assert _sentences("一つ目。二つ目。 三つ目… Done") == ["一つ目。二つ目。", "三つ目…", "Done"]


def test_sentence_spans_are_offsets_into_the_given_range():
    text = "skip. A is B.  C is D.\n"
    spans = sentence_spans(text, 6, len(text))
    assert spans == [(6, 13), (15, 22)] and text[15:22] == "C is D."


def test_strip_markers_takes_the_space_before_them():
    assert strip_markers("A is B [1]. C [2, 3] D [Source 4]") == "A is B. C D"
    assert strip_markers("[1] claim") == "claim"


def test_content_words_drop_claim_stopwords_markers_and_plurals():
    assert content_words("According to the sources, the models use 12 layers [1].") == {"model", "12", "layer"}
    assert content_words("class glass") == {"class", "glass"}
    assert content_words("東京大学 x") == {"東京", "京大", "大学"}
    assert STOPWORDS < CLAIM_STOPWORDS and "source" not in STOPWORDS


def test_term_weights_are_bm25_idf():
    stats = TermStats.from_texts(["the cat sat", "a cat ran", "dogs bark"])
    assert stats.df == {"cat": 2, "sat": 1, "ran": 1, "dogs": 1, "bark": 1}
    w = stats.weights(tokenize("cat unicorn"))
    assert w["cat"] == math.log(1 + (3 - 2 + 0.5) / 2.5)
    assert w["unicorn"] > stats.idf("sat") > w["cat"] > 0


def test_counted_says_one_chunk_not_one_chunks():
    """arch1's walk (issue 29): `rag ingest` printed "1 chunks"."""
    from rag.text import counted

    assert [counted(n, "chunk") for n in (0, 1, 2)] == ["0 chunks", "1 chunk", "2 chunks"]


def test_table_head_finds_the_first_row_and_its_rule_and_stops_where_told():
    from rag.text import table_head

    text = "Intro\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\nafter"
    head = table_head(text, text.index("| 3"))
    assert head is not None and text[head[0]:head[1]] == "| a | b |" and text[head[1] + 1:head[2]] == "|---|---|"
    assert table_head(text, text.index("| 3"), max_rows=2) is None  # the top is 3 rows up
    assert table_head(text, 0) is None and table_head("| a |\n| b |", 6) is None  # prose; no rule under the top


def test_a_dot_leader_entry_ends_after_its_number():
    """21 CFR 1308 (a new user's walk, 2026-12-07): "(26) Psilocyn ........ 7438" was cut at its leader, so each
    drug's code number opened the next chunk and an answer joined one drug's name to another's code."""
    from rag.text import sentence_spans

    text = ("(25) Psilocybin ............ 7437 (26) Psilocyn ............. 7438 (27) Tetrahydrocannabinols ...... 7370 "
            "Synthetic equivalents follow. Wait... 5 more.")
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "(25) Psilocybin ............ 7437", "(26) Psilocyn ............. 7438",
        "(27) Tetrahydrocannabinols ...... 7370", "Synthetic equivalents follow.", "Wait...", "5 more."]


def test_a_spaced_dot_leader_entry_ends_after_its_number_too():
    """mupdf_explored.pdf's contents and Form 1040-NR's worksheets (a new user's walk, 2026-12-07): a leader of
    spaced dots was cut at every dot, lone "." pieces, each page number opening the next entry."""
    from rag.text import sentence_spans

    text = ("1.1 What is MuPDF? . . . . . 1 1.2 License . . . . . . . . 1 2.3 Colorspaces . . . . 12 "
            "It ends. A . B stays. Then . . . more text.")
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "1.1 What is MuPDF? . . . . . 1", "1.2 License . . . . . . . . 1", "2.3 Colorspaces . . . . 12",
        "It ends.", "A .", "B stays.", "Then . . . more text."]


def test_wrapped_chinese_and_japanese_lines_join_without_a_space():
    """A PDF's Chinese table cell (a new user's walk, 2026-12-07): "中诚信国际信 用评级有限责 任公司"."""
    from rag.ingest.pdf.hyphen import Lexicon, join_lines
    from rag.text import line_joiner

    assert join_lines(["中诚信国际信", "用评级有限责", "任公司"], Lexicon()) == "中诚信国际信用评级有限责任公司"
    assert join_lines(["政令第百四十九号（", "含む。）"], Lexicon()) == "政令第百四十九号（含む。）"
    assert line_joiner("授信额度", "Total") == " " and line_joiner("credit", "额度") == " "
    assert join_lines(["한국어 문장이", "이어집니다"], Lexicon()) == "한국어 문장이 이어집니다"  # Korean keeps its spaces
