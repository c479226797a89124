"""Office Math (OMML, ECMA-376 part 1, 22.1) as one line of text a reader would write: ``sin θ = (mλ)/a``,
``2.2×10^(−4)``, ``A = πr^2``, ``f(x) = a_0 + ∑_(n=1)^∞ (a_n cos(nπx/L))``.

A Word equation is a tree of structures (a superscript ``m:sSup``, a fraction ``m:f``, a radical ``m:rad``, an n-ary
operator ``m:nary``, brackets ``m:d`` ...) whose leaves are ``m:t`` runs. The DOCX reader joined the leaves: "10-6"
for 10⁻⁶, "πr2" for πr², "mλa" for mλ/a (markitdown's and kreuzberg's equations.docx, a walk, 2026-12-07): a
number a reader would never read. The notation is :mod:`rag.ingest.mathml`'s (``^``, ``_``, ``(a)/(b)``, ``√(x)``,
``√[3](x)``; a fraction without a bar, as a binomial coefficient, ``(10 3)``);
a structure it does not know reads as its parts in order. At most :data:`MAX_DEPTH` levels (deeper, the leaves).
"""

from __future__ import annotations

from rag.ingest.mathml import group

M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
#: Levels of nesting read as structure; below, the leaves' text.
MAX_DEPTH = 40
#: Invisible operators Word writes between a function's name and its argument, and for implied multiplication.
_INVISIBLE = dict.fromkeys(map(ord, "\u2061\u2062\u2063\u2064"), None)


#: The structures written as their base (``m:e``) and one attached part: ``name -> (part, mark)``.
_ATTACHED = {"sSup": ("sup", "^"), "sSub": ("sub", "_"), "limLow": ("lim", "_"), "limUpp": ("lim", "^")}


def _kids(el, name: str) -> list:
    return [k for k in el if k.tag == f"{M}{name}"]


def _part(el, name: str, depth: int) -> str:
    found = _kids(el, name)
    return linear(found[0], depth + 1).strip() if found else ""


def _prop(el, pr: str, name: str, default: str) -> str:
    """The ``m:val`` of property ``name`` in ``el``'s ``pr`` element (``m:naryPr``'s ``m:chr``), else ``default``."""
    for p in _kids(el, pr):
        for k in _kids(p, name):
            return k.get(f"{M}val", default)
    return default


def linear(el, depth: int = 0) -> str:
    """The equation of OMML element ``el`` (``m:oMathPara``, ``m:oMath`` or any structure inside) as one line."""
    if not isinstance(el.tag, str):
        return ""
    if not el.tag.startswith(M):  # a Word run, a tracked insertion, a hyperlink, a content control inside the
        local = el.tag.rsplit("}", 1)[-1]  # equation: its text, not nothing (a review, 2026-12-07)
        if local in ("del", "delText", "moveFrom", "rPr", "instrText") or depth > MAX_DEPTH:
            return ""
        return (el.text or "").translate(_INVISIBLE) if local == "t" else "".join(linear(k, depth + 1) for k in el)
    name = el.tag[len(M):]
    if depth > MAX_DEPTH:
        return "".join(el.itertext()).translate(_INVISIBLE)
    if name == "t":
        return (el.text or "").translate(_INVISIBLE)
    if name.endswith("Pr"):
        return ""
    if name in _ATTACHED:  # a superscript, a subscript, a limit under or over its base
        part, mark = _ATTACHED[name]
        return f"{_part(el, 'e', depth)}{mark}{group(_part(el, part, depth))}"
    if name == "sSubSup":
        return f"{_part(el, 'e', depth)}_{group(_part(el, 'sub', depth))}^{group(_part(el, 'sup', depth))}"
    if name == "sPre":
        return f"_{group(_part(el, 'sub', depth))}^{group(_part(el, 'sup', depth))}{_part(el, 'e', depth)}"
    if name == "f":
        if _prop(el, "fPr", "type", "bar") == "noBar":  # a binomial coefficient or a stack: no division
            return f"{group(_part(el, 'num', depth))} {group(_part(el, 'den', depth))}"
        return f"{group(_part(el, 'num', depth))}/{group(_part(el, 'den', depth))}"
    if name == "rad":
        degree = _part(el, "deg", depth)
        return f"√[{degree}]({_part(el, 'e', depth)})" if degree else f"√({_part(el, 'e', depth)})"
    if name == "nary":
        op, lower, upper = _prop(el, "naryPr", "chr", "∫"), _part(el, "sub", depth), _part(el, "sup", depth)
        limits = (f"_{group(lower)}" if lower else "") + (f"^{group(upper)}" if upper else "")
        return f"{op}{limits} {group(_part(el, 'e', depth))}"
    if name == "d":
        begin, end = _prop(el, "dPr", "begChr", "("), _prop(el, "dPr", "endChr", ")")
        sep = _prop(el, "dPr", "sepChr", "|")
        return f"{begin}{sep.join(linear(e, depth + 1).strip() for e in _kids(el, 'e'))}{end}"
    if name == "func":
        return f"{_part(el, 'fName', depth)} {_part(el, 'e', depth)}"
    if name == "eqArr":
        return "; ".join(linear(e, depth + 1).strip() for e in _kids(el, "e"))
    if name == "m":
        return "; ".join(", ".join(linear(e, depth + 1).strip() for e in _kids(row, "e")) for row in _kids(el, "mr"))
    text = "".join(linear(k, depth + 1) for k in el)
    return " ".join(text.split()) if name in ("oMath", "oMathPara") else text
