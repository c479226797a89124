"""The listwise selector (rag.answer.listwise, issue 24 item 3a): permutations, the combined score, and one
check with the real 0.5B (slow)."""

from __future__ import annotations

import numpy as np
import pytest

from rag.answer.listwise import MAX_ITEMS, combine, listwise_scores, orders_for, selector_messages


def test_orders_put_every_item_first_and_last_as_the_orders_grow():
    assert orders_for(4, 1) == [[0, 1, 2, 3]]
    assert orders_for(4, 2) == [[0, 1, 2, 3], [3, 2, 1, 0]]
    four = orders_for(4, 4)
    assert len(four) == 4 and all(sorted(o) == [0, 1, 2, 3] for o in four) and len({tuple(o) for o in four}) == 4
    assert orders_for(1, 3) == [[0]]
    assert orders_for(2, 5) == [[0, 1], [1, 0]]


def test_combine_adds_the_model_share_to_the_lexical_score():
    lex = [0.5, 0.5, 0.2]
    out = combine(lex, [-0.1, -3.0, -3.0], 0.5)
    assert out.dtype == np.float32 and out.shape == (3,)
    assert out[0] > out[1] > out[2] - 1 and np.allclose(combine(lex, [0, 0, 0], 0.0), lex)


def test_the_prompt_numbers_the_items_from_one():
    msgs = selector_messages("What is X?", ["X is a letter.", "Y is  another\nletter."])
    assert msgs[-1]["content"].endswith("Passages:\n[1] X is a letter.\n[2] Y is another letter.\n\nWhich passage answers the question?")
    assert msgs[0]["role"] == "system" and msgs[2]["content"] == "[2]"


def test_bad_calls_raise():
    with pytest.raises(ValueError, match="1 to 9 items"):
        listwise_scores("q", [], generator=object())
    with pytest.raises(ValueError, match="1 to 9 items"):
        listwise_scores("q", ["x"] * (MAX_ITEMS + 1), generator=object())
    with pytest.raises(ValueError, match="orders"):
        listwise_scores("q", ["x"], generator=object(), orders=0)


@pytest.mark.slow
def test_the_real_model_scores_every_item_and_the_debiased_score_ignores_the_input_order(gguf_path):
    """With the list and its reverse averaged, the same items in reverse get the same scores (reversed):
    neither first place nor label 1 decides. One pass per order, nothing generated."""
    from rag.answer.generate import get_generator
    from rag.answer.listwise import selector_messages as build

    gen = get_generator(gguf_path, n_ctx=2048, threads=2, build=build)
    items = ["Longformer and Reformer use a sparse version of the attention matrix to be more efficient.",
             "BERT is an encoder-only model trained with masked language modelling.",
             "GPT-2 is a decoder-only model trained on web text."]
    q = "Which models use a sparse attention matrix?"
    a = listwise_scores(q, items, gen, orders=2)
    b = listwise_scores(q, items[::-1], gen, orders=2)
    assert a.scores.shape == (3,) and a.per_order.shape == (2, 3) and (a.scores <= 0).all()
    assert np.allclose(a.scores, b.scores[::-1], atol=1e-3)
    assert len(a.prompt_tokens) == 2 and all(t > 30 for t in a.prompt_tokens)
    assert np.allclose(np.exp(a.per_order).sum(axis=1), 1.0, atol=1e-4)  # a distribution over the shown labels
