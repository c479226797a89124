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


def named_record(source: str, sts: Sequence[_Statement], asked: set[str], specifics, holds, is_table) -> tuple[int, int] | None:
    """``(start, end)`` offsets into ``source`` of the record the question names, or ``None``.

    ``sts``: the source's statements (:func:`rag.answer.check.claims.statements`), in order; ``asked``: the question's
    specifics (:func:`rag.answer.check.claims.specifics`); ``specifics``, ``holds``, ``is_table`` the claim check's own
    functions (passed in, so that this module does not import the one that calls it). A label is a statement of at most
    :data:`LABEL_MAX_WORDS` words, without a colon, that holds a specific and at least one other word (a field,
    "Total due: EUR 1,250.00", is a record's value, not what opens it); labels of one :func:`label_shape`
    are records of one kind. When, among two or more labels of a kind, exactly one holds a specific of the question,
    its record runs from it to the next label of that kind (or the source's end); the records named by labels of
    several kinds ("Invoice 1044", "Customer: Birch Supply") are intersected. ``None`` when no record is named, when
    two labels of a kind are (the question names the kind, not one record), or when the named records do not meet.
    """
    if not asked:
        return None
    labels = []  # (index, shape, its specifics) of every short statement that names something
    for k, st in enumerate(sts):
        own = st.own().strip()
        if not own or ":" in own or is_table(own) or len(WORD_RE.findall(own)) > LABEL_MAX_WORDS:
            continue
        names = specifics(own)
        shape = label_shape(own, names)
        if names and shape:
            labels.append((k, shape, names))
    record: tuple[int, int] | None = None
    for shape in dict.fromkeys(s for _, s, _ in labels):
        of_shape = [k for k, s, _ in labels if s == shape]
        named = [k for k in of_shape if any(holds(sts[k].own(), y) for y in asked)]
        if len(named) != 1 or len(of_shape) < 2:  # no label of this kind named, or the kind itself ("every invoice")
            continue
        k = named[0]
        after = [j for j in of_shape if j > k]
        a, b = sts[k].start, (sts[after[0]].start if after else len(source))
        record = (a, b) if record is None else (max(a, record[0]), min(b, record[1]))
    return record if record is None or record[0] < record[1] else None


def record_labels(quote: str, headings: Sequence[tuple[int, int]], asked: set[str], specifics, holds,
                  ) -> list[tuple[int, int]]:
    """The headings of ``quote`` that label records of one kind, when the question names one of them: ``(start,
    end)`` offsets of every label of that kind, in order (``[]`` when the question names none, or two of a kind).

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
        text = quote[a:b].strip()
        if not text or ":" in text or len(WORD_RE.findall(text)) > LABEL_MAX_WORDS:
            continue
        names = specifics(text)
        shape = label_shape(text, names)
        if names and shape:
            kinds.setdefault(shape, []).append((a, b))
    out: list[tuple[int, int]] = []
    for spans in kinds.values():
        if len(spans) >= 2 and sum(any(holds(quote[a:b], y) for y in asked) for a, b in spans) == 1:
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
