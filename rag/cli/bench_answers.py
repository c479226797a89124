"""``python -m rag bench answers``: is the fact asked for in the answer? (issue 14; design stage 8)

Runs every question of a questions file in both wordings (documents' and users'; both schemas,
:func:`rag.evaluation.data.load_questions`) and its out-of-domain queries through the product's own path
(:func:`rag.answer.pipeline.ask`: retrieve, gate, key passage, model, claim check) and scores the answers
against short answer keys (:mod:`rag.evaluation.answers`). Per wording it reports: refused by the gate;
the key passage alone correct; the model's answer correct; the shown answer (the checked claims, or the key
passage standing in) correct, and correct while citing a source that holds the needle; echoes and
tautologies the model wrote, and any shown as a cited claim; first-token p50/p95.

``--no-generate`` scores the key passage alone (no model, seconds). ``--json-out`` saves every answer;
``--rescore`` re-runs today's claim check on saved answers without the model.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from rag.answer.attribute import DANGLING_RE
from rag.answer.cite import Citation
from rag.answer.generate import get_default_generator
from rag.answer.key_passage import KeyPassage, key_passage
from rag.answer.pipeline import Answer, AnswerFrom, ask, check_answer
from rag.cli import common
from rag.cli.answer import _settings
from rag.errors import ModelError
from rag.evaluation.answers import AnswerKey, contains_answer, load_answer_keys
from rag.evaluation.bench.corpora import CORPORA, corpus, ensure_corpus_store
from rag.evaluation.bench.machine import header, percentile
from rag.evaluation.data import EvalQuery, Wording, expand_queries, load_ood, load_questions
from rag.index.embed import get_embedder
from rag.models import QWEN_05B, QWEN_15B
from rag.settings import get_settings
from rag.text import content_words


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@dataclass
class Row:
    """One query as run: the query (``None`` for an out-of-domain one), its key and the :class:`Answer`."""

    key: str
    wording: str
    text: str
    needle: str | None
    answer_key: AnswerKey | None
    a: Answer
    raw_first: str | None = None
    extra: dict = field(default_factory=dict)

    # -- scores ----------------------------------------------------------------------------------
    @property
    def answered(self) -> bool:
        return not self.a.refused

    def holds_needle(self, n: int) -> bool:
        c = next((c for c in self.a.citations if c.index == n), None)
        return bool(c and self.needle and _norm(self.needle) in _norm(c.quote))

    @property
    def needle_in_sources(self) -> bool:
        return any(self.holds_needle(c.index) for c in self.a.citations)

    @property
    def kp_correct(self) -> bool:
        kp = self.a.key_passage
        return bool(self.answer_key and kp and contains_answer(kp.text, self.answer_key))

    @property
    def kp_needle(self) -> bool:
        kp = self.a.key_passage
        return bool(kp and kp.index is not None and self.holds_needle(kp.index))

    @property
    def model_correct(self) -> bool:
        return bool(self.answer_key and self.a.generated and contains_answer(self.a.text, self.answer_key))

    @property
    def shown_correct(self) -> bool:
        return bool(self.answer_key and contains_answer(self.a.shown_text, self.answer_key))

    @property
    def shown_correct_cited(self) -> bool:
        return self.shown_correct and any(self.holds_needle(n) for n in self.a.cited_indices)

    @property
    def model_echoes(self) -> bool:
        """The model wrote at least one echo of the question or a dangling "X is [n]." sentence."""
        return any(s.echo or s.dangling for s in self.a.sentences)

    @property
    def echo_shown_cited(self) -> bool:
        """A sentence shown WITH a citation that adds no word to the question (exact claim words, no stemming)
        or ends in a bare marker after a copula: the failure issue 14 forbids, counted independently of the
        check's own verdicts."""
        q = content_words(self.text)
        for s in self.a.shown_sentences:
            if s.shown_cites and (not (content_words(s.text) - q) or DANGLING_RE.search(s.text)):
                return True
        return False


# ----------------------------------------------------------------------------- running


def run_queries(store: Any, s: Any, queries: Sequence[EvalQuery], ood: Sequence[Any], keys: dict[str, AnswerKey],
                generate: bool, log: Callable[[str], None]) -> list[Row]:
    """Every query through :func:`rag.answer.pipeline.ask` (or only retrieval, gate and key passage)."""
    rows = []
    items = [(q.key, str(q.wording), q.text, q.needle, keys.get(q.qid)) for q in queries]
    items += [(o.id, "ood", o.query, None, None) for o in ood]
    for key, wording, text, needle, ak in items:
        stream = ask(store, text, s)
        if generate:
            a = stream.run()
        else:
            a = Answer(query=text, threshold=stream.gate.threshold, refused=stream.gate.refused,
                       refusal=stream.gate.refusal, citations=stream.cites, retrieval_ms=stream.retrieval_ms,
                       gate=stream.gate, key_passage=stream.key_passage)
        row = Row(key, wording, text, needle, ak, a)
        rows.append(row)
        shown = "REFUSED" if a.refused else (a.shown_text if generate else (a.key_passage.text if a.key_passage else ""))
        mark = "" if ak is None else (" ok" if (row.shown_correct if generate else row.kp_correct) else " --")
        log(f"  {key}{mark} {_norm(shown or '')[:120]!r}")
    return rows


# ----------------------------------------------------------------------------- summary


def _f(k: int, m: int) -> str:
    return f"{k}/{m} ({k / m:.0%})" if m else "0/0"


def _pct(values: list[float], q: float) -> str:
    return f"{percentile(values, q):.0f}" if values else "-"


def summary(rows: Sequence[Row], generate: bool) -> list[tuple[str, str]]:
    """The figures of one wording (rows of one model, corpus and wording), as ``(metric, value)`` pairs."""
    n = len(rows)
    ans = [r for r in rows if r.answered]
    kp_ms = [r.a.key_passage.ms for r in ans if r.a.key_passage is not None]
    out = [
        ("questions", str(n)),
        ("refused by the gate", _f(n - len(ans), n)),
        ("needle among the sources", _f(sum(r.needle_in_sources for r in ans), n)),
        ("key passage alone correct", _f(sum(r.kp_correct for r in ans), n)),
        ("key passage from the needle's source", _f(sum(r.kp_needle for r in ans), n)),
        ("key passage ms after retrieval p50 / max", f"{_pct(kp_ms, 50)} / {max(kp_ms, default=0):.0f}"),
    ]
    if not generate:
        return out
    ttft = [r.a.ttft_ms for r in ans if r.a.ttft_ms is not None]
    correct = [r for r in ans if r.shown_correct]
    out += [
        ("model's answer correct (as streamed)", _f(sum(r.model_correct for r in ans), n)),
        ("shown answer correct", _f(len(correct), n)),
        ("shown correct, citing a source holding the needle", _f(sum(r.shown_correct_cited for r in ans), n)),
        ("  share of correct answers citing the needle's source", _f(sum(r.shown_correct_cited for r in correct), len(correct))),
        ("shown answer = model's checked claims", _f(sum(r.a.answer_from == AnswerFrom.MODEL for r in ans), len(ans))),
        ("shown answer = key passage (model empty/declined/failed)", _f(sum(r.a.answer_from == AnswerFrom.KEY_PASSAGE for r in ans), len(ans))),
        ("model declined", _f(sum(r.a.declined for r in ans), len(ans))),
        ("re-asked after a failed check", _f(sum(r.a.reasked for r in ans), len(ans))),
        ("answers where the model wrote an echo/tautology", _f(sum(r.model_echoes for r in ans), len(ans))),
        ("echo/tautology shown as a cited claim", _f(sum(r.echo_shown_cited for r in ans), len(ans))),
        ("sentences unsupported / echo+dangling / removed",
         f"{sum(s.unsupported for r in ans for s in r.a.sentences)} / "
         f"{sum(s.echo or s.dangling for r in ans for s in r.a.sentences)} / "
         f"{sum(len(r.a.removed_sentences) for r in ans)} of {sum(len(r.a.sentences) for r in ans)}"),
        ("first token ms p50 / p95", f"{_pct(ttft, 50)} / {_pct(ttft, 95)}"),
    ]
    return out


def ood_summary(rows: Sequence[Row], generate: bool) -> list[tuple[str, str]]:
    """Out-of-domain queries: how many pass the gate, and what is shown for them."""
    n = len(rows)
    ans = [r for r in rows if r.answered]
    out = [("out-of-domain queries", str(n)), ("passed the gate", _f(len(ans), n))]
    if generate:
        out += [("  model declined", _f(sum(r.a.declined for r in ans), len(ans))),
                ("  shown: model's claims / key passage",
                 f"{sum(r.a.answer_from == AnswerFrom.MODEL for r in ans)} / "
                 f"{sum(r.a.answer_from == AnswerFrom.KEY_PASSAGE for r in ans)}")]
    return out


def print_table(title: str, columns: dict[str, list[tuple[str, str]]]) -> None:
    """One Markdown table: a row per metric, a column per wording."""
    names = list(columns)
    metrics = [k for k, _ in columns[names[0]]]
    w0 = max(len(k) for k in metrics + ["metric"])
    click.echo(f"\n{title}\n")
    click.echo("| " + "metric".ljust(w0) + " | " + " | ".join(names) + " |")
    click.echo("|" + "-" * (w0 + 2) + "|" + "|".join("-" * (len(c) + 2) for c in names) + "|")
    for k in metrics:
        vals = [dict(columns[c]).get(k, "") for c in names]
        click.echo("| " + k.ljust(w0) + " | " + " | ".join(v.ljust(len(c)) for v, c in zip(vals, names)) + " |")


def report(rows: Sequence[Row], title: str, generate: bool) -> None:
    """The tables of one run: per wording, then both wordings together, then the out-of-domain queries."""
    cols: dict[str, list] = {}
    for w in [str(x) for x in Wording]:
        sub = [r for r in rows if r.wording == w]
        if sub:
            cols[f"{w} wording"] = summary(sub, generate)
    inq = [r for r in rows if r.wording != "ood"]
    if len(cols) > 1:
        cols["both"] = summary(inq, generate)
    if cols:
        print_table(title, cols)
    ood = [r for r in rows if r.wording == "ood"]
    if ood:
        print_table(f"{title}, out-of-domain", {"ood": ood_summary(ood, generate)})


# ----------------------------------------------------------------------------- saving and rescoring


def rows_json(rows: Sequence[Row]) -> list[dict]:
    """The ``--json-out`` rows: the query's key, wording, needle and answer keys, then the answer in
    :meth:`rag.answer.record.Answer.to_json`'s full form (the ``ask --json`` object plus the model's raw words)."""
    return [dict(key=r.key, wording=r.wording, needle=r.needle, answer_keys=r.answer_key, **r.a.to_json(full=True))
            for r in rows]


def rescored(d: dict, embedder: Any, rekey: Callable[[str, list[Citation]], KeyPassage] | None = None) -> Answer:
    """A saved row's :class:`Answer` (:meth:`rag.answer.record.Answer.from_json`, any format) with today's claim
    check re-run on the model's raw words (and the key passage re-chosen with ``rekey(query, citations)``)."""
    a = Answer.from_json(d)
    if rekey is not None and not a.refused:
        a.key_passage = rekey(a.query, a.citations)
    if a.raw_text is not None:
        a.text, invalid, a.links_removed, a.sentences = check_answer(a.raw_text, a.citations, embedder, a.query)
        a.invalid_citations_removed = max(invalid, a.invalid_citations_removed)
    return a


def rescore_file(path: Path, stores: dict[str, Any]) -> dict[str, list[Row]]:
    """``{title: rows}`` rebuilt from a ``--json-out`` file with today's checks; the key passage is recomputed
    with the term statistics of ``stores[corpus]`` (the corpus is the title's first word) when there is one."""
    emb = get_embedder()
    out = {}
    for run in json.loads(Path(path).read_text(encoding="utf-8")):
        store = stores.get(run["title"].split(",")[0])
        stats = store.term_stats() if store is not None else None
        rekey = (lambda q, cites, st=stats: key_passage(q, cites, st)) if store is not None else None
        out[run["title"]] = [Row(x["key"], x["wording"], x["query"], x.get("needle"),
                                 tuple(tuple(g) for g in x["answer_keys"]) if x.get("answer_keys") else None,
                                 rescored(x, emb, rekey)) for x in run["rows"]]
    return out


# ----------------------------------------------------------------------------- the command


def _store_dir(corpus_name: str, questions: Path | None) -> Path:
    """The default store of a run: ``data/ba-<corpus>`` (``data/ba-<questions file stem>`` with ``--questions``)."""
    return Path("data") / f"ba-{questions.stem if questions is not None else corpus_name}"


@click.command()
@click.option("--corpus", "corpus_names", type=click.Choice(list(CORPORA)), multiple=True,
              help="Shared corpus (repeat for both; default course). Ignored with --questions.")
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
@click.option("--reask/--no-reask", default=None, help="Re-ask once after a failed claim check (default: settings).")
@click.option("--max-answer-tokens", "--max-tokens", "max_answer_tokens", type=click.IntRange(16, 4096), default=None,
              help="Generation cap, tokens (default settings max_answer_tokens).")
@click.option("--source-tokens", type=click.IntRange(0, 8192), default=None,
              help="Tokens of source text the model reads (default settings; 0 = whole chunks).")
@click.option("--json-out", type=click.Path(dir_okay=False), default=None, help="Also write every answer as JSON here.")
@click.option("--rescore", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Do not generate: re-run today's claim check and key passage on answers saved by --json-out.")
def bench_answers_cmd(corpus_names: tuple[str, ...], questions: Path | None, ood: Path | None, keys: Path | None,
                      docs: Path | None, store_dir: Path | None, shared: Path | None, models: tuple[str, ...],
                      wording: str, limit: int | None, no_ood: bool, no_generate: bool, reask: bool | None,
                      max_answer_tokens: int | None, source_tokens: int | None, json_out: str | None,
                      rescore: str | None) -> None:
    """Answer correctness against the answer keys, per wording, for each model (issue 14)."""
    click.echo(header("bench answers"))
    if questions is not None:
        sets = [(questions.stem, questions, ood, docs)]
    else:
        sets = []
        for name in corpus_names or ("course",):
            c = corpus(name, shared)
            sets.append((name, c.questions, c.ood if c.ood.is_file() else None, c.docs))
    if store_dir is not None and len(sets) > 1:
        raise click.UsageError("--store names one store: give one --corpus (or --questions) with it")
    if rescore:
        stores = {}
        for name, _q, _o, _d in sets:
            sd = store_dir or _store_dir(name, questions)
            if sd.is_dir():
                stores[name] = ensure_corpus_store(sd, [], get_settings(store=sd))
        for title, rows in rescore_file(Path(rescore), stores).items():
            report(rows, f"{title} (rescored)", True)
        return
    runs = []
    for name, qpath, opath, ddir in sets:
        sd = store_dir or _store_dir(name, questions)
        base = get_settings(store=sd, max_answer_tokens=max_answer_tokens, source_tokens=source_tokens, reask=reask)
        files = sorted(p for p in ddir.iterdir() if p.suffix.lower() in (".md", ".txt", ".pdf")) if ddir else []
        store = ensure_corpus_store(sd, files, base, lambda x: click.echo(x, err=True))
        qs = expand_queries(load_questions(qpath)[:limit])
        if wording != "both":
            qs = [q for q in qs if str(q.wording) == wording]
        ak = load_answer_keys(qpath, keys)
        oods = load_ood(opath)[:limit] if opath and not no_ood else []
        click.echo(f"{name}: {len(qs)} queries, {len(oods)} out-of-domain, {len(ak)} answer keys; threshold "
                   f"{base.threshold}, max_sources {base.max_sources}, source_tokens {base.source_tokens}, "
                   f"max_answer_tokens {base.max_answer_tokens}, reask {base.reask}, threads {base.threads}")
        if no_generate:
            rows = run_queries(store, base, qs, oods, ak, False, lambda x: click.echo(x, err=True))
            runs.append((f"{name}, key passage only", rows, False))
            continue
        chosen = models or tuple(m.file_name for m in (QWEN_05B, QWEN_15B) if (base.models_dir / m.file_name).is_file())
        if not chosen:
            raise ModelError(f"no generator in {base.models_dir}; run: make models")
        for m in chosen:
            s = _settings(str(sd), None, None, m, max_answer_tokens=max_answer_tokens, source_tokens=source_tokens,
                          reask=reask)
            t0 = time.perf_counter()
            get_default_generator(s)
            click.echo(f"\n== {name} / {m} (loaded in {(time.perf_counter() - t0) * 1000:.0f} ms)", err=True)
            rows = run_queries(store, s, qs, oods, ak, True, lambda x: click.echo(x, err=True))
            runs.append((f"{name}, {m}", rows, True))
    click.echo(header("bench answers (end)"))
    for title, rows, gen in runs:
        report(rows, title, gen)
    if json_out:
        Path(json_out).write_text(json.dumps([{"title": t, "rows": rows_json(r)} for t, r, _ in runs],
                                             ensure_ascii=False, indent=1), encoding="utf-8")
