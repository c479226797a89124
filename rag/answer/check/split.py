"""An answer cut into the sentences the claim check judges one by one (design stage 8, issue 14).

Lines first (a list item or a paragraph each), then sentences by the chunker's rule (:func:`rag.text.sentence_spans`);
a ``[n]`` written after a full stop stays with the sentence before it, and a fenced code block is one piece.
"""

from __future__ import annotations

import re

from rag.text import FENCE_RE, MARKER_RE, sentence_spans

_LEADING_MARKERS_RE = re.compile(r"^(?:\s*" + MARKER_RE.pattern + r")+", re.I)


def split_sentences(text: str) -> list[str]:
    """Split an answer into sentences; markers written after a full stop stay with the sentence before.

    Lines (list items, paragraphs) are split first, then into sentences by
    :func:`rag.text.sentence_spans` (the chunker's rule: a full stop and a
    next word that is not lower-case, abbreviations excepted). ``"A is B. [1] C is D [2]."`` gives
    ``["A is B. [1]", "C is D [2]."]``. A marker that opens a line belongs to
    that line (the small model writes lists as ``[1] claim``), unless the line
    holds nothing else. A fenced code block, from its opening fence to its closing one (or the end), is one
    piece, its lines kept (a new user's answer showed a bare "```bash" and its command as two sentences, the
    closing fence dropped, 2026-12-06). Empty pieces are dropped.
    """
    pieces: list[str] = []
    fence: list[str] | None = None
    for raw in text.splitlines():
        if fence is not None:
            fence.append(raw.rstrip())
            if FENCE_RE.match(raw) and len(fence) > 1:
                pieces.append("\n".join(fence))
                fence = None
            continue
        if FENCE_RE.match(raw):
            fence = [raw.strip()]
            continue
        line = raw.strip()
        if not line:
            continue
        parts = [line[a:b] for a, b in sentence_spans(line)]
        for k, part in enumerate(parts):
            part = part.strip()
            if not part:
                continue
            lead = _LEADING_MARKERS_RE.match(part)
            if lead and pieces and (k > 0 or not part[lead.end() :].strip()):
                pieces[-1] = pieces[-1] + " " + lead.group(0).strip()
                part = part[lead.end() :].strip()
            if part and not (MARKER_RE.fullmatch(part) and pieces):
                pieces.append(part)
            elif part:
                pieces[-1] = pieces[-1] + " " + part
    if fence is not None:
        pieces.append("\n".join(fence).rstrip())
    return pieces
