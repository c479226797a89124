"""Follow-up questions judged by retrieval (issue 16): recall@4 of a dialogue's second turn, with and without rewriting.

A dialogue (``tests/data/followup_dialogues.jsonl``) is two questions over one
corpus: a standalone first turn, then a second turn that leans on it ("How
many problems does it contain?"), whose NEEDLE is the one of a shared
question (``target``: ``q01``-``q24`` of ``corpus/dev_questions.jsonl``,
``d01``-``d30`` of ``corpus/pdf-dev/questions.jsonl``), so no corpus text is
copied here. ``kind`` ``standalone`` dialogues are controls: their second
turn needs no context, and a rewrite must leave it alone.

The second turn is searched (hybrid, the store's settings, top 4) as typed,
and as each :class:`rag.answer.followup.RewriteMethod` makes it standalone (the
first turn as the history of a :class:`rag.answer.conversation.Conversation`,
as the app and the CLI make it); a
hit is a top-4 chunk whose ``content`` holds the whole needle (whitespace
collapsed), as in the design's "How retrieval is judged".
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.answer.conversation import Conversation
from rag.answer.followup import RewriteMethod, needs_context
from rag.evaluation.data import read_jsonl
from rag.evaluation.metrics import format_p, sign_test, wilson_interval

#: Where the shared corpus keeps each dialogue corpus's questions (relative to ``shared/corpus``).
QUESTION_FILES = {"course": "dev_questions.jsonl", "pdf-dev": "pdf-dev/questions.jsonl"}


@dataclass(frozen=True)
class Dialogue:
    """Two turns over one corpus; ``target`` the shared question whose needle answers the second turn."""

    id: str
    corpus: str
    kind: str
    turns: tuple[str, str]
    target: str
    needle: str = ""


@dataclass
class FollowupRun:
    """Per method, per dialogue: the query searched and whether its top 4 held the needle; rewrite times in ms."""

    dialogues: list[Dialogue]
    queries: dict[str, list[str]] = field(default_factory=dict)
    hit: dict[str, list[bool]] = field(default_factory=dict)
    rewrite_ms: dict[str, list[float]] = field(default_factory=dict)
    flagged: list[bool] = field(default_factory=list)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def load_dialogues(path: Path, corpus_dir: Path) -> list[Dialogue]:
    """The dialogues of ``path`` with each target's needle read from the shared corpus at ``corpus_dir``.

    Raises ``ValueError`` naming the dialogue when its target or corpus is unknown.
    """
    needles: dict[str, str] = {}
    for rel in QUESTION_FILES.values():
        needles.update((q["id"], q["needle"]) for _, q in read_jsonl(corpus_dir / rel))
    out = []
    for _, d in read_jsonl(path):
        if d["corpus"] not in QUESTION_FILES or d["target"] not in needles:
            raise ValueError(f"{path}: dialogue {d.get('id')}: unknown corpus {d['corpus']!r} or target {d['target']!r}")
        out.append(Dialogue(d["id"], d["corpus"], d["kind"], tuple(d["turns"]), d["target"], needles[d["target"]]))
    return out


def top_k_holds(store: Any, query: str, needle: str, k: int = 4) -> bool:
    """Whether one of ``store``'s top ``k`` hybrid hits for ``query`` holds the whole ``needle`` (whitespace collapsed)."""
    hits = store.search(query, k=k)
    want = _norm(needle)
    return any(want in _norm(r.content) for r in store.chunks([h.chunk_id for h in hits]))


def run_followup(dialogues: Sequence[Dialogue], stores: dict[str, Any], methods: Sequence[str],
                 get_generator: Callable[[], Any] | None = None, log: Callable[[str], None] = lambda s: None,
                 k: int = 4) -> FollowupRun:
    """Search every dialogue's second turn as typed (``off``) and as each of ``methods`` rewrites it.

    A method name ending in ``-always`` (``context-always``) rewrites every second turn, flagged by
    :func:`rag.answer.followup.needs_context` or not.

    ``stores`` maps a corpus name to a :class:`rag.store.store.Store` holding it.
    """
    run = FollowupRun(list(dialogues))
    for d in dialogues:
        run.flagged.append(needs_context(d.turns[1]))
    for m in methods:
        run.queries[m], run.hit[m], run.rewrite_ms[m] = [], [], []
        for d in dialogues:
            t0 = time.perf_counter()
            base, always = (m[:-len("-always")], True) if m.endswith("-always") else (m, False)
            conv = Conversation(stores[d.corpus], history=[d.turns[0]], save=False)  # the app's and the CLI's turn
            r = conv.standalone(d.turns[1], base, always=always, get_generator=get_generator)
            run.rewrite_ms[m].append((time.perf_counter() - t0) * 1000.0)
            ok = top_k_holds(stores[d.corpus], r.standalone, d.needle, k)
            run.queries[m].append(r.standalone)
            run.hit[m].append(ok)
            log(f"  {m:<7} {d.id} {'hit ' if ok else 'miss'} {r.standalone!r}")
    return run


def summary_lines(run: FollowupRun, k: int = 4) -> list[str]:
    """A Markdown table: R@k of the second turn per method and corpus (Wilson 95 %), sign tests against ``off``."""
    methods = list(run.hit)
    follow = [i for i, d in enumerate(run.dialogues) if d.kind == "followup"]
    control = [i for i, d in enumerate(run.dialogues) if d.kind != "followup"]
    corpora = sorted({run.dialogues[i].corpus for i in follow})
    head = "| second turn | " + " | ".join(methods) + " |"
    lines = [head, "|" + "---|" * (len(methods) + 1)]

    def cell(m: str, idx: list[int]) -> str:
        n, s = len(idx), sum(run.hit[m][i] for i in idx)
        lo, hi = wilson_interval(s, n)
        return f"{s}/{n} = {s / n:.2f} [{lo:.2f}, {hi:.2f}]" if n else "-"

    for c in corpora:
        idx = [i for i in follow if run.dialogues[i].corpus == c]
        lines.append(f"| follow-ups, {c} ({len(idx)}) | " + " | ".join(cell(m, idx) for m in methods) + " |")
    lines.append(f"| follow-ups, both ({len(follow)}) | " + " | ".join(cell(m, follow) for m in methods) + " |")
    if control:
        lines.append(f"| standalone controls ({len(control)}) | " + " | ".join(cell(m, control) for m in methods) + " |")
    ms = [sorted(run.rewrite_ms[m][i] for i in follow) for m in methods]
    lines.append("| rewrite time, median ms | " + " | ".join(f"{x[len(x) // 2]:.0f}" if x else "-" for x in ms) + " |")
    lines.append("")
    flagged = sum(run.flagged[i] for i in follow)
    lines.append(f"Cheap signals flag {flagged}/{len(follow)} follow-ups and "
                 f"{sum(run.flagged[i] for i in control)}/{len(control)} standalone controls.")
    base = "off" if "off" in run.hit else methods[0]
    for m in methods:
        if m == base:
            continue
        t = sign_test([run.hit[m][i] for i in follow], [run.hit[base][i] for i in follow])
        lines.append(f"{m} vs {base} on the follow-ups: +{t.wins} / -{t.losses}, exact two-sided sign test "
                     f"p = {format_p(t.p)}.")
    return lines


METHODS = tuple(m.value for m in (RewriteMethod.OFF, RewriteMethod.KEYWORDS, RewriteMethod.CONTEXT, RewriteMethod.MODEL))
