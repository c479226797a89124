"""Query-focused excerpts of the sources for the prompt (design stage 8, sized for 2 CPU cores).

Design stage 8 puts each source's whole ``content`` into the prompt. On the
2-core machines this product targets, the 0.5B model reads a prompt at about
90-100 tokens/s, so the instruction plus four whole chunks (about 600 tokens on
the dev questions) cost 7 s before the first answer token (issue 5's target is
3 s; ``docs/answers.md``). The model
therefore reads, per source, only the sentences of the chunk closest to the
question, up to a token budget, in document order; everything shown to the
user (quote, locator, highlight) still comes from the whole chunk.

Every excerpt piece is a span of the chunk's ``content`` (offsets in
characters into it), so ``content[start:end]`` is exactly what the model read:
the excerpt is verbatim, never paraphrased. Pieces that are not adjacent are
joined with `` … ``.

Pure functions: the caller counts tokens (with the generator's own tokenizer).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rag.answer.cite import Citation
from rag.answer.roles import non_answer_spans, repeated_lines
from rag.answer.tables import rows_as_records
from rag.question import analyse
from rag.text import FENCE_RE, TermStats, tokenize, units
from rag.types import TextRole

Span = tuple[int, int]

#: Joins two pieces of an excerpt that are not adjacent in the chunk.
GAP = " … "

#: Text the source format hides from its readers: an HTML comment in Markdown (``<!-- ... -->``; unclosed at the
#: end of a chunk, or closed at its start when the chunk begins inside one). The extractor may already drop
#: them; this guard keeps them out of the prompt and the key passage for any chunk stored before it did.
HIDDEN_RE = re.compile(r"<!--.*?(?:-->|\Z)|\A(?:(?!<!--).)*?-->", re.S)

#: A sentence of a document that gives orders to the model reading it (a prompt injection): "ignore all
#: previous instructions", "note to the AI assistant", "reply only with ...". Document text is data: such
#: a unit is never read by the model, never chosen as the key passage and never counts as support for a
#: claim (issue 14). Narrow on purpose: a course on LLMs that says "the model can answer questions" or
#: "the system prompt sets the tone" is not matched.
INSTRUCTION_RE = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:instructions?|rules|guidelines|prompts?)\b"
    r"|\b(?:note|message|instructions?|notice)\s+(?:to|for)\s+(?:the\s+|any\s+)?(?:AI|assistant|language model|LLM|chatbot|bot)s?\b"
    r"|\b(?:AI|assistant|chatbot|language model|LLM)s?\s+reading\s+this\b"
    r"|\b(?:reply|respond|answer)\s+only\s+with\b|\bdo\s+not\s+answer\s+the\s+(?:user|question)\b"
    r"|\byou\s+are\s+now\b|\bnew\s+instructions?\s*:",
    re.I,
)


def hidden_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character ranges of ``text`` the model must never read: HTML comments (:data:`HIDDEN_RE`)
    and the units (:func:`rag.text.units`) that give the model orders (:data:`INSTRUCTION_RE`); sorted."""
    spans = [m.span() for m in HIDDEN_RE.finditer(text)]
    masked = _mask(text, spans)
    spans += [(a, b) for a, b in units(masked) if INSTRUCTION_RE.search(masked, a, b)]
    return sorted(spans)


#: A document's own note or reference mark: ``[7]``, ``[8][9]`` (a run), ``[32, 33]``, ``[4-6]``.
_NOTE_MARK = re.compile(r"(?:\[\d{1,3}(?:\s?[,\u2013-]\s?\d{1,3}){0,8}\])+")
#: What a note mark follows directly in running text (Wikipedia's "research,[2]", "network.[7]").
_AFTER_PUNCT = frozenset('.,;:!?)"\'’”')
#: A backtick run: each opens or closes a code span (````print(a,[1])```` too).
_TICKS = re.compile(r"`+")


def note_marks(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character ranges of ``text`` holding the document's own note marks in running text: a run of
    ``[n]`` right after punctuation with a space, a letter or the line's end after it ("research,[2] music
    analysis,[3]", "network.[7]"). The model never reads them: it copied such marks into answers, where "[3]" reads
    as a citation of source 3 (saved dev answers, 2026-12-06); the claim check leans on the same view. A reader
    still sees them in the quote. A mark after a space ("returns [1, 2, 3]", "the interval [0, 1]", a paper's
    "counting [32]") is left: it may be the sentence's content. Never inside a fenced block or a code span, and
    never where code would put it (``choices[0]``, ``f(xs,[1])``, ``{'a':[1], ...}``). Sorted."""
    out: list[tuple[int, int]] = []
    fenced = False
    pos = 0
    for line in text.splitlines(keepends=True):
        if FENCE_RE.match(line):
            fenced = not fenced
        elif not fenced and "[" in line:
            ticks = [m.start() for m in _TICKS.finditer(line)] if "`" in line else []
            k = 0  # backtick runs before the mark: an odd count is inside a code span
            for m in _NOTE_MARK.finditer(line):
                a, b = m.span()
                while k < len(ticks) and ticks[k] < a:
                    k += 1
                nxt = line[b] if b < len(line) else "\n"
                if k % 2 == 0 and a and line[a - 1] in _AFTER_PUNCT and (nxt.isspace() or nxt.isalpha()):
                    out.append((pos + a, pos + b))
        pos += len(line)
    return out


def _mask(text: str, spans: Sequence[tuple[int, int]]) -> str:
    if not spans:
        return text
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def visible(text: str) -> str:
    """``text`` with its hidden parts (:func:`hidden_spans`) replaced by as many spaces: offsets are unchanged,
    so spans found in the result are spans of ``text``."""
    return _mask(text, hidden_spans(text))


def answer_view(text: str, *, role: TextRole | str | None = None, repeated: frozenset[str] = frozenset(),
                keep: frozenset[TextRole] = frozenset({TextRole.BODY})) -> tuple[str, list[Span]]:
    """``(view, skipped)``: ``text`` with its hidden parts (:func:`hidden_spans`), the units whose role is
    not in ``keep`` (:func:`rag.answer.roles.non_answer_spans`: page furniture, references, a table of
    contents, navigation, and by default headings too) and the document's own note marks (:func:`note_marks`)
    replaced by as many spaces, and those spans, sorted.

    Issue 24, item 2: the key passage and what the model reads come from the view with ``keep`` = body; the
    claim check leans on the view with ``keep`` = body and headings. ``role``, ``repeated``: see
    :func:`rag.answer.roles.source_units`.
    """
    hidden = hidden_spans(text)
    shown = _mask(text, hidden)
    skipped = sorted(hidden + non_answer_spans(shown, role=role, repeated=repeated, keep=keep) + note_marks(shown))
    return _mask(text, skipped), skipped


def citation_role(c: Citation) -> TextRole:
    """The role ingest stored for a citation's chunk (issue 28's ``Citation.role``; ``body`` for chunks stored
    before roles): a chunk that is not body has no answering unit at all."""
    return c.role


def citation_views(cites: Sequence[Citation], keep: frozenset[TextRole] = frozenset({TextRole.BODY}),
                   ) -> list[tuple[str, list[Span]]]:
    """:func:`answer_view` of each citation's ``quote``, with its stored role, and the lines
    repeated across all of them (:func:`rag.answer.roles.repeated_lines`: a slide deck's footer)."""
    repeated = repeated_lines(c.quote for c in cites)
    return [answer_view(c.quote, role=citation_role(c), repeated=repeated, keep=keep) for c in cites]


def readable(text: str, start: int = 0, end: int | None = None, skipped: Sequence[Span] | None = None) -> str:
    """``text[start:end]`` without its hidden parts (:func:`hidden_spans`, found on the whole ``text``; or
    without ``skipped``, e.g. from :func:`answer_view`): what the model may read of it, and what a claim may
    lean on (issue 14)."""
    end = len(text) if end is None else end
    out, pos = [], start
    for a, b in (hidden_spans(text) if skipped is None else skipped):
        if b <= pos or a >= end:
            continue
        out.append(text[pos:max(pos, a)])
        pos = max(pos, b)
    out.append(text[pos:end] if pos < end else "")
    return "".join(out)


def strip_hidden(text: str) -> str:
    """``text`` without its hidden parts: :func:`readable` over the whole of it."""
    return readable(text)


@dataclass(frozen=True)
class Excerpt:
    """What the model reads of one source.

    ``spans``: ``(start, end)`` character offsets into the chunk ``content``, in
    document order, each ``content[start:end]`` a verbatim piece; ``text`` the
    pieces joined (the original text between adjacent pieces, :data:`GAP`
    between the others); ``whole`` true when the excerpt is the whole content.
    """

    text: str
    spans: tuple[tuple[int, int], ...]
    whole: bool


def lexical_overlap(query_terms: set[str], piece: str, weights: Mapping[str, float] | None = None) -> float:
    """Share of the query's BM25 terms (:func:`rag.text.tokenize`; weighted by ``weights``, default 1
    each) present in ``piece``, in [0, 1]."""
    if not query_terms:
        return 0.0
    words = set(tokenize(piece))
    w = weights or {}
    total = sum(w.get(t, 1.0) for t in query_terms)
    return sum(w.get(t, 1.0) for t in query_terms if t in words) / total if total else 0.0


def _cut_to_budget(text: str, a: int, b: int, budget: int, count: Callable[[str], int]) -> int:
    """The largest word-boundary end ``e`` in ``(a, b]`` with ``count(text[a:e]) <= budget`` (at least one word)."""
    ends = [m.end() for m in re.finditer(r"\S+", text[a:b])]
    lo, hi, best = 0, len(ends) - 1, ends[0] if ends else b - a
    while lo <= hi:
        mid = (lo + hi) // 2
        if count(text[a : a + ends[mid]]) <= budget:
            best, lo = ends[mid], mid + 1
        else:
            hi = mid - 1
    return a + best


def excerpts(
    query_terms: set[str],
    contents: Sequence[str],
    budget: int,
    count: Callable[[str], int],
    weights: Mapping[str, float] | None = None,
    must: Sequence[Sequence[Span]] | None = None,
) -> list[Excerpt]:
    """One :class:`Excerpt` per chunk ``contents[i]`` (best source first), together within ``budget`` tokens.

    ``must[i]``: spans of ``contents[i]`` whose units are read before anything else (issue 24: the key
    passage's units, so the model always reads the sentence shown as the key passage).

    A piece's score is the weighted share of ``query_terms`` it contains
    (:func:`lexical_overlap`). The budget is shared: every source first gets
    its best piece, then the best remaining pieces of any source are added
    while they fit, so the source that holds the answer can give more than
    one sentence; a unit ending in a colon brings the unit it introduces when
    that fits. A source none of whose pieces fits still gets the first
    ``budget / n`` tokens' worth of words of its best piece (so the total may
    exceed ``budget`` by that much). ``budget <= 0``, or contents that fit
    whole, keep every content whole.
    """
    whole = [Excerpt(c, ((0, len(c)),), True) for c in contents]
    if budget <= 0 or sum(count(c) for c in contents) <= budget:
        return whole
    all_spans = [units(c) for c in contents]
    flat = [(i, a, b) for i, spans in enumerate(all_spans) for a, b in spans]
    pieces = [contents[i][a:b] for i, a, b in flat]
    scores = [lexical_overlap(query_terms, p, weights) for p in pieces]
    costs = [count(p) + 1 for p in pieces]
    by_score = sorted(range(len(flat)), key=lambda k: (-scores[k], k))
    chosen: set[int] = set()
    used = 0
    # The units that must be read, then every source's best piece (best source first), then the rest by score.
    firsts = sorted((k for k, (i, a, b) in enumerate(flat)
                     if must and i < len(must) and any(a < y and x < b for x, y in must[i])), key=lambda k: (-scores[k], k))
    for i in range(len(contents)):
        ks = [k for k in by_score if flat[k][0] == i]
        if ks:
            firsts.append(ks[0])
    for k in firsts + by_score:
        if k not in chosen and used + costs[k] <= budget:
            chosen.add(k)
            used += costs[k]
            # A unit ending in a colon introduces the next one (a formula, a list, a table): read them together.
            nxt = k + 1
            if (pieces[k].rstrip().endswith(":") and nxt < len(flat) and flat[nxt][0] == flat[k][0]
                    and nxt not in chosen and used + costs[nxt] <= budget):
                chosen.add(nxt)
                used += costs[nxt]
    return assemble(contents, flat, chosen, by_score, budget, count)


def assemble(contents: Sequence[str], flat: Sequence[tuple[int, int, int]], chosen: set[int], by_score: Sequence[int],
             budget: int, count: Callable[[str], int]) -> list[Excerpt]:
    """Each content's :class:`Excerpt` from the units chosen for it: ``flat[k]`` is unit ``k`` as ``(content index,
    start, end)``, ``chosen`` the units read, ``by_score`` all units best first. A content with no unit chosen gets
    the first ``budget / len(contents)`` tokens' worth of its best unit; one with no unit at all is read whole."""
    out = []
    for i, c in enumerate(contents):
        ks = [k for k in sorted(chosen) if flat[k][0] == i]
        if not ks:
            best = [k for k in by_score if flat[k][0] == i]
            if not best:
                out.append(Excerpt(c, ((0, len(c)),), True))
                continue
            _, a, b = flat[best[0]]
            share = max(8, budget // max(1, len(contents)))
            end = _cut_to_budget(c, a, b, share, count)
            out.append(Excerpt(c[a:end], ((a, end),), False))
            continue
        out.append(_join(c, [(flat[k][1], flat[k][2]) for k in ks]))
    return out


def _join(text: str, spans: Sequence[tuple[int, int]]) -> Excerpt:
    """Merge adjacent spans (only whitespace between them) and join the rest with :data:`GAP`."""
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and not text[merged[-1][1] : a].strip():
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    whole = len(merged) == 1 and not text[: merged[0][0]].strip() and not text[merged[0][1] :].strip()
    return Excerpt(GAP.join(text[a:b] for a, b in merged), tuple(merged), whole)


def prompt_excerpts(
    query: str,
    contents: Sequence[str],
    budget: int,
    count: Callable[[str], int],
    *,
    term_stats: TermStats | None = None,
    views: Sequence[tuple[str, Sequence[Span]]] | None = None,
    must: Sequence[Sequence[Span]] | None = None,
) -> list[Excerpt]:
    """The excerpts the model reads for ``query``: :func:`excerpts` with its BM25 terms (:func:`rag.text.tokenize`),
    each weighted by its IDF over the store's chunks (:meth:`rag.text.TermStats.idf`; weight 1 without ``term_stats``).

    Hidden text (HTML comments) and sentences giving the model orders (:func:`hidden_spans`) are never
    scored and never read by the model; with ``views`` (:func:`answer_view` of each content, e.g. from
    :func:`citation_views`) neither are page furniture, references, tables of contents, navigation lines and
    headings (issue 24, item 2). ``must[i]``: spans of ``contents[i]`` read first (the key passage's units).
    Lexical scoring only. On the 36 dev queries (course and ticket wording) whose needle reached the
    sources, a shared budget of 160 Qwen tokens kept the whole needle in the excerpts 29 times (30
    before the colon rule); adding MiniLM cosine kept it 30 times but took about 240 ms instead of
    30 ms on 2 cores (2026-11-30). Issue 12 replaced this module's own IDF (``ln((N+1)/(df+1)) + 1``)
    with BM25's: on the same 48 queries the needle result and the excerpt tokens stayed the same for every one.
    """
    terms = set(analyse(query).terms)
    views = list(views) if views is not None else [(visible(c), hidden_spans(c)) for c in contents]
    shown = [v for v, _ in views]
    weights = term_stats.weights(terms) if term_stats is not None else None
    ex = excerpts(terms, shown, budget, count, weights, must)
    # scored and cut on the view; the model reads the original's words with the skipped parts removed
    return [Excerpt(GAP.join(p for p in (readable(c, a, b, skip).strip() for a, b in e.spans) if p), e.spans, e.whole)
            for c, (_, skip), e in zip(contents, views, ex)]


def with_column_names(c: Citation, e: Excerpt, skipped: Sequence[Span] = ()) -> Excerpt:
    """``e`` (an excerpt of ``c.quote``) with each table row read as a record of its column names and cells
    (:func:`rag.answer.tables.rows_as_records`, ``c.columns``): ``FIFA: KEN; Dial: 254; ...`` for ``| KEN | 254 |
    ...``. The cells stay verbatim and ``e.spans`` are unchanged; a piece with hidden parts (``skipped``,
    :func:`hidden_spans`) is left as :func:`readable` gives it. Unchanged without a table row."""
    if "|" not in c.quote:
        return e
    parts, changed = [], False
    for a, b in e.spans:
        piece = readable(c.quote, a, b, skipped)
        rec = rows_as_records(c.quote, a, b, c.columns, c.first_column) if piece == c.quote[a:b] else None
        changed = changed or rec is not None
        parts.append((rec if rec is not None else piece).strip())
    return Excerpt(GAP.join(p for p in parts if p), e.spans, e.whole) if changed else e
