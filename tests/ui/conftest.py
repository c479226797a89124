"""The app's pages under AppTest run the store's worker in the test's own process (issue 25): where the app
starts ``rag worker`` as a separate process, these tests (module fixtures included) drain the queue at once, so a page run that queues
files shows them indexed, as a user sees them a moment later."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def worker_in_process():
    from rag.settings import get_settings
    from rag.store.store import Store
    from rag.store.worker import Worker
    from ui import jobs

    def drain(store_path: Path) -> bool:
        store = Store(store_path, settings=get_settings(store=store_path))
        try:
            Worker(store, contained=False).run(until=lambda: not store.jobs.active())
        finally:
            store.close()
        return True

    mp = pytest.MonkeyPatch()
    mp.setattr(jobs, "ensure_worker", drain)
    yield
    mp.undo()
