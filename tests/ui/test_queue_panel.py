"""The sidebar's queue box (ui/jobs.panel_lines) tells a file whose chunks are searchable and whose sentence units
wait (issue 41) apart from a file still waiting to be read: it is not "queued"."""

from __future__ import annotations

from rag.settings import get_settings
from rag.store.store import Store
from rag.store.worker import Worker
from ui.jobs import left_text, panel_lines


def _md(title: str) -> bytes:
    return (f"# {title}\n\n" + "\n\n".join(f"Paragraph {i} of {title} says thing {i}. It adds more." for i in range(8))
            ).encode()


def test_a_searchable_file_waiting_for_its_units_is_not_told_as_queued(tmp_path, hash_embedder):
    s = Store(tmp_path / "s", settings=get_settings(store=tmp_path / "s"), embedder=hash_embedder)
    for t in ("alpha", "beta", "gamma"):
        s.enqueue_bytes(_md(t), f"{t}.md")
    w = Worker(s, contained=False)
    w.on_progress = lambda job, stage, done, total: w.stop() if job.name == "beta.md" else None
    w.run()  # alpha searchable, its units put back; stopped as beta starts
    lines = panel_lines(s.jobs.active(), [], True)
    assert "2 queued: beta.md, gamma.md" in lines
    assert "1 searchable, sentence search to follow: alpha.md" in lines
    assert [j.name for j in s.jobs.active()] == ["beta.md", "gamma.md", "alpha.md"]  # the order they will run
    # the Documents page counts the files left and says how many can be searched already (a new user read "4
    # file(s) left" beside "5 ready", 2026-12-06)
    assert left_text(s.jobs.active()) == "3 file(s) left (1 searchable already)"
    assert panel_lines(s.jobs.active(), [], True, on_documents_page=True)[0].startswith(
        "3 file(s) left (1 searchable already): ")
    alpha = [j for j in s.jobs.active() if j.name == "alpha.md"]
    assert left_text(alpha) == "1 file(s) left (all searchable already; sentence search to follow)"
    s.close()
