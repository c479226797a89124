"""Issue 39: today's verdict rules and their variants on the same saved answers, per corpus and wording.

Input: the JSONL of ``scripts/verdict_features.py`` (one answer per query, ``Answer.to_json(full=True)``). Each
answer is judged again (its saved verdict dropped, the claim check's saved per-sentence results kept, no model),
once per variant of the rules:

* ``today``: :func:`rag.answer.check.verdict.verdict_rules` as shipped (``OFF_KEY_SUPPORTED = False``);
* ``off_key``: claims that each pass against the source they cite may be "supported" though none rests on the key
  passage (``OFF_KEY_SUPPORTED = True``);
* ``mentions``: when the gate says "mentions" (may not answer), claims that would be supported and rest on the key
  passage are supported (``MENTIONS_SUPPORTED = True``); any other such answer may not answer, as today;
* ``mentions_any``: when the gate says "mentions" but the model's claims passed the check, judge them as if the gate
  had answered (the claim rules decide every verdict: partly supported too);
* ``both``: ``off_key`` and ``mentions`` together.

Per corpus and wording it prints the answerable questions, those shown as supported and how many of them are right
(Wilson 95 %), the other verdicts with their right ones, and the near out-of-domain queries shown as supported; then
every supported answer that is not right, per variant.

    PYTHONPATH=. .venv/bin/python scripts/verdict_variants.py data/i39/run.jsonl [--markdown]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rag.answer.check import verdict as vmod
from rag.answer.record import Answer
from rag.evaluation.answers import contains_answer
from rag.evaluation.metrics import wilson_interval
from rag.types import AnswerVerdict, Verdict


@dataclass
class Case:
    corpus: str
    key: str
    wording: str
    answer_keys: tuple | None
    a: Answer
    load: float | None
    at: str | None

    @property
    def right(self) -> bool:
        return bool(self.answer_keys and contains_answer(self.a.judged.text, self.answer_keys))


def load(path: Path) -> list[Case]:
    """The rows of ``path`` (the last of a repeated ``(corpus, key)`` wins), each answer's saved verdict dropped."""
    rows: dict[tuple[str, str], Case] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        a = replace(Answer.from_json(d["answer"]), saved_verdict=None)
        ak = tuple(tuple(g) for g in d["answer_keys"]) if d.get("answer_keys") else None
        rows[(d["corpus"], d["key"])] = Case(d["corpus"], d["key"], d["wording"], ak, a, d.get("load"), d.get("at"))
    return list(rows.values())


def _mentions_as_answered(a: Answer) -> Answer:
    if a.gate_verdict == Verdict.MENTIONS and any(s.passed for s in a.sentences):
        return replace(a, gate=replace(a.gate, verdict=Verdict.ANSWERED, notice=None))
    return a


def verdict_of(a: Answer, off_key: bool, mentions: bool, mentions_any: bool = False) -> AnswerVerdict:
    """``a``'s verdict under the variant (``off_key``: :data:`OFF_KEY_SUPPORTED` true; ``mentions``:
    :data:`MENTIONS_SUPPORTED` true; ``mentions_any``: a gate's "mentions" does not stop claims that passed)."""
    old = vmod.OFF_KEY_SUPPORTED, vmod.MENTIONS_SUPPORTED
    vmod.OFF_KEY_SUPPORTED, vmod.MENTIONS_SUPPORTED = off_key, mentions
    try:
        b = _mentions_as_answered(a) if mentions_any else a
        b = replace(b, saved_verdict=None)  # judged again under the flags
        return b.judged.verdict
    finally:
        vmod.OFF_KEY_SUPPORTED, vmod.MENTIONS_SUPPORTED = old


VARIANTS: dict[str, tuple[bool, ...]] = {"today": (False, False), "off_key": (True, False), "mentions": (False, True),
                                         "mentions_any": (False, False, True), "both": (True, True)}


def _ci(k: int, n: int) -> str:
    if not n:
        return "-"
    lo, hi = wilson_interval(k, n)
    return f"{k}/{n} ({lo:.0%}-{hi:.0%})"


def table(cases: Sequence[Case], verdicts: dict[str, dict[tuple[str, str], AnswerVerdict]], echo: Callable = print) -> None:
    groups = [(c, w) for c in dict.fromkeys(x.corpus for x in cases) for w in ("doc", "user")]
    groups += [("all", "doc"), ("all", "user"), ("all", "both")]
    echo("| corpus | wording | variant | answerable | shown right | supported (right, 95 %) | supported share | "
         "partly (right) | may not answer (right) | refused (right) | near OOD supported |")
    echo("|---|---|---|---:|---:|---|---:|---|---|---|---|")
    for c, w in groups:
        sub = [x for x in cases if (c == "all" or x.corpus == c) and (x.wording == w or (w == "both" and x.wording != "ood"))]
        ood = [x for x in cases if (c == "all" or x.corpus == c) and x.wording == "ood"]
        if not sub:
            continue
        for name, vs in verdicts.items():
            def cell(v: AnswerVerdict, sub: Sequence[Case] = sub, vs: dict = vs) -> str:
                got = [x for x in sub if vs[(x.corpus, x.key)] == v]
                return f"{len(got)} ({sum(x.right for x in got)})"
            sup = [x for x in sub if vs[(x.corpus, x.key)] == AnswerVerdict.SUPPORTED]
            oodsup = sum(vs[(x.corpus, x.key)] == AnswerVerdict.SUPPORTED for x in ood)
            oodcell = f"{oodsup}/{len(ood)}" if (w == "doc" or c == "all" and w == "both") and ood else ""
            echo(f"| {c} | {w} | {name} | {len(sub)} | {sum(x.right for x in sub)} | "
                 f"{_ci(sum(x.right for x in sup), len(sup))} | {len(sup) / len(sub):.0%} | "
                 f"{cell(AnswerVerdict.PARTLY_SUPPORTED)} | {cell(AnswerVerdict.MAY_NOT_ANSWER)} | "
                 f"{cell(AnswerVerdict.REFUSED)} | {oodcell} |")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    args = ap.parse_args(argv)
    cases = load(args.file)
    names = [v for v in args.variants.split(",") if v]
    verdicts = {n: {(x.corpus, x.key): verdict_of(x.a, *VARIANTS[n]) for x in cases} for n in names}
    loads = [x.load for x in cases if x.load is not None]
    ats = sorted(x.at for x in cases if x.at)
    print(f"{len(cases)} answers: " + ", ".join(f"{c} {sum(x.corpus == c for x in cases)}"
                                                for c in dict.fromkeys(x.corpus for x in cases))
          + (f"; {ats[0]} to {ats[-1]}, load average {min(loads):.1f}-{max(loads):.1f}" if ats and loads else ""))
    table(cases, verdicts)
    for n in names:
        wrong = [x for x in cases if verdicts[n][(x.corpus, x.key)] == AnswerVerdict.SUPPORTED and not x.right]
        print(f"\n{n}: supported, not right: {len(wrong)}")
        for x in wrong:
            keys = " + ".join("/".join(g) for g in x.answer_keys) if x.answer_keys else "(out of domain)"
            print(f"- {x.corpus} {x.key} ({x.wording}, today {verdicts['today'][(x.corpus, x.key)] if 'today' in verdicts else '?'}):"
                  f" {(x.a.judged.text or '')[:150]!r}  keys: {keys}")
    if "today" in verdicts:
        for n in names:
            if n == "today":
                continue
            moved = [x for x in cases if verdicts[n][(x.corpus, x.key)] != verdicts["today"][(x.corpus, x.key)]]
            print(f"\n{n} against today: {len(moved)} verdicts change")
            for x in moved:
                print(f"- {x.corpus} {x.key} ({x.wording}) {verdicts['today'][(x.corpus, x.key)]} -> "
                      f"{verdicts[n][(x.corpus, x.key)]} {'right' if x.right else 'WRONG'}")


if __name__ == "__main__":
    main()
