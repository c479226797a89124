"""Read the next queued file while the current one embeds (issue 41 item 3: both cores while a queue drains).

A worker's job spends its time in two halves: reading (extract, OCR, roles, chunks: in the contained child,
:meth:`rag.ingest.contained.ContainedExtractor.read`) and embedding (the encoder, in the worker). Run one after the
other, a queue of files leaves a core idle for much of the reading (the readers and Tesseract are single-threaded)
and the encoder waits for every file's reading. :class:`ReadAhead` reads the next file of the queue in a second
contained child, in a thread of the worker, while the current file embeds; when the worker takes that file, its
read is the one already done (or, still under way, waited for with its progress relayed to the job's row).

The rules that keep it safe:

- the read ahead is a guess; it is used only for the same request the job makes: the same bytes (sha256), file
  name, reader limits, chunking parameters and time floor (:class:`Request`); anything else is read again;
- only a success is kept: a failure of any kind (a limit, a timeout, a damaged file, a crash) is dropped, and the
  job's own read, with the full limits, meets it again and fails the file with its own reason;
- the second child has half the memory limit (``extract_memory_mb``): two children together stay within
  1.5 times one (a file that needs more is read again by the job, alone);
- nothing is taken or locked: the file's job stays queued and any worker may take it; a job taken while its read
  ahead is still under way waits for it (its progress, its cancel and the worker's stop reach the read ahead);
  a stopping worker stops the read ahead with it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rag.ingest.contained import ContainedExtractor
from rag.ingest.limits import Limits
from rag.ingest.read import ReadResult
from rag.store.jobs import Job

logger = logging.getLogger(__name__)

#: Seconds between two looks at a read ahead that a job waits for (its progress is relayed at this pace).
WAIT_STEP_S = 0.2


@dataclass(frozen=True)
class Request:
    """What one read is asked for: ``digest`` the sha256 (hex) of the file's bytes, ``name`` the file name,
    ``limits`` and ``params`` the reader limits and chunking parameters as dicts, ``floor_s`` the least time any
    stage may take (seconds). Two reads of equal requests give the same :class:`ReadResult` (the readers are
    deterministic per input)."""

    digest: str
    name: str
    limits: tuple
    params: tuple
    floor_s: float

    @classmethod
    def of(cls, data: bytes, name: str, limits: Limits | None, params, floor_s: float) -> "Request":
        """The request of a ``read(data, name, progress, should_stop, limits, params, floor_s=...)`` call."""
        lim = dataclasses.asdict(limits if limits is not None else Limits.from_settings())
        par = dataclasses.asdict(params) if params is not None else {}
        return cls(hashlib.sha256(data).hexdigest(), name, tuple(sorted(lim.items())), tuple(sorted(par.items())),
                   float(floor_s or 0.0))


class _Ahead:
    """One read under way in the read-ahead thread: its job, request, outcome and last progress."""

    def __init__(self, job: Job, request: Request):
        self.job, self.request = job, request
        self.result: ReadResult | None = None
        self.progress: tuple[str, int, int] | None = None
        self.cancel = threading.Event()
        self.done = threading.Event()


class ReadAhead:
    """Reads one queued job's file ahead, in a second :class:`ContainedExtractor` (see the module doc).

    ``store_root`` the store's folder (its ``files/<doc_id>`` originals); ``extractor`` the second child (the
    worker gives it half its memory limit and the same time limit and reader target); ``stopping()`` true when the
    worker stops. Thread use: :meth:`start` and :meth:`read` from the worker's loop; the read itself in a thread
    of its own. :meth:`close` stops both.
    """

    def __init__(self, store_root: Path, extractor: ContainedExtractor, *, stopping: Callable[[], bool] = lambda: False):
        self.root = Path(store_root)
        self.extractor = extractor
        self.stopping = stopping
        self._ahead: _Ahead | None = None
        self._thread: threading.Thread | None = None
        #: Counters for tests and figures: reads started ahead, used by their job, dropped.
        self.started = self.used = self.dropped = 0

    def start(self, job: Job, limits: Limits, params, floor_s: float) -> bool:
        """Begin reading ``job``'s file ahead with these arguments (what the job's own read will pass), unless
        ``job`` is already the one read ahead or a read ahead is still under way. Returns whether a read began."""
        if self._ahead is not None and self._ahead.job.id == job.id:
            return False
        if self._thread is not None and self._thread.is_alive():
            if self._ahead is not None:  # under way for a job still queued
                return False
            self._thread.join(timeout=2.0)  # dropped by read(): it stops within the child's poll (half a second)
            if self._thread.is_alive():
                return False
        try:
            data = (self.root / "files" / job.doc_id).read_bytes()
        except OSError:  # deleted meanwhile: nothing to read ahead
            return False
        ahead = _Ahead(job, Request.of(data, job.name, limits, params, floor_s))
        self._ahead = ahead
        self.started += 1
        self._thread = threading.Thread(target=self._read, args=(ahead, data, limits, params, floor_s),
                                        name="rag-read-ahead", daemon=True)
        self._thread.start()
        return True

    def _read(self, ahead: _Ahead, data: bytes, limits: Limits, params, floor_s: float) -> None:
        def progress(stage: str, done: int, total: int) -> None:
            ahead.progress = (stage, done, total)

        def should_stop() -> bool:
            return ahead.cancel.is_set() or self.stopping()

        try:
            ahead.result = self.extractor.read(data, ahead.job.name, progress, should_stop, limits, params,
                                               floor_s=floor_s)
        except BaseException as e:  # noqa: BLE001 - only a success is kept; the job's own read meets the rest
            logger.info("%s: read ahead dropped (%s: %s); its job reads it itself", ahead.job.name,
                        type(e).__name__, e)
            ahead.result = None
        finally:
            ahead.done.set()

    def read(self, job: Job, request: Request, progress, should_stop: Callable[[], bool] | None) -> ReadResult | None:
        """The read ahead of ``job`` when it was made for ``request``; ``None`` otherwise (the caller reads), and
        a read ahead of another job (cancelled, or taken by another worker) is stopped.

        A read still under way is waited for: its progress goes to ``progress(stage, done, total)`` (which may
        raise, e.g. the job's cancel: the read ahead is then stopped and the exception passes on), and
        ``should_stop()`` true stops it (``None`` is returned)."""
        ahead = self._ahead
        if ahead is None:
            return None
        self._ahead = None
        if ahead.job.id != job.id or ahead.request != request:  # its job was cancelled or taken elsewhere, or
            # the settings changed: this worker is not reading that file next
            ahead.cancel.set()
            self.dropped += 1
            return None
        seen = None
        try:
            while not ahead.done.wait(WAIT_STEP_S):
                if should_stop is not None and should_stop():
                    ahead.cancel.set()
                    self.dropped += 1
                    return None
                if ahead.progress is not None and ahead.progress != seen:
                    seen = ahead.progress
                    progress(*seen)
        except BaseException:
            ahead.cancel.set()
            raise
        if ahead.result is None:
            self.dropped += 1
            return None
        self.used += 1
        return ahead.result

    def close(self) -> None:
        """Stop a read under way and the second child."""
        if self._ahead is not None:
            self._ahead.cancel.set()
        if self._thread is not None:  # the child's cancel is heard within its poll (half a second)
            self._thread.join(timeout=5)
        self.extractor.close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._ahead = self._thread = None
