"""What a coverage auditor reports (issue 37) and how far it reads: the records shared by
:mod:`rag.ingest.coverage`, which judges them, and the auditors that make them
(:mod:`rag.ingest.office.coverage_ooxml`, :mod:`rag.ingest.coverage_other`).

A module of their own (issue 36): the judge imports the auditors' table and the auditors import these records,
so with the records inside the judge the three modules were an import circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rag.ingest.limits import Limits

#: Parts (XML members, spine documents) an auditor reads at most.
MAX_PARTS = 5000
#: Characters of seen text an auditor collects at most (the rest is not judged).
MAX_SEEN_CHARS = 20_000_000


@dataclass(frozen=True)
class Seen:
    """One piece of text a person sees: ``place`` where it sits (``"body"``, ``"table"``, ``"content
    control"`` ...: words of a warning, "inside a content control"), ``text`` as written in the file."""

    place: str
    text: str


#: An auditor: the file's bytes and the limits -> what a person sees, in order. Raises anything on a file it
#: cannot read (the audit is then skipped).
Auditor = Callable[[bytes, Limits], list[Seen]]
