"""One vocabulary for every stage: words, stop lists, sentences, citation markers and IDF.

Used by BM25 (:mod:`rag.index.analyzer`), the chunker (:mod:`rag.ingest.chunk`),
the excerpts (:mod:`rag.answer.excerpt`), the claim check
(:mod:`rag.answer.check.attribute`), the refusal gate (:mod:`rag.answer.gate.learned_gate`)
and the app (:mod:`ui.format`), so that a "term", a "sentence" and a "marker"
mean the same everywhere (issue 12).

* :func:`tokenize` - NFKC, case-folded Unicode words (any script), CJK runs as
  character bigrams, :data:`STOPWORDS` dropped: the terms of the excerpts, the gate and the term
  statistics; BM25 indexes these tokens stemmed in each document's language
  (:class:`rag.index.analyzer.Analyzer`, issue 19);
* :func:`content_words` - the same words as a set, :data:`CLAIM_STOPWORDS`
  dropped and a final plural ``s`` stripped: what the claim check compares (:func:`claim_words` from words
  already tokenized: a question's, :mod:`rag.question`);
* :func:`sentence_spans` - sentences as ``(start, end)`` offsets (one rule for
  source text and answers); :func:`trim_span` shrinks a span past whitespace;
* :func:`units` - the smallest pieces strategy E keeps whole (the lines of a table, list or code block, the
  sentences of any other paragraph), built from :func:`paragraphs`, :func:`lines` and :func:`sentences`:
  what the chunker packs and what the excerpts, key passages and evidence sentences are made of;
* :data:`MARKER_RE`, :func:`strip_markers` - the ``[n]`` citation markers;
* :class:`TermStats` - document frequencies over chunk texts and BM25's IDF
  (:meth:`TermStats.idf`, :meth:`TermStats.weights`);
* :func:`markdown_literal` - any text as inert Markdown (the chat page and the chat export, issue 26).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from bm25s.stopwords import STOPWORDS_EN

#: A word as :func:`tokenize` cuts one (a run of letters and digits), before case-folding.
WORD_RE = re.compile(r"[^\W_]+")
# Scripts written without spaces between words: Han, Hiragana, Katakana (plus extensions).
CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]+")


#: English stopwords (bm25s' list, 33 words): dropped from every token list.
STOPWORDS = frozenset(STOPWORDS_EN)

#: :data:`STOPWORDS` plus the function words and the answer talk ("according to the sources") that say
#: nothing a source could support: dropped by :func:`content_words` for the claim check. Retrieval and the
#: gate keep :data:`STOPWORDS` alone (BM25's index and the learned gate's fitted features were built on it).
CLAIM_STOPWORDS = STOPWORDS | frozenset(
    """about all also am any been being both can could did do does done each few from had has have having
    he her here his how i its just many may me might more most much must my nor one only onto other our
    over same shall she should so some than them those two under us use used using very we were what
    when where which who whom whose why would you your
    source sources answer question according
    called known mentioned described defined provided given explained discussed stated following
    refer refers referred text passage information""".split()
)


def line_joiner(left: str, right: str) -> str:
    """What joins two wrapped lines of one paragraph or table cell: ``""`` between a line ending and a line
    starting in Chinese or Japanese script (characters or their full-width punctuation: no spaces between words
    there), else ``" "``. A PDF's Chinese table cell "中诚信国际信 / 用评级" read "中诚信国际信 用评级" (a new user's
    walk, 2026-12-07); Korean writes spaces, and keeps them."""
    return "" if _cjk_char(left[-1:]) and _cjk_char(right[:1]) else " "


def _cjk_char(ch: str) -> bool:
    return bool(ch) and (bool(CJK_RE.match(ch)) or "\u3000" < ch <= "\u303f" or "\uff01" <= ch <= "\uff60")


def _split_cjk(word: str) -> list[str]:
    out: list[str] = []
    pos = 0
    for m in CJK_RE.finditer(word):
        if m.start() > pos:
            out.append(word[pos:m.start()])
        run = m.group()
        out.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
        pos = m.end()
    if pos < len(word):
        out.append(word[pos:])
    return out


def tokenize(text: str, *, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """BM25 tokens of ``text``: NFKC-normalised, case-folded runs of Unicode letters/digits.

    Unlike the design's ``[a-z0-9]+`` this keeps Cyrillic, Greek, Arabic and
    every other script; runs of CJK characters become overlapping character
    bigrams (a lone CJK character stays a unigram). ``stopwords`` (default
    :data:`STOPWORDS`) are dropped, so a stopword-only query has no tokens
    (and BM25 returns no hits).
    """
    words = WORD_RE.findall(unicodedata.normalize("NFKC", text).casefold())
    tokens: list[str] = []
    for w in words:
        parts = _split_cjk(w) if CJK_RE.search(w) else [w]
        tokens.extend(p for p in parts if p not in stopwords)
    return tokens

#: Whole numbers a source may spell out where a claim writes digits, and back ("a five-year warranty" backs the
#: 0.5B's "a 5-year warranty [1]"): up to twenty, then the tens, the words style guides spell out (Chicago 9.2);
#: the ordinals to tenth. Read by :func:`claim_words` (a spelled number is its digits) and by the claim check's
#: :func:`rag.answer.check.claims.holds`. "one" stays a word: it is as often a pronoun ("one of the limits").
SPELLED_NUMBERS = {str(n): w for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())} | {
    "30": "thirty", "40": "forty", "50": "fifty", "60": "sixty", "70": "seventy", "80": "eighty", "90": "ninety"}
SPELLED_ORDINALS = {"1st": "first", "2nd": "second", "3rd": "third", "4th": "fourth", "5th": "fifth", "6th": "sixth",
                    "7th": "seventh", "8th": "eighth", "9th": "ninth", "10th": "tenth"}
_AS_DIGITS = {w: d for d, w in SPELLED_NUMBERS.items() if d not in ("0", "1")}


def content_words(text: str) -> set[str]:
    """The words of ``text`` a claim is made of: :func:`tokenize` with :data:`CLAIM_STOPWORDS`, markers removed.

    A single ASCII letter is dropped (digits and other scripts stay); a final
    plural ``s`` is stripped from words of four letters or more (``models`` ->
    ``model``, not ``class``), so a sentence and its source match on either form; a spelled number from two to
    ninety is its digits (``five`` -> ``5``, :data:`SPELLED_NUMBERS`).
    """
    return claim_words(tokenize(strip_markers(text), stopwords=frozenset()))


def claim_words(tokens: Iterable[str]) -> set[str]:
    """:func:`content_words` of text already tokenized with no stopwords dropped (``tokenize(text,
    stopwords=frozenset())``, markers removed): the words left after :data:`CLAIM_STOPWORDS`, by the same rules."""
    words = set()
    for w in tokens:
        w = _AS_DIGITS.get(w, w)  # "five" is 5, as the claim's digits say (:data:`SPELLED_NUMBERS`)
        if w in CLAIM_STOPWORDS or (len(w) < 2 and w.isascii() and not w.isdigit()):
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
            if w in CLAIM_STOPWORDS:  # "uses" is "use", a stop word as the question's "use" is
                continue
        words.add(w)
    return words


def counted(n: int, noun: str) -> str:
    """``"1 chunk"``, ``"0 chunks"``, ``"2 chunks"``: a count with its noun, plural unless it is one (English,
    regular plurals: the nouns the CLI and the app count)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


# --------------------------------------------------------------------------- sentences

# A sentence ends at . ! ? … or 。 (a run), then closing quotes, brackets or emphasis, then whitespace.
_SENTENCE_END = re.compile(r"(?<![.!?\u2026\u3002])[.!?\u2026\u3002]+[\"'\u201d\u2019)\]*_`]*\s+")
#: Abbreviations whose full stop ends no sentence (``e.g. GPT-2``, ``Fig. 3``, ``No. 5``).
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|fig|eq|sec|approx|dr|mr|ms|no)\.\Z", re.I)


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` shrunk to exclude the whitespace at both ends of ``text[start:end]``."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentences of ``text[start:end]`` as ``(start, end)`` offsets into ``text``, whitespace trimmed, in order.

    A sentence ends after ``.``, ``!``, ``?``, ``…`` or ``。`` (and any closing
    quote, bracket or ``*``/``_``/backtick) followed by whitespace, unless the
    next character is a lower-case letter (any script) or the full stop ends
    an abbreviation (``e.g.``, ``Fig.``); four or more dots that lead to a number (a dot leader: ``Psilocyn ....
    7438``, a list of codes or a table of contents; spaced too, ``License . . . . 1``) end the entry after the
    number. A line break alone ends
    nothing, so
    a hard-wrapped sentence stays one span. The one sentence rule of the
    chunker, the excerpts and the claim check (issue 12).
    """
    end = len(text) if end is None else end
    out: list[tuple[int, int]] = []
    s = start
    for m in _SENTENCE_END.finditer(text, start, end):
        if m.end() < end and text[m.end()].islower():
            continue
        spaced = m.end() - m.start() == 2 and text[m.start()] == "." and _spaced_dots(text, m.start(), start, end) >= 3
        if spaced and m.end() < end and not text[m.end()].isdigit():
            continue  # inside a spaced dot leader (". . . ."), or one leading to more text: no sentence ends here
        if m.end() < end and text[m.end()] == "." and _spaced_dots(text, m.end(), start, end) >= 3:
            continue  # "What is MuPDF? . . . . 1": the entry goes on to its leader and number
        if m.end() < end and text[m.end()].isdigit() and (spaced or text.startswith("....", m.start())):
            # a dot leader before its number: the entry ends after the number, "(26) Psilocyn ........ 7438" (a new
            # user's walk, 2026-12-07: a list of drug codes was cut at its leaders, each code in the next chunk)
            j = m.end()
            while j < end and (text[j].isdigit() or (text[j] in ".,-" and j + 1 < end and text[j + 1].isdigit())):
                j += 1
            if j < end and text[j].isspace():
                a, b = trim_span(text, s, j)
                if a < b:
                    out.append((a, b))
                s = j
            continue
        if _ABBREVIATION.search(text, max(s, m.start() - 8), m.start() + 1):
            continue
        a, b = trim_span(text, s, m.end())
        if a < b:
            out.append((a, b))
        s = m.end()
    a, b = trim_span(text, s, end)
    if a < b:
        out.append((a, b))
    return out


def _spaced_dots(text: str, i: int, start: int, end: int) -> int:
    """How many dots a run of spaced dots holding the dot at ``i`` has (a leader, ``1.1 What is MuPDF? . . . . 1``;
    a spaced ellipsis, ``. . .``), counted up to 4 (enough to tell; constant time per dot, so a hostile run of
    ". . ." stays linear). Three or more end no sentence inside them."""
    n, k = 1, i
    while n < 4 and k - 2 >= start and text[k - 1] == " " and text[k - 2] == ".":
        n, k = n + 1, k - 2
    k = i
    while n < 4 and k + 2 < end and text[k + 1] == " " and text[k + 2] == ".":
        n, k = n + 1, k + 2
    return n


# --------------------------------------------------------------------------- units (paragraphs, lines, sentences)

#: ``(start, end)``: 0-based code point offsets into a text, ``end`` exclusive.
Span = tuple[int, int]

#: A Markdown code fence opening a line (three or more backticks or tildes, indented at most three spaces; group 1
#: the fence itself): the one pattern of the chunker, the extractors and the claim check.
FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: A line of a table, list (Markdown markers, dashes, or the bullet glyphs PDFs draw: issue 28), code or quote.
_STRUCTURED_LINE = re.compile(r"^\s*(?:\||[-*+\u2013\u2014]\s|\d+[.)]\s|<|>|\$\$|"
                              "[\u2022\u00b7\u25aa\u25b8\u25b6\u25ba\u2023\u25e6\u25cb\u25cf\u25a0\u25a1\u27a2\u27a4\u2043])")
_LINE = re.compile(r"[^\n]+")


def paragraphs(text: str, start: int, end: int) -> list[tuple[int, int, bool]]:
    """Paragraphs of ``text[start:end]`` as ``(start, end, line_structured)``.

    Paragraphs are separated by blank lines, except inside a fenced code block
    (one paragraph however many blank lines it holds). ``line_structured`` is
    True for code blocks, tables and lists, which split at line ends first.
    """
    out: list[tuple[int, int, bool]] = []
    para_start = None
    para_end = start
    fence = None
    structured = 0
    lines = 0
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        line_end = end if nl == -1 else nl
        line = text[pos:line_end]
        m = FENCE_RE.match(line)
        blank = not line.strip()
        if blank and fence is None:
            if para_start is not None:
                out.append((para_start, para_end, structured * 2 >= lines))
                para_start = None
        else:
            if para_start is None:
                para_start, structured, lines = pos, 0, 0
            lines += 1
            if m or fence is not None or _STRUCTURED_LINE.match(line):
                structured += 1
            if m:
                if fence is None:
                    fence = m.group(1)
                elif m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                    fence = None
            para_end = line_end
        pos = line_end + 1
    if para_start is not None:
        out.append((para_start, para_end, structured * 2 >= lines))
    trimmed = [(*trim_span(text, s, e), st) for s, e, st in out]
    return [(a, b, st) for a, b, st in trimmed if a < b]


def matches_as_spans(pattern: re.Pattern, text: str, start: int, end: int) -> list[Span]:
    """``(start, end)`` of every match of ``pattern`` in ``text[start:end]`` (offsets into ``text``)."""
    return [(m.start(), m.end()) for m in pattern.finditer(text, start, end)]


def sentences(text: str, start: int, end: int) -> list[Span]:
    """Sentence spans of ``text[start:end]`` (:func:`sentence_spans`, the project's one sentence rule)."""
    return sentence_spans(text, start, end)


def lines(text: str, start: int, end: int) -> list[Span]:
    """Non-blank line spans of ``text[start:end]``, whitespace trimmed."""
    spans = (trim_span(text, a, b) for a, b in matches_as_spans(_LINE, text, start, end))
    return [u for u in spans if u[0] < u[1]]


def units(text: str) -> list[Span]:
    """The smallest units strategy E keeps whole, in order: the lines of a code block, table or list, and the
    sentences of any other paragraph (a hard-wrapped sentence stays one unit)."""
    out: list[Span] = []
    for s, e, structured in paragraphs(text, 0, len(text)):
        out.extend(lines(text, s, e) if structured else sentences(text, s, e))
    return out



# --------------------------------------------------------------------------- citation markers

#: A citation marker as a model writes it: ``[1]``, ``[1, 2]``, ``[^1]``, ``[Source 1]``, ``[source: 2]``.
MARKER_RE = re.compile(r"\[\s*(?:\^|sources?\s*:?\s*)?(\d{1,3}(?:\s*[,;]\s*(?:sources?\s*)?\^?\d{1,3})*)\s*\]", re.I)
# (each starts at the first character of a run: one pass over a run of spaces or dots, issue 35)
_SPACED_MARKER = re.compile(r"(?<!\s)\s*" + MARKER_RE.pattern, re.I)
_SPACE_BEFORE_PUNCT = re.compile(r"(?<!\s)\s+([.,;:!?])")


def strip_markers(text: str) -> str:
    """``text`` without its ``[n]`` markers and the whitespace before them, and no space left before
    punctuation (``"A is B [1]."`` -> ``"A is B."``); leading/trailing whitespace removed."""
    return _SPACE_BEFORE_PUNCT.sub(r"\1", _SPACED_MARKER.sub("", text)).strip()


# --------------------------------------------------------------------------- term statistics


@dataclass(frozen=True)
class TermStats:
    """Document frequencies of :func:`tokenize` tokens over ``n_chunks`` chunk texts (for IDF)."""

    n_chunks: int
    df: Mapping[str, int]

    @classmethod
    def from_texts(cls, texts: Sequence[str]) -> "TermStats":
        """Count, per token of :func:`tokenize`, how many of ``texts`` contain it."""
        df: Counter[str] = Counter()
        for t in texts:
            df.update(set(tokenize(t)))
        return cls(len(texts), dict(df))

    def idf(self, term: str) -> float:
        """``ln(1 + (N - df + 0.5) / (df + 0.5))``: BM25's IDF; largest for a term in no chunk, always > 0."""
        d = self.df.get(term, 0)
        return math.log(1.0 + (self.n_chunks - d + 0.5) / (d + 0.5))

    def weights(self, terms: Iterable[str]) -> dict[str, float]:
        """``{term: idf(term)}`` for ``terms`` (the excerpts' and the gate's term weights)."""
        return {t: self.idf(t) for t in terms}


# --------------------------------------------------------------------------- inert Markdown (issue 26)

#: Characters with a meaning anywhere in Streamlit's Markdown (CommonMark + GFM, ``$`` LaTeX, ``:`` directives and
#: ``~``), backslash-escaped by :func:`markdown_literal`; ``@`` also breaks GFM's address autolinks
#: (``user@host``), and ``&`` any entity.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]$~|#{}!@&])")
#: The ``:`` of ``scheme://``. An escape alone does not stop Streamlit's renderer: remark-gfm links URLs, ``www.``
#: and e-mail addresses in the parsed text, after escapes are gone (seen in the browser, 2026-12-01). A WORD JOINER
#: (U+2060, invisible, no width) after the escaped ``:``, before ``@`` and after ``www`` breaks each pattern.
_SCHEME = re.compile(r":(?=//)")
_JOINER = "\u2060"
#: A ``:`` before a letter opens a directive or a shortcode in Streamlit's renderer: ``:red[text]`` coloured the text
#: and dropped ``:red`` even with the brackets escaped (a quote read "[REDTEXT]" for ":red[REDTEXT]", 2026-12-02),
#: ``:smile:`` is an emoji even escaped: the colon is escaped and a WORD JOINER follows it. Only a colon that
#: opens a word (``A1:E4``, ``key:value`` stay as written).
_DIRECTIVE = re.compile(r"(?<![A-Za-z0-9]):(?=[A-Za-z])")
#: What only means something at the start of a line: a quote, a list item, a setext underline, a numbered item.
_LINE_START = re.compile(r"(?m)^([ \t]*)(>|[-+=])")
_NUMBERED = re.compile(r"(?m)^([ \t]*\d{1,9})([.)])")
#: ``www.`` starts a GFM autolink too: its dot is escaped.
_WWW = re.compile(r"(?i)\b(www)\.")
#: A citation marker ``[n]`` as :func:`markdown_literal` writes it, when nothing after it could make it a link.
_ESCAPED_MARKER = re.compile(r"\\\[(\d{1,4})\\\](?!\(|\\\[|\\:)")


def markdown_literal(text: str, *, keep_markers: bool = False, blocks: bool = True) -> str:
    """``text`` as Markdown that renders exactly these characters and nothing else: no HTML, no link, no
    autolinked URL or address, no emphasis, heading, quote, list, LaTeX or directive.

    ``<`` becomes ``&lt;`` (so raw ``<script>``/``<img onerror>`` is never written, even to a Markdown file
    opened by another viewer); Markdown-significant characters are backslash-escaped (those that only count
    at a line's start, there only); ``www.``, ``://`` and ``@`` are broken up by escapes and an invisible
    WORD JOINER (U+2060), so a quoted ``www.evil.example``, ``a@b.example`` or ``[x](https://...)`` stays text
    in the chat too (Streamlit's renderer links URLs after escapes are resolved). ``keep_markers``: citation markers ``[n]`` stay
    as written (an export's answer text), which no link can be made of once every other bracket is escaped.
    ``blocks=False`` leaves list items and numbered items as such (the model's own lists in the chat); a
    line-start ``>`` is escaped either way.
    What the user, a document or the model wrote goes through here before it reaches the chat page or an
    export (issue 26: quotes and exports are inert).
    """
    text = _MD_SPECIAL.sub(r"\\\1", text).replace("<", "&lt;")  # "&" escaped first, so "&lt;" stays an entity
    text = _SCHEME.sub("\\\\:" + _JOINER, text).replace("\\@", _JOINER + "\\@")
    text = _DIRECTIVE.sub("\\\\:" + _JOINER, text)
    text = _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2) if blocks or m.group(2) == ">" else m.group(0), text)
    if blocks:
        text = _NUMBERED.sub(r"\1\\\2", text)
    text = _WWW.sub(r"\1" + _JOINER + r"\\.", text)
    return _ESCAPED_MARKER.sub(r"[\1]", text) if keep_markers else text


#: A Markdown table's separator row (``| --- | :---: |``, ``---|---``), one line: an optional leading pipe, cells
#: of three or more dashes (colons for alignment) joined by pipes, an optional trailing pipe. Written so that
#: every run of spaces has one way to match (issue 35: the copies this replaces, in the chunker, the key passage
#: and the claim check, took quadratic time on a line of spaces).
TABLE_RULE = re.compile(r"^[ \t]*(?:\|[ \t]*)?:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*(?:\|[ \t]*)?$")
#: :data:`TABLE_RULE` for every line of a text (``re.MULTILINE``).
TABLE_RULE_LINES = re.compile(TABLE_RULE.pattern, re.MULTILINE)


def table_head(text: str, start: int, max_rows: int | None = None) -> tuple[int, int, int] | None:
    """Where the Markdown table holding offset ``start`` of ``text`` begins: ``(top, top_end, rule_end)``, the
    offsets of its first row's start and end and of the end of the ``|---|`` rule under it. ``None`` when the line
    at ``start`` is not a table row (a ``|`` after spaces or tabs), the first row has no rule under it, or
    ``max_rows`` rows up did not reach the top. Reads at most ``max_rows`` lines up (all of them when ``None``).
    The one walk the chunker's header, the answer's column names and the claim check's header read."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    if not text[line_start:len(text) if line_end == -1 else line_end].lstrip(" \t").startswith("|"):
        return None
    top, steps = line_start, 0
    while top > 0:
        if max_rows is not None and steps >= max_rows:
            return None
        prev = text.rfind("\n", 0, top - 1) + 1
        if not text[prev:top - 1].lstrip(" \t").startswith("|"):
            break
        top, steps = prev, steps + 1
    top_end = text.find("\n", top)
    if top_end == -1:
        return None
    rule_end = text.find("\n", top_end + 1)
    rule_end = len(text) if rule_end == -1 else rule_end
    return (top, top_end, rule_end) if TABLE_RULE.match(text[top_end + 1:rule_end]) else None


#: Characters at the end of a model's stream that, found earlier in the same stream, mean it is looping: greedy
#: decoding that has written the same stretch twice writes it until the token cap (a new user's walk, 2026-12-06;
#: 8 of 340 saved answers of the dev corpora, up to 37 copies of one sentence).
LOOP_CHARS = 160


def loops(text: str, tail: int = LOOP_CHARS) -> bool:
    """Whether the last ``tail`` characters of ``text`` (a model's stream so far) occur earlier in it: one
    ``str.find``, linear in ``len(text)`` in practice (called once per sentence end, not per token)."""
    return len(text) > tail and text.find(text[-tail:], 0, len(text) - 1) != -1
