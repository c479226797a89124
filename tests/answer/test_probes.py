"""The model's own probes (rag.answer.check.probes, issue 39) and llama.cpp's prompt-prefix cache.

Every answer reads the shared instruction prefix (about 240 tokens) from the KV cache instead of evaluating it
again (:meth:`rag.answer.generate.Generator.prepare`, 2.5 s saved per answer with the 0.5B on 2 cores). A probe
that ran in the answer's llama.cpp context and cut or overwrote that prefix would cost every later answer those
seconds. The shipped path runs no probe (no combiner ships: :func:`rag.answer.check.confidence.needed_probes` is
empty); these tests hold what happens once one does."""

from __future__ import annotations

import pytest

from rag.answer import generate
from rag.answer.check import confidence
from rag.answer.check.probes import answer_token_probs, probe_generator, yes_no
from rag.answer.cite import Citation
from rag.answer.pipeline import AnswerStream

N_CTX = 2048  # the key of tests/answer/test_generate.py: the model loads once per session
TOKENS = 24


def _cite(i: int, quote: str) -> Citation:
    return Citation(index=i, document_id=f"doc{i}", document_name="02-llm-inference.md",
                    locator_label=f"02-llm-inference.md > Section {i}", fragment="#char=0,10", quote=quote,
                    cosine_distance=0.4, fused_rank=i, page=None, start=0, end=len(quote), media_type="text/markdown",
                    chunk_id=i, section=(f"Section {i}",))


def test_no_probe_runs_in_the_shipped_path(monkeypatch):
    """Without a shipped combiner nothing reads a probe, so none runs: the answer's stream never calls them (a
    real-generator check is skipped by ``isinstance``, so both probes are replaced by ones that fail loudly)."""
    if confidence.COMBINER_PATH.is_file():
        pytest.skip("a combiner ships: the slow test below is the check")
    assert confidence.needed_probes() == set()

    def boom(*_a, **_k):
        raise AssertionError("a probe ran in the shipped path")

    import rag.answer.pipeline as pipeline
    monkeypatch.setattr(pipeline, "answer_token_probs", boom)
    monkeypatch.setattr(pipeline, "yes_no", boom)
    monkeypatch.setattr(pipeline, "Generator", object)  # every generator counts as a real llama.cpp one
    stream = AnswerStream.__new__(AnswerStream)
    stream.key_passage = None
    assert AnswerStream._probes(stream, object(), object()) == (None, None)


@pytest.mark.slow  # the real 0.5B GGUF
def test_the_probes_leave_the_answer_prompts_cached_prefix_in_place(gguf_path, corpus_dir):
    """After an answer, feature (a) re-decodes the answer's tokens in the answer's own context and feature (b)
    runs in a context of its own; the next answer still reads the whole instruction prefix from the cache
    (evaluates only the rest of its prompt), and the same prompt again gives the same greedy words."""
    from rag.settings import get_settings

    s = get_settings(model_file=str(gguf_path))
    gen = generate.get_generator(gguf_path, n_ctx=N_CTX, threads=s.threads)
    chapter = (corpus_dir / "docs" / "02-llm-inference.md").read_text(encoding="utf-8")
    cites = [_cite(1, chapter[:500]), _cite(2, chapter[500:1000])]
    first = gen.fit("What is the prefill phase?", cites, TOKENS)
    run = gen.stream(first, TOKENS)
    text = "".join(run)
    assert run.cached_tokens == len(gen._prefix) > 100

    tp = answer_token_probs(gen, len(first.tokens))  # (a): in the answer's context
    assert tp is not None and tp.tokens >= 1 and tp.mean <= 0.0
    probe = probe_generator(s)  # (b): a context of its own
    assert probe is not gen and probe.llm is not gen.llm
    yn = yes_no(probe, "What is the prefill phase?", chapter[:500], text)
    assert 0.0 < yn.p_yes < 1.0 and yn.p_answer is not None
    assert generate.get_generator(gguf_path, n_ctx=N_CTX, threads=s.threads) is gen  # the probe evicted nothing

    evaluated: list[int] = []
    real_eval = gen.llm.eval
    gen.llm.eval = lambda tokens: (evaluated.append(len(tokens)), real_eval(tokens))[1]
    try:
        second = gen.fit("What does the decode phase do?", cites, TOKENS)
        again = gen.stream(second, TOKENS)
        "".join(again)
        assert again.cached_tokens == len(gen._prefix)
        assert evaluated and evaluated[0] == len(second.tokens) - len(gen._prefix)  # the prefix was not read again
        same = gen.stream(first, TOKENS)
        assert "".join(same) == text
    finally:
        del gen.llm.eval
