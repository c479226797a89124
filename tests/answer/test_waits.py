"""This machine's first-word times (issue 42): the running median the sidebar and the wait line tell."""

from __future__ import annotations

from types import SimpleNamespace

from rag.answer.waits import FirstWordTimes, Wait, first_words_of, saved_records


def test_the_median_of_the_last_answers_per_model():
    t = FirstWordTimes(window=3)
    assert t.wait("m.gguf") is None  # nothing measured here yet
    for ms in (24_000, 7_600, 8_000, 9_000):  # the first one falls out of the window
        t.add("m.gguf", ms)
    t.add("other.gguf", 1_000)
    t.add("m.gguf", None)
    t.add(None, 5_000)
    t.add("m.gguf", 0.0)  # no time, no sample
    assert t.wait("m.gguf") == Wait(8_000, 3)
    assert t.wait("other.gguf") == Wait(1_000, 1)
    assert Wait(8_000, 3).plain() == "first words after about 8.0 s here (median of your last 3 answers)"
    assert Wait(7_640, 1).plain() == "first words after about 7.6 s here (median of your last answer)"


def test_seeded_from_saved_turns_oldest_first():
    chats = {1: [{"model": "m.gguf", "ttft_ms": 9_000.0}, {"refused": True}],
             2: [{"model": "m.gguf", "ttft_ms": 1_000.0}, {"version": 3, "answer": {"model": "m.gguf", "ttft_ms": 2_000.0}}]}
    store = SimpleNamespace(chats=SimpleNamespace(
        list=lambda: [SimpleNamespace(id=1), SimpleNamespace(id=2)],  # most recently used first
        turns=lambda i: [SimpleNamespace(record=r) for r in chats[i]]))
    records = saved_records(store)
    assert records[-2:] == [{"model": "m.gguf", "ttft_ms": 9_000.0}, {"refused": True}]  # chat 1 is the newest
    t = FirstWordTimes(window=2)
    assert t.seed(records) == 3
    assert t.wait("m.gguf") == Wait(5_500, 2)  # 2.0 s and 9.0 s: the newest two


def test_first_words_from_asking_and_older_records_approximated():
    """Issue 41: the wait is the time from asking to the first words; a turn saved before ``first_words_ms``
    counts its retrieval with its first token (the follow-up rewrite is all it misses)."""
    assert first_words_of({"first_words_ms": 2_400.0, "ttft_ms": 2_000.0, "retrieval_ms": 300.0}) == 2_400.0
    assert first_words_of({"ttft_ms": 2_000.0, "retrieval_ms": 300.0}) == 2_300.0
    assert first_words_of({"ttft_ms": 2_000.0}) == 2_000.0
    assert first_words_of({"refused": True}) is None
    t = FirstWordTimes()
    assert t.seed([{"model": "m.gguf", "ttft_ms": 1_000.0, "retrieval_ms": 500.0},
                   {"model": "m.gguf", "first_words_ms": 2_500.0, "ttft_ms": 2_000.0}]) == 2
    assert t.wait("m.gguf") == Wait(2_000.0, 2)
