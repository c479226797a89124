"""Answer correctness against short answer keys (issue 14): is the fact asked for in the answer?

A key is a list of GROUPS, each a list of alternatives: ``[["Longformer"], ["Reformer"]]`` asks for both
names, ``[["prefill", "pre-fill"]]`` for either spelling. An answer is correct when it contains one
alternative of every group, case-insensitive, after its ``[n]`` markers are removed (a key ``"3"`` must not
match the marker ``[3]``).

Keys come from the question rows themselves (``answer_keys``, as in ``pdf-dev/questions.jsonl``) or from a
separate JSONL of ``{"id", "answer_keys"}`` rows (``dev_answer_keys.jsonl`` beside ``dev_questions.jsonl``);
:func:`load_answer_keys` reads either, :func:`keys_file_for` finds the separate one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rag.evaluation.data import EvalInputError, read_jsonl
from rag.text import strip_markers

#: ``((alternative, ...), ...)``: one tuple of alternatives per group.
AnswerKey = tuple[tuple[str, ...], ...]


def _key(value, where: str) -> AnswerKey:
    ok = isinstance(value, list) and value and all(
        isinstance(g, list) and g and all(isinstance(a, str) and a.strip() for a in g) for g in value)
    if not ok:
        raise EvalInputError(f"{where}: answer_keys must be a non-empty list of non-empty lists of strings")
    return tuple(tuple(a for a in g) for g in value)


def keys_file_for(questions: Path) -> Path | None:
    """The separate keys file of a questions file, if there is one: ``<stem>`` with ``questions`` replaced by
    ``answer_keys`` (``dev_questions.jsonl`` -> ``dev_answer_keys.jsonl``), in the same folder."""
    q = Path(questions)
    cand = q.with_name(q.name.replace("questions", "answer_keys"))
    return cand if cand != q and cand.is_file() else None


def load_answer_keys(questions: Path, keys: Path | None = None) -> dict[str, AnswerKey]:
    """``{question id: key}`` from ``keys`` (a JSONL of ``id`` + ``answer_keys``) or else from the
    ``answer_keys`` field of the rows of ``questions``; ids without a key are absent.

    ``keys=None`` uses :func:`keys_file_for` when that file exists. Raises
    :class:`rag.evaluation.data.EvalInputError` naming the file and line for bad JSON or a malformed key.
    """
    src = Path(keys) if keys is not None else keys_file_for(Path(questions)) or Path(questions)
    out: dict[str, AnswerKey] = {}
    for n, row in read_jsonl(src):
        if isinstance(row, dict) and "answer_keys" in row and "id" in row:
            out[str(row["id"])] = _key(row["answer_keys"], f"{src.name}:{n}")
    return out


def contains_answer(text: str | None, key: Sequence[Sequence[str]]) -> bool:
    """Whether ``text`` holds one alternative of every group of ``key`` (case-insensitive; ``[n]`` markers
    removed first). An empty or ``None`` text is never correct; an empty key never matches."""
    if not text or not key:
        return False
    t = strip_markers(text).casefold()
    return all(any(a.casefold() in t for a in group) for group in key)


def correct(texts: Mapping[str, str | None], keys: Mapping[str, AnswerKey]) -> dict[str, bool]:
    """``{id: contains_answer(texts[id], keys[id])}`` for every id that has a key."""
    return {i: contains_answer(t, keys[i]) for i, t in texts.items() if i in keys}
