"""``python -m rag ask`` (stream a cited answer) and ``python -m rag bench answers`` (design stage 8).

Heavy libraries (llama_cpp, torch) are imported by the ``rag`` modules only when a model is loaded,
so ``--help`` stays instant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from rag.answer.pipeline import ask, no_generation_answer
from rag.errors import StoreError
from rag.index.store import Store
from rag.settings import get_settings
from rag.types import GateKind


def _settings(store: str | None, threshold: float | None, max_sources: int | None, model: str | None, **kw: Any):
    s = get_settings(store=store, threshold=threshold, max_sources=max_sources, **kw)
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
    return "\n".join(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]:>{w[3]}}" for r in rows)


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


@click.command()
@click.argument("question")
@click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None, help="Store directory (default: settings, env RAG_STORE).")
@click.option("--threshold", type=click.FloatRange(0.0, 2.0), default=None, help="Gate: cosine distance cut (default 0.675).")
@click.option("--max-sources", type=click.IntRange(1, 20), default=None, help="Gate: at most this many sources (default 4).")
@click.option("--model", default=None, help="GGUF file in models/ (or a path) to answer with.")
@click.option("--gate", type=click.Choice([g.value for g in GateKind]), default=None,
              help="learned (default): distance cut AND answerability score; distance: the design's gate alone.")
@click.option("--min-score", type=click.FloatRange(0.0, 1.0), default=None,
              help="Learned gate: refuse below this answerability score (default: the shipped model's cut, 0.35).")
@click.option("--source-tokens", type=click.IntRange(0, 8192), default=None,
              help="Tokens of source text the model reads, shared by the sources (default 160; 0 = whole chunks).")
@click.option("--no-generate", is_flag=True, help="Only retrieve and gate; answer is null and no model is loaded.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the contract of issues 4 and 5).")
def ask_cmd(question: str, store_dir: str | None, threshold: float | None, max_sources: int | None,
            model: str | None, gate: str | None, min_score: float | None, source_tokens: int | None,
            no_generate: bool, as_json: bool) -> None:
    """Answer QUESTION from the store with [n] citations, or refuse without calling the model."""
    s = _settings(store_dir, threshold, max_sources, model, gate=gate, min_score=min_score,
                  source_tokens=source_tokens)
    store = _open_store(s)
    stream = ask(store, question, s)
    if no_generate:
        a = no_generation_answer(stream.gate, stream.cites, stream.retrieval_ms)
    elif as_json or stream.gate.refused:
        a = stream.run()
    else:
        for piece in stream:
            click.echo(piece, nl=False)
        click.echo()
        a = stream.answer
    if as_json:
        click.echo(json.dumps(a.to_json(), ensure_ascii=False, indent=2))
        return
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
