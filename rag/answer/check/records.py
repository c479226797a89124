"""The record of a source the question names, when a source holds several records of one kind (issue 39, item 4).

A source can hold records of one kind one after another, each opened by a label of the same shape: "Invoice 1043
... Invoice 1044 ...", "Room 11 ... Room 12 ...", "Customer: Acme Tools ... Customer: Birch Supply ...". A page of
four invoices is one chunk, and "The total due on invoice 1044 is EUR 1,250.00 [1]" holds every word and number of
its source: only the total is invoice 1043's (a new user's walk, 2026-12-07: shown as partly supported, wrong). When
the question names a record by a specific its label holds (a number, a name), a value of the answer must come from
that record: from its label to the next label of the same shape. Pure functions on strings, no model; a table's
rows are the table rule's (:func:`rag.answer.check.claims.statement_gaps`' named rows), not this one's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rag.text import WORD_RE

#: A label has at most this many words (the record's name and a few words of its kind: "Invoice 1044", "Room 12 -
#: south wing", "Customer: Birch Supply Ltd"); a longer statement is a sentence about the record, not its label.
LABEL_MAX_WORDS = 8


class _Statement(Protocol):
    start: int
    end: int

    def own(self) -> str: ...


def label_shape(text: str, names: set[str]) -> tuple[str, ...]:
    """The words of a label ``text`` that are not among ``names`` (its specifics, case-folded) and hold no digit, in
    order and case-folded: what labels of one kind share ("Invoice 1043" and "Invoice 1044" -> ``("invoice",)``)."""
    return tuple(w.casefold() for w in WORD_RE.findall(text)
                 if w.casefold() not in names and not any(ch.isdigit() for ch in w))


def label_kind(text: str, specifics) -> tuple[str, ...] | None:
    """The :func:`label_shape` of ``text`` when it is a label (at most :data:`LABEL_MAX_WORDS` words, no colon, a
    specific and another word: "Invoice 1044", not "Total due: EUR 1,250.00"), else ``None``."""
    text = text.strip()
    if not text or ":" in text or len(WORD_RE.findall(text)) > LABEL_MAX_WORDS:
        return None
    names = specifics(text)
    shape = label_shape(text, names)
    return shape if names and shape else None


def named_record(source: str, sts: Sequence[_Statement], asked: set[str], specifics, holds, is_table) -> tuple[int, int] | None:
    """``(start, end)`` offsets into ``source`` of the record the question names, or ``None``.

    ``sts``: the source's statements (:func:`rag.answer.check.claims.statements`), in order; ``asked``: the question's
    specifics (:func:`rag.answer.check.claims.specifics`); ``specifics``, ``holds``, ``is_table`` the claim check's own
    functions (passed in, so that this module does not import the one that calls it). A label is a statement of at most
    :data:`LABEL_MAX_WORDS` words, without a colon, that holds a specific and at least one other word (a field,
    "Total due: EUR 1,250.00", is a record's value, not what opens it); labels of one :func:`label_shape`
    are records of one kind. The record the question names (:func:`chosen`) runs from its label to the next label of
    that kind (or the source's end); the records named by labels of
    several kinds are intersected. ``None`` when no record is named, when
    two labels of a kind are (the question names the kind, not one record), or when the named records do not meet.
    """
    if not asked:
        return None
    kinds: dict[tuple[str, ...], list[tuple[int, int]]] = {}  # the statements that are labels, by kind
    for st in sts:
        own = st.own()
        shape = None if is_table(own.strip()) else label_kind(own, specifics)
        if shape:
            kinds.setdefault(shape, []).append((st.start, st.end))
    record: tuple[int, int] | None = None
    for spans in kinds.values():
        i = chosen(source, spans, asked, holds)
        if i is None:
            continue
        a, b = spans[i][0], (spans[i + 1][0] if i + 1 < len(spans) else len(source))
        record = (a, b) if record is None else (max(a, record[0]), min(b, record[1]))
    return record if record is None or record[0] < record[1] else None


def label_holds(sts: Sequence[_Statement], record: tuple[int, int], x: str, holds) -> bool:
    """Whether the label opening ``record`` (:func:`named_record`; the statement starting there) holds specific ``x``:
    the label names its whole record, so "Invoice 1044 is for Birch Supply" is read against the record's text."""
    return any(st.start == record[0] and holds(st.own(), x) for st in sts)


def chosen(source: str, labels: Sequence[tuple[int, int]], asked: set[str], holds) -> int | None:
    """Which of ``labels`` (offsets into ``source`` of two or more labels of one kind, in order) the question names.

    Each specific of ``asked`` names the one label that holds it; one that no label holds names the one record (its
    label to the next) whose text holds it ("Which invoice is for Birch Supply?" names the record whose "Customer:
    Birch Supply" it asks by), unless the text before the first label holds it too. A specific two labels or two
    records hold ("EUR") names none. ``None`` for fewer than two labels, or when the specifics name no record or two
    (the question names the kind, or compares records)."""
    if len(labels) < 2:
        return None
    ends = [a for a, _ in labels[1:]] + [len(source)]
    named: set[int] = set()
    for y in asked:
        at = [i for i, (a, b) in enumerate(labels) if holds(source[a:b], y)]
        if not at and not holds(source[:labels[0][0]], y):
            at = [i for i, ((a, _), e) in enumerate(zip(labels, ends)) if holds(source[a:e], y)]
        if len(at) == 1:
            named.add(at[0])
    return named.pop() if len(named) == 1 else None


def record_labels(quote: str, headings: Sequence[tuple[int, int]], asked: set[str], specifics, holds,
                  ) -> list[tuple[int, int]]:
    """The headings of ``quote`` that label records of one kind, when the question names one of them: ``(start,
    end)`` offsets of every label of that kind, in order (``[]`` when the question names no record of a kind,
    :func:`chosen`).

    ``headings``: the offsets of ``quote``'s heading units (:func:`rag.answer.roles.source_units`, role heading),
    which the key passage and the model's excerpt otherwise never read; ``asked``, ``specifics``, ``holds`` as for
    :func:`named_record`. The model reads these labels with the body text (four invoices' totals read without their
    "Invoice 1043" ... "Invoice 1046" lines cannot be told apart), and the key passage scores a stretch with the
    label of its record (:func:`label_before`).
    """
    if not asked:
        return []
    kinds: dict[tuple[str, ...], list[tuple[int, int]]] = {}
    for a, b in headings:
        shape = label_kind(quote[a:b], specifics)
        if shape:
            kinds.setdefault(shape, []).append((a, b))
    out: list[tuple[int, int]] = []
    for spans in kinds.values():
        if chosen(quote, spans, asked, holds) is not None:
            out.extend(spans)
    return sorted(out)


def label_before(labels: Sequence[tuple[int, int]], start: int) -> tuple[int, int] | None:
    """The last of ``labels`` (sorted offsets, :func:`record_labels`) that ends at or before ``start``: the label of
    the record a stretch starting there belongs to (``None`` before the first)."""
    out = None
    for a, b in labels:
        if b > start:
            break
        out = (a, b)
    return out
