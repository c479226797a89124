"""What a sentence of an answer claims, and the statement of a source that makes the same claim (issues 14, 24).

Pure functions on strings, no model:

* :func:`root`, :func:`roots`, :func:`novel_roots` - a sentence's claim words (:func:`rag.text.content_words`, lightly
  stemmed), and the ones it adds to the question (:func:`question_roots`, from the question's one record);
* :func:`specifics`, :func:`holds` - the numbers, dates, versions and names a sentence asserts, and whether
  a text holds one as a whole token; :func:`misspelt_names` - an opening word that is a source's name written wrong;
* :func:`statements` - a source cut into its statements: sentences, table rows (read with the table's header
  row) and list items (read with the line that introduces the list);
* :func:`statement_gaps` - issue 24, item 1: every specific a sentence asserts must occur in the cited source
  *in the same statement* as the claim's other words. "The vocabulary size is 896 [4]." is not supported by a
  source that holds 896 as the hidden size: the statement holding "896" says nothing of a vocabulary;
  "X is the founder of Y" is not supported by a slide whose footer names X;
* :func:`compounds`, :func:`source_roots` - camel-case identifiers kept whole (a source read both ways); yes/no and
  one-word answers are read in :mod:`rag.answer.check.short_answers`;
* a sentence that makes no claim of its own (no statement at all, one that sends the reader elsewhere, one that
  announces what follows, a section's title given back) is read in :mod:`rag.answer.check.no_claim`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rag.answer.check.lists import LIST_LINE, line_at, list_lead
from rag.answer.check.records import label_holds, named_record
from rag.answer.check.spelled import UNIT_WORDS, as_digits, spelled, value_like
from rag.answer.tables import record, split_cells
from rag.question import analyse
from rag.text import (
    TABLE_RULE,
    WORD_RE,
    content_words,
    strip_markers,
    table_head,
    units,
)

#: A word of this many letters or more matches another with the same first :data:`ROOT_LEN` letters
#: ("tokenization" / "tokenizer", "efficient" / "efficiency"): a light stem for the claim check only.
ROOT_MIN = 7
ROOT_LEN = 6

#: A token that names a specific: it holds a digit (a number, date, version: ``0.1``, ``2026``, ``v2.1``,
#: ``GPT-2``) or a capital after its first letter, or is capitalised inside a sentence (a name: ``Alpaca``,
#: ``HBM``, ``FlashAttention``).
TOKEN_RE = re.compile(r"[^\W_](?:[\w.,\-/]*[^\W_])?")


def root(word: str) -> str:
    """``word``'s root: its first :data:`ROOT_LEN` letters when it has :data:`ROOT_MIN` or more, else itself."""
    return word[:ROOT_LEN] if len(word) >= ROOT_MIN else word




def compounds(text: str) -> frozenset[str]:
    """The words of ``text`` written in camel case (a capital right after a small letter: ``suppressedInSource``,
    ``FlashAttention``, ``iPhone``), case-folded, with and without a final plural ``s``: identifiers made of words,
    which :func:`roots` keeps whole. Their first :data:`ROOT_LEN` letters are those of their first word, so the
    light stem took the 0.5B's right "set to suppressedInSource" for an echo of the question's "suppressed"
    (``bench answers --corpus real``, s02)."""
    out = set()
    for m in WORD_RE.finditer(text):
        w = m.group(0)
        if any(a.islower() and b.isupper() for a, b in zip(w, w[1:])):
            f = unicodedata.normalize("NFKC", w).casefold()
            out.update((f, f[:-1] if f.endswith("s") else f))
    return frozenset(out)


def _rooted(words, whole: frozenset[str]) -> set[str]:
    return {w if w in whole else root(w) for w in words}


def roots(text: str) -> set[str]:
    """The claim words of ``text`` (:func:`rag.text.content_words`) reduced to their roots (:data:`ROOT_LEN`);
    a camel-case identifier (:func:`compounds`) stays whole."""
    return _rooted(content_words(text), compounds(text))


def source_roots(text: str) -> set[str]:
    """:func:`roots` of a source, read both ways: every word's root and the word whole, so a sentence's camel-case
    "TypeScript" (kept whole) and its "Typescript" (rooted) each meet a source's either spelling (an adversarial
    review of :func:`compounds`, 2026-12-06)."""
    words = content_words(text)
    return {root(w) for w in words} | words


def question_roots(question: str) -> set[str]:
    """:func:`roots` of a question, from its one record's claim words (:attr:`rag.question.Question.claim_words`:
    the question is tokenized once per process, not once per sentence checked)."""
    return _rooted(analyse(question).claim_words, _question_compounds(question))


@lru_cache(maxsize=512)
def _question_compounds(question: str) -> frozenset[str]:
    return compounds(question)


def novel_roots(sentence: str, question: str | None) -> set[str]:
    """The roots of ``sentence``'s claim words that the question does not have: what the sentence adds.

    ``question=None`` counts every word as new (a check without the question).
    """
    words = roots(sentence)
    return words - question_roots(question) if question else words


def specifics(text: str) -> set[str]:
    """The numbers, dates, versions and names in ``text`` (markers removed), case-folded, thousands
    separators dropped: ``"GPT-2 scored 1,200 on MMLU in 2023 [1]."`` -> ``{"gpt-2", "1200", "mmlu", "2023"}``.

    A name is a word with a capital letter that does not open the sentence (or one with a capital after
    its first letter, anywhere), the pronoun "I" aside; a number is any token holding a digit, or a small number
    spelled out where it gives a value (:func:`rag.answer.check.spelled.value_like`), as its digits
    (:func:`as_digits`: "three" -> ``"3"``, "five-year" -> ``"5-year"``), so "locked after three failed attempts"
    asks its source for a 3 (or a "three") as "after 3 failed attempts" does; "There are three ways: ..." counts
    what it lists.
    """
    out = set()
    body = strip_markers(text)
    found = [m.group(0).rstrip(".,") for m in TOKEN_RE.finditer(body)]
    for k, m in enumerate(TOKEN_RE.finditer(body)):
        tok = found[k]
        if not tok or tok == "I":  # the pronoun is no name: "Should I ...?" asked no source for an "i"
            continue
        opens = k == 0 or body[: m.start()].rstrip().endswith((".", ":", "!", "?", "\n", "-", "*"))
        if any(ch.isdigit() for ch in tok):
            out.add(re.sub(r"(?<=\d),(?=\d{3})", "", tok).casefold())
        elif (digits := as_digits(tok)) is not None and value_like(tok, found[k - 1] if k else "",
                                                                  found[k + 1] if k + 1 < len(found) else ""):
            out.add(digits)
        elif any(ch.isupper() for ch in tok[1:]) or (tok[0].isupper() and not opens):
            out.add(tok.casefold())
    return out


def holds(source: str, specific: str) -> bool:
    """Whether ``source`` contains ``specific`` (from :func:`specifics`) as a whole token, case-insensitive,
    thousands separators ignored (``1200`` is found in ``1,200``, ``6`` is not found in ``805`` or ``6.5``), or a
    small number spelled out (:func:`spelled`: ``5-year`` is found in "five-year", ``3`` in "three")."""
    text = re.sub(r"(?<=\d),(?=\d{3})", "", source).casefold()
    pat = r"(?<![\w.])" + re.escape(specific) + r"(?![\w]|\.\d)"
    if re.search(pat, text):
        return True
    if any(re.search(r"(?<![\w-])" + re.escape(w) + r"(?!\w)", text) for w in spelled(specific)):
        return True
    # a name's plural or possessive ("Transformers", "BERT's") still names it
    return not any(ch.isdigit() for ch in specific) and re.search(r"(?<![\w])" + re.escape(specific) + r"(?:s|'s|’s)?(?!\w)", text) is not None


# --------------------------------------------------------------------------- statements of a source

#: In the statement that holds a specific, at least this share of the sentence's other claim words (roots)
#: must occur too (issue 24, item 1). Fitted on the course corpus's saved answers (``docs/answers.md``).
STATEMENT_MIN = 0.5
#: ... and that share may fall short of the best share any statement of the source reaches by at most this
#: much: a source that states the claim's subject elsewhere, with another value, does not support it
#: ("Vocabulary Size 151,646" beside "Hidden Size 896" for "the vocabulary size is 896").
STATEMENT_MARGIN = 0.25

_TABLE_LINE = re.compile(r"^[ \t]*\|")
_SEPARATOR_LINE = TABLE_RULE
#: A form's field: one line, a short capitalised label, a colon, then its value ("Total Budget: $331,404").
_FIELD_LINE = re.compile(r"^[ \t]*[A-Z][^:\n]{0,40}:[ \t]+\S[^\n]{0,200}$")


@dataclass(frozen=True)
class Statement:
    """One statement of a source: ``start``/``end`` character offsets of its unit in the source text, and
    ``context`` the text it is read with: the unit itself, after its table's header row (a table row), the
    line ending in a colon that introduces its list (a list item), after the first field of its form (a field of
    consecutive "Label: value" lines: "Total Budget: $331,404" is the budget of what "Suggestion Title: ..." names),
    or the sentence before it in the same paragraph (a sentence: "It has 151,643 tokens." says what "it" is in the
    sentence before)."""

    start: int
    end: int
    context: str
    #: The form's first field a field is read after (:attr:`context` holds it too); ``""`` for any other statement.
    lead: str = ""
    #: A sentence's own words, without the sentence before it (``None``: :attr:`context` is the statement's own,
    #: a table row after its header, a list item after its lead, a field after its form's first).
    alone: str | None = None

    def own(self) -> str:
        """The statement without a neighbouring sentence: :attr:`alone`, else :attr:`context`."""
        return self.context if self.alone is None else self.alone


def _table_header(text: str, start: int) -> str:
    """The header row of the Markdown table holding the row at ``start`` (``""`` when the table's first rows
    are not in ``text`` or the row is the header itself; :func:`rag.text.table_head`)."""
    head = table_head(text, start)
    if head is None or head[0] == text.rfind("\n", 0, start) + 1:
        return ""
    return text[head[0]:head[1]]


#: How many rows above a table row are read for the label row it sits under (:func:`_table_label`).
LABEL_ROWS = 50


def _table_label(text: str, start: int) -> str:
    """The nearest row above the Markdown table row at ``start`` that labels the rows under it: a first cell of words
    ending in a colon or in capitals, and every other cell empty ("| FRINGE BENEFITS: |  |" above "| 27% * salary
    ... | $41,850 |", a spreadsheet's block of rows; not "| Bob Chen |  |  |", a row with its cells left blank);
    ``""`` when none is within :data:`LABEL_ROWS` rows of the same table."""
    a, _ = line_at(text, start)
    for _ in range(LABEL_ROWS):
        if a <= 0:
            return ""
        pa, _pb = line_at(text, a - 1)
        line = text[pa:a - 1]
        if not _TABLE_LINE.match(line):
            return ""
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        head = cells[0].rstrip("*_ ")
        if len(cells) > 1 and any(ch.isalpha() for ch in head) and not any(cells[1:]) \
                and (head.endswith(":") or head.isupper()):
            return line
        a = pa
    return ""


def _table_like_lines(text: str, a: int, b: int) -> list[tuple[int, int]] | None:
    """The lines of ``text[a:b]`` when the unit is a table the extractor wrote as plain lines (three or more
    lines, none ending a sentence, at least half holding a digit: ``Hidden Size 896 1,536``); else ``None``."""
    spans = [(a + m.start(), a + m.end()) for m in re.finditer(r"[^\n]+", text[a:b]) if m.group().strip()]
    if len(spans) < 3:
        return None
    lines = [text[x:y].strip() for x, y in spans]
    if any(ln.endswith((".", "!", "?", ";", ",")) for ln in lines[:-1]) or any(ln[:1].islower() for ln in lines[1:]):
        return None  # wrapped prose: a line ends a clause, or the next one carries on in lower case
    return spans if sum(any(ch.isdigit() for ch in ln) for ln in lines) * 2 >= len(lines) else None


def _comment_split(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` of ``text`` cut again before each `` // `` (a code comment's start, spaces on both sides: no URL
    has one): a slide's speaker notes written as ``// Using CLI dotnet new web // Visual Studio File -> New
    Project`` are two statements, not one that says both (the 1.5B's "From Visual Studio, you can create the app
    using the CLI" passed the check on them, 2026-12-06)."""
    out = []
    for a, b in spans:
        start, i = a, text.find(" // ", a, b)
        while i != -1:
            if i > start:
                out.append((start, i))
            start = i + 1
            i = text.find(" // ", i + 4, b)
        out.append((start, b))
    return out


def statements(text: str) -> list[Statement]:
    """:func:`_statements` as a list (the claim check asks for a source's statements once per specific and per rule:
    they are read once per source text)."""
    return list(_statements(text))


@lru_cache(maxsize=256)
def _statements(text: str) -> tuple[Statement, ...]:
    """The statements of ``text`` (:func:`rag.text.units`, blank ones dropped), each with its
    :attr:`Statement.context`; a unit that is a table written as plain lines gives one statement per line,
    read after the block's first line (its header); a field of a form (consecutive units of one "Label: value"
    line each) is read after the form's first field."""
    out = []
    prev: tuple[int, int] | None = None
    form: str | None = None  # the first field of the form the last unit belongs to
    for a, b in _comment_split(text, units(text)):
        unit = text[a:b]
        if not unit.strip():
            continue
        rows = _table_like_lines(text, a, b)
        if rows:
            head = text[rows[0][0]:rows[0][1]]
            out.extend(Statement(x, y, text[x:y] if k == 0 else f"{head}\n{text[x:y]}") for k, (x, y) in enumerate(rows))
            prev = form = None
            continue
        field = bool(_FIELD_LINE.match(unit.strip("\n")))
        if field and form is not None:
            out.append(Statement(a, b, f"{form}\n{unit}", lead=form))
            prev = (a, b)
            continue
        form = unit.strip() if field else None
        if _TABLE_LINE.match(unit):
            label = _table_label(text, a)
            head = _table_header(text, a)  # the row's cells after their column names ("Dial: 254"; a walk, 2026-12-07)
            row = record(split_cells(unit), tuple(split_cells(head))) if head else unit
            ctx = f"{label}\n{row}" if label else row
        elif LIST_LINE.match(unit):
            ctx = f"{list_lead(text, a)}\n{unit}"
        elif prev is not None and "\n\n" not in text[prev[1]:a] and not _TABLE_LINE.match(text[prev[0]:prev[1]]) \
                and not LIST_LINE.match(text[prev[0]:prev[1]]) and not unit.lstrip().startswith("//"):
            ctx = f"{text[prev[0]:prev[1]]} {unit}"
        else:
            ctx = unit
        out.append(Statement(a, b, ctx, alone=unit))
        prev = (a, b)
    return tuple(out)


def _coverage(words: set[str], context: str) -> float:
    return len(words & source_roots(context)) / len(words) if words else 1.0


def statement_gaps(sentence: str, source: str, spec: Sequence[str], question: str | None = None,
                   heading: str = "", min_share: float = STATEMENT_MIN, margin: float = STATEMENT_MARGIN,
                   own: bool = False) -> list[str]:
    """The specifics of ``spec`` (numbers, names of ``sentence``, :func:`specifics`) that no statement of
    ``source`` makes together with the sentence's other claim words (issue 24, item 1).

    A specific passes when some statement (:func:`statements`) holds it (:func:`holds`) and holds at least
    ``min_share`` of the sentence's other claim roots (its roots less the specific's own; the question's
    roots join them when the sentence has fewer than two: "It is 896 [4]." is read as an answer to the
    question), and no other statement holds ``margin`` more of them (that one states the claim's subject,
    without this value). ``heading`` (the source's innermost section heading) counts as part of every
    statement. A specific no statement holds is a gap as well. With ``own`` (a one-word answer, :func:`answer_words`)
    a sentence of the source is read without the sentence before it (:meth:`Statement.own`), for the specific and
    for the question's words alike: "Rustup [1]." does not answer "Which tool manages dependencies?" from "...
    managed via rustup. Rust installations come with Cargo, a tool to manage dependencies", nor "byobu [1]" "Which
    tools multiplex the screen?" from "Use screen or tmux to multiplex the screen. byobu can enhance screen or tmux".
    """
    words = roots(sentence)
    sts = statements(source)
    # a table's row the question names by its own names and numbers ("Room 12", "Qwen2.5 1.5B") is the one row a
    # value of the answer may come from: "Room 12 costs $120" is not Room 11's price (an adversarial review)
    asked_specifics = specifics(question) if question else set()
    named_rows = {k for k, st in enumerate(sts) if asked_specifics and _TABLE_LINE.match(source[st.start:st.end])
                  and all(holds(st.context, y) for y in asked_specifics)}  # with its header: a table by columns
    if not named_rows:  # ... or the row the claim names by the words of its first cell, in lower case too ("The
        # basic plan includes 50 GB" is not the Team row's 50 GB: an adversarial review, 2026-12-07)
        named_rows = {k for k, st in enumerate(sts) if _TABLE_LINE.match(source[st.start:st.end])
                      and not _header_row(source, st.end)
                      and (label := _row_label(source[st.start:st.end])) and label <= words}
    # ... and of records of one kind ("Invoice 1043 ... Invoice 1044 ..."), the one the question names by its label
    record = None if named_rows else named_record(source, sts, asked_specifics, specifics, holds, _TABLE_LINE.match)
    said = specifics(sentence)
    off_column = {k for k, st in enumerate(sts) if _TABLE_LINE.match(source[st.start:st.end])
                  and _names_another_column(sentence, said, source[st.start:st.end], _table_header(source, st.start))}
    gaps = []
    for x in spec:
        # the specific's own pieces are not other words: "$41,850" is the roots "41" and "850" (a new user's walk of
        # the API, 2026-12-06: "The total budget is $41,850" passed on a row "| Subtotal | $41,850 |")
        others = words - roots(x) - _written_pieces(sentence, x)
        if len(others) < 2 and question:
            others |= question_roots(question) - roots(x)
        share = [_coverage(others, f"{heading}\n{st.own() if own else st.context}") for st in sts]
        best = max(share, default=0.0)
        if not any(c >= min_share and (c >= best - margin if not st.lead else _beats_rivals(others, sts, k, heading, margin))
                   for k, (st, c) in enumerate(zip(sts, share)) if holds(st.own() if own else st.context, x)
                   and (not named_rows or k in named_rows or not _TABLE_LINE.match(source[st.start:st.end]))
                   and k not in off_column
                   and (record is None or x in asked_specifics or record[0] <= st.start < record[1])
                   and not _bound_elsewhere(x, others - source_roots(heading), sts, k, sentence)) \
                and not (record and label_holds(sts, record, x, holds)  # "Invoice 1044" names its record's words
                         and _coverage(others, f"{heading}\n{source[record[0]:record[1]]}") >= min_share):
            gaps.append(x)
    return gaps


#: First words of a sentence that lean on the sentence before it for their subject ("It has 151,643 tokens.").
ANAPHORS = frozenset("it its they their them this these those he his she her such both either neither there latter "
                     "former same".split())


def _bound_elsewhere(x: str, others: set[str], sts: Sequence[Statement], k: int, sentence: str) -> bool:
    """Whether sentence statement ``sts[k]`` (read with the sentence before it) holds specific ``x`` only for a
    neighbour: ``x`` only in the sentence before while its own sentence says another number, or a claim word
    (``others``) its own sentence lacks said by another statement with another number of its own, which says every
    claim word its own sentence says, and more; either way only
    when its own sentence does not lean on the one before (no :data:`ANAPHORS` in its first three words). "Students
    receive a 30% discount" is not "Students receive a 20% discount. Seniors receive a 30% discount", nor "The basic
    plan includes 50 GB" "The team plan includes 50 GB ... The basic plan includes 10 GB" (an adversarial review,
    2026-12-07); "It has 151,643 tokens." still says what the sentence before names."""
    st = sts[k]
    own = st.own()
    if st.alone is None or st.lead or _TABLE_LINE.match(own) or LIST_LINE.match(own):
        return False
    if any(w.casefold() in ANAPHORS for w in WORD_RE.findall(own)[:3]):
        return False
    claimed = specifics(sentence)

    def rival(text: str, kind: str | None = None) -> bool:  # a number of its own the claim does not say (of the kind)
        return any(any(ch.isdigit() for ch in y) and y not in claimed and (kind is None or _unit_after(text, y) == kind)
                   for y in specifics(text))

    if not holds(own, x):  # a value of the sentence before, beside a value of the same kind of its own ("4 g" and
        # "2 g"); a name is the subject it goes on about ("Northwind Ltd ... The company employs 12,000 people")
        return any(ch.isdigit() for ch in x) and rival(own, _unit_after(sentence, x))
    # a sentence cut by a line break goes on in the next unit ("... (A homage to\n\nASCII, because ...")
    goes_on = k + 1 if k + 1 < len(sts) and not own.rstrip().endswith((".", "!", "?", ":", ";", '"', "\u201d", ")")) else -1
    mine = source_roots(own if goes_on < 0 else f"{own} {sts[goes_on].own()}")
    lacking = others - mine
    # the other statement must say all this one says of the claim, and more: "The device has 4 Gigabit Ethernet
    # ports" still says the X200 router's ports, and "The library opens at 9 am" joins "Members may borrow up to 10
    # books" (a held-out review, 2026-12-07)
    return any(lacking & (theirs := source_roots(o.own())) and not holds(o.own(), x) and rival(o.own())
               and others & mine < others & theirs
               for j, o in enumerate(sts) if j not in (k, goes_on))


def _unit_after(text: str, x: str) -> str | None:
    """The word after the first number of ``text`` whose :func:`specifics` is ``x`` ("g" for "4" in "up to 4 g per
    day"), case-folded; ``None`` when there is none."""
    words = WORD_RE.findall(text)
    for i, w in enumerate(words[:-1]):
        if any(ch.isdigit() for ch in w) and x in specifics(w):
            return words[i + 1].casefold()
    return None


def _header_row(text: str, end: int) -> bool:
    """Whether the table row of ``text`` ending at ``end`` is its table's header: the line after it is a rule
    (``|---|---|``)."""
    a = text.find("\n", end) + 1 if text[end:end + 1] != "\n" else end + 1
    if a <= 0:
        return False
    b = text.find("\n", a)
    return _SEPARATOR_LINE.match(text[a:b if b >= 0 else len(text)]) is not None


def _names_another_column(sentence: str, said: set[str], row: str, head: str) -> bool:
    """Whether a table row does not make a claim that names its columns: the sentence says every word of some
    columns' names (a word of the sentence that starts with it: "dialing" for "Dial") that are filled in this row,
    and none of those cells holds a number or name the sentence says ("The dialing code for Kenya is 55" on
    "| KEN | 254 | Kenya | Nairobi | 55 million |": the Dial cell holds 254). ``head`` the table's header row
    (:func:`_table_header`; ``""``: no column names, never). An adversarial review of the rows read with their
    column names, 2026-12-07."""
    if not head:
        return False
    words = [m.group(0).casefold() for m in WORD_RE.finditer(strip_markers(sentence))]
    named = []
    for name, cell in zip(split_cells(head), split_cells(row)):
        parts = [w.casefold() for w in WORD_RE.findall(name) if w.isalpha() and len(w) >= 3]
        if cell and parts and all(any(w.startswith(p) for w in words) for p in parts):
            named.append(cell)
    return bool(named) and not any(holds(cell, y) for cell in named for y in said)


def _row_label(row: str) -> set[str]:
    """The roots of a table row's first cell when it labels the row's values: words, no digit (a first cell "2019" or
    "10 GB" is a value), and some other cell filled (a row of a label alone, "| TRAVEL: |  |", heads a block:
    :func:`_table_label`); else the empty set."""
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    if len(cells) < 2 or not any(cells[1:]) or any(ch.isdigit() for ch in cells[0]):
        return set()
    return roots(cells[0])


def _written_pieces(sentence: str, x: str) -> set[str]:
    """The roots of specific ``x`` as ``sentence`` writes it ("$41,850" -> "41", "850" for ``x`` "41850"): the
    words of the sentence whose :func:`specifics` is ``x``, nothing else ("1.5B" keeps its "1" when ``x`` is
    "128k", an adversarial review, 2026-12-06)."""
    words = sentence.split()

    def writes(w: str) -> bool:
        return (x in specifics(w) and len(specifics(w)) == 1) or as_digits(w.strip(".,;:!?()[]")) == x

    pieces = set().union(*(roots(w) for w in words if writes(w)))
    # its unit too: "five years" is one value, so "Backups are kept for five years" is not made by "Audit logs
    # are kept for a five-year period" for sharing "year" (a review, 2026-12-07)
    for w, after in zip(words, words[1:]):
        unit = after.strip(".,;:!?()[]").casefold()
        if writes(w) and (unit in UNIT_WORDS or unit.rstrip("s") in UNIT_WORDS):
            pieces |= roots(unit)
    return pieces


def _beats_rivals(others: set[str], sts: Sequence[Statement], k: int, heading: str, margin: float) -> bool:
    """Whether the form's field ``sts[k]`` holds ``others`` short of no other statement by more than ``margin``,
    the words its form's first field holds left out of the comparison: every field is read after them, so they say
    which form, not which field ("Hidden Size: 896" against "Vocabulary Size: 151,646" for "the vocabulary size of
    Qwen2.5 0.5B is 896", both read after "Model: Qwen2.5 0.5B")."""
    own = others - source_roots(sts[k].lead)
    mine = _coverage(own, f"{heading}\n{sts[k].context}")
    return mine >= max(_coverage(own, f"{heading}\n{st.context}") for st in sts) - margin
