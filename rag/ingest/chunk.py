"""Stage 2 of the design: document -> chunks (strategy E by default; A-F for evaluation).

The six strategies of the design (:class:`rag.types.ChunkStrategy`; their names in :data:`STRATEGIES`):

====  ==========================================================  ===========
name  cut                                                         ``text``
====  ==========================================================  ===========
A     blind: every ``budget_chars`` code points                   content
B     blind windows of ``budget_chars``, each starting            content
      ``overlap_chars`` before the previous one ends
C     boundaries (below)                                          content
D     boundaries, each chunk extended back by ``overlap_chars``   content
E     boundaries                                                  header + content
F     boundaries + overlap                                        header + content
====  ==========================================================  ===========

*Boundaries* (strategy E of the design): split at every section heading
(``#`` .. ``######``, or the PDF headings found by :mod:`rag.ingest.pdf`); pack whole
paragraphs (blank-line separated; a fenced code block is one paragraph) up to
the character budget, never cutting inside a paragraph; a paragraph over the
budget is split at line ends when it is a table, list or code block, else at
sentence ends; a sentence over the budget is split into word windows; a
"word" over the budget (a hash, a URL) is cut hard. Text before the first
heading is kept, under the document title. Heading lines themselves are not
in any chunk's content: they are in the header of every chunk below them.

*Header*: ``[Doc title > Section > Subsection]\\n``, prepended to ``text``
(what is embedded), never to ``content`` (what is quoted).

*Tables* (issue 13, item 5; case c34): a Markdown table (lines starting with ``|``, PDF tables
included: the PDF reader writes them as Markdown rows) is cut only between rows, and every chunk of
a table that does not hold the table's header row carries it in ``text``, after the section header
(:func:`table_header`), so a row cut off from its header can still be read and found by its column
names. ``content`` stays the chunk's own rows.

*Token-aware* (boundary strategies C-F): all-MiniLM-L6-v2 reads 256
word-pieces and silently drops the rest, so no chunk's ``text`` (header
included) may exceed ``window_tokens``; a chunk that does is re-split with a
smaller character budget and flagged ``token_split=True``. The blind
strategies A/B are left blind on purpose (they are the baselines).

*Roles* (issue 28): reference lists, tables of contents and navigation lines
(:mod:`rag.ingest.roles`, plus what the reader tagged in ``doc.roles``) are
cut off from the body text around them, like a section; each chunk carries
the :class:`rag.types.TextRole` of its text. A chunk with no letter or digit
outside markup tags (a form's rules, an empty table row, ``</hfoption>``
closers) is left out: it says nothing.

Offsets: every chunk is a span FOUND in ``doc.canonical`` (0-based code
points, end exclusive), and ``doc.canonical[start:end] == content`` always.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from rag.ingest.locate import locator_at, role_at
from rag.ingest.roles import find_roles
from rag.ingest.sections import Section, cut_at_roles, sections
from rag.ingest.unit_roles import chunk_unit_roles, masked
from rag.text import Span, lines, matches_as_spans, paragraphs, sentences, table_head, units
from rag.tokens import count_tokens_batch
from rag.types import Chunk, ChunkStrategy, TextRole

#: The strategies' names as plain strings, ``("A", ..., "F")``.
STRATEGIES = tuple(s.value for s in ChunkStrategy)
_BLIND = (ChunkStrategy.A, ChunkStrategy.B)
_OVERLAP = (ChunkStrategy.B, ChunkStrategy.D, ChunkStrategy.F)
_HEADER = (ChunkStrategy.E, ChunkStrategy.F)
#: Longest header (characters) before the title/section path is shortened.
MAX_HEADER_CHARS = 160
#: Longest table header row (characters) repeated in a table chunk's embedded text: a wide table's full header took
#: most of the 256 word-pieces, so each chunk held one row (issue 28: 150 of 151 chunks of a workbook under 120 chars).
MAX_TABLE_HEADER_CHARS = 240

# --------------------------------------------------------------------------- packing units (found by rag.text.units)

_WORD = re.compile(r"\S+")
#: An HTML/XML tag as written in Markdown (``</hfoption>``): a chunk of tags alone is never made.
_MARKUP = re.compile(r"<[^<>\n]*>")


#: Units of fewer words get no vector of their own (issue 27: a lone "Yes." or a page number is close to anything).
UNIT_MIN_WORDS = 3


def chunk_units(chunk: Chunk, min_words: int = UNIT_MIN_WORDS) -> list[Span]:
    """The units of ``chunk.content`` (:func:`units`) that get a vector of their own beside the chunk's (issue 27,
    item 1): spans into the canonical text (0-based code points, end exclusive), those of ``min_words`` words or
    more, in order; ``[]`` when fewer than two are left (the chunk's own vector is then its unit's).

    In a body chunk, the lines and units that can never answer (:func:`rag.ingest.unit_roles.chunk_unit_roles`:
    navigation and contents lines, page counters, dated running heads) are left out first (issue 36 item 3, issue 41
    item 2: nothing is embedded that is never searched as an answer; a footer glued to a slide's last bullet no
    longer rides in that bullet's vector)."""
    text = chunk.content
    if (chunk.role or TextRole.BODY) == TextRole.BODY:
        text = masked(text, [(u.start, u.end) for u in chunk_unit_roles(text)
                             if u.role not in (TextRole.BODY, TextRole.HEADING)])
    spans = [(a, b) for a, b in units(text) if len(text[a:b].split()) >= min_words]
    return [(chunk.start + a, chunk.start + b) for a, b in spans] if len(spans) > 1 else []


def unit_text(chunk: Chunk, start: int, end: int) -> str:
    """What a unit's vector embeds: the chunk's header (``text`` before ``content``: the section path and, in a
    table, its header row) followed by the unit ``canonical[start:end]`` taken from ``chunk.content``."""
    head = chunk.text[: len(chunk.text) - len(chunk.content)] if chunk.text.endswith(chunk.content) else ""
    return head + chunk.content[start - chunk.start:end - chunk.start]


def pack(units: Sequence[Span], budget: int) -> list[Span]:
    """Greedily join consecutive unit spans while the joined span stays within ``budget`` characters."""
    out: list[Span] = []
    cur_s = cur_e = None
    for s, e in units:
        if cur_s is not None and e - cur_s <= budget:
            cur_e = e
        else:
            if cur_s is not None:
                out.append((cur_s, cur_e))
            cur_s, cur_e = s, e
    if cur_s is not None:
        out.append((cur_s, cur_e))
    return out


def balanced_pack(units: Sequence[Span], budget: int) -> list[Span]:
    """:func:`pack` into as few spans as it makes, but as even as possible (issue 27, item 4).

    Greedy packing fills each span to the budget and leaves the remainder, often
    one sentence, as the last span: a paragraph of 550 characters became 480 + 70,
    the 70 a sentence cut off from the words it shares with its paragraph. Here
    the number of spans is greedy's (the fewest possible) and the cap is the
    smallest one that still gives that number (binary search over characters),
    so 550 becomes about 275 + 275. Every span stays within ``budget`` (a single
    unit over it stays alone, as in :func:`pack`).
    """
    greedy = pack(units, budget)
    if len(greedy) <= 1:
        return greedy
    lo = max(1, max(e - s for s, e in units))
    lo = min(lo, budget)
    hi = budget
    while lo < hi:
        mid = (lo + hi) // 2
        if len(pack(units, mid)) <= len(greedy):
            hi = mid
        else:
            lo = mid + 1
    return pack(units, lo)


#: Issue 27, item 4: a paragraph over the budget is cut into even pieces (:func:`balanced_pack`), not greedy ones.
BALANCED_SPLIT = True


def split_unit(text: str, start: int, end: int, budget: int, level: str) -> list[Span]:
    """Split one over-budget unit: ``lines`` -> ``sentences`` -> ``words`` -> hard cut.

    Returns spans each at most ``budget`` characters, in order, covering every
    non-space character of ``text[start:end]``; with :data:`BALANCED_SPLIT` the
    pieces of one unit are as even as their count allows (:func:`balanced_pack`).
    """
    if end - start <= budget:
        return [(start, end)]
    if level == "lines":
        units, nxt = lines(text, start, end), "sentences"
    elif level == "sentences":
        units, nxt = sentences(text, start, end), "words"
    elif level == "words":
        units, nxt = matches_as_spans(_WORD, text, start, end), "chars"
    else:
        return [(s, min(s + budget, end)) for s in range(start, end, budget)]
    if len(units) <= 1 and level != "words":
        return split_unit(text, start, end, budget, nxt)
    pieces: list[Span] = []
    for a, b in units:
        pieces.extend(split_unit(text, a, b, budget, nxt))
    return balanced_pack(pieces, budget) if BALANCED_SPLIT else pack(pieces, budget)


def split_span(text: str, start: int, end: int, budget: int) -> list[Span]:
    """Boundary chunking of one section body ``text[start:end]`` (strategy C-F core).

    Whole paragraphs are packed up to ``budget`` characters; only a paragraph
    that alone exceeds the budget is split (lines / sentences / words).
    """
    units: list[Span] = []
    for s, e, structured in paragraphs(text, start, end):
        units.extend(split_unit(text, s, e, budget, "lines" if structured else "sentences"))
    return pack(units, budget)


# --------------------------------------------------------------------------- tables



def table_header(text: str, start: int) -> tuple[str, int] | None:
    """The header of the Markdown table holding offset ``start`` of ``text``: ``(header_lines, end)`` where
    ``header_lines`` is the header row (from the column ``start`` is in, after a "…" cell) and its ``|---|`` rule
    (``\\n``-terminated) and ``end`` the offset just after them (cells trimmed, the rule shortened: padding would eat
    the chunk's word-pieces); ``None`` when ``start`` is not on a table row or the table has no rule line."""
    head = table_head(text, start)
    if head is None:
        return None
    top, first_end, rule_end = head
    line_start = text.rfind("\n", 0, start) + 1
    cells = [c.strip() for c in text[top:first_end].strip().strip("|").split("|")]
    before = text[line_start:start].count("|") - text[line_start:start].lstrip().startswith("|")  # a walk, 2026-12-07
    cells = ["\u2026"] + cells[before:] if start > line_start and 0 < before < len(cells) else cells
    row = "| " + " | ".join(cells) + " |"
    if len(row) > MAX_TABLE_HEADER_CHARS:  # a wide table's header would leave no room for its rows (issue 28)
        row = row[:MAX_TABLE_HEADER_CHARS - 1].rstrip() + "\u2026"
    return row + "\n|" + "---|" * min(len(cells), 8) + "\n", rule_end


def table_extra(text: str, start: int) -> str:
    """The header lines of the table a chunk starting at ``start`` sits in (when it begins after them), else ``""``.

    Added to the chunk's embedded header, so every chunk of a table carries the header row (issue 13, case c34).
    """
    th = table_header(text, start)
    return th[0] if th is not None and start >= th[1] else ""


def header_for(title: str, path: tuple[str, ...]) -> str:
    """``[Doc title > Section > Sub]\\n`` (design, strategy E), shortened past :data:`MAX_HEADER_CHARS`."""
    parts = [title, *path]
    head = " > ".join(p for p in parts if p)
    if len(head) > MAX_HEADER_CHARS:
        head = head[: MAX_HEADER_CHARS - 1].rstrip() + "\u2026"
    return f"[{head}]\n"


# --------------------------------------------------------------------------- tokens


def _batch_counter(count_tokens: Callable[[str], int] | None) -> Callable[[list[str]], list[int]]:
    if count_tokens is not None:
        return lambda texts: [count_tokens(t) for t in texts]

    return count_tokens_batch


def shorten_header(head: str, limit: int, count: Callable[[list[str]], list[int]]) -> str:
    """``head`` (a chunk's embedded header, ``\n``-terminated) cut short, ending in an ellipsis, until it counts at
    most ``limit`` word-pieces by ``count``; unchanged when it already does. Ends: every round removes at least
    three characters."""
    n = count([head])[0]
    while n > limit and len(head) > 8:
        keep = max(4, min(len(head) - 3, int(len(head) * limit / n * 0.9)))
        head = head[:keep].rstrip() + "\u2026\n"
        n = count([head])[0]
    return head


def _fit_window(text: str, items: list[tuple[int, int, str]], budget: int, window: int,
                count: Callable[[list[str]], list[int]],
                extra: Callable[[int], str] | None = None) -> list[tuple[int, int, str, bool]]:
    """Re-split every ``(start, end, header)`` whose ``header + content`` exceeds ``window`` word-pieces.

    ``extra(start)`` adds to the header of the chunk starting at ``start`` (a table's header row),
    recomputed for every piece a re-split makes. Returns ``(start, end, header, token_split)`` in order.
    One tokenizer call per round for all sections together; a chunk of n characters has at most n + 2
    word-pieces, so short ones are never tokenized.
    """
    extra = extra or (lambda _start: "")
    result: list[tuple[int, int, str, bool]] = []
    todo = [(s, e, h, False, budget) for s, e, h in items]
    head_n: dict[str, int] = {}
    fitted: dict[str, str] = {}
    limit = window // 2

    def fit(head: str) -> str:
        # A header (section path, a table's header row) may take at most half the window: in a script the
        # encoder's vocabulary hardly knows (Arabic: about a word-piece per character), the two together took
        # the whole window and every chunk was cut to one character (5,742 chunks for 92,037 characters).
        if len(head) <= limit:
            return head
        if head not in fitted:
            fitted[head] = shorten_header(head, limit, count)
        return fitted[head]

    while todo:
        heads = [fit(h + extra(s)) for s, _, h, _, _ in todo]
        long_ix = [i for i, (s, e, _, _, _) in enumerate(todo) if len(heads[i]) + (e - s) + 2 > window]
        counts = dict(zip(long_ix, count([heads[i] + text[todo[i][0]:todo[i][1]] for i in long_ix])))
        nxt = []
        for i, (s, e, h, flagged, b) in enumerate(todo):
            n = counts.get(i, 0)
            if n <= window or e - s <= 1:
                result.append((s, e, heads[i], flagged))
                continue
            if heads[i] not in head_n:
                head_n[heads[i]] = count([heads[i]])[0] if heads[i] else 2
            room = max(window - head_n[heads[i]], 8)
            new_b = max(1, min(b - 1, int((e - s) * room / n * 0.9)))
            nxt.extend((x, z, h, True, new_b) for x, z in split_span(text, s, e, new_b))
        todo = nxt
    result.sort(key=lambda r: r[0])
    return result


# --------------------------------------------------------------------------- a split paragraph's lead

#: Issue 27, item 4: a chunk that begins inside a paragraph carries the paragraph's first sentence in ``text``.
CARRY_LEAD = True
#: Between the carried lead and the chunk's own words in ``text`` (the lead is not at that place in the document).
LEAD_MARK = " \u2026\n"


def carry_lead(text: str, items: list[tuple[int, int, str, bool]], window: int,
               count: Callable[[list[str]], list[int]]) -> list[tuple[int, int, str, bool]]:
    """Give every ``(start, end, header, token_split)`` that begins inside a prose paragraph an earlier chunk
    started the paragraph's first sentence, after its header: ``header + lead + LEAD_MARK`` (issue 27, item 4).

    A paragraph cut at the budget leaves its later sentences away from the words the question shares with its
    opening (what the paragraph is about); the lead puts them back in what is embedded and searched, never in
    ``content`` (what is quoted). Kept only where the chunk still fits ``window`` word-pieces. Lists, tables and
    code (line-structured paragraphs) are left alone: a table's pieces carry its header row instead.
    """
    paras = [(a, b) for a, b, structured in paragraphs(text, 0, len(text)) if not structured]
    starts = [a for a, _ in paras]
    todo: list[tuple[int, str]] = []
    for i, (s, _e, h, _flag) in enumerate(items):
        j = bisect.bisect_right(starts, s) - 1
        if j >= 0 and paras[j][0] < s < paras[j][1]:
            lead = sentences(text, paras[j][0], s)
            if lead:
                todo.append((i, h + text[lead[0][0]:lead[0][1]] + LEAD_MARK))
    out = list(items)
    counts = count([head + text[items[i][0]:items[i][1]] for i, head in todo]) if todo else []
    for (i, head), n in zip(todo, counts):
        if n <= window:
            s, e, _h, flag = items[i]
            out[i] = (s, e, head, flag)
    return out


# --------------------------------------------------------------------------- strategies


def _blind(doc, budget: int, overlap: int) -> list[tuple[int, int, tuple[str, ...], bool]]:
    text = doc.canonical
    step = budget - overlap if overlap else budget
    if step <= 0:
        raise ValueError(f"overlap_chars ({overlap}) must be smaller than budget_chars ({budget})")
    secs = sections(doc)
    starts = [s.start for s in secs]
    out = []
    for s in range(0, len(text), step):
        e = min(s + budget, len(text))
        if text[s:e].strip():
            i = bisect.bisect_right(starts, s) - 1
            out.append((s, e, secs[i].path if i >= 0 else (), False))
        if e == len(text):
            break
    return out


def _boundaries(doc, strategy: ChunkStrategy, budget: int, overlap: int, window: int,
                count_tokens) -> list[tuple[int, int, tuple[str, ...], bool, str]]:
    text = doc.canonical
    count = _batch_counter(count_tokens)
    use_header = strategy in _HEADER
    secs = sections(doc)
    if not any(text[s.start:s.end].strip() for s in secs) and text.strip():
        secs = [Section((), 0, len(text))]  # a document made of headings only: keep its words
    secs = cut_at_roles(secs, doc.roles)
    items, path_of = [], {}
    for sec in secs:
        header = header_for(doc.title, sec.path) if use_header else ""
        for s, e in split_span(text, sec.start, sec.end, budget):
            items.append((s, e, header))
            path_of[s] = sec.path
    # every piece (re-split ones too) of a table after its header rows carries them (issue 13, case c34)
    fitted = _fit_window(text, items, budget, window, count, (lambda s: table_extra(text, s)) if use_header else None)
    if use_header and CARRY_LEAD:
        fitted = carry_lead(text, fitted, window, count)
    paths = sorted(path_of.items())
    starts = [p[0] for p in paths]
    out = [(s, e, paths[bisect.bisect_right(starts, s) - 1][1], flag, h) for s, e, h, flag in fitted]
    if strategy in _OVERLAP and overlap > 0:
        out = _add_overlap(text, out, overlap, window, count)
    return out


def _add_overlap(text: str, chunks: list, overlap: int, window: int, count) -> list:
    """Strategies D/F: extend each chunk back over the last ``overlap`` characters of the previous one
    in the same section, unless that would push it past the encoder window."""
    cand = [(i, max(p[0], p[1] - overlap)) for i, (p, c) in enumerate(zip(chunks, chunks[1:]), 1)
            if p[2] == c[2]]
    counts = count([chunks[i][4] + text[a:chunks[i][1]] for i, a in cand])
    out = list(chunks)
    for (i, a), n in zip(cand, counts):
        if n <= window:
            s, e, path, flag, h = out[i]
            out[i] = (a, e, path, flag, h)
    return out


def chunk_document(doc, strategy: ChunkStrategy | str = ChunkStrategy.E, *, budget_chars: int = 512, overlap_chars: int = 64,
                   window_tokens: int = 256, count_tokens=None, tag_roles: bool = True) -> list[Chunk]:
    """Cut ``doc`` (a :class:`rag.types.Document`) into chunks with the named strategy (:class:`rag.types.ChunkStrategy`,
    or its letter in either case).

    ``budget_chars`` is the character budget (code points), ``overlap_chars``
    the overlap of B/D/F, ``window_tokens`` the encoder window in word-pieces
    ([CLS]/[SEP] included), ``count_tokens`` an optional ``str -> int``
    word-piece counter (default: the all-MiniLM-L6-v2 tokenizer, loaded alone).
    Returns chunks in document order with ``index`` 0..n-1; for strategies
    C-F no chunk's ``text`` exceeds ``window_tokens`` word-pieces.
    ``tag_roles`` false: ``doc.roles`` are taken as they are (already tagged by
    :func:`rag.ingest.roles.find_roles`, as :mod:`rag.ingest.read` does under a time limit).
    Raises ``ValueError`` for an unknown strategy or a non-positive budget.
    """
    try:
        name = ChunkStrategy(str(strategy).strip().upper())
    except ValueError:
        raise ValueError(f"unknown chunking strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}") from None
    if budget_chars <= 0 or window_tokens <= 2:
        raise ValueError("budget_chars must be positive and window_tokens above 2")
    roles = find_roles(doc) if tag_roles else doc.roles
    if roles != doc.roles:
        doc = replace(doc, roles=roles)
    text = doc.canonical
    if name in _BLIND:
        raw = [(s, e, path, flag, "") for s, e, path, flag in
               _blind(doc, budget_chars, overlap_chars if name in _OVERLAP else 0)]
    else:
        raw = _boundaries(doc, name, budget_chars, overlap_chars, window_tokens, count_tokens)
    chunks = []
    for s, e, path, flag, header in raw:
        content = text[s:e]
        if not any(ch.isalnum() for ch in _MARKUP.sub("", content)):
            continue  # punctuation or markup alone (a form's rules, `</hfoption>` closers) says nothing (issue 28)
        chunks.append(Chunk(
            doc_id=doc.id, index=len(chunks), text=header + content, content=content, section=path,
            start=s, end=e, page=doc.page_at(s), page_end=doc.page_at(e - 1), token_split=flag,
            locator=locator_at(doc, s, e),
            role=role_at(doc, s, e) if doc.roles else TextRole.BODY,
        ))
    return chunks
