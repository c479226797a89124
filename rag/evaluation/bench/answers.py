"""``bench answers``: is the fact asked for in the answer, and does the answer's verdict say so? (issues 14, 24)

Runs every question of a questions file in both wordings (documents' and users'; both schemas,
:func:`rag.evaluation.data.load_questions`) and its out-of-domain queries through the product's own path
(:func:`rag.answer.pipeline.ask`: retrieve, gate, key passage, model, claim check, verdict) and scores the
answers against short answer keys (:mod:`rag.evaluation.answers`). Per wording it reports: refused by the
gate; the key passage alone correct; the model's answer correct; the shown answer (the checked claims, or the
key passage standing in) correct, and correct while citing a source that holds the needle; echoes and
tautologies; first-token p50/p95; and (issue 24) the answers per verdict with the share of them that are
right (the verdict's calibration) and the **confident wrong** answers: shown as supported, not right by the
keys, listed one by one under the tables.

:func:`compare` pairs two saved runs (``--json-out``) question by question: paired sign tests on the shown
answer and the key passage, and the first-token times (issue 24's candidates).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from rag.answer.check.attribute import DANGLING_RE
from rag.answer.cite import Citation
from rag.answer.key_passage import KeyPassage, key_passage
from rag.answer.pipeline import Answer, AnswerFrom, ask, check_answer
from rag.evaluation.answers import AnswerKey, contains_answer
from rag.evaluation.bench.machine import percentile
from rag.evaluation.data import EvalQuery, OODQuery, Wording
from rag.evaluation.metrics import format_p, sign_test, wilson_interval
from rag.index import embed
from rag.index.embed import Encoder
from rag.settings import Settings
from rag.store.store import Store
from rag.text import content_words
from rag.types import AnswerVerdict

Echo = Callable[[str], None]


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
        return bool(self.answer_key and contains_answer(self.a.judged.text, self.answer_key))

    @property
    def shown_correct_cited(self) -> bool:
        return self.shown_correct and any(self.holds_needle(n) for n in self.a.judged.cited)

    @property
    def supported(self) -> bool:
        """The answer is shown as supported (issue 24's verdict)."""
        return self.a.judged.verdict == AnswerVerdict.SUPPORTED

    @property
    def confident_wrong(self) -> bool:
        """Shown as supported and not right by the keys (an out-of-domain query shown as supported counts: it
        has no right answer in the documents)."""
        return self.supported and not (self.answer_key and self.shown_correct)

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
        for s in self.a.judged.shown:
            if s.shown_cites and (not (content_words(s.text) - q) or DANGLING_RE.search(s.text)):
                return True
        return False


# ----------------------------------------------------------------------------- running


def run_queries(store: Store, s: Settings, queries: Sequence[EvalQuery], ood: Sequence[OODQuery], keys: dict[str, AnswerKey],
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
            a = Answer(query=text, gate=stream.gate, citations=tuple(stream.cites), retrieval_ms=stream.retrieval_ms,
                       key_passage=stream.key_passage)
        row = Row(key, wording, text, needle, ak, a)
        rows.append(row)
        shown = "REFUSED" if a.refused else (a.judged.text if generate else (a.key_passage.text if a.key_passage else ""))
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
    words = [r.a.first_words_ms for r in ans if r.a.first_words_ms is not None]
    correct = [r for r in ans if r.shown_correct]
    out += [
        ("model's answer correct (as streamed)", _f(sum(r.model_correct for r in ans), n)),
        ("shown answer correct", _f(len(correct), n)),
        ("shown correct, citing a source holding the needle", _f(sum(r.shown_correct_cited for r in ans), n)),
        ("  share of correct answers citing the needle's source", _f(sum(r.shown_correct_cited for r in correct), len(correct))),
        ("shown answer = model's checked claims", _f(sum(r.a.judged.answer_from == AnswerFrom.MODEL for r in ans), len(ans))),
        ("shown answer = key passage (model empty/declined/failed/off it)", _f(sum(r.a.judged.answer_from == AnswerFrom.KEY_PASSAGE for r in ans), len(ans))),
        ("model declined", _f(sum(r.a.judged.declined for r in ans), len(ans))),
        ("answers where the model wrote an echo/tautology", _f(sum(r.model_echoes for r in ans), len(ans))),
        ("echo/tautology shown as a cited claim", _f(sum(r.echo_shown_cited for r in ans), len(ans))),
        ("sentences unsupported / echo+dangling / removed",
         f"{sum(s.unsupported for r in ans for s in r.a.sentences)} / "
         f"{sum(s.echo or s.dangling for r in ans for s in r.a.sentences)} / "
         f"{sum(len(r.a.judged.removed) for r in ans)} of {sum(len(r.a.sentences) for r in ans)}"),
        ("first token ms after retrieval p50 / p95", f"{_pct(ttft, 50)} / {_pct(ttft, 95)}"),
        ("first words ms after asking p50 / p95 (issue 41)", f"{_pct(words, 50)} / {_pct(words, 95)}"),
    ]
    return out + verdict_summary(rows)


def _wilson(k: int, m: int) -> str:
    """``k/m (share, Wilson 95 % interval)``."""
    if not m:
        return "0/0"
    lo, hi = wilson_interval(k, m)
    return f"{k}/{m} ({k / m:.0%}, {lo:.0%}-{hi:.0%})"


def verdict_summary(rows: Sequence[Row]) -> list[tuple[str, str]]:
    """Issues 24 and 39: per verdict, how many answers got it and how many of those are right (the reliability,
    with its Wilson 95 % interval), and the confident wrong answers (shown as supported, not right) as a share of
    the questions."""
    out = []
    for v in AnswerVerdict:
        got = [r for r in rows if r.a.judged.verdict == v]
        right = sum(r.shown_correct for r in got)
        out.append((f"verdict {v}: answers (right, 95 % interval)", f"{len(got)}: {_wilson(right, len(got))}"
                    if got else "0"))
    out.append(("confident wrong (supported, not right)", _f(sum(r.confident_wrong for r in rows), len(rows))))
    return out


def ood_summary(rows: Sequence[Row], generate: bool) -> list[tuple[str, str]]:
    """Out-of-domain queries: how many pass the gate, and what is shown for them."""
    n = len(rows)
    ans = [r for r in rows if r.answered]
    out = [("out-of-domain queries", str(n)), ("passed the gate", _f(len(ans), n))]
    out += [("  shown as supported (confident wrong)", _f(sum(r.confident_wrong for r in rows), n))]
    if generate:
        out += [("  model declined", _f(sum(r.a.judged.declined for r in ans), len(ans))),
                ("  shown: model's claims / key passage",
                 f"{sum(r.a.judged.answer_from == AnswerFrom.MODEL for r in ans)} / "
                 f"{sum(r.a.judged.answer_from == AnswerFrom.KEY_PASSAGE for r in ans)}")]
    return out


def print_table(title: str, columns: dict[str, list[tuple[str, str]]], echo: Echo = print) -> None:
    """One Markdown table: a row per metric, a column per wording."""
    names = list(columns)
    metrics = [k for k, _ in columns[names[0]]]
    w0 = max(len(k) for k in metrics + ["metric"])
    echo(f"\n{title}\n")
    echo("| " + "metric".ljust(w0) + " | " + " | ".join(names) + " |")
    echo("|" + "-" * (w0 + 2) + "|" + "|".join("-" * (len(c) + 2) for c in names) + "|")
    for k in metrics:
        vals = [dict(columns[c]).get(k, "") for c in names]
        echo("| " + k.ljust(w0) + " | " + " | ".join(v.ljust(len(c)) for v, c in zip(vals, names)) + " |")


def report(rows: Sequence[Row], title: str, generate: bool, echo: Echo = print) -> None:
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
        print_table(title, cols, echo)
    ood = [r for r in rows if r.wording == "ood"]
    if ood:
        print_table(f"{title}, out-of-domain", {"ood": ood_summary(ood, generate)}, echo)
    curve = coverage_precision(inq)
    if curve:
        echo(f"\n{title}: coverage and precision of the answers' confidence (issue 39)\n")
        echo("| confidence at least | answered at or above (of the questions) | right among them (95 % interval) |")
        echo("|---:|---|---|")
        for t, got, n, right in curve:
            echo(f"| {t:.2f} | {got}/{n} ({got / max(1, n):.0%}) | {_wilson(right, got)} |")
    wrong = [r for r in rows if r.confident_wrong]
    if wrong:
        echo(f"\n{title}: confident wrong answers (shown as supported, not right by the keys): {len(wrong)}\n")
        for r in wrong:
            keys = " + ".join("/".join(g) for g in r.answer_key) if r.answer_key else "(out of domain)"
            echo(f"- {r.key} ({r.wording}): {_norm(r.a.judged.text or '')[:160]!r}  keys: {keys}")


def coverage_precision(rows: Sequence[Row], cuts: Sequence[float] = (0.3, 0.5, 0.7, 0.8, 0.9, 0.95)
                       ) -> list[tuple[float, int, int, int]]:
    """The coverage-precision curve of the answers' ``confidence`` (issue 39): per cut, ``(cut, answers at or
    above it, questions, right among them)``; empty when no answer has a confidence (no combiner shipped)."""
    if not any(r.a.judged.confidence is not None for r in rows):
        return []
    out = []
    for t in cuts:
        got = [r for r in rows if r.a.judged.confidence is not None and r.a.judged.confidence >= t]
        out.append((t, len(got), len(rows), sum(r.shown_correct for r in got)))
    return out


# ----------------------------------------------------------------------------- saving and rescoring


def rows_json(rows: Sequence[Row]) -> list[dict]:
    """The ``--json-out`` rows: the query's key, wording, needle and answer keys, then the answer in
    :meth:`rag.answer.record.Answer.to_json`'s full form (the ``ask --json`` object plus the model's raw words)."""
    return [dict(key=r.key, wording=r.wording, needle=r.needle, answer_keys=r.answer_key, **r.a.to_json(full=True),
                 **({"extra": r.extra} if r.extra else {}))
            for r in rows]


def rescored(d: dict, embedder: Encoder | None, rekey: Callable[[str, list[Citation]], KeyPassage] | None = None) -> Answer:
    """A saved row's :class:`Answer` (:meth:`rag.answer.record.Answer.from_json`, any format) with today's claim
    check re-run on the model's raw words (and the key passage re-chosen with ``rekey(query, citations)``), and
    so judged by today's verdict rules: the verdict saved with the row is dropped (a saved chat keeps the one it
    was shown with; a benchmark re-scored after a change of the rules must not)."""
    a = Answer.from_json(d)
    kp = rekey(a.query, list(a.citations)) if rekey is not None and not a.refused else a.key_passage
    if a.raw_text is None:
        return replace(a, saved_verdict=None, key_passage=kp)
    text, invalid, links, sentences = check_answer(a.raw_text, a.citations, embedder, a.query)
    return replace(a, saved_verdict=None, key_passage=kp, text=text, links_removed=links, sentences=tuple(sentences),
                   invalid_citations_removed=max(invalid, a.invalid_citations_removed))


def rescore_file(path: Path, stores: dict[str, Store]) -> dict[str, list[Row]]:
    """``{title: rows}`` rebuilt from a ``--json-out`` file with today's checks; the key passage is recomputed
    with the term statistics of ``stores[corpus]`` (the corpus is the title's first word) when there is one."""
    emb = embed.get_embedder()
    out = {}
    for run in json.loads(Path(path).read_text(encoding="utf-8")):
        store = stores.get(run["title"].split(",")[0])
        stats = store.term_stats() if store is not None else None
        rekey = (lambda q, cites, st=stats: key_passage(q, cites, st)) if store is not None else None
        out[run["title"]] = [Row(x["key"], x["wording"], x["query"], x.get("needle"),
                                 tuple(tuple(g) for g in x["answer_keys"]) if x.get("answer_keys") else None,
                                 rescored(x, emb, rekey), extra=x.get("extra") or {}) for x in run["rows"]]
    return out


# ----------------------------------------------------------------------------- comparing two runs


def _by_key(rows: Sequence[Row]) -> dict[tuple[str, str], Row]:
    return {(r.key, r.wording): r for r in rows if r.wording != "ood"}


def compare(a: dict[str, list[Row]], b: dict[str, list[Row]], echo: Echo = print, names: tuple[str, str] = ("A", "B")) -> None:
    """Pair two runs (``{title: rows}``, e.g. two :func:`rescore_file` results) by corpus (the title's first
    word), wording and question: per pair, the shown answer right in each, the paired exact sign test
    (:func:`rag.evaluation.metrics.sign_test`), the key passage right in each, confident wrong answers and the
    first-token p50 (ms); then all corpora together."""
    def corpus_of(t: str) -> str:
        return t.split(",")[0]

    pairs: list[tuple[str, str, Row, Row]] = []
    for ta, ra in a.items():
        tb = next((t for t in b if corpus_of(t) == corpus_of(ta)), None)
        if tb is None:
            continue
        ka, kb = _by_key(ra), _by_key(b[tb])
        pairs += [(corpus_of(ta), key[1], ka[key], kb[key]) for key in ka if key in kb]
    groups: dict[str, list[tuple[Row, Row]]] = {}
    for corp, wording, x, y in pairs:
        for g in (f"{corp} {wording}", f"{corp} both", f"all {wording}", "all both"):
            groups.setdefault(g, []).append((x, y))
    echo(f"\n| pairs ({names[0]} vs {names[1]}) | n | shown right {names[0]} / {names[1]} | +/- | p | key passage "
         f"right {names[0]} / {names[1]} | confident wrong {names[0]} / {names[1]} | first token p50 ms |")
    echo("|---|---|---|---|---|---|---|---|")
    for g, xy in groups.items():
        sa, sb = [x.shown_correct for x, _ in xy], [y.shown_correct for _, y in xy]
        t = sign_test(sb, sa)  # wins: right in B only
        ka, kb = sum(x.kp_correct for x, _ in xy), sum(y.kp_correct for _, y in xy)
        ca, cb = sum(x.confident_wrong for x, _ in xy), sum(y.confident_wrong for _, y in xy)
        ta = [x.a.ttft_ms for x, _ in xy if x.a.ttft_ms is not None]
        tb = [y.a.ttft_ms for _, y in xy if y.a.ttft_ms is not None]
        echo(f"| {g} | {len(xy)} | {sum(sa)} / {sum(sb)} | +{t.wins} / -{t.losses} | {format_p(t.p)} | {ka} / {kb} "
             f"| {ca} / {cb} | {_pct(ta, 50)} / {_pct(tb, 50)} |")
