"""No regular expression of ``rag/`` is super-linear on adversarial input (issue 35, item 1; ``docs/patterns.md``).

Every pattern that :func:`regex_audit.collect` finds runs against its adversarial strings (10,000 characters,
built from its own atoms, :func:`regex_audit.adversarial`) in child processes with a time limit; a pattern over
:data:`LIMIT_MS` of CPU time (the best of three tries, so a busy machine does not fail it), or one that makes
its child hang, fails the test with its place in the code. A pattern built at run time, which the audit cannot
see, must be named in :data:`DYNAMIC` with the reason it is safe: a new one fails the test until it is.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import regex_audit  # noqa: E402

#: The most CPU time one pattern may take over one adversarial string (issue 35's target).
LIMIT_MS = 50.0
#: Seconds a child may spend on one pattern before it counts as hung (a linear one takes well under 2 s for
#: all its strings together, even on a loaded machine).
HANG_S = 20.0
#: Child processes (the machine has 2 cores).
CHILDREN = 2

#: ``path:function`` of the ``re`` calls whose pattern is built at run time, and why each is linear.
DYNAMIC = {
    "rag/answer/check/claims.py:holds":
        "re.escape of one name or number of the answer between fixed look-arounds: a literal, no quantifier over it",
    "rag/ingest/office/coverage_ooxml.py:numbered":
        "member-name patterns written in that module (word/header\\d*\\.xml ...): literals and one \\d run each",
    "rag/answer/quote_answer.py:quote_span":
        "re.escape of each word of a quote joined by \\s+: literals between single whitespace runs, one way to match",
}


def _run_children(found: list[regex_audit.Found]) -> dict[int, tuple[float, str]]:
    """Run the audit over ``found`` in :data:`CHILDREN` children; ``{index: (worst ms, what)}``, with
    ``float('inf')`` for a pattern on which a child hung (it is killed and the next one goes on)."""
    results: dict[int, tuple[float, str]] = {}
    bounds = [(k * len(found) // CHILDREN, (k + 1) * len(found) // CHILDREN) for k in range(CHILDREN)]
    env = {**os.environ, "PYTHONPATH": str(regex_audit.ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    pending = list(bounds)
    procs: dict[int, tuple[subprocess.Popen, list[int]]] = {}

    def spawn(first: int, last: int) -> None:
        if first >= last:
            return
        p = subprocess.Popen([sys.executable, str(Path(regex_audit.__file__)), str(first), str(last), str(LIMIT_MS)],
                             stdout=subprocess.PIPE, text=True, env=env)
        procs[p.stdout.fileno()] = (p, [first, last, -1, time.monotonic()])

    for first, last in pending:
        spawn(first, last)
    while procs:
        ready, _, _ = select.select(list(procs), [], [], 1.0)
        for fd in ready:
            p, state = procs[fd]
            line = p.stdout.readline()
            if not line:
                p.wait()
                del procs[fd]
                if state[2] >= 0 and state[2] not in results:  # died on a pattern: count it, go on after it
                    results[state[2]] = (float("inf"), f"child exited with {p.returncode}")
                    spawn(state[2] + 1, state[1])
                continue
            msg = json.loads(line)
            if "start" in msg:
                state[2], state[3] = msg["i"], time.monotonic()
            else:
                results[msg["i"]] = (msg["ms"], msg["what"])
                state[2] = -1
        now = time.monotonic()
        for fd, (p, state) in list(procs.items()):
            if state[2] >= 0 and now - state[3] > HANG_S:
                p.kill()
                p.wait()
                del procs[fd]
                results[state[2]] = (float("inf"), f"no answer after {HANG_S:.0f} s")
                spawn(state[2] + 1, state[1])
    return results


def test_every_pattern_is_linear_on_adversarial_strings():
    found = regex_audit.collect()
    assert len(found) > 100, "the audit finds the patterns of rag/ (154 on 2026-12-02)"
    results = _run_children(found)
    assert set(results) == set(range(len(found)))
    slow = []
    for i, (ms, what) in sorted(results.items()):
        if ms > LIMIT_MS and ms != float("inf"):  # a busy machine only makes it slower: the best of three
            ms = min(regex_audit.worst_ms(found[i].pattern, found[i].flags)[0] for _ in range(2))
        if ms > LIMIT_MS:
            slow.append(f"{found[i].where}: {found[i].pattern!r} took {ms:.0f} ms ({what})")
    assert not slow, "super-linear patterns:\n" + "\n".join(slow)


def test_every_pattern_built_at_run_time_is_named_with_its_reason():
    assert set(regex_audit.dynamic_calls()) <= set(DYNAMIC), (
        "a re call inside a function builds its pattern at run time: compile it at module level, or add it "
        "to DYNAMIC with the reason it is linear")


def test_the_audit_catches_the_dot_leader_pattern_that_hung_indexing():
    """The contents-line pattern of issue 28 (``(?:\\s?\\.\\s?){3,}`` after a lazy prefix): exponential on a
    dot leader with no page number. The audit must see it, or it proves nothing."""
    old = r"\S.*?(?:\s?\.\s?){3,}\s*(?:\d{1,4}|[ivxlc]{1,7})\s*$"
    strings = regex_audit.adversarial(old, 0, n=30)
    assert any(s.startswith(". .") for s in strings)
    ms, _ = regex_audit.worst_ms(old, 0, n=30)
    assert ms > 5 * regex_audit.worst_ms(r"\S+\s*\d{1,4}$", 0, n=30)[0]


@pytest.mark.parametrize("line", ["Notices " + ". " * 40, "Notices " + "." * 400, ". " * 5000 + "x"])
def test_a_dot_leader_without_page_number_is_decided_at_once(line):
    from rag.ingest.roles import is_toc

    t = time.process_time()
    assert not is_toc(line)
    assert time.process_time() - t < 1.0
