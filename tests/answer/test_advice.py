"""A refusal's and a "may not answer"'s advice (issue 39, Deliver 3): what was searched, the closest passages, the
user's own setting when it decided, what to try; kept in the answer's record, so every surface says the same."""

from __future__ import annotations

from dataclasses import replace

from rag.answer.advice import Closest, Searched, advise, decided_by
from rag.answer.gate import apply_gate
from rag.answer.history import Turn, chat_markdown
from rag.answer.pipeline import ask
from rag.answer.record import Answer
from rag.settings import get_settings
from rag.types import AnswerVerdict, GateKind, Hit, Verdict

Q = "How many days of annual leave do staff get?"
DEFAULTS = {"threshold": 0.675, "max_sources": 4, "min_score": 0.55, "mention_score": 0.3}
TWO = Searched(documents=("leave-policy.md", "handbook.pdf"), total=2,
               closest=(Closest("handbook.pdf, p. 4", 0.512), Closest("leave-policy.md > Leave", 0.6)),
               defaults=DEFAULTS)


def _hit(d: float) -> Hit:
    return Hit(chunk_id=1, rank=1, fused_rank=1, rrf_score=1 / 61, cosine_distance=d)


def test_the_users_threshold_is_named_when_it_decided_and_only_then():
    mine = apply_gate(Q, [_hit(0.512)], threshold=0.3)  # the default 0.675 would keep the passage at 0.512
    a = Answer(query=Q, gate=mine, searched=TWO)
    assert a.judged.verdict == AnswerVerdict.REFUSED
    assert a.judged.reason.startswith("your own settings refused it, not the documents")
    assert a.advice.decided == ("Your threshold (cosine distance) 0.3 decided this (default 0.675): the closest "
                                "passage is at 0.512, which the default lets through.")
    assert a.advice.tries[0] == "Ask again with the default settings."
    # the documents decided: nothing under the default either, the changed threshold is not blamed
    far = Answer(query=Q, gate=apply_gate(Q, [_hit(0.8)], threshold=0.3), searched=TWO)
    assert far.advice.decided is None and "Ask again with the default settings." not in far.advice.tries
    assert far.judged.reason == "the documents hold nothing close enough to the question; no answer was written"
    at_default = Answer(query=Q, gate=apply_gate(Q, [_hit(0.8)]), searched=TWO)
    assert at_default.advice.decided is None


def test_the_users_cut_is_named_for_a_refusal_and_a_may_not_answer_by_score():
    base = apply_gate(Q, [_hit(0.4)])
    scored = replace(base, kind=GateKind.CALIBRATED, verdict=Verdict.REFUSED, refused=True, refusal="NO ANSWER: x",
                     sources=(), score=0.4, min_score=0.9, mention_score=0.5)
    assert decided_by(scored, DEFAULTS) == ("Your mention cut 0.5 decided this (default 0.3): the answerability score "
                                            "0.40 meets the default, so at the defaults passages would be shown.")
    assert decided_by(replace(scored, score=0.2), DEFAULTS) is None  # refused at the defaults too
    mentions = replace(scored, verdict=Verdict.MENTIONS, refused=False, refusal=None, score=0.6, notice="MAY NOT ...")
    assert "Your answerability cut 0.9 decided this (default 0.55)" in decided_by(mentions, DEFAULTS)
    a = Answer(query=Q, gate=mentions, text="", searched=TWO)
    assert a.judged.verdict == AnswerVerdict.MAY_NOT_ANSWER
    assert a.judged.reason.startswith("your own answerability cut decided this, not the documents")
    assert decided_by(replace(mentions, min_score=0.55), DEFAULTS) is None


def test_a_refusal_says_what_was_searched_the_closest_passages_and_what_to_try():
    a = Answer(query=Q, gate=apply_gate(Q, [_hit(0.8)]), searched=TWO)
    adv = a.advice
    assert adv.searched == "Searched all 2 documents (leave-policy.md and handbook.pdf)."
    assert adv.closest == ("handbook.pdf, p. 4 (cosine distance 0.51)", "leave-policy.md > Leave (cosine distance 0.60)")
    assert "Use the words the document itself would use (names, terms, numbers)." in adv.tries
    assert "Name the document, or ask within the one that should hold the answer." in adv.tries
    scoped = replace(TWO, documents=("handbook.pdf",), scoped=True)
    adv = Answer(query=Q, gate=apply_gate(Q, [_hit(0.8)]), searched=scoped).advice
    assert adv.searched == "Searched within handbook.pdf only (1 of the 2 documents)."
    assert "Widen the scope: ask all documents." in adv.tries
    # an answered question gets no advice (its verdict's reason and the per-sentence marks say why)
    answered = apply_gate(Q, [_hit(0.4)])
    assert advise(AnswerVerdict.SUPPORTED, answered, TWO) is None
    assert advise(AnswerVerdict.PARTLY_SUPPORTED, answered, TWO) is None
    # an answer recorded before issue 39 kept what was searched: no advice, the old reason
    assert Answer(query=Q, gate=apply_gate(Q, [_hit(0.8)])).advice is None


def test_no_documents_says_so_not_that_the_documents_do_not_say_it():
    a = Answer(query=Q, gate=apply_gate(Q, []), searched=Searched(total=0, defaults=DEFAULTS))
    assert a.judged.reason == "there are no documents to search yet; no answer was written"
    assert a.advice.no_documents and a.advice.searched == "There are no documents to search yet."
    assert a.advice.tries == ("Add documents (the Documents page, or rag ingest FILE), then ask again.",)


def test_the_advice_survives_the_record_and_reaches_the_export():
    a = Answer(query=Q, gate=apply_gate(Q, [_hit(0.512)], threshold=0.3), searched=TWO)
    d = a.to_json()
    assert d["advice"]["decided"] == a.advice.decided and d["advice"]["try"][0] == "Ask again with the default settings."
    assert d["searched"]["documents"] == ["leave-policy.md", "handbook.pdf"]
    back = Answer.from_json(a.to_json(full=True))
    assert back.searched == a.searched and back.advice == a.advice and back.judged.reason == a.judged.reason
    md = chat_markdown("t", [Turn(Q, Q, a)])
    assert "- Searched all 2 documents (leave-policy.md and handbook.pdf)." in md
    assert "Your threshold (cosine distance) 0.3 decided this (default 0.675)" in md


def test_the_pipeline_records_what_it_searched_and_an_empty_store_says_add_documents(tmp_path, hash_embedder,
                                                                                     corpus_dir):
    from rag.store.store import Store

    empty = Store(tmp_path / "empty", settings=get_settings(), embedder=hash_embedder)
    a = ask(empty, Q, get_settings()).run()
    assert a.refused and a.advice.no_documents
    assert a.judged.reason == "there are no documents to search yet; no answer was written"
    full = Store(tmp_path / "one", settings=get_settings(), embedder=hash_embedder)
    assert full.ingest_path(corpus_dir / "docs" / "02-llm-inference.md").status == "ready"
    # the fake embedder's nearest passage must sit under the default threshold (0.675): a question in the
    # passage's own words (the short one sat at 0.686 once the Markdown was rendered and the chunks moved)
    a = ask(full, "Time to First Token (TTFT): how quickly can you get the first response?",
            get_settings(threshold=0.05)).run()
    assert a.refused and a.searched.documents == ("02-llm-inference.md",) and a.searched.total == 1
    assert len(a.searched.closest) == 3 and all(c.label.startswith("02-llm-inference.md") for c in a.searched.closest)
    assert a.searched.defaults["threshold"] == 0.675
    assert a.advice.searched == "Searched the only document, 02-llm-inference.md."
    assert a.advice.decided is not None and a.advice.decided.startswith("Your threshold (cosine distance) 0.05")


def test_the_closest_passages_of_one_paragraph_are_told_apart_as_sources_are(tmp_path, hash_embedder):
    """A new user's walk (2026-12-06): the "may not answer" note named "t-sne.html, ¶ 4" twice. The closest passages
    take the sources' labels, two chunks of one long paragraph told apart by their opening words."""
    from rag.store.store import Store

    sentences = [f"Kettle rule {w} says the boiler needs descaling after {i} months of hard water use." for i, w in
                 enumerate(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
                            "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"], start=1)]
    doc = tmp_path / "kettle.md"
    doc.write_text("# Kettle\n\n## Care\n\n" + " ".join(sentences) + "\n", encoding="utf-8")
    store = Store(tmp_path / "s", settings=get_settings(), embedder=hash_embedder)
    assert store.ingest_path(doc).status == "ready" and store.chunk_count >= 2
    a = ask(store, "Kettle rule alpha says the boiler needs descaling after 1 months", get_settings(threshold=0.01)).run()
    labels = [c.label for c in a.searched.closest]
    assert len(labels) >= 2 and len(set(labels)) == len(labels)
    assert all(label.startswith("kettle.md > Care, ¶ 1, from \u201cKettle rule") for label in labels)


def test_once_not_refused_the_closest_passages_are_ranked_as_the_sources_were_kept(tmp_path, hash_embedder):
    """Issue 40 keeps a source by its best unit's distance once the chunks decide the question is not refused; the
    "may not answer" note listed the closest passages by whole-chunk distance, so the source the model read for its
    one near sentence was missing from them. A refusal was decided by whole-chunk distances, and lists by those."""
    from rag.answer.pipeline import what_was_searched
    from rag.store.store import Store

    store = Store(tmp_path / "s", settings=get_settings(), embedder=hash_embedder)
    for name in ("a.md", "b.md", "c.md", "d.md"):
        (tmp_path / name).write_text(f"# {name}\n\nSome text of {name} about kettles and boilers.\n", encoding="utf-8")
        assert store.ingest_path(tmp_path / name).status == "ready"
    ids = [h.chunk_id for h in store.search("kettles and boilers", k=4, mode="hybrid")]
    assert len(ids) == 4
    # the fourth chunk is far as a whole (0.66) but one of its sentences is near (0.2)
    cands = [Hit(chunk_id=ids[0], rank=1, fused_rank=1, rrf_score=0.1, cosine_distance=0.4),
             Hit(chunk_id=ids[1], rank=2, fused_rank=2, rrf_score=0.09, cosine_distance=0.5),
             Hit(chunk_id=ids[2], rank=3, fused_rank=3, rrf_score=0.08, cosine_distance=0.6),
             Hit(chunk_id=ids[3], rank=4, fused_rank=4, rrf_score=0.07, cosine_distance=0.66, unit_distance=0.2)]
    gate = apply_gate(Q, cands)
    assert not gate.refused and ids[3] in [h.chunk_id for h in gate.sources]
    closest = what_was_searched(store, gate).closest
    assert [round(c.distance, 2) for c in closest] == [0.2, 0.4, 0.5]
    refused = apply_gate(Q, cands, threshold=0.3)
    assert refused.refused
    assert [round(c.distance, 2) for c in what_was_searched(store, refused).closest] == [0.4, 0.5, 0.6]
