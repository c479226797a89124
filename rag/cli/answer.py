"""``python -m rag ask``: stream a cited answer, its key passage first (design stage 8; issues 14 and 16).

Heavy libraries (llama_cpp, torch) are imported by the ``rag`` modules only when a model is loaded,
so ``--help`` stays instant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from rag.answer.conversation import Conversation, TurnStream
from rag.answer.followup import RewriteMethod
from rag.answer.history import ATTACHED_MARK, previous_questions
from rag.answer.key_passage import KeyPassage
from rag.answer.record import Answer
from rag.answer.translate import searched_as_line
from rag.cli.collection import collection_option, store_settings
from rag.cli.store import resolve_docs
from rag.errors import StoreError
from rag.settings import Settings
from rag.store.store import Store
from rag.types import GateKind


def _settings(store: str | None, threshold: float | None, max_sources: int | None, model: str | None,
              collection: str | None = None, **kw: Any):
    s = store_settings(store, collection, threshold=threshold, max_sources=max_sources, **kw)
    if model:
        p = Path(model)
        if p.is_file():
            p = p.resolve()
        elif not p.is_absolute() and not (s.models_dir / p).is_file() and (s.models_dir / p.name).is_file():
            p = Path(p.name)  # "models/x.gguf" given from the repository root
        s = s.with_overrides(model_file=str(p))
    return s


def _open_store(s: Settings) -> Store:
    if not Path(s.store).is_dir():
        raise StoreError(f"no store at {s.store}; ingest documents first: python -m rag ingest --store {s.store} PATH")
    return Store(s.store, settings=s)


def sources_table(cites: list) -> str:
    """The sources table printed after an answer: n, document, locator, cosine distance."""
    if not cites:
        return "(no sources)"
    rows = [("n", "document", "locator", "distance")]
    for c in cites:
        name = c.document_label or c.document_name
        loc = c.locator_label[len(name):].lstrip(" ,>") if c.locator_label.startswith(name) else c.locator_label
        rows.append((f"[{c.index}]", name, (loc or "before the first heading") + f"  {c.fragment}",
                     f"{c.cosine_distance:.3f}"))
    w = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]:>{w[3]}}" for r in rows]
    lines += [f"[{c.index}] the same text is also in {', '.join(c.also_in)} (identical copies are cited once)"
              for c in cites if c.also_in]
    return "\n".join(lines)


def _notes(a: Answer) -> list[str]:
    notes = []
    if a.invalid_citations_removed:
        notes.append(f"{a.invalid_citations_removed} citation(s) to no source removed")
    if a.links_removed:
        notes.append(f"{a.links_removed} link(s) written by the model removed")
    for i, s in enumerate(a.sentences, start=1):
        if s.miscited and s.passed:
            notes.append(f"sentence {i} cites {list(s.cited)}, which does not hold it; [{s.supported_by[0]}] does (shown)")
        elif s.inferred:
            notes.append(f"sentence {i} had no citation; [{s.supported_by[0]}] supports it ({ATTACHED_MARK}, shown)")
    if a.dropped_sources:
        notes.append(f"source(s) {list(a.dropped_sources)} left out of the prompt for lack of context")
    return notes


def _history(path: str | None) -> list[str]:
    if path is None:
        return []
    try:
        return previous_questions(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError) as e:
        raise click.BadParameter(f"{path}: {e}", param_hint="--history") from e


def _chat_id(store: Store, chat: str | None) -> int | None:
    """The saved chat ``--chat`` continues (``None`` for none or ``new``: a new chat is made on saving)."""
    if chat is None or chat == "new":
        return None
    if not chat.isdigit() or store.chats.get(int(chat)) is None:
        raise StoreError(f"no chat with id {chat} in {store.path}; list them with: python -m rag chats list")
    return int(chat)


def key_passage_lines(kp: KeyPassage | None) -> list[str]:
    """The key passage as printed before the model's answer: ``Key passage [n] locator:`` then the words."""
    if kp is None or not kp.sentences:
        return []
    body = " ".join(kp.body.split()) if kp.body else kp.text
    return [f"Key passage [{kp.index}] {kp.sentences[0].locator_label}:", f"  {body}", ""]


def verdict_line(a: Answer) -> str:
    """The answer's verdict as the CLI prints it (issue 24): ``Verdict: Partly supported: <reason>``."""
    return f"Verdict: {a.judged.line()}"


def advice_lines(a: Answer) -> list[str]:
    """A refusal's or "may not answer"'s advice as the CLI prints it (issue 39, Deliver 3), after the verdict."""
    advice = a.advice
    return [f"  {line}" for line in advice.lines()] if advice is not None else []


def checked_lines(a: Answer) -> list[str]:
    """What the claim check did to the streamed answer: the checked answer when it differs, the note when
    the key passage stands as the answer, every sentence left out with its verdict and reason, then the
    answer's verdict (:func:`verdict_line`)."""
    out = []
    j = a.judged
    if j.note:
        out += ["", f"Note: {j.note}", f"Answer: {j.text}"]
    elif j.text is not None and " ".join((a.text or "").split()) != " ".join(j.text.split()):
        out += ["", f"Checked answer: {j.text}"]
    removed = j.removed
    if removed:
        out.append(f"Left out by the claim check ({len(removed)}):")
        out += [f"  - {s.body} ({s.explained})" for s in removed]
    return [*out, "", verdict_line(a), *advice_lines(a)]


@click.command()
@click.argument("question")
@click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None, help="Store directory (default: settings, env RAG_STORE).")
@collection_option
@click.option("--threshold", type=click.FloatRange(0.0, 2.0), default=None, help="Gate: cosine distance cut (default 0.675).")
@click.option("--max-sources", type=click.IntRange(1, 20), default=None, help="Gate: at most this many sources (default 4).")
@click.option("--model", default=None, help="GGUF file in models/ (or a path) to answer with.")
@click.option("--gate", type=click.Choice([g.value for g in GateKind]), default=None,
              help="calibrated (default): answered / mentions / refused on the store's own scale; learned: issue 8's "
                   "distance cut AND score; distance: the design's gate alone.")
@click.option("--min-score", type=click.FloatRange(0.0, 1.0), default=None,
              help="Answerability score from which the sources are taken to answer (default: the shipped model's).")
@click.option("--mention-score", type=click.FloatRange(0.0, 1.0), default=None,
              help="Calibrated gate: from this score up to --min-score the verdict is 'the documents mention this "
                   "but may not answer it'; below it, refused (default: the shipped model's).")
@click.option("--source-tokens", type=click.IntRange(0, 8192), default=None,
              help="Tokens of source text the model reads, shared by the sources (default 240; 0 = whole chunks).")
@click.option("--doc", "doc_ids", multiple=True, metavar="ID",
              help="Ask within this document only (id or unique prefix); repeat for several. Retrieval and the "
                   "gate see nothing else.")
@click.option("--history", "history_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="JSON list of the earlier turns (questions, {'question': ...} objects or chat messages): "
                   "a follow-up QUESTION is made standalone from them before retrieval.")
@click.option("--chat", default=None, metavar="ID|new",
              help="Continue saved chat ID (its questions are the history) or start a new one; the turn is saved.")
@click.option("--rewrite", type=click.Choice([m.value for m in RewriteMethod]), default=RewriteMethod.KEYWORDS.value,
              show_default=True, help="How a follow-up becomes standalone: keywords (the previous question's rarest "
                                      "words), context (the whole previous question), model (the GGUF), off.")
@click.option("--no-generate", is_flag=True, help="Only retrieve, gate and pick the key passage; no model is loaded.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the contract of issues 4, 5 and 14).")
def ask_cmd(question: str, store_dir: str | None, collection: str | None, threshold: float | None,
            max_sources: int | None, model: str | None, gate: str | None, min_score: float | None,
            mention_score: float | None, source_tokens: int | None, doc_ids: tuple[str, ...],
            history_file: str | None, chat: str | None, rewrite: str, no_generate: bool,
            as_json: bool) -> None:
    """Answer QUESTION from the store with [n] citations, or refuse without calling the model.

    The key passage (the source sentences that best match the question, verbatim) is printed first; the
    model's answer streams after it, then the claim check's verdict: sentences that restate the question,
    point at a source without saying anything, or are not in the source they cite are left out, and when
    no claim passes the key passage stands as the answer.
    """
    s = _settings(store_dir, threshold, max_sources, model, collection, gate=gate, min_score=min_score,
                  mention_score=mention_score, source_tokens=source_tokens)
    history = _history(history_file)
    store = _open_store(s)
    scope = resolve_docs(store, doc_ids)
    conv = Conversation(store, s, _chat_id(store, chat), history=history, save=chat is not None)
    turn = conv.ask(question, scope=scope, rewrite=rewrite)
    if as_json:
        a = turn.without_generation() if no_generate else turn.run()
        click.echo(json.dumps(turn_json(turn, a, conv.chat_id), ensure_ascii=False, indent=2))
        return
    a = _stream(turn, no_generate)
    if conv.chat_id is not None:
        click.echo(f"chat {conv.chat_id}: turn saved", err=True)
    _report(a)


def turn_json(turn: TurnStream, a: Answer, chat_id: int | None) -> dict[str, Any]:
    """``ask --json``: :meth:`rag.answer.record.Answer.to_json`, then ``followup`` (when there was a history),
    ``scope`` (with ``--doc``) and ``chat_id`` (with ``--chat``)."""
    d: dict[str, Any] = dict(a.to_json())
    fu = turn.followup
    if turn.previous:
        d["followup"] = {"question": fu.question, "standalone": fu.standalone, "method": fu.method or None}
    if turn.scope is not None:
        d["scope"] = list(turn.scope)
    if chat_id is not None:
        d["chat_id"] = chat_id
    return d


def _stream(turn: TurnStream, no_generate: bool) -> Answer:
    """Print the turn as it comes: the searched question, the 'mentions' notice, the key passage, the streamed
    answer and what the claim check did to it (a refusal and ``--no-generate`` print nothing here)."""
    if turn.followup.rewritten:
        click.echo(f"searched as: {turn.followup.standalone}", err=True)
    translated = searched_as_line(turn.gate)
    if translated:
        click.echo(translated)
    if turn.gate.notice:
        click.echo(turn.gate.notice)
        if turn.gate.why:
            click.echo(f"why: {turn.gate.why}", err=True)
        click.echo("The passages below mention it; the answer, if any, comes from them only:\n")
    if no_generate:
        return turn.without_generation()
    if turn.gate.refused:
        return turn.run()
    for line in key_passage_lines(turn.key_passage):
        click.echo(line)
    for piece in turn:
        click.echo(piece, nl=False)
    click.echo()
    for line in checked_lines(turn.answer):
        click.echo(line)
    return turn.answer


def _report(a: Answer) -> None:
    """After the stream: the refusal (why on stderr), or the sources table, then the notes and timings (stderr)."""
    if a.refused:
        click.echo(a.refusal)
        click.echo(verdict_line(a))
        for line in advice_lines(a):
            click.echo(line)
        if a.why:
            click.echo(f"why: {a.why}", err=True)
        return
    if not a.generated:
        for line in key_passage_lines(a.key_passage):
            click.echo(line)
        click.echo("(generation skipped: --no-generate)")
        click.echo(verdict_line(a))
        for line in advice_lines(a):
            click.echo(line)
    click.echo()
    click.echo(sources_table(a.citations))
    if a.generated:
        for n in _notes(a):
            click.echo(f"note: {n}", err=True)
        click.echo(f"\n{a.model}: first words {a.first_words_ms or 0:.0f} ms after asking (retrieval "
                   f"{a.retrieval_ms:.0f} ms, the model's first token {a.ttft_ms or 0:.0f} ms after it), "
                   f"{a.tokens} tokens in {a.generation_ms or 0:.0f} ms", err=True)
