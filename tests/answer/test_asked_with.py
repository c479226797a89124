"""Which knobs a turn was decided with differ from the defaults (issue 42): said in the chat and the export."""

from __future__ import annotations

from rag.answer.asked_with import asked_with_line, changed_knobs, default_knobs, gate_knobs
from rag.answer.gate import apply_gate
from rag.answer.gate.gates import GATES
from rag.answer.history import Turn, chat_markdown
from rag.answer.record import Answer
from rag.settings import get_settings
from rag.types import GateKind, Hit


def test_defaults_are_the_settings_and_the_gates_own_cuts():
    cfg = get_settings(gate=GateKind.CALIBRATED)
    d = default_knobs(cfg)
    assert d["threshold"] == cfg.threshold and d["max_sources"] == cfg.max_sources
    assert d["min_score"] == GATES[GateKind.CALIBRATED].default_min_score()
    assert d["mention_score"] is not None and d["mention_score"] <= d["min_score"]
    assert default_knobs(get_settings(gate=GateKind.DISTANCE))["mention_score"] is None  # no band, no slider
    assert default_knobs(get_settings(gate=GateKind.CALIBRATED, min_score=0.4))["min_score"] == 0.4


def test_only_knobs_off_their_default_are_named_with_both_values():
    defaults = {"threshold": 0.675, "max_sources": 4, "min_score": 0.62, "mention_score": 0.27}
    assert changed_knobs({**defaults, "threshold": 0.6750000001}, defaults) == ()  # a slider's float step
    changed = changed_knobs({**defaults, "threshold": 1.5, "min_score": 0.0}, defaults)
    assert [c.name for c in changed] == ["threshold", "min_score"]
    assert asked_with_line(changed) == ("Asked with non-default settings: threshold (cosine distance) 1.5 "
                                        "(default 0.675), answerability cut 0 (default 0.62).")
    assert asked_with_line(()) == ""
    assert changed_knobs({"threshold": 1.0, "min_score": None}, defaults)[0].name == "threshold"


def _turn(threshold: float) -> Turn:
    hit = Hit(chunk_id=1, rank=1, fused_rank=1, rrf_score=0.01, cosine_distance=0.9, dense_rank=1, bm25_rank=1,
              bm25_score=1.0)
    g = apply_gate("q", [hit], threshold, 4)
    return Turn("q", "q", Answer(query="q", gate=g))


def test_the_export_says_which_turn_was_asked_with_other_settings():
    defaults = default_knobs(get_settings(gate=GateKind.DISTANCE))
    assert gate_knobs(_turn(1.5).answer.gate)["threshold"] == 1.5
    md = chat_markdown("t", [_turn(defaults["threshold"]), _turn(1.5)], defaults=defaults)
    one, two = md.split("## 2.")
    assert "non-default" not in one
    assert "*Asked with non-default settings: threshold (cosine distance) 1.5 (default 0.675).*" in two
    assert "non-default" not in chat_markdown("t", [_turn(1.5)])  # no defaults given: nothing said
