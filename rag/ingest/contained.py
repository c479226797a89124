"""Extraction in a child process with a memory and a time limit, so a runaway file fails alone (issue 26, item 2).

A decompression bomb or a reader stuck in a loop used to take the process that read it down with it: the
web server (every user's session), later the worker. :class:`ContainedExtractor` runs
:func:`rag.ingest.extract.extract_bytes` in a child process of its own and watches it:

* memory: the child's resident size is read from ``/proc`` every :data:`POLL_S` (and the child's address
  space is capped with ``RLIMIT_AS`` at the limit plus :data:`AS_HEADROOM_MB`, a backstop for allocations
  faster than the poll); over ``memory_mb`` the child is killed and the file fails with
  :class:`rag.errors.LimitExceeded` (``extract_memory_mb``, the figure reached);
* time: past ``seconds`` of wall time on one file the child is killed (``extract_seconds``);
* a crash of a reader (a signal) fails that file with the signal named; nothing else is affected;
* a cancel (``should_stop()`` true) kills the child and raises :class:`rag.errors.Cancelled`.

The child is started once and reads one file after another (importing the readers and loading the OCR
engine costs about a second; paid once, not per file); it is replaced after a limit, a crash, a cancel,
or when it has grown past two thirds of the memory limit (the allocator keeps what a big file took). The readers' own limits (zip members, pixels, pages,
rows: issue 26 item 1) refuse most bombs before any work; this is the backstop for what they miss.

Wire: length-prefixed frames on the child's stdin/stdout. Requests are JSON (``name``, ``size``) followed
by the file's bytes; replies are pickles, read back with an unpickler that only builds the records of
:mod:`rag.types` and plain builtins (a child subverted by a hostile file cannot make the parent run code).
OCR progress comes back as ``("progress", stage, done, total)`` frames while the file is read.
"""

from __future__ import annotations

import dataclasses
import enum
import io
import json
import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from rag.errors import Cancelled, ExtractionError, LimitExceeded, StageTimedOut
from rag.ingest.budget import OPTIONAL, Budget
from rag.ingest.limits import Limits
from rag.ingest.read import ReadResult
from rag.settings import ChunkingSettings
from rag.types import Document

logger = logging.getLogger(__name__)

#: Seconds between two looks at the child's memory while it works.
POLL_S = 0.05

#: Seconds a new child may take to import the readers (not counted in a file's ``seconds``; a loaded machine).
STARTUP_S = 300.0

#: ``RLIMIT_AS`` of the child: the memory limit plus this many MiB of address space (the readers' shared
#: libraries, thread stacks and allocator arenas are mapped but mostly never resident).
AS_HEADROOM_MB = 3072

#: What the child runs on each file: ``module:function(data, name, limits=Limits, progress=...) -> Document``.
DEFAULT_TARGET = "rag.ingest.extract:extract_bytes"

_HEADER = struct.Struct("!Q")
_SAFE_BUILTINS = {"tuple", "list", "dict", "set", "frozenset", "str", "bytes", "int", "float", "bool", "complex",
                  "bytearray", "slice", "range"}

#: ``progress(stage, done, total)`` as the store's ingest path reports it.
Progress = Callable[[str, int, int], None]


#: Modules whose records (dataclasses and enums, nothing else) the parent builds from the child's replies.
_RECORD_MODULES = ("rag.types", "rag.ingest.read")


class _RecordsOnly(pickle.Unpickler):
    """Builds only the records (dataclasses, enums) of :data:`_RECORD_MODULES` and plain builtins; anything else
    (a function, any other class) is refused."""

    def find_class(self, module: str, name: str):
        if module in _RECORD_MODULES:
            obj = super().find_class(module, name)
            if isinstance(obj, type) and (dataclasses.is_dataclass(obj) or issubclass(obj, enum.Enum)):
                return obj
            raise pickle.UnpicklingError(f"refused to build {module}.{name} from the extraction child")
        if module == "builtins" and name in _SAFE_BUILTINS:
            return super().find_class(module, name)
        if module == "copyreg" and name == "_reconstructor":
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refused to build {module}.{name} from the extraction child")


def _loads(payload: bytes):
    return _RecordsOnly(io.BytesIO(payload)).load()


def rss_mb(pid: int) -> float | None:
    """Resident memory of process ``pid`` in MiB (``/proc/<pid>/statm``), or ``None`` when unreadable."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return None


class ContainedExtractor:
    """``extract(data, name, progress, should_stop) -> Document`` in a watched child process (see the module doc).

    ``memory_mb`` the most resident memory the child may reach (MiB); ``seconds`` the most wall time one
    file may take; ``target`` the ``module:function`` the child calls as ``function(data, name)`` (default
    :func:`rag.ingest.extract.extract_bytes`; tests put a runaway there). Not thread-safe: one file at a time (the worker's loop). :meth:`close` stops the child.
    Raises, per file: :class:`rag.errors.ExtractionError` (what the readers raise, and a crash),
    :class:`rag.errors.LimitExceeded` (a limit hit), :class:`rag.errors.Cancelled`.
    """

    def __init__(self, memory_mb: int, seconds: float, *, target: str = DEFAULT_TARGET, nice: int = 0):
        self.memory_mb, self.seconds, self.target = int(memory_mb), float(seconds), target
        #: how much further the child lowers its CPU priority (Unix nice increment, 0-19; a read ahead's child)
        self.nice = int(nice)
        self._proc: subprocess.Popen | None = None
        self._ready = False
        #: Peak resident MiB of the child seen while reading the last file (for figures and tests).
        self.last_peak_mb = 0.0

    # ------------------------------------------------------------------ the child

    def start(self) -> None:
        """Start the child now (it imports the readers while the caller does something else)."""
        if self._proc is not None and self._proc.poll() is None:
            return
        env = {**os.environ, "RAG_CONTAINED_AS_MB": str(self.memory_mb + AS_HEADROOM_MB),
               "RAG_CONTAINED_TARGET": self.target, "RAG_CONTAINED_NICE": str(self.nice)}
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self._proc = subprocess.Popen([sys.executable, "-m", "rag.ingest.contained"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=env, close_fds=True)
        self._ready = False

    @property
    def ready(self) -> bool:
        """Whether the child is running and has imported the readers (a first file pays :data:`STARTUP_S` at most)."""
        return self._ready and self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        """Stop the child (it is started again on the next file)."""
        p, self._proc = self._proc, None
        if p is None:
            return
        try:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        for fh in (p.stdin, p.stdout):
            try:
                fh.close()
            except OSError:
                pass

    def __enter__(self) -> "ContainedExtractor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ one file

    def extract(self, data: bytes, name: str, progress: Progress | None = None,
                should_stop: Callable[[], bool] | None = None, limits: Limits | None = None) -> Document:
        """Extract one file's bytes in the child with the reader ``limits`` (default: the settings'; issue 26
        item 1), the memory and time limits around it (see the class doc for what is raised)."""
        return self._request("extract", data, name, progress, should_stop, limits)

    def read(self, data: bytes, name: str, progress: Progress | None = None,
             should_stop: Callable[[], bool] | None = None, limits: Limits | None = None,
             params: ChunkingSettings | None = None, *, floor_s: float = 0.0) -> ReadResult:
        """Read one file in the child: extract, then the text stages (roles, chunks, units:
        :func:`rag.ingest.read.read_bytes`), every stage under its budget (:mod:`rag.ingest.budget`, issue 35).

        An optional stage (roles, units) that runs out is left out: the child is stopped and the file read again
        without it, with a warning. ``floor_s`` the least any stage may take (a retry's larger limit; it also
        raises the ceiling, ``seconds``, to itself). Raises as :meth:`extract` does, and
        :class:`rag.errors.StageTimedOut` naming the stage for a reader or a chunker that runs out.
        """
        skip: frozenset[str] = frozenset()
        while True:
            try:
                return self._request("read", data, name, progress, should_stop, limits, params=params,
                                     skip=skip, floor_s=floor_s)
            except StageTimedOut as e:
                if e.stage not in OPTIONAL or e.stage in skip:
                    raise
                logger.warning("%s: %s; reading it again without that stage", name, e.reason)
                skip = skip | {e.stage}

    def _request(self, op: str, data: bytes, name: str, progress: Progress | None,
                 should_stop: Callable[[], bool] | None, limits: Limits | None, *,
                 params: ChunkingSettings | None = None, skip: frozenset[str] = frozenset(), floor_s: float = 0.0):
        self.start()
        p = self._proc
        assert p is not None and p.stdin is not None and p.stdout is not None
        if not self._ready:  # the child has imported the readers: from here on the time is this file's
            if _loads(self._next_frame(name, Budget(STARTUP_S, STARTUP_S), should_stop))[0] != "ready":
                self._fail_dead(name)
            self._ready = True
        budget = Budget(max(self.seconds, floor_s), floor_s)
        budget.renew("start", size_bytes=len(data))
        self.last_peak_mb = 0.0
        self._send(op, data, name, limits, params, skip)
        pages = ""
        while True:
            payload = self._next_frame(name, budget, should_stop, pages)
            msg = _loads(payload)
            if msg[0] == "progress":
                stage, done, total = msg[1], msg[2], msg[3]
                budget.renew(stage, chars=total if stage in ("roles", "chunk", "units") else 0)
                pages = _where(stage, done, total, pages)
                if progress is not None:
                    try:
                        progress(stage, done, total)
                    except BaseException:  # e.g. the caller's cancel: the child must not go on reading
                        self.close()
                        raise
                continue
            break
        if (rss_mb(p.pid) or 0) > self.memory_mb * 2 / 3:  # a child grown by a big file starts afresh
            self.close()
        return self._reply(name, msg)

    def _send(self, op: str, data: bytes, name: str, limits: Limits | None, params: ChunkingSettings | None,
              skip: frozenset[str]) -> None:
        """One request: its JSON head, then ``data``; a child that died meanwhile fails the file."""
        p = self._proc
        assert p is not None and p.stdin is not None
        try:
            lim = dataclasses.asdict(limits if limits is not None else Limits.from_settings())
            head = json.dumps({"name": name, "size": len(data), "limits": lim, "op": op, "skip": sorted(skip),
                               "params": None if params is None else dataclasses.asdict(params)}).encode()
            p.stdin.write(_HEADER.pack(len(head)) + head + _HEADER.pack(len(data)))
            p.stdin.write(data)
            p.stdin.flush()
        except (BrokenPipeError, OSError):
            self._fail_dead(name)

    def _reply(self, name: str, msg: tuple):
        kind = msg[0]
        if kind == "ok":
            return msg[1]
        if kind == "extraction":
            raise ExtractionError(name, msg[1])
        if kind == "limit":  # a reader's own limit, rebuilt with its figures
            _, reason, limit, what, figure, maximum, unit = msg
            raise LimitExceeded(name, limit, what, figure, maximum, unit, over=", over the limit" in reason)
        if kind == "memory":
            self.close()
            raise self._memory_limit(name, self.memory_mb)
        self.close()
        raise ExtractionError(name, f"the reader failed on this file ({msg[1]})")

    def _memory_limit(self, name: str, figure: float) -> LimitExceeded:
        return LimitExceeded(name, "extract_memory_mb", "extraction needed", round(figure), self.memory_mb, "MB")

    def _fail_dead(self, name: str):
        """The child died on its own: a crash (signal) or the kernel's out-of-memory killer."""
        p = self._proc
        code = p.wait(timeout=10) if p is not None else None
        self.close()
        if code is not None and code < 0:
            sig = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            if -code == signal.SIGKILL:
                raise self._memory_limit(name, max(self.last_peak_mb, self.memory_mb))
            raise ExtractionError(name, f"the reader crashed on this file ({sig})")
        raise ExtractionError(name, f"the reader stopped on this file (exit status {code})")

    def _next_frame(self, name: str, budget: Budget, should_stop: Callable[[], bool] | None,
                    where: str = "") -> bytes:
        """One reply frame, watching memory, time (``budget``) and cancel while waiting for it; ``where`` says
        where the child was (for the reason of a stage that runs out)."""
        p = self._proc
        assert p is not None and p.stdout is not None
        fd = p.stdout.fileno()
        buf = bytearray()
        need = _HEADER.size
        size: int | None = None
        while True:
            ready, _, _ = select.select([fd], [], [], POLL_S)
            if ready:
                chunk = os.read(fd, max(1, min(need - len(buf), 1 << 20)))
                if not chunk:
                    self._fail_dead(name)
                buf += chunk
                if len(buf) == need:
                    if size is None:
                        size = _HEADER.unpack(bytes(buf))[0]
                        if size > self.memory_mb * 2**20:
                            self.close()
                            raise self._memory_limit(name, size / 2**20)
                        buf, need = bytearray(), size
                        if size == 0:
                            return b""
                    else:
                        return bytes(buf)
                continue
            self._watch(p, name, budget, should_stop, where)

    def _watch(self, p: subprocess.Popen, name: str, budget: Budget, should_stop: Callable[[], bool] | None,
               where: str) -> None:
        """Between reads of a frame: stop the child and raise when it is over memory, dead, over its time, or
        the caller cancels."""
        rss = rss_mb(p.pid)
        if rss is not None:
            self.last_peak_mb = max(self.last_peak_mb, rss)
            if rss > self.memory_mb:
                self.close()
                raise self._memory_limit(name, rss)
        if p.poll() is not None:
            self._fail_dead(name)
        if budget.over():
            self.close()
            if budget.at_ceiling:
                raise LimitExceeded(name, "extract_seconds", "extraction took longer than", budget.ceiling_s,
                                    budget.ceiling_s, "s", over=False)
            raise StageTimedOut(name, budget.stage, budget.stage_elapsed_s, budget.allowed_s, where)
        try:
            stop = should_stop is not None and should_stop()
        except BaseException:  # the caller stops in its own way (a worker shutting down)
            self.close()
            raise
        if stop:
            self.close()
            raise Cancelled(f"{name}: cancelled")


def _where(stage: str, done: int, total: int, where: str) -> str:
    """Where the child is, for the reason of a stage that runs out: its page, OCR page or text size (``where``
    kept for a stage that tells none)."""
    if stage == "extract" and total:
        return f"on page {min(done + 1, total)} of {total}"
    if stage == "ocr" and total:
        return f"on OCR page {min(done + 1, total)} of {total}"
    if stage in ("roles", "chunk", "units"):
        return f"(a text of {total:,} characters)"
    return where


# --------------------------------------------------------------------------- the child's side


def _read_exact(fh, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = fh.read(n - len(out))
        if not chunk:
            raise EOFError
        out += chunk
    return bytes(out)


def _child_main() -> None:  # pragma: no cover - runs in the child process (tested through ContainedExtractor)
    """Serve extraction requests on stdin/stdout until stdin closes."""
    import resource

    limit = int(os.environ.get("RAG_CONTAINED_AS_MB", "0"))
    if limit > 0:
        resource.setrlimit(resource.RLIMIT_AS, (limit * 2**20, limit * 2**20))
    nice = int(os.environ.get("RAG_CONTAINED_NICE", "0"))
    if nice > 0 and hasattr(os, "nice"):
        os.nice(nice)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints of a library go to stderr, never into the frames
    sys.stdout = sys.stderr
    stdin = sys.stdin.buffer

    import importlib

    module, _, func = os.environ.get("RAG_CONTAINED_TARGET", DEFAULT_TARGET).partition(":")
    extract_bytes = getattr(importlib.import_module(module), func)
    from rag.ingest.read import read_bytes

    def send(obj) -> None:
        payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        out.write(_HEADER.pack(len(payload)) + payload)
        out.flush()

    send(("ready",))
    while _serve_request(stdin, send, extract_bytes, read_bytes):
        pass


def _serve_request(stdin, send: Callable[[object], None], extract_bytes: Callable, read_bytes: Callable) -> bool:  # pragma: no cover
    """Read one request from ``stdin`` and ``send`` its reply (the result, or the failure's kind and figures);
    ``False`` when stdin has closed. The file's bytes are local here, dropped before the reply is sent."""
    try:
        head = json.loads(_read_exact(stdin, _HEADER.unpack(_read_exact(stdin, _HEADER.size))[0]))
        data = _read_exact(stdin, _HEADER.unpack(_read_exact(stdin, _HEADER.size))[0])
    except EOFError:
        return False
    name = head["name"]

    def progress(stage: str, done: int, total: int) -> None:
        send(("progress", stage, int(done), int(total)))

    try:
        limits = Limits(**head.get("limits", {}))
        if head.get("op") == "read":
            params = head.get("params")
            result = read_bytes(data, name, limits=limits, progress=progress, extract=extract_bytes,
                                params=None if params is None else ChunkingSettings(**params),
                                skip=frozenset(head.get("skip", ())))
        else:
            result = extract_bytes(data, name, limits=limits, progress=progress)
        del data
        send(("ok", result))
    except LimitExceeded as e:  # a reader's own limit (issue 26 item 1): keep its name and figure
        send(("limit", e.reason, e.limit, e.what, e.figure, e.maximum, e.unit))
    except ExtractionError as e:
        send(("extraction", e.reason))
    except MemoryError:
        send(("memory",))
    except Exception as e:  # noqa: BLE001 - reported to the parent as this file's failure
        send(("error", f"{type(e).__name__}: {e}"))
    return True


if __name__ == "__main__":  # pragma: no cover
    _child_main()
