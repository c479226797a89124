"""One typed settings object for the whole pipeline.

Every field has a default taken from ``DESIGN.md`` (the chapter's figures) and
can be overridden, in increasing priority, by:

1. a TOML file (``rag.toml`` in the working directory, or the file named by the
   ``RAG_CONFIG`` environment variable), top-level keys named as the fields;
2. environment variables ``RAG_<FIELD>`` (e.g. ``RAG_STORE=/tmp/s``,
   ``RAG_THRESHOLD=0.6``);
3. explicit keyword arguments (what the CLI passes from its flags).

Units are in the names or the descriptions: characters, word-pieces, tokens,
cosine distance (``1 - cos``, in ``[0, 2]``).

Each knob has one name everywhere: the field, ``RAG_<FIELD>``, the CLI flag
(``--min-score``), the app's widget key and the JSON key (issue 12). A renamed
knob's old name is still read from ``rag.toml``, the environment and keyword
arguments, with a ``FutureWarning`` (:data:`RENAMED`).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from rag.types import GateKind

#: The default generator written by ``python -m rag models``.
DEFAULT_MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"

#: Bumped whenever extraction/chunking changes what gets stored, so old rows can be told apart.
PIPELINE_VERSION = "2"  # 2: even paragraph splits and unit vectors (issue 27)


#: Knobs renamed by issue 12: old name -> new name (the old one is still read, with a ``FutureWarning``).
RENAMED = {"min_answer_score": "min_score"}


@dataclass(frozen=True)
class ChunkingSettings:
    """How documents are cut (design stage 2, strategy E): ``budget_chars`` characters per chunk, ``window_tokens``
    the encoder's window in word-pieces, ``overlap_chars`` characters, ``unit_vectors`` sentence vectors too
    (issue 27). The view :attr:`Settings.chunking` of the flat fields (``chunk_budget_chars``, ...)."""

    budget_chars: int
    window_tokens: int
    overlap_chars: int
    unit_vectors: bool


@dataclass(frozen=True)
class RetrievalSettings:
    """How a question is searched (design stages 4-6): ``candidates_k`` hits per leg, ``rrf_k`` the fusion
    constant, BM25's ``bm25_k1`` / ``bm25_b``, ``rerank_top`` the cross-encoder's depth, ``translate_questions``
    (issue 27). The view :attr:`Settings.retrieval`; the gate's own view is ``rag.answer.gate.GateKnobs``."""

    candidates_k: int
    rrf_k: int
    bm25_k1: float
    bm25_b: float
    rerank_top: int
    translate_questions: bool


@dataclass(frozen=True)
class GenerationSettings:
    """The local model (design stage 8): ``model_path`` the GGUF, ``n_ctx`` / ``source_tokens`` /
    ``max_answer_tokens`` in the model's tokens, ``threads`` CPU threads, ``prefix_cache`` whether the instruction
    prefix's KV cache is kept between answers, ``flash_attn`` llama.cpp's fused attention. The view
    :attr:`Settings.generation`."""

    model_path: Path
    n_ctx: int
    source_tokens: int
    max_answer_tokens: int
    threads: int
    prefix_cache: bool = True
    flash_attn: bool = True


def _default_threads() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


class Settings(BaseSettings):
    """Pipeline settings; defaults follow ``DESIGN.md``.

    Raises ``pydantic.ValidationError`` naming the field when a value is out of
    bounds (e.g. ``RAG_THRESHOLD=3``).
    """

    model_config = SettingsConfigDict(env_prefix="RAG_", extra="ignore", validate_assignment=True,
                                      validate_by_name=True, validate_by_alias=True)

    store: Path = Field(Path("data"), description="Store directory (SQLite, FAISS, BM25, original files). Env RAG_STORE.")
    models_dir: Path = Field(
        Path("models"),
        description="Folder holding GGUF generators and optional cross-encoders, relative to the working directory "
                    "like the store (the README's commands run from the repository, where 'make' provisions it). "
                    "Env RAG_MODELS_DIR.",
    )
    chunk_budget_chars: int = Field(512, ge=64, le=8192, description="Strategy E chunk budget, characters (design stage 2).")
    encoder_window_tokens: int = Field(256, ge=16, le=8192, description="Embedder window in word-pieces; no chunk text may exceed it.")
    overlap_chars: int = Field(64, ge=0, le=1024, description="Overlap for strategies B, D, F, characters.")
    threshold: float = Field(0.675, ge=0.0, le=2.0, description="Gate: cosine distance cut (design stage 7).")
    max_sources: int = Field(4, ge=1, le=20, description="Gate: at most this many chunks reach the prompt.")
    gate: GateKind = Field(
        GateKind.CALIBRATED,
        description="'distance': the design's gate alone (some chunk under the threshold). 'learned': that AND the "
                    "answerability score of rag/answer/gate/learned_gate.py (issue 8) at or above min_score. "
                    "'calibrated' (issue 15, default): the same two cuts on evidence read against the store's own "
                    "references, plus a 'mentions' verdict from mention_score up to min_score.",
    )
    min_score: float | None = Field(
        None, ge=0.0, le=1.0,
        # env RAG_MIN_SCORE; RAG_MIN_ANSWER_SCORE is its name before issue 12
        validation_alias=AliasChoices("RAG_MIN_SCORE", "RAG_MIN_ANSWER_SCORE"),
        description="Learned gate: refuse below this answerability score, P(the sources answer it); None = the "
                    "shipped model's recommended cut (GateModel.default_min_score). Higher refuses more. "
                    "Env RAG_MIN_SCORE; CLI --min-score; JSON gate.min_score.",
    )
    mention_score: float | None = Field(
        None, ge=0.0, le=1.0,
        description="Calibrated gate: from this score up to min_score the verdict is 'the documents mention "
                    "this but may not answer it' (sources shown with that warning); below it, refused. None = the "
                    "shipped model's value.",
    )
    candidates_k: int = Field(20, ge=1, le=1000, description="Hits per retrieval leg before fusion.")
    unit_vectors: bool = Field(
        True, description="Issue 27: embed every unit (sentence, list item, table row) of a chunk of several beside "
                          "the chunk, and rank a chunk in the dense leg by the best of its own and its units' cosine "
                          "(users' wording R@4 +4 / -1 on the dev corpora; about 3.3 more vectors per chunk, ingest "
                          "embedding about 2x). Off: chunk vectors alone, as before.")
    translate_questions: bool = Field(
        True, description="Issue 27: a question whose language is none of the documents' is translated into their "
                          "language by the local model before the search (searched, gated and answered as "
                          "translated, and said so; German/French course questions R@4 0.550 -> 0.875). Off: "
                          "searched as asked, and the gate says the languages differ.")
    rrf_k: int = Field(60, ge=1, le=1000, description="Reciprocal rank fusion constant (design stage 5).")
    bm25_k1: float = Field(1.2, ge=0.0, le=10.0, description="BM25 term-frequency saturation.")
    bm25_b: float = Field(0.75, ge=0.0, le=1.0, description="BM25 length normalisation.")
    rerank_top: int = Field(25, ge=1, le=200, description="Cross-encoder rerank depth over the fused list (design stage 6).")
    model_file: str = Field(DEFAULT_MODEL_FILE, description="GGUF file name in models_dir (or a path with a folder, taken as written).")
    n_ctx: int = Field(4096, ge=512, le=131072, description="Generator context window, tokens.")
    source_tokens: int = Field(
        240, ge=0, le=8192,
        description="Prompt: tokens of source text the model reads, shared by all sources (the sentences closest "
                    "to the question, rag/answer/excerpt.py); 0 = every chunk whole, as design stage 8. 240, not "
                    "160 (2026-12-02, docs/answers.md 'How much of the sources the model reads'): the 0.5B's shown "
                    "answer right 66 against 59 of 108 dev questions (+8 / -1, p = 0.039), confident wrong 0 "
                    "against 3, first word 0.7 s later p50 (2.3 -> 3.0 s; 0.6-1.1 s per corpus and wording).",
    )
    max_answer_tokens: int = Field(384, ge=16, le=4096, description="Generation cap, tokens.")
    prefix_cache: bool = Field(
        True, description="Issue 41: keep the KV cache of the prompt's fixed part (instructions and worked exchange, "
                          "before the sources) between answers, so each answer evaluates only its sources and "
                          "question. Off: every prompt is evaluated whole (bench speed measures both, paired).")
    flash_attn: bool = Field(
        True, description="Issue 41: llama.cpp's fused attention kernel for the local model. Paired bench answers, "
                          "0.5B, 2026-12-04: first words p50 1761 -> 1621 ms (course) and 1812 -> 1625 ms (pdf-dev); "
                          "shown answer right 29 -> 30 of 48 and 34 = 34 of 60, supported answers and confident "
                          "wrong ones the same (docs/performance.md). Off: the plain kernel.")
    threads: int = Field(default_factory=_default_threads, ge=1, le=512, description="CPU threads for llama.cpp and torch.")
    embed_batch_size: int | None = Field(
        None, ge=1, le=1024,
        description="Chunks per encoder call; unset = the encoder's own (rag.index.embed.ENCODERS): 1 for the int8 "
                    "encoder (measured fastest per chunk on 2 shared cores: no padding), 32 for the float one (at "
                    "batch 1 its two PyTorch threads were 6x slower under load). Issue 18, docs/scale.md.",
    )
    encoder: Literal["minilm", "minilm-int8"] | None = Field(
        None,
        description="Embedding encoder (issue 18): 'minilm' the float all-MiniLM-L6-v2 (PyTorch), 'minilm-int8' the "
                    "same network as int8 ONNX (faster; vectors at cosine >= 0.997 to the float ones). Unset: an "
                    "existing store keeps the encoder its stamp names, a new one gets the default "
                    "(rag.index.embed.DEFAULT_ENCODER). A store refuses an encoder other than its own.",
    )
    backend: Literal["local", "milvus"] = Field(
        "local",
        description="Where vectors and terms are searched (issue 18): 'local' FAISS + bm25s files next to SQLite, "
                    "'milvus' a Milvus collection (milvus-lite file or server, see milvus_uri). SQLite stays the "
                    "source of truth either way.",
    )
    milvus_uri: str = Field(
        "",
        description="Milvus to use with backend 'milvus': a local file path ending in .db (milvus-lite, embedded), "
                    "or http://host:19530 for a Milvus server; empty = <store>/milvus.db.",
    )
    max_upload_mb: int = Field(50, ge=1, le=2048, description="Largest accepted file, MiB (matches server.maxUploadSize); "
                               "a file on disk is measured from the file system before it is read.")
    # Reader limits (issue 26): each is checked BEFORE the work it bounds; a file over one fails with a reason naming
    # the setting and the figure (rag.errors.LimitExceeded). Defaults in docs/security.md, with what each one bounds.
    max_zip_member_mb: int = Field(
        100, ge=1, le=8192,
        description="ZIP-based files (DOCX, PPTX, XLSX, EPUB, ODF): largest inflated size of one member, MiB, read from "
                    "the archive's directory before anything is inflated (an XML part becomes a tree 5-10x its size).")
    max_zip_total_mb: int = Field(300, ge=1, le=16384, description="ZIP-based files: all members inflated together, MiB.")
    max_zip_ratio: int = Field(
        100, ge=2, le=100000,
        description="ZIP-based files: largest inflated/compressed size ratio of a member over 1 MiB (office XML "
                    "compresses 5-20x; a decompression bomb 300-1000x).")
    max_zip_members: int = Field(10000, ge=1, le=1000000, description="ZIP-based files: most members (entries) in the archive.")
    max_image_megapixels: int = Field(
        50, ge=1, le=2000,
        description="Largest image frame or rendered page decoded, megapixels (Pillow's own bomb limit is set to "
                    "it); a 50-megapixel frame takes 150 MB as RGB.")
    max_image_total_megapixels: int = Field(
        1000, ge=1, le=100000,
        description="Pixels x frames of one image file (every frame of a multi-page TIFF), megapixels, counted from "
                    "the frame headers before any frame is decoded.")
    max_pages: int = Field(5000, ge=1, le=1000000, description="Most pages of a PDF or frames of an image file.")
    max_ocr_pages: int = Field(
        300, ge=0, le=100000,
        description="Most pages (or image frames) of one document read by OCR, counted before OCR starts (about "
                    "3-5 s a page on 2 cores).")
    max_ocr_seconds: int = Field(1800, ge=1, le=86400, description="OCR time of one document, seconds; checked after each page.")
    max_sheet_rows: int = Field(
        200000, ge=1, le=100000000,
        description="Spreadsheets and CSV: most rows with content in one file (all sheets), counted as they are read; "
                    "the sheet's declared dimension is never trusted.")
    require_login: bool = Field(
        False,
        description="Ask for the password (python -m rag access set-password) even when the app is served on "
                    "127.0.0.1 (behind a reverse proxy on this machine). Served on any other address, the app asks "
                    "for it anyway and shows nothing until one is set (issue 26, rag/access.py).")
    backup_hours: float = Field(
        24.0, ge=0.0, le=24.0 * 365,
        description="A consistent backup of the store's SQLite file (SQLite's online backup) when the newest is "
                    "older than this, hours, checked on opening and after each change; 0 = only before migrations "
                    "and with 'rag backup'. 'rag repair' restores the newest good one (issue 26).")
    backups_kept: int = Field(3, ge=1, le=100, description="Backups kept of each kind (scheduled, before-migration-N, manual).")
    max_sheet_cells: int = Field(
        2000000, ge=1, le=1000000000,
        description="Spreadsheets and CSV: most cells written (rows x used columns, all sheets) in one file.")
    collection: str | None = Field(
        None, max_length=200,
        description="The named collection the CLI and the app open first (a store of its own under the data "
                    "folder, rag/collections.py); unset or empty = 'default', the data folder's own store. Env RAG_COLLECTION; "
                    "CLI --collection.",
    )
    shared: Path = Field(
        Path("../shared"),
        description="The shared folder holding corpus/ and cases/ (the development corpora the benchmarks and "
                    "'rag eval' read; never copied into the repository), relative to the working directory. "
                    "Env RAG_SHARED; CLI --shared.",
    )
    static_dir: Path = Field(
        Path("static"),
        description="Where the app publishes the PDFs it links to, for Streamlit's static serving: "
                    "<static_dir>/<key>/<token>.pdf at /app/static/<key>/<token>.pdf#page=N, a random key per "
                    "collection and token per publication, removed with the document (rag/served.py). Streamlit "
                    "serves <folder of app.py>/static: the default is relative to the working directory, which "
                    "'make run' makes the repository. Env RAG_STATIC_DIR.",
    )
    embed_cache: Path | None = Field(
        None,
        description="The evaluation's embedding cache (every chunk text embedded once, ever; safe to delete); "
                    "unset = $XDG_CACHE_HOME/rag/embeddings.sqlite (~/.cache/rag/...). Env RAG_EMBED_CACHE.",
    )
    extract_memory_mb: int = Field(
        1536, ge=128, le=65536,
        description="Most resident memory, MiB, that extracting one file may use (issue 26): the worker reads each "
                    "file in a child process and stops it past this, failing that file alone ('extraction needed N MB, "
                    "over the limit'); a backstop behind the readers' own limits. Measured on the pdf-dev corpus: 400 MB with the readers loaded, 500-1000 MB for PDFs "
                    "with pages read by OCR (docs/jobs.md).",
    )
    extract_seconds: int = Field(
        3600, ge=5, le=86400,
        description="Most wall time, seconds, that extracting one file may take in the worker (issue 26); past it the "
                    "child is stopped and the file fails ('extraction took longer than the limit of N s'). A backstop "
                    "above the readers' own limits (max_ocr_seconds): it also stops a reader stuck in a loop.",
    )
    read_ahead: bool = Field(
        False,
        description="A worker reads the next queued file (extract, OCR, chunks) in a second child process, at a lower "
                    "CPU priority, while the current one embeds (issue 41 item 3; the second child has half of "
                    "extract_memory_mb, and only a success is used). Off by default: on 2 cores the encoder already "
                    "uses both, and a queue drained no sooner with it (docs/performance.md). Env RAG_READ_AHEAD.",
    )
    worker_nice: int = Field(
        10, ge=0, le=19,
        description="CPU priority (Unix nice value) a worker process lowers itself to (issue 41): the app's own "
                    "searches and answers then take the cores first while files are indexed. 0 = as the app.",
    )
    worker_idle_exit_s: int = Field(
        120, ge=0, le=86400,
        description="Seconds a worker started by the app waits with nothing to do before it stops (issue 25); the app "
                    "starts one again when a file is added. 0 = never stops by itself.",
    )
    watch_dirs: list[Path] = Field(
        default_factory=list,
        description="Folders the app's worker keeps in sync with its store (issue 25), as 'rag watch DIR' does: new "
                    "and changed files are queued (a changed file becomes a new version), deleted ones leave. "
                    "Env RAG_WATCH_DIRS as a JSON list.",
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed_knobs(cls, data: Any) -> Any:
        """Read a knob's old name (:data:`RENAMED`) with a ``FutureWarning``; the new name wins when both are set."""
        if not isinstance(data, dict):
            return data
        env = {k.upper() for k in os.environ}
        for old, new in RENAMED.items():
            used = [f"RAG_{old.upper()}"] if f"RAG_{old.upper()}" in env else []
            if old in data:
                used.append(old)
                value = data.pop(old)
                if new not in data and f"RAG_{new.upper()}" not in data:
                    data = {**data, new: value}
            if used:
                warnings.warn(f"setting {' / '.join(used)} is deprecated: use {new} (RAG_{new.upper()})",
                              FutureWarning, stacklevel=2)
        return data

    @property
    def min_answer_score(self) -> float | None:
        """Deprecated: the name of :attr:`min_score` before issue 12 (read-only, for code not yet renamed)."""
        return self.min_score

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_file = Path(os.environ.get("RAG_CONFIG", "rag.toml"))
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=toml_file))

    @property
    def model_path(self) -> Path:
        """Path of the selected GGUF.

        A bare file name is looked up in ``models_dir``; a path with a folder in it
        (``models/x.gguf``, ``/abs/x.gguf``) is taken as written, relative to the
        working directory, so ``--model models/x.gguf`` never becomes
        ``models/models/x.gguf``.
        """
        p = Path(self.model_file)
        if p.is_absolute() or len(p.parts) > 1:
            return p
        return self.models_dir / p

    @property
    def chunking(self) -> ChunkingSettings:
        """This concern's fields as one typed view (the fields and their ``RAG_*`` names stay flat, issue 12)."""
        return ChunkingSettings(self.chunk_budget_chars, self.encoder_window_tokens, self.overlap_chars,
                                self.unit_vectors)

    @property
    def retrieval(self) -> RetrievalSettings:
        """This concern's fields as one typed view."""
        return RetrievalSettings(self.candidates_k, self.rrf_k, self.bm25_k1, self.bm25_b, self.rerank_top,
                                 self.translate_questions)

    @property
    def generation(self) -> GenerationSettings:
        """This concern's fields as one typed view."""
        return GenerationSettings(self.model_path, self.n_ctx, self.source_tokens, self.max_answer_tokens,
                                  self.threads, self.prefix_cache, self.flash_attn)

    def with_overrides(self, **kwargs: Any) -> "Settings":
        """A copy with the non-``None`` keyword values replaced (CLI flags left unset are ``None``)."""
        data = {k: v for k, v in kwargs.items() if v is not None}
        return type(self)(**{**self.model_dump(), **data}) if data else self


def get_settings(**overrides: Any) -> Settings:
    """Build settings from file, environment and the given non-``None`` overrides."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})
