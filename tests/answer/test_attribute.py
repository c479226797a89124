"""Server-side citation handling (rag.answer.check.attribute): pure functions on real strings."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag.answer.check.attribute import (
    CitationStreamFilter,
    attribute,
    clean_citations,
    is_decline,
    lexical_support,
    markers,
    split_sentences,
)
from rag.answer.check.no_claim import announces, title_states
from rag.answer.check.shown import with_cites
from rag.answer.check.verdict import passed_sentences


def test_invalid_markers_removed_and_counted():
    r = clean_citations("KV caching stores keys and values [1]. It speeds up decoding [2, 7]. See [9].", [1, 2, 3])
    assert r.text == "KV caching stores keys and values [1]. It speeds up decoding [2]. See."
    assert r.invalid_removed == 2
    assert markers(r.text) == [1, 2]


def test_marker_variants_normalised():
    r = clean_citations("A [Source 3]. B [^2]. C [1][1]. D [ 2 ; 3 ].", [1, 2, 3])
    assert r.text == "A [3]. B [2]. C [1]. D [2][3]."
    assert r.invalid_removed == 0


def test_zero_is_never_a_source():
    assert clean_citations("The first token [0] is special.", [1]).text == "The first token is special."


def test_links_and_urls_never_pass():
    r = clean_citations("Read [the paper](https://arxiv.org/abs/1706.03762) or https://x.org/a. Cited [2](http://evil).", [2])
    assert "http" not in r.text and "](" not in r.text
    assert r.text.startswith("Read the paper or .")
    assert r.text.endswith("Cited [2].")
    assert r.links_removed == 3


def test_code_spans_are_not_citations():
    r = clean_citations("Use `logits[0]` here [1].", [1])
    assert r.text == "Use `logits[0]` here [1]."
    assert markers(r.text) == [1]


def test_split_sentences_keeps_trailing_markers():
    assert split_sentences("A is B. [1] C is D [2].\n- item one [3]\n- item two.") == [
        "A is B. [1]",
        "C is D [2].",
        "- item one [3]",
        "- item two.",
    ]
    assert split_sentences("Models such as e.g. GPT-2 work. 3 layers are used [1].") == [
        "Models such as e.g. GPT-2 work.",
        "3 layers are used [1].",
    ]


RAW = [
    "KV caching stores keys and values [1]. It speeds up decoding [2, 7]. See [9] and [Source 3].",
    "Foo [1, 8] bar [7]. Baz [2](http://a.b) qux [3][4] end.",
    "a (b [1] c) [5]. Visit https://x.com/a or [the docs](http://y.org). Code `a[0]` stays.",
    "[4] start. Mid [ 2 ] (see http://q) done [10]",
    "hello [1",
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(RAW), st.lists(st.integers(1, 7), min_size=1, max_size=60), st.sets(st.integers(1, 5), max_size=4))
def test_stream_filter_equals_batch_cleaning(raw, cuts, valid):
    """Whatever the token boundaries, the streamed pieces concatenate to the batch-cleaned text."""
    f = CitationStreamFilter(valid)
    shown, pos = "", 0
    for c in cuts:
        if pos >= len(raw):
            break
        shown += f.feed(raw[pos : pos + c])
        pos += c
    shown += f.feed(raw[pos:]) + f.finish()
    assert shown == clean_citations(raw, valid).text


def test_stream_never_shows_an_invalid_marker():
    f = CitationStreamFilter([1, 2])
    seen = ""
    for piece in ["Prefill is slow", " [", "3", "]", ".", " Decode", " is fast", " [", "2", "]."]:
        seen += f.feed(piece)
        assert "[3" not in seen
    seen += f.finish()
    assert seen == "Prefill is slow. Decode is fast [2]."


def test_decline_detection():
    assert is_decline("The sources do not contain the answer.")
    assert is_decline("The provided sources don't mention Paris.")
    assert not is_decline("KV caching stores keys and values of previous tokens [1].")


def _needles(corpus_dir, n=4):
    rows = [json.loads(line) for line in (corpus_dir / "dev_questions.jsonl").read_text().splitlines() if line.strip()]
    return rows[:n]


def test_attribution_on_real_needles(corpus_dir):
    """Each needle is supported by its own source; cited to another one it is reported as miscited."""
    rows = _needles(corpus_dir)
    quotes = [r["needle"] for r in rows]
    idx = [1, 2, 3, 4]
    sentences = [
        quotes[2].replace("\n", " ") + " [3]",  # right source
        quotes[0].replace("\n", " ") + " [2]",  # wrong source: needle of 1 cited to 2
        quotes[1].replace("\n", " "),  # no marker: inferred from the best source
        "The capital of France is Paris, a city on the Seine [1].",  # supported by nothing
        "The sources do not contain the answer.",
    ]
    lex = lexical_support(sentences, quotes)
    assert lex.shape == (5, 4) and lex.dtype.name == "float32"
    att = attribute(sentences, idx, lex)
    assert att[0].cited == (3,) and att[0].supported_by[0] == 3 and not att[0].unsupported
    assert att[1].cited == (2,) and att[1].miscited and att[1].supported_by[0] == 1
    assert att[2].inferred and att[2].supported_by == (2,) and att[2].cited == ()
    assert att[3].unsupported and att[3].supported_by == ()
    assert att[4].declines and not att[4].unsupported and not att[4].inferred
    assert list(att[0].to_json()) == ["text", "cited", "supported_by", "unsupported", "inferred", "verdict", "reason", "cites",
                                    "supported", "label"]
    assert [a.verdict for a in att] == ["supported", "inferred", "inferred", "unsupported", "declines"]
    assert att[1].shown_cites == (1,) and att[1].shown().endswith("[1].")  # the wrong [2] is never shown


@pytest.mark.slow
def test_attribution_with_minilm(embedder, corpus_dir):
    """The MiniLM leg supports a paraphrase that shares few words with its source."""
    from rag.answer.pipeline import cosine_support

    rows = _needles(corpus_dir)
    quotes = [r["needle"] for r in rows]
    para = "Models like Longformer and Reformer make attention cheaper by making the matrix sparse [1]."
    lex = lexical_support([para], quotes)
    cos = cosine_support(embedder, [para], quotes)
    assert cos.shape == (1, 4)
    assert int(cos[0].argmax()) == 0
    att = attribute([para], [1, 2, 3, 4], lex, cos)
    assert att[0].supported_by[0] == 1 and not att[0].unsupported


def test_random_garbage_never_raises():
    rnd = random.Random(0)
    alphabet = "ab [],;12^()`:/.h tps\n"
    for _ in range(300):
        s = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 80)))
        r = clean_citations(s, [1, 2])
        assert all(n in (1, 2) for n in markers(r.text))
        split_sentences(r.text)


def test_echoed_source_headers_are_removed_also_on_the_stream():
    """The 0.5B sometimes copies the source list (seen on dev q01); those lines are identifiers, not answers."""
    echoes = ["[1] 01-transformer-architectures.md - Attention mechanisms", "01-transformer-architectures.md - Attention mechanisms",
              "[2] 01-transformer-architectures.md - Efficient attention"]
    raw = ("[1] 01-transformer-architectures.md - Attention mechanisms\n[2] 01-transformer-architectures.md - Efficient attention\n"
           "Longformer and Reformer use sparse attention [2].")
    r = clean_citations(raw, [1, 2], echoes)
    assert r.text == "Longformer and Reformer use sparse attention [2]." and r.labels_removed == 2
    for step in (1, 3, 7):
        f = CitationStreamFilter([1, 2], echoes)
        shown = "".join(f.feed(raw[i : i + step]) for i in range(0, len(raw), step)) + f.finish()
        assert shown == r.text


def test_bare_markers_are_no_claim():
    """Seen on dev q09: the 0.5B answered only "[1] [2] [3]"; that cites nothing."""
    att = attribute(["[1] [2] [3]"], [1, 2, 3], lexical_support(["[1] [2] [3]"], ["a", "b", "c"]))
    assert not att[0].claim and not att[0].unsupported and not att[0].inferred


def test_a_marker_opening_a_line_belongs_to_that_line():
    """The 0.5B writes lists as ``[1] claim`` (dev q05): the marker cites the line it opens, not the one before."""
    raw = "[1] PagedAttention gives up to 24x higher throughput.\n[2] vLLM splits memory into blocks.\n[3]"
    assert split_sentences(raw) == [
        "[1] PagedAttention gives up to 24x higher throughput.",
        "[2] vLLM splits memory into blocks. [3]",
    ]
    assert [markers(x) for x in split_sentences(raw)] == [[1], [2, 3]]


def test_a_marker_used_as_a_noun_is_no_claim():
    """Seen with the 0.5B on the DPR paper: 'The similarity function ... is [3].' says nothing itself."""
    from rag.answer.check.attribute import attribute, lexical_support

    sents = [
        "The similarity function used between question and passage vectors is [3].",
        "The formula for the advantage value in GRPO is given in [1] [2].",
        "DPR uses the dot product of the question and passage vectors [3].",
    ]
    quotes = ["GRPO advantage formula.", "unused", "We define the similarity between question and passage vectors "
              "using the dot product of their vectors."]
    out = attribute(sents, [1, 2, 3], lexical_support(sents, quotes))
    assert [x.dangling for x in out] == [True, True, False]
    assert not out[0].claim and not out[0].unsupported and out[0].supported_by == ()
    assert out[2].claim and out[2].cited == (3,) and 3 in out[2].supported_by


# --------------------------------------------------------------------------- the claim check of issue 14


def _doc_paragraph(corpus_dir, name: str, needle: str) -> str:
    """The paragraph of a corpus chapter that holds ``needle`` (a real source text)."""
    text = (corpus_dir / "docs" / name).read_text(encoding="utf-8")
    return next(p for p in text.split("\n\n") if needle in p)


def _check(question: str, sentences: list[str], quotes: list[str], cosine=None):
    idx = list(range(1, len(quotes) + 1))
    return attribute(sentences, idx, lexical_support(sentences, quotes, question), cosine, question=question, quotes=quotes)


def test_an_echo_of_the_question_is_no_claim_and_never_cited(corpus_dir):
    """Seen with the 0.5B (issue 14): the user's words given back as the answer, with a citation."""
    src = _doc_paragraph(corpus_dir, "09-summarization.md", "baseline")
    q = "what's a dumb but strong baseline for summaries that my model should beat first?"
    out = _check(q, ["A dumb but strong baseline for summaries that my model should beat first [1].",
                     "The model gives me one vector per token, how do I get a single vector per issue? [1]"], [src])
    assert [s.verdict for s in out] == ["echo", "echo"]
    assert all(not s.claim and s.shown_cites == () and not s.passed for s in out)
    assert out[0].shown() == "A dumb but strong baseline for summaries that my model should beat first."


def test_a_command_the_question_names_as_a_plain_word_is_the_answer(shared_dir):
    """A new user's walk (2026-12-06): "...use `history`." was struck through as a restatement of "How do I see my
    command history?", though the command is the answer. It is a claim where a source writes the command as code;
    a question about the command itself ("the history command") is still only echoed."""
    guide = shared_dir / "corpus" / "real" / "md" / "guide-art-of-command-line.md"
    if not guide.is_file():
        pytest.skip(f"{guide} not found")
    lines = guide.read_text(encoding="utf-8").splitlines()
    history = next(p for p in lines if "use `history`" in p)
    ctrl_r = next(p for p in lines if "search through command history" in p)
    q = "How do I see my command history?"
    s = "To see your command history, use `history` [1]."
    assert _check(q, [s], [history])[0].verdict == "supported"
    out = _check(q, [s], [ctrl_r, history])  # cited the source that names no such command
    assert out[0].verdict == "inferred" and out[0].shown_cites == (2,)
    assert _check(q, [s], [ctrl_r])[0].verdict == "echo"  # no source writes it as code: nothing to check it against
    assert _check("What does the history command show?", ["The `history` command shows history [1]."],
                  [history])[0].verdict == "echo"
    # the statement that writes the command must hold the sentence's claim: it is for seeing, not searching (real c01)
    assert _check("Which key combination searches through the command history in Bash?",
                  ["To search through the command history in Bash, use `history` [1]."], [history])[0].verdict == "echo"
    # an adversarial review (2026-12-06): the source's sentence names another command, or denies what it says
    for q, s, src in [
        ("How do I search my command history?", "To search your command history, use `history` [1].",
         "Use `history` to list your command history; to search your command history, press `Ctrl-R`."),
        ("How do I clear my command history?", "To clear your command history, use `history` [1].",
         "`history` lists your command history, and `history -c` will clear it."),
        ("How do I copy files?", "To copy files, use `copy` [1].", "On Linux there is no `copy` command; to copy files, use `cp`."),
    ]:
        assert _check(q, [s], [src])[0].verdict == "echo", s


def test_a_tautology_ending_in_a_bare_marker_is_no_claim(corpus_dir):
    src = _doc_paragraph(corpus_dir, "07-unigram-tokenization.md", 'the tokenization `["p", "u", "g"]`')
    q = 'What is the probability of the tokenization ["p", "u", "g"] for the word "pug"?'
    out = _check(q, ['The probability of the tokenization ["p", "u", "g"] for the word "pug" is [1].'], [src])
    assert out[0].verdict == "dangling" and out[0].shown_cites == ()


def test_a_number_the_cited_source_lacks_fails_even_when_the_words_match(corpus_dir):
    """Issue 14: "The Alpaca Eval dataset includes 6 prompts [4]." where the source says 805."""
    alpaca = _doc_paragraph(corpus_dir, "12-evaluation.md", "805 carefully curated prompts")
    penalty = _doc_paragraph(corpus_dir, "02-llm-inference.md", "**Presence Penalty**")
    q = "How many prompts are in the Alpaca Eval dataset?"
    out = _check(q, ["The Alpaca Eval dataset includes 6 prompts [1].", "The Alpaca Eval dataset includes 805 prompts [1]."],
                 [alpaca, penalty])
    assert out[0].verdict == "unsupported" and out[0].missing == ("6",) and "[1] does not hold 6" in out[0].reason
    assert out[1].verdict == "supported" and out[1].shown_cites == (1,)
    out = _check("What is the presence penalty in LLM sampling?",
                 ["The presence penalty in LLM sampling is 0.1 [2].",
                  "A presence penalty is a fixed penalty applied to any token that has appeared before [2]."], [alpaca, penalty])
    assert out[0].verdict == "unsupported" and out[0].missing == ("0.1",)
    assert out[1].verdict == "supported"


def test_new_words_must_come_from_the_cited_source_not_the_question(corpus_dir):
    """A sentence made of the question's words plus words of no source is unsupported, however close to the topic."""
    src = _doc_paragraph(corpus_dir, "12-evaluation.md", "805 carefully curated prompts")
    q = "What does Alpaca Eval use as a judge?"
    out = _check(q, ["Alpaca Eval uses human annotators from Mechanical Turk as a judge [1].",
                     "Alpaca Eval uses GPT-4 as a judge [1]."], [src])
    assert out[0].verdict == "unsupported"  # "Mechanical Turk" is in no source; "human annotators" is
    assert out[1].verdict == "supported"


def test_specifics_and_holds():
    from rag.answer.check.attribute import holds, specifics

    assert specifics("GPT-2 scored 1,200 on MMLU in 2023 [1].") == {"gpt-2", "1200", "mmlu", "2023"}
    assert specifics("Longformer and Reformer are models.") == {"reformer"}  # the opening word is no name
    assert holds("a budget of 1,200 tokens", "1200") and not holds("805 prompts", "6") and not holds("6.5 s", "6")
    assert holds("BERT's encoder", "bert") and holds("uses 4.3 percent.", "4.3")


def test_a_number_the_source_spells_out_is_held_by_its_digits():
    """A "five-year warranty" backs the 0.5B's "5-year warranty [1]" (withheld before, an adversarial review,
    2026-12-07); "twenty-five" is no "5", "one of" no "1", and a spelled number is no other number."""
    from rag.answer.check.attribute import attribute as _attribute
    from rag.answer.check.attribute import holds
    from rag.answer.check.attribute import lexical_support as _lex

    assert holds("a five-year warranty", "5-year") and holds("a five year warranty", "5-year")
    assert holds("lasts three months", "3") and holds("the third floor", "3rd") and holds("one-year plan", "1-year")
    assert not holds("twenty-five days", "5") and not holds("one of the limits", "1") and not holds("four years", "5")
    assert not holds("a five-year plan", "5-month")
    quotes = ["The Zephyr headphones come with a five-year warranty that covers the battery."]
    q = "How long is the warranty on the Zephyr headphones?"
    right = ["The warranty lasts 5 years [1].", "The Zephyr headphones have a 5-year warranty [1]."]
    wrong = ["The warranty lasts 3 years [1]."]
    out = _attribute(right + wrong, [1], _lex(right + wrong, quotes, q), None, question=q, quotes=quotes)
    assert [str(a.verdict) for a in out] == ["supported", "supported", "unsupported"]


def test_a_sentence_copied_word_for_word_from_its_cited_source_is_supported_by_it():
    """Issue 39: a verbatim, correctly cited sentence is never "inferred" or left out."""
    from rag.answer.check.attribute import attribute as _attribute
    from rag.answer.check.attribute import lexical_support as _lex

    quotes = ["Tool version should also be provided, to assist automation in refreshing baselines on tool update.",
              "The tool name is required for baselining purposes."]
    s = ["Tool version should also be provided, to assist automation in refreshing baselines on tool update [1]."]
    q = "Why should the tool version be provided?"
    [a] = _attribute(s, [1, 2], _lex(s, quotes, q), None, question=q, quotes=quotes)
    assert str(a.verdict) == "supported" and a.shown_cites == (1,)
    d = a.to_json()
    assert d["supported"] is True and d["label"] == "supported by the source it cites"


def test_a_list_item_is_a_claim_of_its_list():
    """Issue 39: "- Singleton: one instance [1]" is an item of the answer's list, not "too short to claim anything"."""
    from rag.answer.check.attribute import attribute as _attribute
    from rag.answer.check.attribute import lexical_support as _lex

    quotes = ["Service lifetimes: Singleton, one instance. Scoped, one per request. Transient, a new one each time."]
    s = ["- Singleton [1]"]
    q = "Which service lifetimes are there?"
    [a] = _attribute(s, [1], _lex(s, quotes, q), None, question=q, quotes=quotes)
    assert a.claim and str(a.verdict) == "supported"


#: real answers/t01 of ``bench answers --corpus real`` (2026-12-06): the two sources the model's sentence leans on.
_TSNE_KEY = ("T-distributed Stochastic Neighbor Embedding (t-SNE) is a machine learning algorithm for visualization "
             "developed by Laurens van der Maaten and Geoffrey Hinton.[1] It is a nonlinear dimensionality reduction "
             "technique well-suited for embedding high-dimensional data for visualization in a low-dimensional space.")
_TSNE_SOFTWARE = ("- Laurens van der Maaten's t-Distributed Stochastic Neighbor Embedding https://lvdmaaten.github.io/tsne/\n"
                  "- ELKI contains tSNE, also with Barnes-Hut approximation.")


def test_a_name_written_wrong_at_the_start_of_a_sentence_is_not_supported():
    """The 0.5B answered "Who developed t-distributed stochastic neighbor embedding?" with "Laurent van der Maaten's
    t-Distributed Stochastic Neighbor Embedding [1]" and it was shown as supported: a capitalised first word is not
    read as a name, so "Laurent" was never asked of the sources, which say "Laurens". Now an opening word within two
    letters of a source's name is that name written wrong; the rightly spelt sentence still passes."""
    q = "Who developed t-distributed stochastic neighbor embedding?"
    quotes = [_TSNE_KEY, _TSNE_SOFTWARE]
    wrong = "Laurent van der Maaten's t-Distributed Stochastic Neighbor Embedding [1]"
    right = "Laurens van der Maaten's t-Distributed Stochastic Neighbor Embedding [2]"
    att = attribute([wrong, right], [1, 2], lexical_support([wrong, right], quotes, q), question=q, quotes=quotes)
    assert [a.verdict for a in att] == ["unsupported", "supported"]
    assert "laurent" in att[0].reason and att[0].supported_by == ()


def test_an_opening_word_is_no_misspelt_name_when_it_is_a_form_of_a_source_word_or_the_question_has_it():
    from rag.answer.check.names import misspelt_names, source_names

    assert misspelt_names("Models learn from data [1].", "Model training is slow. A model learns.") == []
    assert misspelt_names("These models use Hinton's idea [1].", "There are many models. Geoffrey Hinton had it.") == []
    assert misspelt_names("Geofrey Hinton developed it [1].", _TSNE_KEY) == ["geofrey"]
    assert "laurens" in source_names(_TSNE_SOFTWARE) and "machine" not in source_names(_TSNE_KEY)
    q = "Which algorithm for visualization did Laurent van der Maaten develop?"  # the user's own spelling
    s = "Laurent van der Maaten developed t-distributed stochastic neighbor embedding [1]."
    assert attribute([s], [1], lexical_support([s], [_TSNE_KEY], q), question=q, quotes=[_TSNE_KEY])[0].passed


def test_why_a_sentence_was_left_out_is_said_once():
    """The browser walk of 2026-12-06 read "(repeats the question: restates the question: adds no word of its own)":
    the label and a reason that says it again. Where the reason adds something (what a source lacks) both show."""
    q = "Which HTTP response code should a REST service return when requests are coming in too quickly?"
    quotes = ["Return 429 Too Many Requests HTTP response code if requests are coming in too quickly."]
    sents = ["HTTP Return Code.", "The HTTP response code is 503 [1].", "The code is [1]."]
    att = attribute(sents, [1], lexical_support(sents, quotes, q), question=q, quotes=quotes)
    assert [a.verdict for a in att] == ["echo", "unsupported", "dangling"]
    assert att[0].explained == "repeats the question"
    assert att[1].explained == "not supported by the sources: no source holds the words it adds to the question"
    assert att[2].explained == "points at a source without saying what it says"


def test_a_fenced_code_block_is_one_piece_and_stays_a_code_block():
    """A new user's answer (2026-12-06) showed a bare "```bash" line and its command as two sentences, the closing
    fence dropped: the chat printed the fence as text. A fenced block is one piece, its [n] after the closing fence."""
    from rag.answer.check.shown import code_block, join_shown

    raw = "Use this command:\n```bash\ndotnet new web\n```\nIt creates a web app [1].\n~~~\nunclosed [2]"
    pieces = split_sentences(raw)
    assert pieces == ["Use this command:", "```bash\ndotnet new web\n```", "It creates a web app [1].", "~~~\nunclosed [2]"]
    assert code_block(pieces[1]) == ("bash", "dotnet new web") and code_block(pieces[0]) is None
    assert code_block(pieces[3]) == ("", "unclosed")
    quotes = ["Using the CLI: dotnet new web creates a web app."]
    att = attribute(pieces[:3], [1], lexical_support(pieces[:3], quotes, None), quotes=quotes)
    block = att[1]
    assert block.passed and block.shown() == "```bash\ndotnet new web\n```\n[1]"
    assert "\n```bash\ndotnet new web\n```\n[1]\nIt creates" in join_shown([s.shown() for s in att])


#: real answers of ``bench answers --corpus real`` (2026-12-06): each the 0.5B's sentence, the question and the
#: passage that holds the answer.
_RUST = ("The Rust experience is larger than a language specification and a compiler. Multiple concurrent Rust "
         "toolchains can be installed and managed via rustup. Rust installations come with Cargo, a command line tool "
         "to manage dependencies, run tests, generate documentation, and more.")
_RUST_Q = "Which command line tool that comes with Rust installations manages dependencies and runs tests?"


def test_a_one_word_answer_that_cites_is_a_claim_checked_in_the_statement_the_question_names():
    """"Cargo [2]." to "Which command line tool ...?" was "too short to claim anything", so the right answer gave way
    to the key passage; the word must stand in a statement that makes the question's claim."""
    out = _check(_RUST_Q, ["Cargo [1]."], [_RUST])
    assert out[0].claim and str(out[0].verdict) == "supported"
    # a word of the passage from a statement about something else does not answer it
    out = _check(_RUST_Q, ["Rustup [1]."], [_RUST])
    assert str(out[0].verdict) == "unsupported"
    # a bare list number cut off its item, and a word the question already has, stay no claim
    assert [s.verdict for s in _check(_RUST_Q, ["1.", "Rust [1]."], [_RUST])] == ["no_claim", "no_claim"]


def test_a_camel_case_value_is_a_word_of_its_own_not_the_question_s_word_it_starts_with():
    """"set to suppressedInSource" was taken for an echo of "suppressed in source": the light stem cut both to
    "suppre"."""
    from rag.answer.check.claims import novel_roots, roots

    q = "What should result.suppressionStates be set to for results that are suppressed in source?"
    s = "result.suppressionStates should be set to suppressedInSource for results that are suppressed in source [1]."
    assert novel_roots(s, q) == {"suppressedinsource"}
    assert "suppressedinsource" in roots("Set it to suppressedInSource.") and roots("tokenization") == roots("tokenizer")
    src = "If a result is suppressed in source, result.suppressionStates should be set to suppressedInSource."
    assert str(_check(q, [s], [src])[0].verdict) == "supported"
    assert str(_check(q, [s], ["Results that are suppressed in source are kept in the log."])[0].verdict) == "unsupported"


def test_a_yes_no_question_restated_as_a_statement_answers_yes_when_its_source_says_so():
    """"All requirements must succeed for an authorization policy to pass [1]." to "Must all requirements succeed
    ...?" is a "yes"; the same restatement against a source that denies it is not supported."""
    q = "Must all requirements succeed for an authorization policy to pass?"
    s = ["All requirements must succeed for an authorization policy to pass [1]."]
    out = _check(q, s, ["- Made up of one or more requirements.\n- All requirements must succeed for the policy to pass."])
    assert out[0].claim and str(out[0].verdict) == "supported"
    out = _check(q, s, ["- Not all requirements must succeed for the policy to pass: one is enough."])
    assert str(out[0].verdict) == "unsupported"
    # pdf-dev, the 0.5B: the slide says the opposite
    q = "According to the slides, should you commit derived files such as images to the repository?"
    s = ["According to the slides, you should commit derived files such as images to the repository [1]."]
    out = _check(q, s, ["▶Don't get out of sync with your collaborators ▶Commit the sources, not the derived files "
                        "(R code not images)"])
    assert str(out[0].verdict) != "supported"
    # a restated question that is not yes/no stays an echo
    assert str(_check("Why must a device not change its LogEventThreshold?",
                      ["A device must not change its LogEventThreshold [1]."], ["The host caches it."])[0].verdict) == "echo"


def test_a_one_word_answer_is_read_in_its_own_sentence_not_with_the_one_before():
    """A sentence of a source is read after the one before it ("It has 151,643 tokens."), but a one-word answer
    names the thing the question asks for only where its own sentence says so: "Clippy [1]." does not answer
    which tool manages dependencies because it follows the sentence about Cargo."""
    src = ("Rust installations come with Cargo, a command line tool to manage dependencies and run tests. Clippy is "
           "bundled too.")
    assert str(_check(_RUST_Q, ["Clippy [1]."], [src])[0].verdict) == "unsupported"
    assert str(_check(_RUST_Q, ["Cargo [1]."], [src])[0].verdict) == "supported"
    # a longer sentence naming it is still read with the sentence before, as before
    assert str(_check(_RUST_Q, ["Clippy is bundled with Rust installations [1]."], [src])[0].verdict) == "supported"


def test_a_sentence_sending_the_reader_elsewhere_is_no_claim():
    """A new user's walk (2026-12-06): "The JSON_Web_Token_Cheat_Sheet for further details [2]." was shown as a claim
    its source supports (OWASP's sentence ends "See the JSON_Web_Token_Cheat_Sheet for further details.")."""
    src = ("When an explicit session termination event occurs, the jti claim should be submitted to a denylist. See "
           "the JSON_Web_Token_Cheat_Sheet for further details.")
    q = "How long should a JWT stay valid?"
    out = _check(q, ["The JSON_Web_Token_Cheat_Sheet for further details [1].", "See the cheat sheet [1].",
                     "The jti claim should be submitted to a denylist [1]."], [src])
    assert [str(s.verdict) for s in out] == ["dangling", "dangling", "supported"]


def test_a_section_title_given_back_is_no_claim():
    """A new user's walk and real r01/r03/r04 (2026-12-06): the 0.5B answered "Which status code ...?" with "HTTP
    Return Code [2].", its source's section title; once its words were in a source it passed as a claim."""
    from rag.answer.check.attribute import attribute as _attribute
    from rag.answer.check.attribute import lexical_support as _lex

    quotes = ["| Code | Message | Description |\n|---|---|---|\n| 413 | Payload too large | Use it to signal that the "
              "request size exceeded the given limit. |",
              "Return `429 Too Many Requests` HTTP response code if requests are coming in too quickly."]
    q = "Which status code rejects a request body that is too large?"
    s = ["HTTP Return Code [2]."]
    out = _attribute(s, [1, 2], _lex(s, quotes, q), None, question=q, quotes=quotes,
                     headings=["HTTP Return Code", "API Keys"])
    assert str(out[0].verdict) == "dangling" and not out[0].passed
    # the same words where no source has that title: checked as a claim, as before
    [a] = _attribute(s, [1, 2], _lex(s, quotes, q), None, question=q, quotes=quotes, headings=["Errors", "API Keys"])
    assert str(a.verdict) != "dangling"


def test_an_adversarial_review_of_the_short_answer_rules():
    """A helper's adversarial review (2026-12-06) found wrong answers these rules let through; each now fails."""
    # a one-word answer naming the wrong one of two things its statement names (the Art of Command Line)
    src = ("- Use `rsync` instead of `scp`: using rsync allows recovery of a transfer without restarting from "
           "scratch and shows its progress.")
    q = "Which tool allows recovery of a transfer without restarting from scratch?"
    assert str(_check(q, ["`scp` [1]."], [src])[0].verdict) == "unsupported"
    # a yes/no restatement against a source that turns it aside (Google's Python style guide)
    q = "Should I use Returns: in the docstring of generator functions?"
    src = 'Use "Yields:" rather than "Returns:" in the docstring for generator functions.'
    s = 'You should use "Returns:" in the docstring of generator functions [1].'
    assert not _check(q, [s], [src])[0].passed
    q = "Should mutable default arguments be used in function definitions?"
    for src in ("Mutable default arguments in function definitions should be avoided.",
                "Using mutable default arguments in function definitions is discouraged."):
        assert not _check(q, ["Mutable default arguments should be used in function definitions [1]."], [src])[0].passed
    # a restatement whose subject only the sentence before names
    q = "Does Raft use randomized election timeouts?"
    src = "Paxos-based systems often use randomized election timeouts. Raft uses a fixed leader lease instead."
    assert not _check(q, ["Raft uses randomized election timeouts [1]."], [src])[0].passed
    # a camel-case word meets the same word written without its inner capital
    q = "Which library renders the charts?"
    assert _check(q, ["The charts are rendered with JavaScript [1]."], ["Charts are rendered with Javascript."])[0].passed
    # "See ..." answers a question that asks where to look; a long sentence ending "for more information" says something
    assert _check("Where can I find all the default keybindings in Bash?",
                  ["See `man readline` for all the default keybindings in Bash [1]."],
                  ["See `man readline` for all the default keybindings in Bash."])[0].passed
    assert str(_check("What should the API return when requests come in too quickly?",
                      ["The API should return 429 Too Many Requests with a Retry-After header for more information [1]."],
                      ["Return 429 Too Many Requests with a Retry-After header for more information."])[0].verdict) \
        != "dangling"


def test_a_claim_said_again_word_for_word_is_shown_once(corpus_dir):
    """A new user's walk (2026-12-06): the 0.5B wrote three claims about overfitting, then the same three again, and
    the chat showed all six. The copy is no claim: never cited, explained in plain words, and the answer's verdict
    is that of the first three."""
    src = _doc_paragraph(corpus_dir, "04-learning-curves.md", "validation loss increases")
    q = "What are the signs of overfitting in learning curves?"
    first = "Training loss continues to decrease while validation loss increases or plateaus [1]."
    out = _check(q, [first, "Training accuracy much higher than validation accuracy [1].", first], [src])
    assert [s.verdict for s in out] == ["supported", "supported", "repeated"]
    assert not out[2].claim and out[2].shown_cites == () and not out[2].passed
    assert out[2].explained == "says again what an earlier sentence said"
    # where the stream was stopped mid-copy (rag.text.loops), the start of a claim said again is a copy too
    cut = _check(q, [first, "Training loss continues to decrease while valid"], [src])
    assert [s.verdict for s in cut] == ["supported", "repeated"]
    # the same words in another sentence are not a copy
    other = _check(q, [first, "Validation loss increases [1]."], [src])
    assert "repeated" not in [s.verdict for s in other]
    from rag.answer.check.verdict import passed_sentences

    assert [s.text for s in passed_sentences(out)] == [first, out[1].text]


def test_a_full_stop_that_may_be_a_word_s_own_stays_before_the_citation(shared_dir):
    """A new user's walk (2026-12-06): "... replaced with ctrl-r and alt-." was shown as "... and alt- [2].", a key
    the guide does not name. The markers go before a sentence's closing mark only where that mark is the
    sentence's alone; every character of the sentence is kept."""
    guide = shared_dir / "corpus" / "real" / "md" / "guide-art-of-command-line.md"
    if not guide.is_file():
        pytest.skip(f"{guide} not found")
    source = next(p for p in guide.read_text(encoding="utf-8").splitlines() if "use `history`" in p)
    s = "However, these are often easily replaced with ctrl-r and alt-. [1]"
    out = _check("What can replace history expansion in Bash?", [s], [source])
    assert out[0].verdict == "supported" and out[0].shown() == "However, these are often easily replaced with ctrl-r and alt-. [1]"
    assert with_cites("A chunk is a passage.", "[1]") == "A chunk is a passage [1]."
    assert with_cites("Is it?!", "[1][2]") == "Is it [1][2]?!"
    assert with_cites("Tabs, spaces, etc.", "[1]") == "Tabs, spaces, etc. [1]"
    assert with_cites("It runs on Node.js.", "[1]") == "It runs on Node.js. [1]"
    assert with_cites("Go up with cd ..", "[1]") == "Go up with cd .. [1]"  # an adversarial review, 2026-12-06
    assert with_cites("Is it the U.S.?", "[1]") == "Is it the U.S. [1]?"


def test_a_sentence_gathered_from_unrelated_places_of_a_source_is_not_supported():
    """Saved dev answer d16 (users' wording, 0.5B): "... and make it accessible to everyone" took "everyone" from a
    slide's joke two paragraphs below the commands. A sentence's new words must sit in neighbouring units."""
    source = ("Usage (on client, e.g. laptop):\n\n"
              "▶Clone/Pull onto other systems git clone ssh:\\\\bigmem01.stat.wisc.edu\\~[user]\\Repositories\\NewRepository\n"
              "▶Make changes, and commit git add -i git commit -m 'An informative message here.'\n"
              "▶Push changes back git push origin\n\n"
              "Open source means everyone can see my stupid mistakes.\n\n"
              "Version control means everyone can see every stupid mistake I’ve ever made.")
    q = "where do I ssh to create a private repo on the stats department machines?"
    spliced = "This will create a new repository on the stats department machines and make it accessible to everyone."
    near = "Clone onto other systems with git clone ssh, then make changes and commit them [1]."
    out = _check(q, [spliced, near], [source])
    assert out[0].verdict == "unsupported"
    assert out[1].verdict == "supported"
    # a sentence that sums up a list is read against the whole list and its lead-in (an adversarial review)
    ingredients = "Ingredients:\n\n- 200 g flour\n- 2 tbsp sugar\n- 2 eggs\n- 30 g butter\n- 300 ml milk\n\nServe warm."
    assert _check("What do I need for pancakes?", ["You need flour, sugar, eggs, butter and milk [1]."],
                  [ingredients])[0].verdict == "supported"


def test_a_sentence_that_announces_a_list_is_no_claim_and_one_that_ends_the_answer_stops_short():
    # "follow these steps [1]:" claims nothing a source could hold: it was marked unsupported, and a right list
    # answer was "partly supported"; with nothing after it, the answer stops short of what it announced
    q = "How do I reset my password?"
    src = "To reset your password:\n1. Open Settings.\n2. Click Reset password.\n3. Enter the code sent by e-mail."
    listed = _check(q, split_sentences("To reset your password, follow these steps [1]:\n1. Open Settings [1].\n"
                                       "2. Click Reset password [1]."), [src])
    assert [str(s.verdict) for s in listed] == ["no_claim", "no_claim", "supported", "no_claim", "supported"]
    assert listed[0].reason == "introduces what follows" and listed[0].cited == ()
    assert passed_sentences(listed)[0].shown() == "To reset your password, follow these steps:"
    cut = _check(q, ["Open Settings [1].", "Then do the following:"], [src])
    assert str(cut[1].verdict) == "garbled"
    assert cut[1].reason == "not a statement (announces what follows, but the answer ends there)"
    # a lead that says something of its own is a claim, checked as one
    admin = _check(q, split_sentences("To reset your password, open the Admin console [1]:\n1. Click Reset [1]."), [src])
    assert str(admin[0].verdict) == "unsupported"
    assert not announces("There are 3 steps:", q) and not announces("Follow these steps.", q)


def test_a_section_title_that_states_the_value_asked_for_is_a_claim():
    # "4.2 Block indentation: +2 spaces [1]." was dropped as pointing at a source (a new user's walk of the API,
    # 2026-12-06), and a passage about four spaces stood as the answer instead
    q = "How many spaces are used for block indentation in Java?"
    src = ["Each time a new block or block-like construct is opened, the indent increases by two spaces.",
           "When a block tag doesn't fit on a single line, continuation lines are indented four (or more) spaces."]
    heads = ["4.2 Block indentation: +2 spaces", "7.1.3 Block tags"]

    def one(sentence):
        return attribute([sentence], [1, 2], lexical_support([sentence], src, q), question=q, quotes=src,
                         headings=heads)[0]

    assert str(one("4.2 Block indentation: +2 spaces [1].").verdict) == "supported"
    assert not one("4.2 Block indentation: +4 spaces [1].").passed  # not its title, and no source says it
    assert str(one("7.1.3 Block tags [2].").verdict) == "dangling"  # a title that states nothing names a place
    assert title_states("Column limit: 100 [3].", "What is the column limit?")
    assert not title_states("Line-wrapping: where to break", "Where do I break lines?")


def test_an_adversarial_review_of_the_announcing_and_the_title_rules():
    # a lead that says something is a claim, checked as one
    assert not announces("The following settings are optional [1]:", "Which settings do I need to set before the first backup?")
    assert not announces("Do not follow these steps:", "How do I reset my password?")
    assert not announces("Redis is faster in these ways:", "How do Redis and Memcached differ?")
    q = "Should I run pip install with sudo?"
    src = "Do not run pip with sudo: it can break the system Python. Instead, create a virtual environment."
    out = _check(q, split_sentences("You should run pip install with sudo as follows [1]:\n1. Create a virtual "
                                    "environment [1]."), [src])
    assert str(out[0].verdict) != "no_claim" and not out[0].passed
    # a heading holding a year is no answer to how many days
    assert not title_states("Annual leave: 2024 policy [1].", "How many days of annual leave do part-time staff get?")


def test_a_command_must_be_written_so_in_the_source():
    # an adversarial review (2026-12-06): every word but one of "Run `ufw deny 8080`" is the source's
    src = ["Do not disable the firewall. To allow a port, run `ufw allow 8080`."]
    q = "How do I open port 8080?"
    deny = _check(q, ["Run `ufw deny 8080` [1]."], src)[0]
    assert str(deny.verdict) == "unsupported" and deny.reason == "[1] does not hold `ufw deny 8080`"
    assert not _check("How do I disable the firewall?", ["- Run `ufw disable` [1]."], src)[0].passed
    assert _check(q, ["Run `ufw allow 8080` [1]."], src)[0].passed
    # the source's own spacing and backticks do not matter, the command's words and order do
    assert _check(q, ["Run `ufw  allow 8080` [1]."], ["To allow a port, run ufw allow 8080 in a terminal."])[0].passed
