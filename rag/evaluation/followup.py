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

from rag.answer.conversation import Conversation
from rag.answer.followup import RewriteMethod, needs_context
from rag.answer.generate import TextGenerator
from rag.evaluation.data import needle_as_read, read_jsonl
from rag.evaluation.metrics import format_p, sign_test, wilson_interval
from rag.store.store import Store

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
        needles.update((q["id"], needle_as_read(q["doc"], q["needle"])) for _, q in read_jsonl(corpus_dir / rel))
    out = []
    for _, d in read_jsonl(path):
        if d["corpus"] not in QUESTION_FILES or d["target"] not in needles:
            raise ValueError(f"{path}: dialogue {d.get('id')}: unknown corpus {d['corpus']!r} or target {d['target']!r}")
        out.append(Dialogue(d["id"], d["corpus"], d["kind"], tuple(d["turns"]), d["target"], needles[d["target"]]))
    return out


def top_k_holds(store: Store, query: str, needle: str, k: int = 4) -> bool:
    """Whether one of ``store``'s top ``k`` hybrid hits for ``query`` holds the whole ``needle`` (whitespace collapsed)."""
    hits = store.search(query, k=k)
    want = _norm(needle)
    return any(want in _norm(r.content) for r in store.chunks([h.chunk_id for h in hits]))


def run_followup(dialogues: Sequence[Dialogue], stores: dict[str, Store], methods: Sequence[str],
                 get_generator: Callable[[], TextGenerator] | None = None, log: Callable[[str], None] = lambda s: None,
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


# --------------------------------------------------------------------------- standalone questions (issue 29)

#: New standalone questions in users' words, short ones most of all (the kind the short-question rule took for
#: follow-ups), some about things neither corpus holds ("How do I renew my passport?").
USER_QUESTIONS = "standalone_user_questions.jsonl"

#: The dev questions' wordings per corpus: the documents' (first) and a user's.
WORDINGS = {"course": ("query_course", "query_ticket"), "pdf-dev": ("query_doc", "query_user")}
OOD_FILES = {"course": "dev_ood.jsonl", "pdf-dev": "pdf-dev/ood.jsonl"}

#: How far down its file a standalone dev question's "previous question" is taken from (another subject).
PREVIOUS_OFFSET = 7


@dataclass(frozen=True)
class StandaloneQuestion:
    """A question that needs no context, asked after ``previous`` (another question over the same corpus):
    ``kind`` ``documents`` / ``user`` (the dev questions' two wordings), ``ood`` (out of domain) or ``new``
    (:data:`USER_QUESTIONS`)."""

    id: str
    corpus: str
    kind: str
    question: str
    previous: str


def standalone_questions(corpus_dir: Path, user_questions: Path | None = None) -> list[StandaloneQuestion]:
    """Every standalone question of the shared corpus (both corpora: the dev questions in both wordings, each
    asked after the dev question :data:`PREVIOUS_OFFSET` further down its file; the out-of-domain questions,
    after the i-th dev question) and of ``user_questions`` (after the i-th dev question of its corpus)."""
    out: list[StandaloneQuestion] = []
    dev: dict[str, list[dict]] = {}
    for corpus, rel in QUESTION_FILES.items():
        rows = [q for _, q in read_jsonl(corpus_dir / rel)]
        dev[corpus] = rows
        docs, user = WORDINGS[corpus]
        for i, q in enumerate(rows):
            prev = rows[(i + PREVIOUS_OFFSET) % len(rows)][docs]
            out += [StandaloneQuestion(f"{q['id']}/{kind}", corpus, kind, q[key], prev)
                    for kind, key in (("documents", docs), ("user", user))]
    for corpus, rel in OOD_FILES.items():
        rows = dev[corpus]
        for i, (_, q) in enumerate(read_jsonl(corpus_dir / rel)):
            out.append(StandaloneQuestion(q["id"], corpus, "ood", q["query"], rows[i % len(rows)][WORDINGS[corpus][0]]))
    if user_questions is not None:
        for i, (_, q) in enumerate(read_jsonl(user_questions)):
            rows = dev[q["corpus"]]
            out.append(StandaloneQuestion(q["id"], q["corpus"], "new", q["question"],
                                          rows[i % len(rows)][WORDINGS[q["corpus"]][0]]))
    return out


@dataclass
class StandaloneRun:
    """Per standalone question: whether the cheap signals flag it and what the conversation searched."""

    questions: list[StandaloneQuestion]
    flagged: list[bool] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)


def run_standalone(questions: Sequence[StandaloneQuestion], stores: dict[str, Store],
                   log: Callable[[str], None] = lambda s: None) -> StandaloneRun:
    """Ask each question after its ``previous`` one as the app does (:meth:`Conversation.standalone`, ``keywords``):
    a question searched as anything but typed is a false follow-up."""
    run = StandaloneRun(list(questions))
    for q in questions:
        conv = Conversation(stores[q.corpus], history=[q.previous], save=False)
        r = conv.standalone(q.question)
        run.flagged.append(needs_context(q.question))
        run.searched.append(r.standalone)
        if r.rewritten or r.declined:
            log(f"  {q.id} {'REWRITTEN' if r.rewritten else 'as typed, rewrite dropped:'} "
                f"{r.standalone if r.rewritten else r.declined!r}")
    return run


def standalone_lines(run: StandaloneRun) -> list[str]:
    """A Markdown table: per kind of standalone question, how many the cheap signals flag and how many are
    searched as something else than typed (false follow-ups)."""
    kinds = {"documents": "dev questions, documents' words", "user": "dev questions, a user's words",
             "ood": "out-of-domain questions", "new": f"new short questions in users' words ({USER_QUESTIONS})"}
    lines = ["| standalone questions | n | flagged by the cheap signals | searched with added words (false follow-ups) |",
             "|---|---|---|---|"]
    groups = [(label, [i for i, q in enumerate(run.questions) if q.kind == k]) for k, label in kinds.items()]
    groups.append(("all", list(range(len(run.questions)))))
    for label, idx in groups:
        if not idx:
            continue
        wrong = sum(run.searched[i] != run.questions[i].question.strip() for i in idx)
        lines.append(f"| {label} | {len(idx)} | {sum(run.flagged[i] for i in idx)} | {wrong} |")
    return lines


METHODS = tuple(m.value for m in (RewriteMethod.OFF, RewriteMethod.KEYWORDS, RewriteMethod.CONTEXT, RewriteMethod.MODEL))
