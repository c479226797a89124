"""What the answer layer derives from a store's new contents, once the worker has drained a queue (issue 36).

:func:`after_indexing` is the worker's ``after_batch`` for ``rag worker``, ``rag ingest`` and the HTTP API alike (the
store layer does not import the answer layer, so each caller hands it in): the answer gate's references for the
store's new contents (issue 15), then each ready document's overview (issue 29: computed after indexing, never
delaying "ready"; milliseconds to about a second each, kept in the store, so the chat and the Documents page read it
back). It was written twice, in ``rag/cli/jobs.py`` and ``rag/api/service.py``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from rag.answer.gate.calibrated_gate import store_calibration
from rag.answer.overview import document_overview
from rag.errors import StoreError
from rag.types import DocStatus

if TYPE_CHECKING:
    from rag.store.store import Store

log = logging.getLogger(__name__)


def after_indexing(store: Store) -> None:
    """Calibrate the gate on ``store``'s contents, then make each ready document's overview. An overview that fails
    is logged and left for the page to compute on first view."""
    store_calibration(store)
    for doc in store.documents():
        if doc.status != DocStatus.READY:
            continue
        try:
            document_overview(store, doc.id)
        except (StoreError, ValueError) as e:
            log.warning("%s: no overview (%s)", doc.name, e)
