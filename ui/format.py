"""Markdown for the chat page, built from ``rag`` records. Pure: no Streamlit import, testable alone.

Everything the user, a document or the model wrote goes through
:func:`md_escape` before it reaches ``st.markdown`` (which never renders raw
HTML here: no ``unsafe_allow_html`` with such text). The only links on the
page are the ones built here from citation records: a ``[n]`` becomes a link
to its source at its place (design stage 9, issue 17): the in-app viewer
``/Source?doc=<id>&chunk=<chunk id>&start=S&end=E&n=N`` (plus ``&page=P`` for a
PDF, 1-based), for every format; a PDF's ``/app/static/<key>/<token>.pdf#page=N`` (the
browser's own viewer) is the secondary link, :func:`pdf_url`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from rag.answer.check.judged import AnswerFrom
from rag.answer.check.shown import cite_at, code_block, code_fence, join_shown
from rag.answer.cite import evidence_span
from rag.answer.history import ALL_ATTACHED, ATTACHED_MARK, all_attached
from rag.answer.tables import as_table, markdown_table
from rag.text import MARKER_RE, markdown_literal, strip_markers
from rag.types import MediaType

if TYPE_CHECKING:
    from rag.answer.check.judged import Judged
    from rag.answer.record import Answer

#: URL path of ``app_pages/2_Source.py`` (Streamlit names a page's URL after its file, number prefix dropped).
SOURCE_PAGE = "/Source"


def md_escape(text: str) -> str:
    """``text`` rendered literally and inert: :func:`rag.text.markdown_literal` (HTML as entities, Markdown and
    LaTeX characters escaped, no autolinked URL or address; issue 26)."""
    return markdown_literal(text, blocks=False)


def _literal(text: str) -> str:
    """:func:`md_escape`, list and heading markers at a line's start escaped too: a document's text, quoted."""
    return markdown_literal(text, blocks=True)


def blockquote(text: str, marks: Sequence[tuple[int, int]] = ()) -> str:
    """``text`` escaped and quoted line by line (``> ``), blank lines kept inside the quote and each line its own (a
    hard break); a document's own "1." or "-" at a line's start stays its text, not a list (a form's two "1. BRANCH"
    lines rendered as items 1 and 2: the browser check, 2026-12-07).

    ``marks``: ``(start, end)`` character ranges of ``text`` set in bold (what the model read of a
    source, :class:`rag.answer.excerpt.Excerpt` spans); whitespace at a range's edges stays outside the bold.
    """
    out, pos = [], 0
    for line in text.split("\n"):
        a0, b0 = pos, pos + len(line)
        pos = b0 + 1
        if not line.strip():
            out.append(">")
            continue
        parts, cur = [], a0
        for a, b in sorted(marks):
            a, b = max(a, a0, cur), min(b, b0)
            if a >= b:
                continue
            seg = text[a:b]
            core = seg.strip()
            lead = seg[: len(seg) - len(seg.lstrip())]
            trail = seg[len(seg.rstrip()) :]
            parts.append(_literal(text[cur:a] + lead) + (f"**{_literal(core)}**" if core else "") + _literal(trail))
            cur = b
        parts.append(_literal(text[cur:b0]))
        out.append("> " + "".join(parts))
    # a line followed by another ends in a hard break: escaped list items and a form's lines were run together into
    # one paragraph ("- Changes ... - It supports ...: - Java 11", the browser check, 2026-12-07)
    return "\n".join(line + "  " if line != ">" and k + 1 < len(out) and out[k + 1] != ">" else line
                     for k, line in enumerate(out))


def is_pdf(citation: Any) -> bool:
    """Whether a citation points into a PDF (opened at ``#page=N``) rather than a text document."""
    return citation.media_type == MediaType.PDF and citation.page is not None


def citation_url(citation: Any, page: int | None = None, collection: str | None = None) -> str:
    """Where ``[n]`` leads: the in-app viewer (the Source page) at the cited place, for every format.

    ``page`` overrides ``citation.page`` for a chunk that runs over a page
    break (:func:`rag.answer.cite.evidence_page` says where the cited sentence is);
    ``collection`` (issue 16) is added to the query when given, so a citation
    opened in a new tab reads the collection it came from.
    """
    params = {"doc": citation.document_id, "chunk": getattr(citation, "chunk_id", None), "start": citation.start,
              "end": citation.end, "n": citation.index}
    if params["chunk"] is None:
        del params["chunk"]
    if is_pdf(citation):
        params["page"] = page or citation.page
    if collection:
        params["collection"] = collection
    return f"{SOURCE_PAGE}?{urlencode(params)}"


def pdf_url(citation: Any, served: str | None, page: int | None = None) -> str | None:
    """The secondary link of a PDF citation: the stored PDF in the browser's own viewer at its 1-based page
    (PDF Open Parameters). ``served`` the URL of the document's served copy
    (``/app/static/<key>/<token>.pdf``, :func:`ui.services.publish_pdf`); ``None`` for other formats or when
    the copy is not served."""
    if not is_pdf(citation) or not served:
        return None
    return f"{served.split('#', 1)[0]}#page={page or citation.page}"


#: Characters of a citation's quote its hover preview shows (the whole quote is one click away).
PREVIEW_CHARS = 280

#: ASCII punctuation, each backslash-escaped inside a link title so the title is read as plain characters.
_PUNCT = re.compile(r"""([!-/:-@\[-`{-~])""")


def preview_text(citation: Any, limit: int = PREVIEW_CHARS, claim: str | None = None) -> str:
    """What a ``[n]`` shows on hover and keyboard focus (issue 42, as open-webui, RAGFlow and NotebookLM do):
    the citation's locator label, then its quote (whitespace collapsed, cut at ``limit`` characters with "…").
    With ``claim`` (the answer sentence the ``[n]`` ends), the quote starts at the source's sentence that shares the
    most words with it (:func:`rag.answer.cite.evidence_span`), "…" before it when it is not the quote's first:
    the card showed the chunk's first words, often not the ones the claim rests on."""
    text = str(citation.quote or "")
    lead = ""
    if claim:
        a, _ = evidence_span(text, strip_markers(claim))
        lead, text = ("… " if a > 0 else ""), text[a:]
    quote = lead + " ".join(text.split())
    if len(quote) > limit:
        quote = quote[: limit - 1].rstrip() + "…"
    return f"{citation.locator_label}\n“{quote}”"


def link_title(text: str) -> str:
    """``text`` as a CommonMark link title: ``"..."`` with every ASCII punctuation character backslash-escaped
    (read back as itself, never as markup) and no blank line (which would end the link)."""
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return '"' + _PUNCT.sub(r"\\\1", "\n".join(x for x in lines if x)) + '"'


def marker_link(n: int, url: str, title: str | None = None) -> str:
    """A Markdown link whose text is the literal ``[n]``; with ``title``, the link's hover/focus preview."""
    return f"[\\[{n}\\]]({url}{' ' + link_title(title) if title else ''})"


def link_markers(text: str, urls: Mapping[int, str], titles: Mapping[int, str] | None = None) -> str:
    """Escape ``text`` and turn each ``[n]`` / ``[n, m]`` into links; numbers without a URL are dropped.

    (The server removes invalid markers before this; dropping here is a second
    guard so a number with no source can never show as a link.) ``titles``: each link's preview.
    """
    titles = titles or {}
    out: list[str] = []
    pos = 0
    for m in MARKER_RE.finditer(text):
        out.append(md_escape(text[pos : m.start()]))
        nums = [int(x) for x in re.findall(r"\d+", m.group(1))]
        out.append("".join(marker_link(n, urls[n], titles.get(n)) for n in nums if n in urls))
        pos = m.end()
    out.append(md_escape(text[pos:]))
    return "".join(out)


def sentence_markdown(sentence: Any, urls: Mapping[int, str], titles: Mapping[int, str] | None = None,
                      mark: bool = True) -> str:
    """One checked answer sentence as Markdown.

    ``sentence`` has ``text``, ``cited``, ``supported_by``, ``unsupported``,
    ``inferred`` and, from the claim check of issue 14, ``shown_cites`` and ``verdict``
    (:class:`rag.answer.check.attribute.SentenceAttribution`). Unsupported: orange background, a warning sign and
    "(unsupported)" after it, no citation; an echo of the question or a sentence pointing at a source
    without saying what it says: grey note, no citation; otherwise its words with the links of the sources
    that support it (``shown_cites``), "(source found by the app)" (:data:`rag.answer.history.ATTACHED_MARK`) when
    the server attached the source (``mark=False``: the caller says it once for the whole answer). ``titles``: each
    link's preview (:func:`preview_text`).
    """
    titles = titles or {}
    block = code_block(sentence.text)
    if block is not None and not sentence.unsupported:  # a fenced code block stays one, its [n] after it
        links = "".join(marker_link(n, urls[n], titles.get(n)) for n in (getattr(sentence, "shown_cites", None) or ())
                        if n in urls)
        note = f" :gray[*({ATTACHED_MARK})*]" if mark and sentence.inferred and links else ""
        return code_fence(*block) + (f"\n\n{links}{note}" if links else "")
    body = md_escape(strip_markers(sentence.text))
    if sentence.unsupported:
        return f":orange-background[⚠️ {body or '…'}] :orange[*(unsupported: no source says this)*]"
    if getattr(sentence, "echo", False):
        return f"{body} :gray[*(restates the question; not a claim)*]"
    if getattr(sentence, "dangling", False):
        return f"{body} :gray[*(points at a source without saying what it says)*]"
    cites = getattr(sentence, "shown_cites", None)
    if cites is None:  # an object without the claim check's fields: its own markers, inferred source after
        md = link_markers(sentence.text, urls, titles)
        if sentence.inferred and sentence.supported_by and sentence.supported_by[0] in urls:
            n = sentence.supported_by[0]
            md = f"{md.rstrip()} {marker_link(n, urls[n], titles.get(n))} :gray[*({ATTACHED_MARK})*]"
        return md
    links = "".join(marker_link(n, urls[n], titles.get(n)) for n in cites if n in urls)
    plain = strip_markers(sentence.text)
    end = cite_at(plain)
    md = md_escape(plain[:end]) + (f" {links}" if links else "") + md_escape(plain[end:])
    if mark and sentence.inferred and links:
        md += f" :gray[*({ATTACHED_MARK})*]"
    return md


def key_passage_markdown(passage: Any, citations: Iterable[Any], pages: Mapping[int, int] | None = None,
                         collection: str | None = None, anchor: str | None = None) -> str:
    """The key passage (:class:`rag.answer.key_passage.KeyPassage`) as Markdown: a heading line with its
    ``[n]`` link and locator (``collection`` as in :func:`citation_url`; with ``anchor``, the link jumps to
    ``#<anchor>-<n>`` on the same page instead: the source row below the answer, issue 29), then the verbatim
    words as a block quote. Empty string when there is none."""
    if passage is None or not passage.sentences:
        return ""
    pages = pages or {}
    c = next((c for c in citations if c.index == passage.index), None)
    if c is None:
        return ""
    url = f"#{anchor}-{c.index}" if anchor else citation_url(c, pages.get(c.index), collection)
    link = marker_link(c.index, url, preview_text(c) if anchor else None)
    head = f"**Key passage** {link} {md_escape(c.locator_label)}\n\n"
    a, b = passage.sentences[0].start, passage.sentences[-1].end
    table = as_table(c.quote, a, b, getattr(c, "columns", ()), getattr(c, "first_column", 0)) \
        if passage.body in ("", c.quote[a:b]) else None
    return head + (markdown_table(*table) if table else blockquote(passage.body or passage.text))


def removed_markdown(sentences: Sequence[Any]) -> str:
    """The model's sentences the claim check left out, one list item each: the words (escaped, no marker)
    and, in grey, why (:attr:`rag.answer.check.attribute.SentenceAttribution.explained`)."""
    return "\n".join(f"- {md_escape(strip_markers(s.text)) or '…'} :gray[*({md_escape(s.explained)})*]"
                     for s in sentences)


def left_out_markdown(sentence: Any) -> str:
    """A sentence the claim check left out, flagged where the model wrote it (issue 39: text a user has read while
    it streamed is never silently withdrawn): its words struck through in grey, no ``[n]``, and why in plain words
    (:attr:`rag.answer.check.attribute.SentenceAttribution.explained`)."""
    body = md_escape(" ".join(strip_markers(sentence.text).split()))  # a code block's lines too: one struck line
    if not any(ch.isalnum() for ch in body):  # a bare "[1] [2]": nothing was read, nothing to flag
        return ""
    return f":gray[~~{body}~~ *(left out: {md_escape(sentence.explained)})*]"


def answer_markdown(text: str, sentences: Sequence[Any] | None, citations: Iterable[Any],
                    pages: Mapping[int, int] | None = None, collection: str | None = None,
                    anchor: str | None = None, left_out: Iterable[Any] = ()) -> str:
    """The final answer: per-sentence marks when ``sentences`` are given, else ``text`` with linked markers.

    ``pages`` maps a citation's ``index`` to the PDF page its link opens (see :func:`citation_url`,
    which also takes ``collection``); with ``anchor`` each ``[n]`` jumps to ``#<anchor>-<n>`` on the same page
    (the source row under the answer, where it opens in the app's viewer; issue 29) and previews its source's
    locator and quote on hover and keyboard focus (:func:`preview_text`, issue 42). A sentence among ``left_out``
    (the very objects of ``sentences`` the claim check kept out) is flagged in place (:func:`left_out_markdown`).
    """
    pages = pages or {}
    citations = list(citations)
    urls = {c.index: (f"#{anchor}-{c.index}" if anchor else citation_url(c, pages.get(c.index), collection))
            for c in citations}
    titles = {c.index: preview_text(c) for c in citations} if anchor else {}
    if not sentences:
        return link_markers(text, urls, titles)
    by_n = {c.index: c for c in citations}
    out, in_list, after_block = "", False, False
    left_out = list(left_out)
    dropped = {id(s) for s in left_out}
    once = all_attached(sentences, left_out)
    for s, new_line in zip(sentences, line_starts(text, sentences)):
        # each [n]'s card quotes the source's sentence this claim rests on, not the chunk's first words
        linked = set(getattr(s, "shown_cites", None) or ()) | set(s.supported_by[:1])
        own = {n: preview_text(by_n[n], claim=s.text) for n in linked if n in by_n} if anchor else {}
        md = left_out_markdown(s) if id(s) in dropped else sentence_markdown(s, urls, own, mark=not once)
        if not md:
            continue
        item = bool(_LIST_ITEM.match(s.text))
        first = not out
        block = code_block(s.text) is not None and id(s) not in dropped
        sep = "" if first else "\n\n" if block or after_block else \
            (("\n\n" if in_list and not item else "  \n") if new_line else " ")
        out += sep + md
        after_block = block
        in_list = item if new_line or first else in_list
    return out + (f"\n\n:gray[*({ALL_ATTACHED})*]" if once and out else "")


#: A line that Markdown reads as a list item: ``- x``, ``* x``, ``+ x``, ``1. x``, ``1) x``.
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s")


def line_starts(text: str, sentences: Sequence[Any]) -> list[bool]:
    """Per sentence, whether it begins a new line of ``text`` (the model's list items and paragraphs stay
    on their own lines instead of being run together). Found by locating each sentence's words in order."""
    out, pos = [], 0
    for s in sentences:
        probe = strip_markers(s.text).strip()[:24]
        i = text.find(probe, pos) if probe else -1
        if i < 0:
            out.append(False)
            continue
        out.append(pos > 0 and "\n" in text[pos:i])
        pos = i + len(probe)
    return out


#: How each answer verdict (issue 24) is shown above the answer: the Streamlit box and its icon.
VERDICT_STYLE = {
    "supported": ("success", ":material/check_circle:"),
    "partly_supported": ("warning", ":material/contrast:"),
    "may_not_answer": ("warning", ":material/warning:"),
    "refused": ("info", ":material/block:"),  # a refusal is no failure: not red (issue 29)
}


def verdict_markdown(judged: Judged) -> str:
    """The answer's verdict (a :class:`rag.answer.check.judged.Judged`) as one line of Markdown: the label in
    bold, then why in plain words (escaped): ``**Partly supported**: the model's answer did not pass ...``."""
    reason = judged.reason[:1].upper() + judged.reason[1:] if judged.reason else ""
    return f"**{md_escape(judged.label)}**" + (f" · {md_escape(reason)}." if reason else "")


def answer_notes(a: Answer, with_model: bool = True) -> list[str]:
    """The caption under a checked answer, as separate notes (joined with " · " on screen).

    ``a`` a :class:`rag.answer.record.Answer` (its judged ``shown`` and ``removed`` sentences,
    ``invalid_citations_removed``, ``model`` and ``first_words_ms`` or ``ttft_ms``). Says how many sentences the
    claim check left out, what "(source found by the app)" means when a shown sentence carries it (issue 14: the
    model cited no source or a wrong one and the server attached the one that holds the words; unexplained, first-time users could not
    read it: tryout 2026-11-30), invalid citations removed, the model and its first-words time (seconds; not
    with ``with_model=False``: the chat shows those in the answer's "Details", issue 29). Plain text: a caller
    that renders Markdown escapes each note (:func:`md_escape`).
    """
    notes = []
    removed = len(a.judged.removed)
    # in place beside the claims shown (issue 39); where the key passage stands in, the chat's expander below it
    # names them ("The model's answer, left out by the claim check (n sentences)"), and the caption said it again
    if removed and getattr(a.judged, "answer_from", AnswerFrom.MODEL) == AnswerFrom.MODEL:
        where = " (struck through above)" if a.judged.shown else ""
        notes.append(f"{_sentences(removed)} of the model left out by the claim check{where}")
    inferred = sum(1 for s in a.judged.shown if s.inferred)
    if inferred and not all_attached(a.judged.shown):  # else the answer's own last line says it (ALL_ATTACHED)
        notes.append(f"{_sentences(inferred)} marked ({ATTACHED_MARK}): the model named no source, or one that does "
                     "not say it; the app found the source that holds the words")
    if a.invalid_citations_removed:
        n = a.invalid_citations_removed
        notes.append(f"{n} invalid citation{'s' if n != 1 else ''} removed")
    if a.model and with_model:
        notes.append(f"model {a.model}")  # plain text: the caller escapes it once (it was shown "q4\\_k\\_m")
    words = getattr(a, "first_words_ms", None)  # issue 41: from the question's submission
    if words is not None and with_model:
        notes.append(f"first words after {words / 1000:.1f} s")
    elif a.ttft_ms is not None and with_model:  # an answer saved before first_words_ms
        notes.append(f"first token {a.ttft_ms / 1000:.1f} s")
    return notes


def _sentences(n: int) -> str:
    """``1 sentence`` / ``2 sentences``: a count in plain words (the notes read "1 sentence(s)")."""
    return f"{n} sentence{'s' if n != 1 else ''}"


def copy_text(a: Answer) -> str:
    """What an answer's copy button copies (issue 42: no copy button per answer): the shown answer as plain text
    with its ``[n]`` (the checked model answer, or the key passage standing as the answer), then its sources'
    locators, one a line."""
    from rag.answer.record import AnswerFrom

    j = a.judged
    kp = a.key_passage
    if j.answer_from == AnswerFrom.MODEL and j.shown:
        body = join_shown([s.shown() for s in j.shown])
    elif kp is not None and kp.sentences:
        body = f"{' '.join((kp.body or kp.text).split())} [{kp.index}]"
    else:
        body = (a.text or "").strip()
    cites = [f"[{c.index}] {c.locator_label}" for c in a.citations]
    return body + ("\n\nSources:\n" + "\n".join(cites) if cites else "")


#: The copy buttons' one script (no document text in it): each ``.rag-copy`` button not yet wired copies its own
#: ``data-copy`` attribute; the Clipboard API in a secure context, else a hidden text area and ``execCommand`` (a
#: served app on plain HTTP). Streamlit strips inline ``on...`` handlers, so the button is wired here.
COPY_SCRIPT = """<script>
document.querySelectorAll("button.rag-copy:not([data-wired])").forEach(function (b) {
  b.dataset.wired = "1";
  b.addEventListener("click", function () {
    var t = b.dataset.copy, done = function () { b.textContent = "Copied"; setTimeout(function () { b.textContent = "Copy"; }, 1500); };
    if (navigator.clipboard && window.isSecureContext) { navigator.clipboard.writeText(t).then(done); return; }
    var a = document.createElement("textarea"); a.value = t; document.body.appendChild(a); a.select();
    document.execCommand("copy"); a.remove(); done();
  });
});
</script>"""


def copy_button_html(text: str, key: str) -> str:
    """A "Copy" button that puts ``text`` on the clipboard: the text sits HTML-escaped in an attribute, read by
    :data:`COPY_SCRIPT` (nothing of it is ever parsed as markup or code)."""
    from html import escape

    return (f'<button class="rag-copy" id="copy-{escape(key)}" type="button" title="Copy the answer and its sources" '
            f'aria-label="Copy the answer and its sources" data-copy="{escape(text, quote=True)}">Copy</button>'
            + COPY_SCRIPT)


def nearest_note(nearest: float | None, citations: Sequence[Any]) -> str:
    """Under an answer's sources table: which source the gate's "nearest distance" is (issue 42: Details said
    "nearest distance 0.314" while the table showed 0.330 for source [1]; sources are numbered in the search's
    fused order, which weighs the words found too, not by distance). ``""`` when [1] is the nearest or nothing
    is known."""
    if nearest is None or not citations:
        return ""
    first = citations[0]
    if first.cosine_distance is not None and f"{first.cosine_distance:.3f}" == f"{nearest:.3f}":
        return ""
    at = next((c for c in citations if c.cosine_distance is not None and f"{c.cosine_distance:.3f}" == f"{nearest:.3f}"),
              None)
    whose = f"source [{at.index}]'s" if at is not None else "a passage's that is not among the sources shown"
    return (f"The nearest distance the gate names ({nearest:.3f}) is {whose}: sources are numbered in the search's "
            "order, which weighs the words found as well as the distance.")


def distance_label(distance: float | None) -> str:
    """A cosine distance as shown in the UI (3 decimals), ``n/a`` when unknown."""
    return "n/a" if distance is None else f"{distance:.3f}"
