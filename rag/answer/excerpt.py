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

from rag.text import TermStats, tokenize, units

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


def readable(text: str, start: int = 0, end: int | None = None) -> str:
    """``text[start:end]`` without its hidden parts (:func:`hidden_spans`, found on the whole ``text``): what
    the model may read of it, and what a claim may lean on (issue 14)."""
    end = len(text) if end is None else end
    out, pos = [], start
    for a, b in hidden_spans(text):
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
) -> list[Excerpt]:
    """One :class:`Excerpt` per chunk ``contents[i]`` (best source first), together within ``budget`` tokens.

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
    # Every source's best piece first (best source first), then the rest by score.
    firsts = []
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
    out = []
    for i, c in enumerate(contents):
        ks = [k for k in sorted(chosen) if flat[k][0] == i]
        if not ks:
            best = [k for k in by_score if flat[k][0] == i]
            if not best:
                out.append(whole[i])
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
) -> list[Excerpt]:
    """The excerpts the model reads for ``query``: :func:`excerpts` with its BM25 terms (:func:`rag.text.tokenize`),
    each weighted by its IDF over the store's chunks (:meth:`rag.text.TermStats.idf`; weight 1 without ``term_stats``).

    Hidden text (HTML comments) and sentences giving the model orders (:func:`hidden_spans`) are never
    scored and never read by the model. Lexical
    scoring only. On the 36 dev queries (course and ticket wording) whose needle reached the
    sources, a shared budget of 160 Qwen tokens kept the whole needle in the excerpts 29 times (30
    before the colon rule); adding MiniLM cosine kept it 30 times but took about 240 ms instead of
    30 ms on 2 cores (2026-11-30). Issue 12 replaced this module's own IDF (``ln((N+1)/(df+1)) + 1``)
    with BM25's: on the same 48 queries the needle result and the excerpt tokens stayed the same for every one.
    """
    terms = set(tokenize(query))
    shown = [visible(c) for c in contents]
    ex = excerpts(terms, shown, budget, count, term_stats.weights(terms) if term_stats is not None else None)
    # scored and cut on the visible text; the model reads the original's words with hidden parts removed
    return [Excerpt(GAP.join(readable(c, a, b) for a, b in e.spans), e.spans, e.whole) for c, e in zip(contents, ex)]
