"""``python -m rag bench answers``: is the fact asked for in the answer, and does its verdict say so? (issues 14, 24)

What is measured and how: :mod:`rag.evaluation.bench.answers`. ``--no-generate`` scores the key passage alone
(no model, seconds; with ``--selector model`` the selector's pass alone). ``--json-out`` saves every answer;
``--rescore`` re-runs today's claim check and verdict on saved answers without the model; ``--compare`` pairs
two saved runs (sign tests, first-token times).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from rag.answer.generate import get_default_generator
from rag.cli import common
from rag.cli.answer import _settings
from rag.errors import ModelError
from rag.evaluation.answers import load_answer_keys
from rag.evaluation.bench.answers import compare, report, rescore_file, rows_json, run_queries
from rag.evaluation.bench.corpora import ANSWER_CORPORA, corpus, ensure_corpus_store
from rag.evaluation.bench.machine import header
from rag.evaluation.data import expand_queries, load_ood, load_questions
from rag.models import QWEN_05B, QWEN_15B
from rag.settings import get_settings

# ----------------------------------------------------------------------------- the command


def _store_dir(corpus_name: str, questions: Path | None) -> Path:
    """The default store of a run: ``data/ba-<corpus>`` (``data/ba-<questions file stem>`` with ``--questions``)."""
    return Path("data") / f"ba-{questions.stem if questions is not None else corpus_name}"


@click.command()
@click.option("--corpus", "corpus_names", type=click.Choice(list(ANSWER_CORPORA)), multiple=True,
              help="Corpus (repeat for several; default course; real: our 40 questions over ../shared/corpus/real). "
                   "Ignored with --questions.")
@click.option("--questions", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Any questions JSONL (query_course/query_ticket or query_doc/query_user).")
@click.option("--ood", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Out-of-domain queries JSONL (with --questions).")
@click.option("--keys", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Answer keys JSONL (id, answer_keys); default: answer_keys in the questions, or "
                   "*answer_keys.jsonl beside them.")
@click.option("--docs", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Folder of documents to ingest into the store (with --questions).")
@click.option("--store", "store_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Store holding the documents (default data/ba-CORPUS; ingested there if missing).")
@common.shared_option
@click.option("--model", "models", multiple=True, help="GGUF(s) to compare (default: the 0.5B and, if present, the 1.5B).")
@click.option("--wording", type=click.Choice(["doc", "user", "both"]), default="both", show_default=True)
@click.option("--limit", type=int, default=None, help="Only the first N questions (and N OOD queries).")
@click.option("--no-ood", is_flag=True, help="Skip the out-of-domain queries.")
@click.option("--no-generate", is_flag=True, help="Score the key passage alone: no model is loaded.")
@click.option("--max-answer-tokens", "--max-tokens", "max_answer_tokens", type=click.IntRange(16, 4096), default=None,
              help="Generation cap, tokens (default settings max_answer_tokens).")
@click.option("--source-tokens", type=click.IntRange(0, 8192), default=None,
              help="Tokens of source text the model reads (default settings; 0 = whole chunks).")
@click.option("--json-out", type=click.Path(dir_okay=False), default=None, help="Also write every answer as JSON here.")
@click.option("--rescore", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Do not generate: re-run today's claim check and key passage on answers saved by --json-out.")
@click.option("--compare", "compare_with", type=click.Path(exists=True, dir_okay=False), default=None,
              help="With --rescore A: pair A with this saved run B (sign tests per corpus and wording, first token).")
def bench_answers_cmd(corpus_names: tuple[str, ...], questions: Path | None, ood: Path | None, keys: Path | None,
                      docs: Path | None, store_dir: Path | None, shared: Path | None, models: tuple[str, ...],
                      wording: str, limit: int | None, no_ood: bool, no_generate: bool,
                      max_answer_tokens: int | None, source_tokens: int | None, json_out: str | None,
                      rescore: str | None, compare_with: str | None) -> None:
    """Answer correctness against the answer keys per wording, each verdict's share of right answers and the
    confident wrong answers, for each model (issues 14, 24)."""
    click.echo(header("bench answers"))
    sets = _question_sets(corpus_names, questions, ood, docs, shared)
    if store_dir is not None and len(sets) > 1:
        raise click.UsageError("--store names one store: give one --corpus (or --questions) with it")
    if rescore:
        _rescore(sets, store_dir, questions, Path(rescore), Path(compare_with) if compare_with else None)
        return
    runs = []
    for name, qpath, opath, files in sets:
        runs += _run_set(name, qpath, opath, files, store_dir or _store_dir(name, questions), keys=keys,
                         models=models, wording=wording, limit=limit, no_ood=no_ood, no_generate=no_generate,
                         max_answer_tokens=max_answer_tokens, source_tokens=source_tokens)
    click.echo(header("bench answers (end)"))
    for title, rows, gen in runs:
        report(rows, title, gen, click.echo)
    if json_out:
        Path(json_out).write_text(json.dumps([{"title": t, "rows": rows_json(r)} for t, r, _ in runs],
                                             ensure_ascii=False, indent=1), encoding="utf-8")


#: One question set of a run: its name, questions file, out-of-domain file (or ``None``) and documents.
QuestionSet = tuple[str, Path, Path | None, list[Path]]


def _question_sets(corpus_names: tuple[str, ...], questions: Path | None, ood: Path | None, docs: Path | None,
                   shared: Path | None) -> list[QuestionSet]:
    """The sets a run answers: ``--questions`` (with ``--ood`` and ``--docs``), else each ``--corpus`` (course)."""
    if questions is not None:
        files = sorted(p for p in docs.iterdir() if p.suffix.lower() in (".md", ".txt", ".pdf")) if docs else []
        return [(questions.stem, questions, ood, files)]
    sets: list[QuestionSet] = []
    for name in corpus_names or ("course",):
        c = corpus(name, shared)
        sets.append((name, c.questions, c.ood if c.ood.is_file() else None, c.files()))
    return sets


def _rescore(sets: list[QuestionSet], store_dir: Path | None, questions: Path | None, rescore: Path,
             compare_with: Path | None) -> None:
    """``--rescore`` (and ``--compare``): today's claim check and verdict on saved answers, no model."""
    stores = {}
    for name, _q, _o, _d in sets:
        sd = store_dir or _store_dir(name, questions)
        if sd.is_dir():
            stores[name] = ensure_corpus_store(sd, [], get_settings(store=sd))
    first = rescore_file(rescore, stores)
    for title, rows in first.items():
        report(rows, f"{title} (rescored)", True, click.echo)
    if compare_with:
        second = rescore_file(compare_with, stores)
        for title, rows in second.items():
            report(rows, f"{title} ({compare_with.name}, rescored)", True, click.echo)
        compare(first, second, click.echo, (rescore.stem, compare_with.stem))


def _run_set(name: str, qpath: Path, opath: Path | None, files: list[Path], sd: Path, *, keys: Path | None,
             models: tuple[str, ...], wording: str, limit: int | None, no_ood: bool, no_generate: bool,
             max_answer_tokens: int | None, source_tokens: int | None) -> list[tuple[str, list, bool]]:
    """Answer one question set in store ``sd``: ``(title, rows, generated)`` for the key passage alone
    (``no_generate``) or for each model."""
    base = get_settings(store=sd, max_answer_tokens=max_answer_tokens, source_tokens=source_tokens)
    store = ensure_corpus_store(sd, files, base, lambda x: click.echo(x, err=True))
    qs = expand_queries(load_questions(qpath)[:limit])
    if wording != "both":
        qs = [q for q in qs if str(q.wording) == wording]
    ak = load_answer_keys(qpath, keys)
    oods = load_ood(opath)[:limit] if opath and not no_ood else []
    click.echo(f"{name}: {len(qs)} queries, {len(oods)} out-of-domain, {len(ak)} answer keys; threshold "
               f"{base.threshold}, max_sources {base.max_sources}, source_tokens {base.source_tokens}, "
               f"max_answer_tokens {base.max_answer_tokens}, threads {base.threads}")
    if no_generate:
        return [(f"{name}, key passage only", run_queries(store, base, qs, oods, ak, False,
                                                          lambda x: click.echo(x, err=True)), False)]
    chosen = models or tuple(m.file_name for m in (QWEN_05B, QWEN_15B) if (base.models_dir / m.file_name).is_file())
    if not chosen:
        raise ModelError(f"no generator in {base.models_dir}; run: make models")
    runs = []
    for m in chosen:
        s = _settings(str(sd), None, None, m, max_answer_tokens=max_answer_tokens, source_tokens=source_tokens)
        t0 = time.perf_counter()
        get_default_generator(s)
        click.echo(f"\n== {name} / {m} (loaded in {(time.perf_counter() - t0) * 1000:.0f} ms)", err=True)
        rows = run_queries(store, s, qs, oods, ak, True, lambda x: click.echo(x, err=True))
        runs.append((f"{name}, {m}", rows, True))
    return runs
