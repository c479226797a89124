"""What an evaluation runs on: ground-truth questions, out-of-domain queries and the corpus documents.

Ground truth is a JSONL file of questions, each with a NEEDLE (a short verbatim
sentence occurring once in the corpus) and the same need asked twice: in the
documents' own words and in a user's words (issue 19 reports every figure per
:class:`Wording`). Two schemas name these phrasings (:data:`QUESTION_SCHEMAS`):
``query_course`` / ``query_ticket`` (the Markdown course corpus) and
``query_doc`` / ``query_user`` (``pdf-dev``); other fields (``page``,
``answer_keys``) are ignored. Out-of-domain (OOD) queries are a second JSONL
file (``id``, ``query``, ``kind`` in ``near``/``far``; others, e.g. ``why``,
ignored). Errors name the file and the 1-based line (:class:`EvalInputError`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from rag.errors import ExtractionError, RagError, StoreError
from rag.ingest.extract import extract_bytes
from rag.types import DocStatus


class EvalInputError(RagError):
    """A questions / out-of-domain file is missing or malformed; the message names the file and line."""


class Wording(StrEnum):
    """Whose words a query uses (issue 19): the documents' own (``doc``) or a user's / support ticket's (``user``)."""

    DOC = "doc"
    USER = "user"


#: The field pairs a questions file may use, ``(documents' wording, users' wording)``, tried in this order.
QUESTION_SCHEMAS = (("query_course", "query_ticket"), ("query_doc", "query_user"))


@dataclass(frozen=True)
class Question:
    """One ground-truth question: a needle (verbatim, once in the corpus) and the need in both wordings.

    ``query_doc`` is the documents' wording, ``query_user`` a user's;
    ``phrasings`` are their names in query keys, from the file's field names
    (``("course", "ticket")`` or ``("doc", "user")``).
    """

    id: str
    doc: str
    needle: str
    query_doc: str
    query_user: str
    phrasings: tuple[str, str] = ("course", "ticket")


@dataclass(frozen=True)
class OODQuery:
    """An out-of-domain query; ``kind`` is ``"near"`` (near-topic) or ``"far"`` (unrelated)."""

    id: str
    query: str
    kind: str


@dataclass(frozen=True)
class EvalQuery:
    """One in-domain query as run: ``key`` is ``"<id>/<phrasing>"`` (``q01/course``, ``d01/user``), ``wording`` whose words."""

    qid: str
    phrasing: str
    text: str
    needle: str
    wording: Wording

    @property
    def key(self) -> str:
        return f"{self.qid}/{self.phrasing}"


def _filled(row: dict, field: str) -> bool:
    return isinstance(row.get(field), str) and bool(row[field].strip())


def read_jsonl(path) -> list[tuple[int, dict]]:
    """``(1-based line number, object)`` of every non-blank line of a JSONL file: the project's one JSONL reader.

    Raises :class:`EvalInputError` naming the file (and the line) for a file
    that cannot be read or is not UTF-8, bad JSON, or a line that is not a JSON object.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise EvalInputError(f"{path.name}: cannot read ({e.strerror or e})") from e
    except UnicodeDecodeError as e:
        raise EvalInputError(f"{path.name}: not UTF-8 text") from e
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise EvalInputError(f"{path.name}:{n}: bad JSON ({e.msg})") from e
        if not isinstance(row, dict):
            raise EvalInputError(f"{path.name}:{n}: expected a JSON object")
        rows.append((n, row))
    return rows


def _read_jsonl(path: Path, required: Sequence[str], one_of: Sequence[Sequence[str]] = ()) -> list[dict]:
    """Rows of a JSONL file (:func:`read_jsonl`), each checked for ``required`` string fields and one complete
    group of ``one_of``.

    Raises :class:`EvalInputError` naming ``path`` and the 1-based line for a
    missing file, bad JSON, a missing/empty field or a duplicate ``id``.
    """
    path = Path(path)
    rows, seen = [], set()
    for n, row in read_jsonl(path):
        for f in required:
            if not _filled(row, f):
                raise EvalInputError(f"{path.name}:{n}: missing or empty field {f!r}")
        if one_of and not any(all(_filled(row, f) for f in group) for group in one_of):
            need = " or ".join(" + ".join(group) for group in one_of)
            raise EvalInputError(f"{path.name}:{n}: missing or empty fields: needs {need}")
        if row["id"] in seen:
            raise EvalInputError(f"{path.name}:{n}: duplicate id {row['id']!r}")
        seen.add(row["id"])
        rows.append(row)
    if not rows:
        raise EvalInputError(f"{path.name}: no rows")
    return rows


def needle_as_read(doc: str, needle: str) -> str:
    """The needle as the canonical text of ``doc`` holds it: a Markdown document's canonical text is rendered
    (issue 37, :func:`rag.ingest.web.markdown_render.render_markdown`), and the course corpus's needles quote its
    source (``**Time to First Token (TTFT)**``, backticks), so they are rendered the same way; other needles are
    returned as written."""
    if not doc.lower().endswith((".md", ".markdown")):
        return needle
    from rag.ingest.web.markdown_render import render_markdown

    return render_markdown(needle)


def load_questions(path) -> list[Question]:
    """Read a questions JSONL: ``id``, ``doc``, ``needle`` and either ``query_course`` + ``query_ticket``
    or ``query_doc`` + ``query_user`` (:data:`QUESTION_SCHEMAS`; a row may use either). A Markdown document's
    needle is kept as read (:func:`needle_as_read`).

    Raises :class:`EvalInputError` naming the file and line on any defect.
    """
    out = []
    for r in _read_jsonl(Path(path), ("id", "doc", "needle"), QUESTION_SCHEMAS):
        doc_f, user_f = next(g for g in QUESTION_SCHEMAS if _filled(r, g[0]) and _filled(r, g[1]))
        out.append(Question(r["id"], r["doc"], needle_as_read(r["doc"], r["needle"]), r[doc_f], r[user_f],
                            (doc_f.removeprefix("query_"), user_f.removeprefix("query_"))))
    return out


def load_ood(path) -> list[OODQuery]:
    """Read an out-of-domain JSONL (``id``, ``query``, ``kind`` in ``near``/``far``).

    Raises :class:`EvalInputError` naming the file and line on any defect.
    """
    rows = _read_jsonl(Path(path), ("id", "query", "kind"))
    for r in rows:
        if r["kind"] not in ("near", "far"):
            raise EvalInputError(f"{Path(path).name}: id {r['id']!r}: kind must be 'near' or 'far', got {r['kind']!r}")
    return [OODQuery(r["id"], r["query"], r["kind"]) for r in rows]


def expand_queries(questions: Sequence[Question]) -> list[EvalQuery]:
    """Both wordings of every question, the documents' first: ``2 * len(questions)`` queries."""
    out = []
    for q in questions:
        out.append(EvalQuery(q.id, q.phrasings[0], q.query_doc, q.needle, Wording.DOC))
        out.append(EvalQuery(q.id, q.phrasings[1], q.query_user, q.needle, Wording.USER))
    return out


def by_wording(queries: Sequence[EvalQuery]) -> dict[Wording, list[EvalQuery]]:
    """The queries of each wording present, in input order (``doc`` first)."""
    return {w: [q for q in queries if q.wording == w] for w in Wording if any(q.wording == w for q in queries)}


def store_documents(store) -> tuple[list, dict[str, str]]:
    """The ready documents of a ``rag.store.store.Store``, re-extracted from their stored original bytes.

    Returns ``(documents, failed)`` where ``failed`` maps a document label to
    the reason it is left out (not ready, original missing, extraction error);
    one bad document never stops the others. The evaluation re-chunks them
    with every strategy, so the store itself is not modified.
    """
    docs, failed = [], {}
    for row in store.documents():
        if row.status != DocStatus.READY:
            failed[row.label] = f"status {row.status}" + (f" ({row.reason})" if row.reason else "")
            continue
        try:
            docs.append(extract_bytes(store.original_path(row.id).read_bytes(), row.name))
        except (OSError, StoreError) as e:
            failed[row.label] = f"original file unavailable ({e})"
        except ExtractionError as e:
            failed[row.label] = e.reason
    return docs, failed
