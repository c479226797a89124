"""Which units of a source may answer (issue 24, item 2): body text, never page furniture, references or a TOC.

Every role a chunk's own text can tell is decided by ingest's rules: the chunk's role (reference lists, contents,
navigation paragraphs: :mod:`rag.ingest.roles`, stored with the chunk, issue 28: ``Citation.role``) and the role of
each line and unit inside a body chunk (navigation and contents lines, page counters and dated running heads, title
lines: :mod:`rag.ingest.unit_roles`). This module keeps the one judgement that needs the other sources of the same
answer (issue 36, item 3): a line that is no sentence and repeats in another source, or twice in the same one, is
furniture (a slide deck's footer is on every slide: :func:`repeated_lines`).

Only ``body`` units stand as the key passage and are read by the model; only ``body`` and ``heading`` units
support a claim (a heading names what its section is about: :data:`SUPPORTING`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rag.ingest.roles import is_sentence
from rag.ingest.unit_roles import TABLE_ROW, Unit, chunk_unit_roles, norm_line, words
from rag.types import TextRole

Span = tuple[int, int]

#: Roles that never stand as the answer nor are read by the model, but still support a claim.
SUPPORTING = frozenset({TextRole.BODY, TextRole.HEADING})


def repeated_lines(quotes: Iterable[str]) -> frozenset[str]:
    """Lines (normalised: case-folded, whitespace collapsed) of at least two words that are no sentence and
    no table row, found in two of ``quotes`` or twice in one: a deck's footer, a running head."""
    seen: Counter[str] = Counter()
    for q in quotes:
        for line in q.splitlines():
            s = line.strip()
            if len(words(s)) >= 2 and not TABLE_ROW.match(s) and not is_sentence(s):
                seen[norm_line(s)] += 1
    return frozenset(k for k, n in seen.items() if n >= 2)


def source_units(quote: str, *, role: TextRole | str | None = None,
                 repeated: frozenset[str] = frozenset()) -> list[Unit]:
    """Every unit of ``quote`` (a source's chunk text) with its role, in order: ingest's rules
    (:func:`rag.ingest.unit_roles.chunk_unit_roles`) with ``repeated`` (:func:`repeated_lines` of the answer's
    sources) read as furniture. ``role``: the chunk's stored role; every unit of a chunk that is not ``body`` takes
    it."""
    return chunk_unit_roles(quote, role=role, repeated=repeated)


def non_answer_spans(quote: str, *, role: TextRole | str | None = None, repeated: frozenset[str] = frozenset(),
                     keep: frozenset[TextRole] = frozenset({TextRole.BODY})) -> list[Span]:
    """``(start, end)`` offsets of the units of ``quote`` whose role is not in ``keep`` (default: all but
    body), sorted: what the key passage and the model's excerpt never use (``keep=SUPPORTING`` for what a
    claim may not lean on)."""
    return [(u.start, u.end) for u in source_units(quote, role=role, repeated=repeated)
            if u.role not in keep]
