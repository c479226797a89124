"""Local document QA with honest citations: the library (never imports streamlit).

The subpackages are the pipeline's stages (see ``DESIGN.md``): :mod:`rag.ingest` (extract, chunk),
:mod:`rag.index` (embed, dense, BM25, fusion, rerank, the store), :mod:`rag.answer` (gate, cite,
excerpt, generate, check), :mod:`rag.evaluation` (recall, MRR, sweeps, reports) and :mod:`rag.cli`
(the command line). Shared records in :mod:`rag.types`, the one vocabulary in :mod:`rag.text`; plus
:mod:`rag.settings`, :mod:`rag.models` and :mod:`rag.errors`.
"""

__version__ = "0.2.0"
