"""What each stretch of a document is to a reader (issue 28, item 1): reference lists, tables of contents and
navigation lines, recognised in the canonical text of any format and tagged with :class:`rag.types.TextRole`.

Only body text answers a question. The stretches found here stay in the canonical text and in the index
(a user may well search a reference list), but the chunker never lets a chunk cross their edges, each chunk
carries its role into the store and onto its citation, the search ranks them below body text, and the
answer layer never takes them as a key passage or as the support of a claim.

Rules (each on whole paragraphs: blank-line separated blocks of the canonical text):

* **references**: the body of a section whose heading is a reference-list title (``References``,
  ``Normative References``, ``Bibliography``, ``Works cited``, ``Literatur``, ``Références``, ``Bibliografía``,
  ``参考文献`` ..., numbered or not), up to the next heading of the same or a higher level, when at least half
  of its entries look like references (:func:`reads_as_references`: a year, DOI, link, ``et al.`` or
  ``[LABEL]``, or short title-like list lines; prose about employment references is not one); and, anywhere,
  a run of 3 or more reference entries (``[12]``, ``12.`` or ``(12)`` first, then a year 19xx/20xx, ``doi`` or
  ``et al.``), each a paragraph or joined with the next ones into one paragraph (a PDF's reference list comes out
  of extraction as a few paragraphs of 2,000-6,000 characters: :func:`joined_entries` cuts them into entries);
* **toc**: the body of a section titled ``Contents``, ``Table of contents``, ``Inhalt``, ``Sommaire``,
  ``Índice``, ``目次`` ...; and any paragraph whose lines mostly end in dot leaders and a page number
  (``Installation ........ 12``);
* **navigation**: a paragraph whose every line is a navigation line (:func:`is_navigation`): two or more
  of :data:`NAV_WORDS` that are most of its words (``Prev | Home | Next``), two navigation fields or buttons (``Next: Usage,
  Previous: Install, Up: Top``, ``[Contents][Index]``), a skip or back-to-top phrase (``Back to top``), or a
  breadcrumb of three or more short parts joined by ``»``, ``›``, ``>`` or ``/``.

This module is the one role vocabulary (issue 36, item 3): reference lists and the sections titled as a reference
list or contents are decided here alone, and the answer layer (:mod:`rag.answer.roles`) reads them from the
chunk's stored role; a body chunk's lines and units are judged with these same words and rules (:func:`is_navigation`,
:func:`is_toc_line`, :data:`TOC_TITLE`, :func:`is_sentence`) by :mod:`rag.ingest.unit_roles`, and the answer layer adds
only what needs the other sources of the same answer.

Readers add what only they can know (a slide deck's title slide: :mod:`rag.ingest.pdf`); :func:`merge`
puts the two together.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rag.ingest.budget import Deadline
from rag.types import Document, Heading, RoleSpan, TextRole

_NUM = r"(?:(?:\d+(?:\.\d+)*|[IVXLC]+|[A-Z])\.?\s+)?"
REFERENCE_TITLE = re.compile(
    r"^\W*" + _NUM + r"(?:(?:normative|informative|non-normative|cited)\s+)?(references?|bibliography|works cited|literature cited|cited literature|reference list|citations|sources|"
    r"literatur|literaturverzeichnis|quellen|quellenverzeichnis|références|références bibliographiques|"
    r"bibliographie|referencias|bibliografía|bibliografia|riferimenti bibliografici|referências|"
    r"参考文献|文献)\W*$", re.I)
TOC_TITLE = re.compile(
    r"^\W*" + _NUM + r"(contents|table of contents|inhalt|inhaltsverzeichnis|sommaire|table des matières|"
    r"índice|indice|sumário|目次|目录)\W*$", re.I)
_REF_ENTRY = re.compile(r"^\s*(?:\[\d{1,4}\]|\d{1,4}\.\s|\(\d{1,4}\))\s*\S.*(?:\b(?:1[6-9]|20)\d{2}[a-z]?\b|\bdoi\b|et al\.)",
                        re.I | re.S)
#: A contents line's page number, at the end of the (stripped) line: 1-4 digits or a roman numeral.
_PAGE_NUMBER = re.compile(r"(?:\d{1,4}|[ivxlc]{1,7})\Z", re.I)
#: The most whitespace characters between two dots of one dot leader (``. . .`` has one).
_LEADER_GAP = 2
#: The words of navigation lines: the one list (issue 36, defect C: ingest and answer had two that disagreed).
NAV_WORDS = ("previous", "prev", "next", "up", "home", "index", "contents", "top", "back", "forward")
_NAV = "|".join(NAV_WORDS)
_NAV_WORD = re.compile(r"\b(" + _NAV + r")\b", re.I)
#: ``Next: X``, ``Previous: Y``, ``Up: Z`` (Texinfo / GNU manual pages) and ``Contents »`` fields.
_NAV_FIELD = re.compile(r"(?:^|[\s,;|\[(])(?:" + _NAV + r"|table of contents)\s*(?::|»|›|>>)", re.I)
#: ``[Contents]`` ``[Index]`` buttons, ``« Prev``, ``Next »``.
_NAV_BUTTON = re.compile(r"\[\s*(?:" + _NAV + r"|table of contents)\s*\]|«\s*(?:prev|previous|back)\b|\b(?:next|forward)\s*»",
                         re.I)
_NAV_PHRASE = re.compile(r"^\s*(?:skip to (?:main )?content|back to top|jump to navigation|go to top)\b", re.I)
#: A breadcrumb's separator: ``>``, ``›``, ``»`` or ``/`` with spaces around (matched from the start of a space run,
#: so that a line of spaces is scanned once: issue 35).
_CRUMB_SEP = re.compile(r"(?<!\s)\s+[>›»/]\s+")
#: How a sentence ends: sentence punctuation, or a closing bracket or quote.
_SENTENCE_END = re.compile(r"[.!?…:;)\]\"'”’*_`]\s*$")


def is_sentence(text: str) -> bool:
    """Whether ``text`` reads as a sentence: it ends in sentence punctuation (or a closing bracket / quote), trailing
    whitespace aside. The one rule of every role that asks (a breadcrumb, a footer, a title line, a repeated line)."""
    return bool(_SENTENCE_END.search(text.rstrip()))
_PARA = re.compile(r"[^\n]+(?:\n[^\n]+)*")


def paragraphs(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans of the blank-line separated paragraphs of ``text[start:end]`` (0-based code points)."""
    return [(m.start(), m.end()) for m in _PARA.finditer(text, start, len(text) if end is None else end)
            if m.group().strip()]


def _is_breadcrumb(line: str) -> bool:
    """Three or more parts of 1-40 characters without ``.!?:>›»``, joined by :data:`_CRUMB_SEP`, at most 20 words,
    not a sentence nor a table row (``Home > Docs > API``, ``Home » Products » Widgets » Install``; not a figure's
    legend ``teal: HDC functionality / red: data flow / green: ...``)."""
    parts = _CRUMB_SEP.split(line)
    return (len(parts) >= 3 and all(0 < len(p) <= 40 and not any(c in ".!?:>›»" for c in p) for p in parts)
            and len(line.split()) <= 20 and not is_sentence(line) and not line.startswith("|"))


def is_navigation(line: str) -> bool:
    """Whether one line is a navigation line (rule in the module doc): the one rule of ingest, which tags a paragraph
    of such lines, and of the answer layer, which never takes such a line as an answer."""
    s = line.strip()
    if not s or len(s) > 200:
        return False
    if len(_NAV_FIELD.findall(s)) + len(_NAV_BUTTON.findall(s)) >= 2 or _NAV_PHRASE.match(s):
        return True
    bare = s.strip("[]|")
    if bare.endswith((".", "?", "!")):
        return False
    found = _NAV_WORD.findall(bare)
    if len({w.lower() for w in found}) >= 2 and 2 * len(found) > len(bare.split()):
        return True  # mostly navigation words ("Prev | Home | Next"), not prose that names two ("Top-k ... next words")
    return _is_breadcrumb(s)


def is_toc_line(line: str) -> bool:
    """Whether one line is a contents entry: text, then a dot leader (3 or more dots, at most
    :data:`_LEADER_GAP` spaces between two) or an ellipsis, then a page number (``Installation ..... 12``,
    ``Notices . . . . 3``, ``Preface … iv``).

    A scan from the line's end, linear in its length (issue 35: the pattern this replaces backtracked
    exponentially on a dot leader with no page number after it, and hung indexing).
    """
    s = line.strip()
    m = _PAGE_NUMBER.search(s, max(0, len(s) - 7))
    if m is None:
        return False
    j = len(s[:m.start()].rstrip())
    dots = ellipses = gap = 0
    while j > 0:
        c = s[j - 1]
        if c == "." and not ellipses:
            dots, gap = dots + 1, 0
        elif c == "…" and not dots:
            ellipses += 1
        elif c.isspace() and dots and gap < _LEADER_GAP:
            gap += 1
        else:
            break
        j -= 1
    return (dots >= 3 or ellipses >= 1) and s[:j].strip() != ""


def is_toc(block: str) -> bool:
    """Whether a paragraph is table-of-contents entries (most lines end in dot leaders and a page number)."""
    lines = [ln for ln in block.split("\n") if ln.strip()]
    return bool(lines) and sum(is_toc_line(ln) for ln in lines) >= max(1, 0.6 * len(lines))


def is_reference_entry(block: str) -> bool:
    """Whether a paragraph is one reference-list entry: a number first, a year, ``doi`` or ``et al.``, and
    the commas of an author list or a venue (a numbered step that names a year is not one)."""
    return (bool(_REF_ENTRY.match(block)) and len(block) <= 1200
            and (block.count(",") >= 2 or "et al." in block or "doi" in block.lower()))


#: Where a numbered entry opens inside a paragraph: ``12.``, ``[12]`` or ``(12)`` at its start or after the end of
#: the previous entry (a period, bracket or parenthesis, then whitespace), followed by text.
_ENTRY_MARK = re.compile(r"(?:^|(?<=[.)\]]\s))(?:\[(\d{1,4})\]|\((\d{1,4})\)|(\d{1,4})\.)\s+(?=\S)")
#: The fewest entries a paragraph must join to be read as a reference list, and the share of them that must read as
#: reference entries (:func:`is_reference_entry`).
MIN_JOINED_ENTRIES = 3
JOINED_ENTRY_SHARE = 0.8


def joined_entries(block: str) -> list[tuple[int, int]]:
    """Spans (0-based offsets into ``block``) of the reference entries a paragraph joins, or ``[]``.

    A PDF's reference list often comes out of extraction as a few paragraphs of 2,000-6,000 characters, each
    entry running on after the last (``... (2010). 2. Ladd, T. D. et al. Quantum computers. ...``): too long
    for one entry, and no paragraph break between them. Such a paragraph opens with a numbered entry, its
    markers (``N.``, ``[N]`` or ``(N)``, one style) count up by one from there, it holds at least
    :data:`MIN_JOINED_ENTRIES` of them, and at least :data:`JOINED_ENTRY_SHARE` of the pieces between them are
    reference entries. A numbered procedure (``1. Open the file. 2. Click Save.``) names no year nor authors.
    """
    found = [(m.start(), m.lastindex, int(m.group(m.lastindex))) for m in _ENTRY_MARK.finditer(block)]
    if not found or found[0][0] != 0:
        return []
    chain = [found[0]]
    for pos, style, n in found[1:]:
        if style == chain[0][1] and n == chain[-1][2] + 1:
            chain.append((pos, style, n))
    if len(chain) < MIN_JOINED_ENTRIES:
        return []
    ends = [pos for pos, _, _ in chain[1:]] + [len(block)]
    spans = [(a, len(block[:b].rstrip())) for (a, _, _), b in zip(chain, ends)]
    good = sum(is_reference_entry(block[a:b]) for a, b in spans)
    return spans if good >= JOINED_ENTRY_SHARE * len(spans) else []


def _entry_spans(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """The reference entries of paragraph ``text[a:b]`` as spans of ``text``: those it joins
    (:func:`joined_entries`), else the paragraph itself when it is one entry, else none."""
    block = text[a:b]
    joined = joined_entries(block)
    if joined:
        return [(a + x, a + y) for x, y in joined]
    return [(a, b)] if is_reference_entry(block) else []


#: What a reference entry carries (issue 37): a year, a DOI, a link, "et al.", an ISBN, or a ``[LABEL]`` first.
_CITED = re.compile(r"\b(?:1[5-9]|20)\d{2}[a-z]?\b|\bdoi\b|https?://|\bet al\.|\bisbn\b|^\[[^\]\s]{1,40}\]", re.I)
_LIST_MARK = re.compile(r"^(?:[-*•+]|\d{1,3}[.)])\s+")


def looks_like_entry(line: str) -> bool:
    """Whether one paragraph or list line reads as an entry of a reference list: it cites (a year, DOI, link,
    ``et al.``, ISBN or ``[LABEL]`` first; at most 600 characters), or it is a short title-like line of a
    reading list (at most 160 characters, no sentence inside it, not ending in ``.`` or ``:``)."""
    line = _LIST_MARK.sub("", line.strip(), count=1).strip()
    if not line or line.startswith("#"):
        return False
    if len(line) <= 600 and _CITED.search(line):
        return True
    return len(line) <= 160 and ". " not in line and not line.endswith((".", ":", "?", "!"))


def reads_as_references(text: str) -> bool:
    """Whether a section body under a reference-list title holds a reference list (issue 37: decided on what
    the entries look like, not on the heading's word alone; an HR handbook's "References" section about
    employment references is prose). Its entries are the lines of list blocks and the other paragraphs; at
    least half must look like entries (:func:`looks_like_entry`)."""
    entries: list[str] = []
    for a, b in paragraphs(text):
        block = text[a:b]
        lines = [ln for ln in block.split("\n") if ln.strip() and not ln.lstrip().startswith("#")]
        joined = joined_entries(block)
        if joined:
            entries += [block[x:y] for x, y in joined]
        elif lines and all(_LIST_MARK.match(ln.strip()) for ln in lines):
            entries += lines
        elif lines:
            entries.append(" ".join(lines))
    return bool(entries) and sum(looks_like_entry(e) for e in entries) * 2 >= len(entries)


def _section_end(headings: list[Heading], i: int, length: int) -> int:
    h = headings[i]
    return next((x.start for x in headings[i + 1:] if x.level <= h.level), length)


def _titled(doc: Document) -> Iterable[RoleSpan]:
    heads = list(doc.headings)
    for i, h in enumerate(heads):
        role = (TextRole.REFERENCES if REFERENCE_TITLE.match(h.title)
                else TextRole.TOC if TOC_TITLE.match(h.title) else None)
        if role is not None:
            end = _section_end(heads, i, len(doc.canonical))
            if end > h.end and (role != TextRole.REFERENCES or reads_as_references(doc.canonical[h.end:end])):
                yield RoleSpan(role, h.end, end)


def _by_paragraph(text: str, deadline: Deadline | None = None) -> Iterable[RoleSpan]:
    paras = paragraphs(text)
    run: list[tuple[int, int]] = []
    for k, (a, b) in enumerate(paras + [(len(text), len(text))]):
        if deadline is not None and k % 32 == 0:
            deadline.check(a)
        entries = _entry_spans(text, a, b) if b > a else []
        if entries:
            run += entries
            continue
        if len(run) >= 3:
            yield RoleSpan(TextRole.REFERENCES, run[0][0], run[-1][1])
        run = []
        if b <= a:
            break
        block = text[a:b]
        if is_toc(block):
            yield RoleSpan(TextRole.TOC, a, b)
        elif all(is_navigation(ln) for ln in block.split("\n") if ln.strip()):
            yield RoleSpan(TextRole.NAVIGATION, a, b)


def merge(*groups: Iterable[RoleSpan]) -> tuple[RoleSpan, ...]:
    """Role spans of several sources as one sorted tuple without overlaps (an earlier-starting span wins;
    touching spans of one role are joined)."""
    out: list[RoleSpan] = []
    for span in sorted((s for g in groups for s in g if s.end > s.start), key=lambda s: (s.start, -s.end)):
        if out and span.start < out[-1].end:
            continue
        if out and span.role == out[-1].role and span.start <= out[-1].end + 2:
            out[-1] = RoleSpan(span.role, out[-1].start, max(out[-1].end, span.end))
            continue
        out.append(span)
    return tuple(out)


def find_roles(doc: Document, deadline: Deadline | None = None) -> tuple[RoleSpan, ...]:
    """The document's role spans: the reader's own (``doc.roles``), then sections titled as reference lists
    or contents, then paragraphs that are reference entries, contents lines or navigation lines.

    ``deadline`` (issue 35) is checked every 32 paragraphs: past it, :class:`rag.ingest.budget.StageTimeout`
    is raised with the offset reached (the caller indexes the document without roles, and says so)."""
    return merge(doc.roles, _titled(doc), list(_by_paragraph(doc.canonical, deadline)))
