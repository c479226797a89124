"""MathML as one line of text a reader would write (W3C MathML 3 presentation markup): ``E = m⋅c^2``,
``(π^2)/6``, ``x = (−b ± √(b^2 − 4ac))/(2a)``.

Used where a formula has no text description of its own: an HTML page's or EPUB chapter's ``<math>`` without
``alttext`` or a TeX annotation (:func:`rag.ingest.web.html_prepare.formulas_as_text`), and an OpenDocument file's
embedded formula object (:mod:`rag.ingest.office.odf_objects`). Before, the leaves were joined with spaces: "π 2 6"
for π²/6 and "10-6" for 10⁻⁶ (a walk over kreuzberg's test files, 2026-12-07). A superscript is written ``^``, a
subscript ``_``, a fraction ``(a)/(b)`` (one without a bar, a binomial, ``(a) (b)``), a root ``√(x)`` or ``√[3](x)``;
a part of more than one symbol is put in brackets; words of ``mtext`` and names of functions keep their spaces. The
``annotation`` of ``semantics`` is never read as the formula (a StarMath or TeX source). Pure function on an lxml
element, at most :data:`MAX_DEPTH` levels deep (deeper, the leaves' text).
"""

from __future__ import annotations

#: Levels of nesting read as structure; below, an element's text as it stands.
MAX_DEPTH = 40
#: Operators written with a space on each side.
SPACED = frozenset("= < > ≤ ≥ ≈ ≠ ≡ ± ∓ + − - × · ⋅ → ← ⇒ ⇔ ∈ ∉ ⊂ ⊆ ∪ ∩".split())
_LEAVES = frozenset({"mi", "mn", "mo", "mtext", "ms"})
_LARGE = frozenset("∑ ∏ ∐ ∫ ∬ ∭ ∮ ⋃ ⋂ lim".split())
_SKIPPED = frozenset({"annotation", "annotation-xml", "mphantom", "none", "mprescripts", "maligngroup", "malignmark"})


def _name(el) -> str:
    tag = el.tag if isinstance(el.tag, str) else ""
    return tag.rsplit("}", 1)[-1].rsplit(":", 1)[-1].lower()


def group(text: str) -> str:
    """``text`` in brackets when it is more than one symbol (``c`` stays, ``n+1`` becomes ``(n+1)``)."""
    t = " ".join(text.split())
    if len(t) <= 1 or (t.isalnum() and (t.isdigit() or len(t) <= 1)) or (t[0] + t[-1] == "()" and t.count("(") == 1):
        return t
    return f"({t})"


def linear(el, depth: int = 0) -> str:
    """The formula of MathML element ``el`` (any of ``math``, ``mrow``, ``msup`` ...) as one line (module doc)."""
    name = _name(el)
    if not name or name in _SKIPPED:
        return ""
    if depth > MAX_DEPTH:
        return " ".join(el.itertext()).strip()
    if name in _LEAVES:
        text = " ".join("".join(el.itertext()).split())
        if name == "mo" and text in SPACED or name == "mtext" and any(ch.isalpha() for ch in text):
            return f" {text} "  # "1 if x > 0", not "1ifx > 0" (a review, 2026-12-07)
        return f"{text} " if name == "mi" and len(text) > 1 else text  # a function's name: "sin x"
    kids = [k for k in el if isinstance(k.tag, str) and _name(k) not in _SKIPPED]
    parts = [linear(k, depth + 1) for k in kids]
    if parts and _name(kids[0]) == "mo":  # a sign in front ("−4", "±1") is no operator between two terms
        parts[0] = parts[0].strip()
    if name == "semantics":
        return parts[0] if parts else ""
    if name in ("msup", "msub", "msubsup", "munder", "mover", "munderover") and parts:
        base, rest = parts[0].strip(), [p.strip() for p in parts[1:]]
        marks = {"msup": "^", "mover": "^", "msub": "_", "munder": "_"}.get(name)
        big = " " if base in _LARGE else ""  # a sum's or integral's limits, then what it sums
        if marks and rest:
            return f"{base}{marks}{group(rest[0])}{big}"
        if len(rest) >= 2:
            return f"{base}_{group(rest[0])}^{group(rest[1])}{big}"
        return base
    if name == "mfrac" and len(parts) >= 2:
        if (el.get("linethickness") or "").strip() in ("0", "0px", "0pt", "0em"):  # a binomial: no division
            return f"{group(parts[0])} {group(parts[1])}"
        return f"{group(parts[0])}/{group(parts[1])}"
    if name == "msqrt":
        return f"√({''.join(parts).strip()})"
    if name == "mroot" and len(parts) >= 2:
        return f"√[{parts[1].strip()}]({parts[0].strip()})"  # the cube root of 8, not 3 times √8
    if name == "mfenced":
        return f"{el.get('open', '(')}{el.get('separators', ',')[:1].join(parts)}{el.get('close', ')')}"
    if name == "mtable":
        return "; ".join(p.strip() for p in parts if p.strip())
    if name == "mtr":
        return ", ".join(p.strip() for p in parts if p.strip())
    text = "".join(parts)
    return " ".join(text.split()) if name == "math" else text
