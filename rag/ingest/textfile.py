"""Text and Markdown files: bytes -> decoded text, front matter, comments (stage 1, text branch; issue 13,
items 11-12; cases c23, c24).

* :func:`decode` - a byte-order mark names the encoding (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE); otherwise
  UTF-16 without a BOM and ISO-2022 by their bytes; strict UTF-8; otherwise :func:`rag.ingest.charset.guess`
  (chardet's candidates, mojibake passed over: Windows-1252, Windows-1251, Shift-JIS ...) and the document gets
  a warning naming the encoding; bytes no detector reads as text are refused with the reason.
* :func:`split_front_matter` - a YAML (``---``) or TOML (``+++``) block at the very start of a Markdown
  file is metadata (``title``, ``tags`` ...), not text: it is parsed and left out of the canonical text.
* :func:`strip_html_comments` - ``<!-- ... -->`` outside fenced code blocks is not shown by any Markdown
  renderer, so it is not indexed either (c24: an outdated value hidden in a comment was quoted as the
  answer). Comments are removed before any offset is taken, so every offset stays exact in the stored
  canonical text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.ingest import charset
from rag.text import FENCE_RE

_BOMS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
)
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_FENCE = re.compile(FENCE_RE.pattern, re.M)
_COMMENT = re.compile(r"<!--.*?-->", re.S)


@dataclass(frozen=True)
class Decoded:
    """Decoded text: ``text`` (not yet normalised), ``encoding`` (Python codec name), ``warning`` a
    sentence for ``Document.warnings`` when the text was not UTF-8 (``None`` otherwise)."""

    text: str
    encoding: str
    warning: str | None = None


def bom_encoding(data: bytes) -> str | None:
    """The codec a byte-order mark at the start of ``data`` names, or ``None``."""
    for bom, enc in _BOMS:
        if data.startswith(bom):
            return enc
    return None


def utf16_without_bom(data: bytes) -> str | None:
    """``utf-16-le``/``-be`` when ``data``'s first 4 KiB hold a NUL in every other byte (and hardly any in the others)."""
    head = data[:4096]
    if len(head) < 8:
        return None
    odd_zero = head[1::2].count(0) / (len(head) // 2)
    even_zero = head[0::2].count(0) / (len(head) // 2)
    if odd_zero > 0.4 and even_zero < 0.05:
        return "utf-16-le"
    if even_zero > 0.4 and odd_zero < 0.05:
        return "utf-16-be"
    return None


def iso2022(data: bytes) -> str | None:
    """The ISO-2022 codec whose escape sequences ``data`` holds (7-bit Japanese or Korean e-mail and web text, valid
    ASCII and so valid UTF-8 with ESC bytes in it: chardet's ``iso-2022-jp`` samples were indexed as
    "\x1b$B%3%s%=..."), or ``None``."""
    head = data[:65536]
    if b"\x1b$)C" in head:
        return "iso2022_kr"
    if b"\x1b$B" in head or b"\x1b$@" in head or b"\x1b$(D" in head or b"\x1b$A" in head:
        return "iso2022_jp_2"
    return None


def decode_probe(data: bytes) -> str | None:
    """The encoding of text that holds NUL bytes by nature (UTF-16/32 without a BOM), else ``None``."""
    return utf16_without_bom(data)


def decode(data: bytes) -> Decoded:
    """Decode text bytes (module doc). Raises ``ValueError`` with the reason when they are not text."""
    enc = bom_encoding(data)
    if enc is not None:
        try:
            text = data.decode(enc)
        except UnicodeDecodeError as e:
            raise ValueError(f"not valid {enc} text although it starts with a {enc} byte-order mark "
                             f"(byte offset {e.start})") from e
        warn = None if enc == "utf-8-sig" else f"decoded as {enc.upper()} (byte-order mark)"
        return Decoded(text, enc, warn)
    # UTF-16 without a byte-order mark first: its ASCII text is valid UTF-8 too, one NUL in every two bytes (a walk,
    # 2026-12-07: chardet's nobom-utf16be.txt was indexed as "\x00D\x00a\x00t\x00e")
    for enc, how in ((utf16_without_bom(data), "without a byte-order mark (guessed)"),
                     (iso2022(data), "(its escape sequences)")):
        if enc is not None:
            try:
                return Decoded(data.decode(enc), enc, f"decoded as {enc.upper()} {how}")
            except UnicodeDecodeError:
                pass
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as e:
        first_bad = e.start
    if b"\x00" in data[:8192]:
        raise ValueError("binary data (NUL bytes), not text")
    enc = charset.guess(data)
    if enc is None:
        raise ValueError(f"not valid UTF-8 text (byte offset {first_bad}) and no text encoding fits")
    text = data.decode(enc, errors="replace")
    if _CONTROL.search(text):
        raise ValueError(f"not valid UTF-8 text (byte offset {first_bad}); as {enc} it holds "
                         "control characters, so it is not text")
    lost = text.count("\ufffd") - data.decode(enc, errors="ignore").count("\ufffd")
    return Decoded(text, enc, f"not UTF-8: decoded as {enc} (guessed; check accents)"
                   + (f"; {lost} byte sequence(s) not valid in it shown as \ufffd" if lost else ""))


#: A front-matter block ends within this many lines of its opening line, or there is none (a Markdown file that
#: opens with a thematic break ``---`` has no metadata: what follows is the document).
MAX_FRONT_MATTER_LINES = 200


def split_front_matter(text: str) -> tuple[dict, str, str | None]:
    """``(metadata, rest, problem)``: a YAML (``---``, closed by ``---`` or YAML's document end ``...``, as pandoc
    writes it) or TOML (``+++``) front-matter block at the very start of ``text`` (``\\n`` line ends), closed within
    :data:`MAX_FRONT_MATTER_LINES` lines, parsed into a dict and cut off. A block that cannot be parsed, or is not a
    mapping, stays in the text and ``problem`` says so: the CommonMark spec's YAML block closed by ``...`` was
    taken to run to a ``---`` 880 lines down, and 23 KB of the document went with it (a walk, 2026-12-07). No block:
    ``({}, text, None)``. One pass over the lines, no regular expression."""
    lines = text.split("\n", MAX_FRONT_MATTER_LINES + 1)
    opener = lines[0].rstrip(" \t")
    if opener not in ("---", "+++") or len(lines) < 2 or not lines[1].strip():
        return {}, text, None  # pandoc's rule: a "---" followed by a blank line is a thematic break, not metadata
    closers = ("---", "...") if opener == "---" else ("+++",)
    end = next((k for k in range(1, min(len(lines), MAX_FRONT_MATTER_LINES + 1)) if lines[k].rstrip(" \t") in closers),
               None)
    if end is None:
        return {}, text, None
    body = "\n".join(lines[1:end])
    rest = text[sum(len(x) + 1 for x in lines[:end + 1]):]
    try:
        if opener == "---":
            import yaml

            meta = yaml.safe_load(body) if body.strip() else {}
        else:
            import tomllib

            meta = tomllib.loads(body)
    except Exception as e:  # noqa: BLE001 - YAML and TOML raise their own error types
        return {}, text, f"front matter not parsed ({type(e).__name__}); read as text"
    if not isinstance(meta, dict):
        return {}, text, "front matter is not a mapping; read as text"
    return meta, rest, None


def strip_html_comments(text: str) -> str:
    """``text`` without ``<!-- ... -->`` outside fenced code blocks; a comment alone on its line(s)
    takes its line break with it."""
    out, pos, fence = [], 0, None
    spans = []  # (start, end) of fenced blocks
    for m in _FENCE.finditer(text):
        if fence is None:
            fence = m
        elif m.group(1)[0] == fence.group(1)[0] and len(m.group(1)) >= len(fence.group(1)):
            spans.append((fence.start(), m.end()))
            fence = None
    if fence is not None:
        spans.append((fence.start(), len(text)))
    for m in _COMMENT.finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        start, end = m.start(), m.end()
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end == -1 else line_end
        if not text[line_start:start].strip() and not text[end:line_end].strip():
            start, end = line_start, min(len(text), line_end + 1)
        out.append(text[pos:start])
        pos = max(pos, end)
    out.append(text[pos:])
    return "".join(out)


def metadata_pairs(meta: dict) -> tuple[tuple[str, str], ...]:
    """Front matter as ``(key, value)`` strings (lists joined with ``", "``), in the file's order."""
    pairs = []
    for k, v in meta.items():
        if isinstance(v, (list, tuple)):
            v = ", ".join(map(str, v))
        pairs.append((str(k), str(v)))
    return tuple(pairs)


#: A CommonMark link reference definition on one line: ``[label]: destination "optional title"``. It renders as
#: nothing, so ``[//]: # (hidden text)`` is the usual way to write a comment that no reader sees (issue 26).
_REFERENCE = re.compile(r"""^ {0,3}\[(?!\^)(?:[^\]\\]|\\.){1,999}\]:[ \t]*(?:<[^>\n]*>|\S+)"""
                        r"""(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*$""", re.MULTILINE)


def strip_reference_definitions(text: str) -> tuple[str, int]:
    """``text`` without its link reference definitions outside fenced code blocks (each with its line break),
    and how many were removed. A rendered Markdown page never shows them: ``[//]: # (...)`` and
    ``[comment]: <> (...)`` are comments, and the target of ``[1]: https://...`` is only reached through
    a link, whose text stays. A footnote (``[^2]: https://...``, GitHub's and pandoc's syntax) is no definition:
    a rendered page lists it at the foot (a new user's walk, 2026-12-07: three footnotes of one word each, a
    file name and two URLs, were dropped as "comments")."""
    fenced, fence = [], None
    for m in _FENCE.finditer(text):
        if fence is None:
            fence = m
        elif m.group(1)[0] == fence.group(1)[0] and len(m.group(1)) >= len(fence.group(1)):
            fenced.append((fence.start(), m.end()))
            fence = None
    if fence is not None:
        fenced.append((fence.start(), len(text)))
    out, pos, n = [], 0, 0
    for m in _REFERENCE.finditer(text):
        if any(a <= m.start() < b for a, b in fenced):
            continue
        out.append(text[pos:m.start()])
        pos = min(len(text), m.end() + 1)
        n += 1
    out.append(text[pos:])
    return "".join(out), n

