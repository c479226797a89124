"""Local document QA with honest citations: the library (never imports streamlit).

The subpackages are the pipeline's stages (see ``DESIGN.md``), lowest first: :mod:`rag.ingest` (extract,
chunk) and :mod:`rag.index` (embed, dense, BM25, fusion, rerank) side by side, :mod:`rag.store` (the
persistent store and the ingest path), :mod:`rag.answer` (gate, cite, excerpt, generate, check),
:mod:`rag.evaluation` (recall, MRR, sweeps, reports, benchmarks), :mod:`rag.api` (the HTTP API and the MCP
server) and :mod:`rag.cli` (the command line); a
package imports only the ground floor and the packages below it (``tests/test_layers.py``). The ground floor:
shared records in :mod:`rag.types`, the one vocabulary in :mod:`rag.text`, word-pieces in :mod:`rag.tokens`,
the one language detector in :mod:`rag.language`, a question read once in :mod:`rag.question`; plus :mod:`rag.settings`, :mod:`rag.models`,
:mod:`rag.collections`, :mod:`rag.errors`, :mod:`rag.access` (who may use the app) and :mod:`rag.served` (the
PDFs a static folder publishes). ``python -m rag`` runs :mod:`rag.__main__` (the CLI).
"""

__version__ = "0.2.0"
