"""Issue 42: each heading question of a store in three wordings, asked of its gate (search and gate, no model):
how many are answered from the document they were drawn from. Usage: PYTHONPATH=. python scripts/suggest_wording.py STORE"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from rag.answer.pipeline import gated_sources
from rag.answer.suggest import candidate_questions, document_name, heading_subject
from rag.settings import get_settings
from rag.store.store import Store
from rag.types import Verdict

path = sys.argv[1]
store = Store(Path(path), get_settings(store=path))
names = {d.id: document_name(d) for d in store.documents()}
hits = {"colon": 0, "in": 0, "say": 0}
n = 0
for s in candidate_questions(store):
    if not s.section:
        continue
    subj = heading_subject(s.section)
    name = names[s.document_id]
    if subj is None or subj.endswith("?"):
        continue
    n += 1
    for k, q in (("colon", f"{name}: what about {subj}?"), ("in", f"What about {subj} in {name}?"),
                 ("say", f"What does {name} say about {subj}?")):
        gate, cites, _ = gated_sources(store, q, None, None)
        hits[k] += gate.verdict == Verdict.ANSWERED and bool(cites) and cites[0].document_id == s.document_id
print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), path, n, hits)
