"""``python -m rag ask`` (stream a cited answer) and ``python -m rag bench answers`` (design stage 8).

Heavy libraries (llama_cpp, torch) are imported by the ``rag`` modules only when a model is loaded,
so ``--help`` stays instant.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

import click

from rag.answer.attribute import attribute, lexical_support
from rag.answer.cite import Citation
from rag.answer.followup import RewriteMethod, rewrite_followup, rewrite_generator
from rag.answer.generate import get_default_generator
from rag.answer.history import previous_questions, turn_record
from rag.answer.pipeline import Answer, ask, check_answer, cosine_support, no_generation_answer
from rag.cli import common
from rag.cli.collection import collection_option, store_settings
from rag.cli.store import resolve_docs
from rag.errors import ModelError, StoreError
from rag.index.embed import get_embedder
from rag.index.store import Store
from rag.models import QWEN_05B, QWEN_15B
from rag.settings import get_settings
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


def _open_store(s: Any):
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
              for c in cites if getattr(c, "also_in", ())]
    return "\n".join(lines)


def _notes(a: Any) -> list[str]:
    notes = []
    if a.invalid_citations_removed:
        notes.append(f"{a.invalid_citations_removed} citation(s) to no source removed")
    if a.links_removed:
        notes.append(f"{a.links_removed} link(s) written by the model removed")
    for i, s in enumerate(a.sentences, start=1):
        if getattr(s, "dangling", False):
            notes.append(f"sentence {i} points at a source without saying what it says: {s.text!r}")
        elif s.unsupported:
            notes.append(f"sentence {i} is not supported by any source: {s.text!r}")
        elif s.miscited:
            notes.append(f"sentence {i} cites {list(s.cited)} but is supported by {list(s.supported_by)}")
        elif s.inferred:
            notes.append(f"sentence {i} had no citation; best-supporting source [{s.supported_by[0]}] attached (inferred)")
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


def _chat(store: Any, chat: str | None, question: str) -> tuple[int | None, list[str]]:
    """The saved chat ``--chat`` names (``new`` starts one) and its questions as searched."""
    if chat is None:
        return None, []
    if chat == "new":
        return store.chats.create(question), []
    if not chat.isdigit() or store.chats.get(int(chat)) is None:
        raise StoreError(f"no chat with id {chat} in {store.path}; list them with: python -m rag chats list")
    return int(chat), [t.standalone for t in store.chats.turns(int(chat))]


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
              help="Tokens of source text the model reads, shared by the sources (default 160; 0 = whole chunks).")
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
@click.option("--no-generate", is_flag=True, help="Only retrieve and gate; answer is null and no model is loaded.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the contract of issues 4 and 5).")
def ask_cmd(question: str, store_dir: str | None, collection: str | None, threshold: float | None,
            max_sources: int | None, model: str | None, gate: str | None, min_score: float | None,
            mention_score: float | None, source_tokens: int | None, doc_ids: tuple[str, ...],
            history_file: str | None, chat: str | None, rewrite: str, no_generate: bool, as_json: bool) -> None:
    """Answer QUESTION from the store with [n] citations, or refuse without calling the model."""
    s = _settings(store_dir, threshold, max_sources, model, collection, gate=gate, min_score=min_score,
                  mention_score=mention_score, source_tokens=source_tokens)
    previous = _history(history_file)
    store = _open_store(s)
    scope = resolve_docs(store, doc_ids)
    chat_id, saved = _chat(store, chat, question)
    rw = rewrite_followup(question, previous + saved, rewrite, idf=lambda t: store.term_stats().idf(t),
                          get_generator=lambda: rewrite_generator(s))
    if rw.rewritten and not as_json:
        click.echo(f"searched as: {rw.standalone}", err=True)
    stream = ask(store, rw.standalone, s, doc_ids=scope)
    notice = getattr(stream.gate, "notice", None)
    if notice and not as_json:
        click.echo(notice)
        if getattr(stream.gate, "why", None):
            click.echo(f"why: {stream.gate.why}", err=True)
        click.echo("The passages below mention it; the answer, if any, comes from them only:\n")
    if no_generate:
        a = no_generation_answer(stream.gate, stream.cites, stream.retrieval_ms)
    elif as_json or stream.gate.refused:
        a = stream.run()
    else:
        for piece in stream:
            click.echo(piece, nl=False)
        click.echo()
        a = stream.answer
    if chat_id is not None:
        store.chats.append(chat_id, question, rw.standalone,
                           turn_record(question, rw.standalone, a, method=rw.method, scope=scope))
    if as_json:
        d = a.to_json()
        if previous or saved:
            d["followup"] = {"question": question, "standalone": rw.standalone, "method": rw.method or None}
        if scope is not None:
            d["scope"] = scope
        if chat_id is not None:
            d["chat_id"] = chat_id
        click.echo(json.dumps(d, ensure_ascii=False, indent=2))
        return
    if chat_id is not None:
        click.echo(f"chat {chat_id}: turn saved", err=True)
    if a.refused:
        click.echo(a.refusal)
        if getattr(a.gate, "why", None):
            click.echo(f"why: {a.gate.why}", err=True)
        return
    if not a.generated:
        click.echo("(generation skipped: --no-generate)")
    click.echo()
    click.echo(sources_table(a.citations))
    for n in _notes(a) if a.generated else []:
        click.echo(f"note: {n}", err=True)
    if a.generated:
        click.echo(
            f"\n{a.model}: retrieval {a.retrieval_ms:.0f} ms, first token {a.ttft_ms or 0:.0f} ms, "
            f"{a.tokens} tokens in {a.generation_ms or 0:.0f} ms",
            err=True,
        )


# ----------------------------------------------------------------------------- benchmark


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _bench_model(store: Any, s: Any, questions: list[dict], ood: list[dict], log) -> dict:
    """Answer every dev question and OOD query with the model of ``s``; then score (:func:`_score`)."""
    res: dict[str, Any] = {"model": s.model_file, "dev": [], "ood": []}
    for q in questions:
        stream = ask(store, q["query_course"], s)
        a = stream.run()
        needle = _norm(q["needle"])
        res["dev"].append({"id": q["id"], "a": a,
                           "needle_read": any(needle in _norm(e.text) for e in stream.excerpts)})
        log(f"  {q['id']} {'REFUSED' if a.refused else (a.text or '')[:110]!r}")
    for q in ood:
        a = ask(store, q["query"], s).run()
        res["ood"].append({"id": q["id"], "kind": q.get("kind"), "a": a})
        log(f"  {q['id']} {'REFUSED' if a.refused else (a.text or '')[:110]!r}")
    return _score(res, {q["id"]: q for q in questions}, store.embedder)


def _score(res: dict, questions: dict[str, dict], embedder: Any) -> dict:
    """Needle checks per dev answer and the attribution-rule comparison (lexical / MiniLM / either)."""
    counts = {"lexical": 0, "minilm": 0, "either": 0}
    for row in res["dev"]:
        a = row["a"]
        needle = _norm(questions[row["id"]]["needle"])
        row["needle_in_sources"] = any(needle in _norm(c.quote) for c in a.citations)
        row["needle_cited"] = any(needle in _norm(c.quote) for c in a.citations if c.index in a.cited_indices)
        if not (a.generated and a.sentences):
            continue
        quotes = [c.quote for c in a.citations]
        texts = [x.text for x in a.sentences]
        lex = lexical_support(texts, quotes)
        cos = cosine_support(embedder, texts, quotes)
        idx = [c.index for c in a.citations]
        for name, (lx, cs) in {"lexical": (lex, None), "minilm": (lex * 0, cos), "either": (lex, cos)}.items():
            counts[name] += sum(x.unsupported for x in attribute(texts, idx, lx, cs))
    res["rule_unsupported"] = counts
    return res


def _summary(res: dict) -> list[tuple[str, str]]:
    dev = [r for r in res["dev"]]
    gen = [r for r in dev if r["a"].generated]
    n = len(dev)
    sent = [x for r in gen for x in r["a"].sentences]
    ttft = [r["a"].ttft_ms for r in gen if r["a"].ttft_ms is not None]
    asked = [r["a"].ttft_ms + (r["a"].retrieval_ms or 0.0) for r in gen if r["a"].ttft_ms is not None]
    rates = [
        r["a"].tokens / ((r["a"].generation_ms - r["a"].ttft_ms) / 1000.0)
        for r in gen
        if r["a"].tokens > 1 and r["a"].ttft_ms is not None and r["a"].generation_ms > r["a"].ttft_ms
    ]
    ood = res["ood"]
    passed = [o for o in ood if not o["a"].refused]
    declined = [o for o in passed if o["a"].declined]
    cited_ood = [o for o in passed if o["a"].has_citation]
    ru = res["rule_unsupported"]
    refusal_ms = [o["a"].retrieval_ms for o in ood if o["a"].refused and o["a"].retrieval_ms is not None]
    f = lambda k, m: f"{k}/{m} ({k / m:.0%})" if m else "0/0"  # noqa: E731
    return [
        ("dev questions (query_course)", str(n)),
        ("passed the gate (answered by the model)", f(len(gen), n)),
        ("needle among the sources given", f(sum(r["needle_in_sources"] for r in gen), len(gen))),
        ("needle in the excerpts the model read", f(sum(r.get("needle_read", False) for r in gen), len(gen))),
        (">=1 valid citation written by the model", f(sum(r["a"].model_cited for r in gen), len(gen))),
        (">=1 valid citation after server handling (incl. inferred)", f(sum(r["a"].has_citation for r in gen), len(gen))),
        ("cited sources contain the needle", f(sum(r["needle_cited"] for r in gen), len(gen))),
        ("model said the sources lack the answer", f(sum(r["a"].declined for r in gen), len(gen))),
        ("sentences", str(len(sent))),
        ("sentences unsupported (lexical OR MiniLM, shipped rule)", f(sum(x.unsupported for x in sent), len(sent))),
        ("  unsupported under lexical only / MiniLM only", f"{ru['lexical']} / {ru['minilm']} of {len(sent)}"),
        ("sentences cited to the wrong source", f(sum(x.miscited for x in sent), len(sent))),
        ("sentences with inferred source", f(sum(x.inferred for x in sent), len(sent))),
        ("invalid citations removed (total)", str(sum(r["a"].invalid_citations_removed for r in gen))),
        ("model links removed (total)", str(sum(r["a"].links_removed for r in gen))),
        ("TTFT p50 / p95 ms (excerpts + prompt + prefill)", f"{common.percentile(ttft, 50):.0f} / {common.percentile(ttft, 95):.0f}"),
        ("question to first token p50 / p95 ms (retrieval included)",
         f"{common.percentile(asked, 50):.0f} / {common.percentile(asked, 95):.0f}"),
        ("decode tokens/s (median)", f"{statistics.median(rates):.1f}" if rates else "-"),
        ("tokens per answer (mean)", f"{statistics.mean(r['a'].tokens for r in gen):.0f}" if gen else "-"),
        ("retrieval ms p50 (embed+BM25+dense+RRF+gate+cite)",
         f"{common.percentile([r['a'].retrieval_ms for r in dev if r['a'].retrieval_ms is not None], 50):.0f}"),
        ("refusal ms p50 / max (OOD refused; model never touched)",
         f"{common.percentile(refusal_ms, 50):.0f} / {max(refusal_ms, default=float('nan')):.0f}"),
        ("dev OOD queries passing the gate", f(len(passed), len(ood))),
        ("  of those: model declined / cited something", f"{len(declined)} / {len(cited_ood)}"),
    ]


@click.command()
@click.option("--store", "store_dir", type=click.Path(file_okay=False), default="data/bench-answers",
              show_default=True, help="Store holding the shared corpus (ingested here if missing).")
@common.shared_option
@click.option("--model", "models", multiple=True, help="GGUF(s) to compare (default: the 0.5B and, if present, the 1.5B).")
@click.option("--limit", type=int, default=None, help="Only the first N dev questions and N OOD queries.")
@click.option("--max-answer-tokens", "--max-tokens", "max_answer_tokens", type=click.IntRange(16, 4096), default=None,
              help="Generation cap, tokens (default settings max_answer_tokens, 384; --max-tokens is its old name).")
@click.option("--source-tokens", type=click.IntRange(0, 8192), default=None,
              help="Tokens of source text the model reads (default settings, 160; 0 = whole chunks).")
@click.option("--json-out", type=click.Path(dir_okay=False), default=None, help="Also write every answer as JSON here.")
@click.option("--rescore", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Do not generate: re-run today's server-side checks on answers saved by --json-out.")
def bench_answers_cmd(store_dir: str, shared: Path | None, models: tuple[str, ...], limit: int | None,
                      max_answer_tokens: int | None, source_tokens: int | None, json_out: str | None,
                      rescore: str | None) -> None:
    """Answer quality and speed on the 24 dev questions and the 20 dev out-of-domain queries."""
    corpus = common.corpus("course", shared)
    base = get_settings(store=store_dir, max_answer_tokens=max_answer_tokens, source_tokens=source_tokens)
    if not models:
        models = tuple(m.file_name for m in (QWEN_05B, QWEN_15B) if (base.models_dir / m.file_name).is_file())
    if not models:
        raise ModelError(f"no generator in {base.models_dir}; run: make models")
    questions = common.read_jsonl(corpus.questions)[:limit]
    ood = common.read_jsonl(corpus.ood)[:limit]
    if rescore:
        click.echo(common.header(f"bench answers --rescore {rescore}"))
        _print_results(_rescore(Path(rescore), questions, ood))
        return
    click.echo(common.header("bench answers"))
    click.echo(f"threshold {base.threshold}, max_sources {base.max_sources}, max_answer_tokens {base.max_answer_tokens}, "
               f"n_ctx {base.n_ctx}, threads {base.threads}, source_tokens {base.source_tokens}")
    store = common.ensure_corpus_store(Path(store_dir), sorted(corpus.docs.glob("*.md")), base,
                                       lambda x: click.echo(x, err=True))
    results = []
    for m in models:
        s = _settings(store_dir, None, None, m, max_answer_tokens=max_answer_tokens, source_tokens=source_tokens)

        t0 = time.perf_counter()
        get_default_generator(s)
        click.echo(f"\n== {m} (loaded in {(time.perf_counter() - t0) * 1000:.0f} ms)", err=True)
        results.append(_bench_model(store, s, questions, ood, lambda x: click.echo(x, err=True)))
    _print_results(results)
    if json_out:
        Path(json_out).write_text(json.dumps(
            [{"model": r["model"],
              "dev": [dict(id=x["id"], needle_cited=x["needle_cited"], needle_read=x.get("needle_read"), raw=x["a"].raw_text, **x["a"].to_json())
                      for x in r["dev"]],
              "ood": [dict(id=x["id"], kind=x["kind"], raw=x["a"].raw_text,
                           **{**x["a"].to_json(), "retrieval_ms": x["a"].retrieval_ms}) for x in r["ood"]]}
             for r in results],
            ensure_ascii=False, indent=1))


def _print_results(results: list[dict]) -> None:
    summaries = [_summary(r) for r in results]
    w0 = max(len(k) for k, _ in summaries[0])
    click.echo("\n| " + "metric".ljust(w0) + " | " + " | ".join(r["model"] for r in results) + " |")
    click.echo("|" + "-" * (w0 + 2) + "|" + "|".join("-" * (len(r["model"]) + 2) for r in results) + "|")
    for i, (k, _) in enumerate(summaries[0]):
        click.echo("| " + k.ljust(w0) + " | " + " | ".join(sm[i][1].ljust(len(r["model"])) for sm, r in zip(summaries, results)) + " |")
    for r in results:
        click.echo(f"\nOOD queries that passed the gate, {r['model']}:")
        for o in r["ood"]:
            if not o["a"].refused:
                click.echo(f"  {o['id']} ({o['kind']}): {_norm(o['a'].text or '')[:160]!r}")


def _answer_from_json(d: dict, embedder: Any):
    """Rebuild an :class:`rag.answer.pipeline.Answer` from a saved ``--json-out`` entry and re-run today's server-side checks."""
    fields = set(Citation.__dataclass_fields__)
    cites = [Citation(**{**{k: v for k, v in c.items() if k in fields}, "section": tuple(c.get("section") or ())})
             for c in d.get("citations", [])]
    a = Answer(query=d["query"], threshold=d["threshold"], refused=d["refused"], refusal=d["refusal"],
               citations=cites, model=d.get("model"), retrieval_ms=d.get("retrieval_ms"), ttft_ms=d.get("ttft_ms"),
               generation_ms=d.get("generation_ms"), tokens=d.get("tokens") or 0)
    raw = d.get("raw") or d.get("answer")
    if raw is not None:
        a.text, inv, a.links_removed, a.sentences = check_answer(raw, cites, embedder)
        a.invalid_citations_removed = max(inv, d.get("invalid_citations_removed") or 0)
        a.raw_text = raw
    return a


def _rescore(path: Path, questions: list[dict], ood: list[dict]) -> list[dict]:
    emb = get_embedder()
    kinds = {q["id"]: q.get("kind") for q in ood}
    results = []
    for r in json.loads(path.read_text(encoding="utf-8")):
        res = {"model": r["model"],
               "dev": [{"id": x["id"], "a": _answer_from_json(x, emb), "needle_read": bool(x.get("needle_read"))}
                       for x in r["dev"]],
               "ood": [{"id": x["id"], "kind": x.get("kind") or kinds.get(x["id"]), "a": _answer_from_json(x, emb)}
                       for x in r["ood"]]}
        results.append(_score(res, {q["id"]: q for q in questions}, emb))
    return results
