"""Runaway "readers" for the contained-extraction tests (run in the child process by
:class:`rag.ingest.contained.ContainedExtractor` as its ``target``): each misbehaves the way a hostile file
makes a real reader misbehave, without depending on which reader a real bomb would reach."""

from __future__ import annotations

import os
import signal
import time

from rag.ingest.extract import extract_bytes


def behave(data: bytes, name: str, limits=None, progress=None):
    """By the file's text: ``eat N`` holds N MiB more every 20 ms, ``sleep`` never returns, ``crash`` dies on
    SIGSEGV, ``raise`` raises a plain error, ``stuck STAGE`` (first line; ``roles``, ``chunk``, ``units``) makes
    that text stage of :mod:`rag.ingest.read` never return in this child; anything else is extracted normally."""
    text = data[:64].decode("utf-8", "replace")
    if text.startswith("eat "):
        held = []
        for _ in range(int(text.split()[1]) // 16):
            held.append(bytearray(16 * 2**20))
            for i in range(0, len(held[-1]), 4096):  # touch every page: resident, not only reserved
                held[-1][i] = 1
            time.sleep(0.02)
        return extract_bytes(b"# Ate\n\nall of it.", name, limits=limits)
    if text.startswith("sleep"):
        time.sleep(3600)
    if text.startswith("crash"):
        os.kill(os.getpid(), signal.SIGSEGV)
    if text.startswith("raise"):
        raise RuntimeError("a reader bug")
    if text.startswith("stuck "):  # a text stage that never returns (what issue 35's contents pattern did)
        import rag.ingest.read as read

        def spin(*args, **kwargs):
            while True:
                pass

        setattr(read, {"roles": "find_roles", "chunk": "chunk_document", "units": "chunk_units"}[text.split()[1]],
                spin)
        data = data.split(b"\n", 1)[1]
    return extract_bytes(data, name, limits=limits, progress=progress)
