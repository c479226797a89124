"""What an evaluation runs on: ground-truth questions, out-of-domain queries and the corpus documents.

Ground truth is a JSONL file of questions, each with a NEEDLE (a short verbatim
sentence occurring once in the corpus) and two phrasings (``query_course``,
``query_ticket``), plus a JSONL file of out-of-domain (OOD) queries
(``id``, ``query``, ``kind`` in ``near``/``far``). Errors name the file and
the 1-based line (:class:`EvalInputError`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rag.errors import ExtractionError, RagError, StoreError
from rag.ingest.extract import extract_bytes


class EvalInputError(RagError):
    """A questions / out-of-domain file is missing or malformed; the message names the file and line."""


@dataclass(frozen=True)
class Question:
    """One ground-truth question: a needle (verbatim, once in the corpus) and its two phrasings."""

    id: str
    doc: str
    needle: str
    query_course: str
    query_ticket: str


@dataclass(frozen=True)
class OODQuery:
    """An out-of-domain query; ``kind`` is ``"near"`` (near-topic) or ``"far"`` (unrelated)."""

    id: str
    query: str
    kind: str


@dataclass(frozen=True)
class EvalQuery:
    """One in-domain query as run: ``key`` is ``"<id>/<phrasing>"``, phrasing ``course`` or ``ticket``."""

    qid: str
    phrasing: str
    text: str
    needle: str

    @property
    def key(self) -> str:
        return f"{self.qid}/{self.phrasing}"


def _read_jsonl(path: Path, required: Sequence[str]) -> list[dict]:
    """Rows of a JSONL file, each checked for ``required`` string fields.

    Raises :class:`EvalInputError` naming ``path`` and the 1-based line for a
    missing file, bad JSON, a missing/empty field or a duplicate ``id``.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise EvalInputError(f"{path.name}: cannot read ({e.strerror or e})") from e
    except UnicodeDecodeError as e:
        raise EvalInputError(f"{path.name}: not UTF-8 text") from e
    rows, seen = [], set()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise EvalInputError(f"{path.name}:{n}: bad JSON ({e.msg})") from e
        if not isinstance(row, dict):
            raise EvalInputError(f"{path.name}:{n}: expected a JSON object")
        for f in required:
            if not isinstance(row.get(f), str) or not row[f].strip():
                raise EvalInputError(f"{path.name}:{n}: missing or empty field {f!r}")
        if row["id"] in seen:
            raise EvalInputError(f"{path.name}:{n}: duplicate id {row['id']!r}")
        seen.add(row["id"])
        rows.append(row)
    if not rows:
        raise EvalInputError(f"{path.name}: no rows")
    return rows


def load_questions(path) -> list[Question]:
    """Read a questions JSONL (``id``, ``doc``, ``needle``, ``query_course``, ``query_ticket``).

    Raises :class:`EvalInputError` naming the file and line on any defect.
    """
    fields = ("id", "doc", "needle", "query_course", "query_ticket")
    return [Question(**{f: r[f] for f in fields}) for r in _read_jsonl(Path(path), fields)]


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
    """Both phrasings of every question, course phrasing first: ``2 * len(questions)`` queries."""
    out = []
    for q in questions:
        out.append(EvalQuery(q.id, "course", q.query_course, q.needle))
        out.append(EvalQuery(q.id, "ticket", q.query_ticket, q.needle))
    return out


def store_documents(store) -> tuple[list, dict[str, str]]:
    """The ready documents of a ``rag.index.store.Store``, re-extracted from their stored original bytes.

    Returns ``(documents, failed)`` where ``failed`` maps a document label to
    the reason it is left out (not ready, original missing, extraction error);
    one bad document never stops the others. The evaluation re-chunks them
    with every strategy, so the store itself is not modified.
    """
    docs, failed = [], {}
    for row in store.documents():
        if row.status != "ready":
            failed[row.label] = f"status {row.status}" + (f" ({row.reason})" if row.reason else "")
            continue
        try:
            docs.append(extract_bytes(store.original_path(row.id).read_bytes(), row.name))
        except (OSError, StoreError) as e:
            failed[row.label] = f"original file unavailable ({e})"
        except ExtractionError as e:
            failed[row.label] = e.reason
    return docs, failed
