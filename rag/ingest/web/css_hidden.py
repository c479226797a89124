"""Text an HTML page or EPUB chapter holds but a reader never sees (issue 26): found by CSS, removed before reading.

:func:`remove_hidden` walks the parsed page once, top down, with the style of every element: its inline
``style`` attribute over the rules of the page's style sheets (``<style>`` elements, and for EPUB the book's
CSS files passed in), matched by selector (``cssselect``) in specificity and document order; inherited
properties (``color``, ``font-size``, ``visibility``) passed down. An element is hidden, and removed with what
it holds (its tail text stays), when it has

* the ``hidden`` attribute or ``aria-hidden="true"`` (hidden from the reading layer; decorative in practice);
* ``display: none``, ``visibility: hidden|collapse``, ``opacity`` of 0.05 or less, ``content-visibility: hidden``;
* a ``font-size`` of 0 or under 2 px / 2 pt, ``transform: scale(0)``, ``clip: rect(0 0 0 0)``,
  ``clip-path: inset(50%)`` or ``circle(0)``, a zero ``width`` or ``height`` with ``overflow: hidden``;
* a position off the screen: ``position: absolute|fixed`` with ``left``/``top``/``right`` of -999 px or further,
  or a ``text-indent`` of -999 px or further (the old image-replacement trick);
* text colour ``transparent`` (alpha 0), or white (every channel >= 242) with no background colour or image
  painted by it or an ancestor (the page itself is white).

Rules inside ``@media print`` (or any medium that is not the screen) are ignored; ``!important`` wins over
normal declarations. What cannot be judged statically (scripts, ``:hover``) is left visible. Never raises on
bad CSS: an unparseable rule or selector is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.ingest.office.office_hidden import Hidden, is_white

#: Text at or under this size (CSS px; 1 pt = 4/3 px) is hidden, as under 2 pt in the office readers.
MIN_VISIBLE_PX = 2.0 * 4 / 3
#: An offset at or beyond this (CSS px, negative) puts the element off the screen.
OFFSCREEN_PX = -999.0
#: Properties whose value a child inherits.
INHERITED = ("color", "font-size", "visibility")
#: Properties read at all (the rest of a declaration block is ignored).
READ = {"display", "visibility", "opacity", "font-size", "color", "background", "background-color",
        "background-image", "position", "left", "top", "right", "text-indent", "clip", "clip-path", "width",
        "height", "overflow", "transform", "content-visibility", "max-height", "font"}

_LENGTH = re.compile(r"^(-?[\d.]+)(px|pt|em|rem|%|vw|vh|ex|ch|cm|mm|in|pc)?$")
_UNIT_PX = {"px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4, None: 1.0}
_NAMED = {"white": (255, 255, 255), "snow": (255, 250, 250), "ivory": (255, 255, 240), "ghostwhite": (248, 248, 255),
          "whitesmoke": (245, 245, 245), "transparent": None}


@dataclass
class _Rule:
    selector: str
    specificity: tuple[int, int, int]
    order: int
    decls: dict[str, tuple[str, bool]]
    needs: tuple[frozenset, frozenset, str] = (frozenset(), frozenset(), "")  # classes, ids, tag of its last part


_ASCII_WS = re.compile(r"[ \t\n\r\f]+")


def _needs(tree) -> tuple[frozenset, frozenset, str]:
    """The classes, ids and tag an element must have to match a parsed selector's rightmost compound (a browser's
    rule hashing): a rule whose needs no element of the page meets is never matched (a walk, 2026-12-07: a saved
    Reddit page's 4,300 rules, each matched over 10,000 elements, took 68 s)."""
    classes, ids, tag = set(), set(), ""
    node = tree.subselector if type(tree).__name__ == "CombinedSelector" else tree
    for _ in range(64):  # a compound is a chain of simple selectors, each holding the next in ``selector``
        kind = type(node).__name__
        if kind == "Class":
            classes.add(node.class_name.lower())
        elif kind == "Hash":
            ids.add(node.id.lower())
        elif kind == "Element":
            tag = (node.element or "").lower() if node.element not in (None, "*") else ""
            break
        node = getattr(node, "selector", None)
        if node is None:
            break
    return frozenset(classes), frozenset(ids), tag


@dataclass
class _Style:
    """The computed values this module reads for one element (``None``: not set)."""

    values: dict[str, str] = field(default_factory=dict)
    painted: bool = False  # some ancestor-or-self paints a background other than white


def _declarations(text: str) -> dict[str, tuple[str, bool]]:
    """``{property: (value, important)}`` of a declaration list (a ``style`` attribute or a rule's block)."""
    import tinycss2

    out: dict[str, tuple[str, bool]] = {}
    for d in tinycss2.parse_blocks_contents(text, skip_comments=True, skip_whitespace=True):
        if getattr(d, "type", None) != "declaration":
            continue
        name = d.lower_name
        if name not in READ and not name.startswith("--"):  # custom properties: what var() reads
            continue
        value = " ".join(tinycss2.serialize(d.value).split()).lower()
        if name in out and out[name][1] and not d.important:
            continue
        out[name] = (value, bool(d.important))
    return out


def _screen(prelude) -> bool:
    """Whether an ``@media`` prelude applies to a screen (``print``-only rules do not)."""
    import tinycss2

    text = tinycss2.serialize(prelude).lower()
    media = {m.strip().split(" ")[-1] for m in text.split(",") if m.strip()}
    return not media or bool(media & {"screen", "all"}) or any(m.startswith("(") for m in media) \
        or "print" not in text and "speech" not in text


def _rules(css_texts: list[str]) -> list[_Rule]:
    """The qualified rules of ``css_texts`` that set a property of :data:`READ`, screen media only."""
    import cssselect
    import tinycss2

    out: list[_Rule] = []

    def walk(nodes) -> None:
        for node in nodes:
            kind = getattr(node, "type", None)
            if kind == "qualified-rule":
                decls = _declarations(tinycss2.serialize(node.content))
                if not decls:
                    continue
                for sel in tinycss2.serialize(node.prelude).split(","):
                    sel = sel.strip()
                    try:
                        parsed = cssselect.parse(sel)[0]
                        spec, needs = parsed.specificity(), _needs(parsed.parsed_tree)
                    except Exception:  # noqa: BLE001 - a selector cssselect cannot parse is skipped
                        continue
                    out.append(_Rule(sel, spec, len(out), decls, needs))
            elif kind == "at-rule" and node.lower_at_keyword in ("media", "supports") and node.content is not None:
                if node.lower_at_keyword == "supports" or _screen(node.prelude):
                    walk(tinycss2.parse_rule_list(node.content, skip_comments=True, skip_whitespace=True))

    for css in css_texts:
        try:
            walk(tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True))
        except Exception:  # noqa: BLE001 - bad CSS hides nothing
            continue
    return out


def _matched(root, rules: list[_Rule]) -> dict:
    """``{element: declarations}`` from the style-sheet rules, cascaded by importance, specificity, order.

    Keyed by the element itself, never ``id()``: lxml makes its element proxies on demand, and an id is reused
    once a proxy is collected; holding the element keeps its proxy (and so the key) the same."""
    from lxml.cssselect import CSSSelector

    classes, ids, tags = set(), set(), set()
    for el in root.iter():
        if isinstance(el.tag, str):
            tags.add(el.tag.lower())
            classes.update(_ASCII_WS.sub(" ", (el.get("class") or "").lower()).split(" "))  # lower case: a quirks-mode
            # page matches classes in any case; split at ASCII white space only, as selectors match (a review)
            if el.get("id"):
                ids.add(el.get("id").lower())
    hits: dict = {}
    for rule in rules:
        need_classes, need_ids, need_tag = rule.needs
        if not (need_classes <= classes and need_ids <= ids and (not need_tag or need_tag in tags)):
            continue
        try:
            found = CSSSelector(rule.selector, translator="html")(root)
        except Exception:  # noqa: BLE001 - pseudo-classes and the like
            continue
        for el in found:
            for prop, (value, important) in rule.decls.items():
                hits.setdefault(el, []).append(((important, rule.specificity, rule.order), prop, value))
    out: dict = {}
    for key, items in hits.items():
        decl: dict[str, tuple[str, bool]] = {}
        for (important, _, _), prop, value in sorted(items, key=lambda t: t[0]):
            decl[prop] = (value, important)
        out[key] = decl
    return out


def _px(value: str, parent_px: float) -> float | None:
    """A CSS length in px (``em``/``%`` against the parent's font size); ``None`` when not a plain length."""
    m = _LENGTH.match(value.strip())
    if not m:
        return None
    n, unit = float(m.group(1)), m.group(2)
    if unit in ("em", "rem", "ex", "ch"):
        return n * (parent_px if unit != "rem" else 16.0)
    if unit == "%":
        return n / 100 * parent_px
    if unit in ("vw", "vh"):
        return n * 10.0  # a 1000-px viewport: only the sign and rough size matter here
    return n * _UNIT_PX[unit]


def _rgb(value: str) -> tuple[int, int, int, float] | None:
    """``(r, g, b, alpha)`` of a CSS colour (hex, ``rgb()``/``rgba()``, a few names); ``None`` when unknown."""
    v = value.strip().lower()
    if v in _NAMED:
        rgb = _NAMED[v]
        return (0, 0, 0, 0.0) if rgb is None else (*rgb, 1.0)
    if v.startswith("#"):
        h = v[1:]
        if len(h) in (3, 4):
            h = "".join(c * 2 for c in h)
        if len(h) in (6, 8):
            try:
                alpha = int(h[6:8], 16) / 255 if len(h) == 8 else 1.0
                return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16), alpha
            except ValueError:
                return None
    m = re.match(r"rgba?\(\s*([\d.]+%?)[\s,]+([\d.]+%?)[\s,]+([\d.]+%?)(?:[\s,/]+([\d.]+%?))?\s*\)", v)
    if m:
        def ch(x: str) -> int:
            return round(float(x[:-1]) * 2.55) if x.endswith("%") else round(float(x))

        a = m.group(4)
        alpha = 1.0 if a is None else (float(a[:-1]) / 100 if a.endswith("%") else float(a))
        return ch(m.group(1)), ch(m.group(2)), ch(m.group(3)), alpha
    if is_white(v):
        return 255, 255, 255, 1.0
    return None


def _colour(value: str) -> tuple[int, int, int, float] | None:
    """``(r, g, b, alpha)`` of any CSS colour (:func:`_rgb`, else tinycss2's CSS Color 4 parser: every named colour,
    ``hsl``, ``hwb``; ``lab``/``lch``/``oklab``/``oklch`` by their lightness), ``None`` when not a colour."""
    rgb = _rgb(value)
    if rgb is not None:
        return rgb
    try:
        import tinycss2.color4

        c = tinycss2.color4.parse_color(value)
        if c is None or isinstance(c, str):  # currentcolor, a system colour ("Canvas"): not known here
            return None
        try:
            r, g, b = (round(255 * max(0.0, min(1.0, v))) for v in c.to("srgb").coordinates)
        except NotImplementedError:  # lab, lch, oklab, oklch: white when light enough
            light = c.coordinates[0] / (100.0 if c.space in ("lab", "lch") else 1.0)
            r = g = b = 255 if light >= 0.95 else 0
        return r, g, b, float(c.alpha)
    except Exception:  # noqa: BLE001 - a value tinycss2 cannot read is no colour
        return None


def _resolve(value: str, custom: dict[str, str], depth: int = 0) -> str:
    """``value`` with ``var(--name[, fallback])`` replaced by the page's custom property (its fallback, else
    ``transparent``: an undefined variable paints nothing), at most 4 deep."""
    at = value.find("var(")
    if at < 0 or depth > 4:
        return value
    close = value.find(")", at)
    if close < 0:
        return value
    name, _, fallback = value[at + 4:close].partition(",")
    got = custom.get(name.strip(), fallback.strip() or "transparent")
    return _resolve(value[:at] + got + value[close + 1:], custom, depth + 1)


def _paints(values: dict[str, str], custom: dict[str, str] | None = None) -> bool:
    """Whether an element paints a background other than white (a colour or an image): any CSS colour
    (:func:`_colour`: every named colour, ``hsl()``, ``hwb()`` ...), a ``var()`` read from the page's custom
    properties ``custom`` (:func:`_resolve`). A walk over kreuzberg's and markitdown's test files (2026-12-07) found
    white on black, red, ``Sienna`` and ``var(--brand)`` left out as "white on white"; a colour not known here (a
    system colour) paints nothing, as before."""
    bg = _resolve((values.get("background-color") or values.get("background") or "").strip().lower(), custom or {})
    if "url(" in bg or "gradient" in bg or "url(" in values.get("background-image", ""):
        return True
    whole = _colour(bg)
    if whole is not None:
        return whole[3] > 0.05 and not all(c >= 242 for c in whole[:3])
    depth, token, tokens = 0, "", []
    for ch in bg + " ":  # split at spaces outside brackets: "rgb(0, 0, 0) no-repeat" is two words
        depth += (ch == "(") - (ch == ")")
        if ch.isspace() and depth <= 0:
            if token:
                tokens.append(token)
            token = ""
        else:
            token += ch
    for t in tokens:
        rgb = _colour(t)
        if rgb is not None and rgb[3] > 0.05 and not all(c >= 242 for c in rgb[:3]):
            return True
    return False


def _marked(el, own: dict[str, str], style: _Style, parent_px: float) -> str | None:
    """Hidden by the element's own markup or by what CSS says of its showing: ``hidden``, ``aria-hidden``,
    ``display``, ``visibility``, ``content-visibility``, ``opacity``."""
    if el.get("hidden") is not None:
        return "hidden attribute"
    if (el.get("aria-hidden") or "").strip().lower() == "true":
        return "aria-hidden"
    if own.get("display") == "none":
        return "display:none"
    if style.values.get("visibility") in ("hidden", "collapse"):
        return "visibility:hidden"
    if own.get("content-visibility") == "hidden":
        return "content-visibility:hidden"
    try:
        if "opacity" in own and float(own["opacity"].rstrip("%")) / (100 if own["opacity"].endswith("%") else 1) <= 0.05:
            return "opacity:0"
    except ValueError:
        pass
    return None


def _shrunk(el, own: dict[str, str], style: _Style, parent_px: float) -> str | None:
    """Hidden by its size: a font under :data:`MIN_VISIBLE_PX`, ``scale(0)``, clipped away, or zero size with its
    overflow hidden."""
    v = style.values
    size = _px(v["font-size"], parent_px) if "font-size" in v else None
    if size is not None and size < MIN_VISIBLE_PX:
        return "font-size:0" if size <= 0 else "tiny font"
    if re.search(r"scale[xy]?\(\s*0(\.0+)?\s*[,)]", own.get("transform", "")):
        return "scale(0)"
    clip = own.get("clip", "").replace(",", " ")
    if re.match(r"rect\(\s*0(px)?\s+0(px)?\s+0(px)?\s+0(px)?\s*\)", clip) or re.search(
            r"inset\(\s*50%|circle\(\s*0", own.get("clip-path", "")):
        return "clipped"
    if own.get("overflow") == "hidden" and any(_px(own.get(p, "1px"), parent_px) == 0 for p in ("width", "height",
                                                                                               "max-height")):
        return "zero size"
    return None


def _moved_away(el, own: dict[str, str], style: _Style, parent_px: float) -> str | None:
    """Hidden off-screen: positioned or indented past :data:`OFFSCREEN_PX`."""
    if own.get("position") in ("absolute", "fixed") and any(
            (x := _px(own.get(p, "0"), parent_px)) is not None and x <= OFFSCREEN_PX for p in ("left", "top", "right")):
        return "off-screen"
    indent = _px(own.get("text-indent", "0"), parent_px)
    if indent is not None and indent <= OFFSCREEN_PX:
        return "off-screen"
    return None


def _unseen_colour(el, own: dict[str, str], style: _Style, parent_px: float) -> str | None:
    """Hidden by its colour: transparent text, or white text on an unpainted (white) page."""
    v = style.values
    color = _rgb(v["color"]) if "color" in v else None
    if color is not None and color[3] <= 0.05:
        return "transparent text"
    if color is not None and all(c >= 242 for c in color[:3]) and not style.painted:
        return "white on white"
    return None


#: The hiding rules in the order they are tried (the module doc); the first reason found is the element's.
_RULES = (_marked, _shrunk, _moved_away, _unseen_colour)


def _reason(el, own: dict[str, str], style: _Style, parent_px: float) -> str | None:
    """Why ``el`` is hidden (see the module doc): the first of :data:`_RULES` that gives a reason, or ``None``."""
    for rule in _RULES:
        why = rule(el, own, style, parent_px)
        if why is not None:
            return why
    return None


#: The reasons that come from an inherited property: a descendant that sets the property again is seen.
_INHERITED_REASONS = frozenset({"visibility:hidden", "font-size:0", "tiny font", "transparent text", "white on white"})
#: What a page's ``<html>`` or ``<body>`` says of its own showing is a loading state a script undoes (the
#: anti-flicker snippets of A/B-testing and analytics tools: ``body { visibility: hidden !important }``): a reader
#: sees the page. A walk over trafilatura's test pages (2026-12-07) found two articles refused as "no main text".
_PAGE_STATES = ("display", "visibility", "opacity", "content-visibility")


def _own_styles(root, matched: dict) -> dict:
    """Each element's own declared values (its matched rules, then its ``style`` attribute; ``!important`` wins),
    ``font``'s size read as ``font-size``; keyed by element."""
    out = {}
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        own_decl = dict(matched.get(el, {}))
        for prop, (value, important) in _declarations(el.get("style") or "").items():
            if important or not own_decl.get(prop, ("", False))[1]:
                own_decl[prop] = (value, important)
        own = {k: v for k, (v, _) in own_decl.items()}
        if "font" in own and "font-size" not in own:
            m = re.search(r"(^|\s)(-?[\d.]+(px|pt|em|rem|%))(/|\s|$)", own["font"])
            if m:
                own["font-size"] = m.group(2)
        if el.tag.lower() in ("html", "body"):
            own = {k: v for k, v in own.items() if k not in _PAGE_STATES}
        out[el] = own
    return out


def _shows(prop: str, value: str) -> bool:
    """Whether ``value`` of inherited property ``prop`` sets it to something seen on its own: ``visible``, an
    absolute size of :data:`MIN_VISIBLE_PX` or more, a colour that is neither white nor transparent. ``inherit``,
    ``unset``, ``currentcolor``, ``calc()``, ``larger`` or a relative size do not (a review, 2026-12-07: each let a
    hidden parent's text through)."""
    if prop == "visibility":
        return value == "visible"
    if prop == "font-size":
        m = _LENGTH.match(value.strip())
        return bool(m) and m.group(2) in ("px", "pt", "pc", "in", "cm", "mm", "rem", None) and \
            (_px(value, 0.0) or 0.0) >= MIN_VISIBLE_PX
    rgb = _colour(value)
    return rgb is not None and rgb[3] > 0.05 and not all(c >= 242 for c in rgb[:3])


def _resetting(styles: dict) -> set[int]:
    """``id`` of every element some strict descendant of which sets an inherited property again to something seen
    (:data:`INHERITED`, :func:`_shows`): one pass, each ancestor chain walked until an element already marked."""
    out: set[int] = set()
    for el, own in styles.items():
        if any(p in own and _shows(p, own[p]) for p in INHERITED):
            parent = el.getparent()
            while parent is not None and id(parent) not in out:
                out.add(id(parent))
                parent = parent.getparent()
    return out


def remove_hidden(root, css_texts: list[str] | None = None) -> Hidden:
    """Remove the hidden elements of the parsed page ``root`` in place (rules in the module doc); returns what
    was removed (counted as elements, by reason). ``css_texts``: style sheets besides the page's own ``<style>``
    elements (an EPUB chapter's linked CSS files), applied before them.

    An element hidden by an inherited property (``visibility``, ``font-size``, ``color``) under which a descendant
    sets that property again loses only its own text (the text directly in it and after its children); its
    children are judged with what they inherit, so ``.row { font-size: 0 }`` around ``.column { font-size: 1rem }``
    (a layout trick against the gaps between inline blocks) keeps the columns (a walk over trafilatura's test pages,
    2026-12-07: a news page refused as "no main text")."""
    sheets = list(css_texts or []) + [s.text_content() for s in root.iter("style")]
    rules = _rules(sheets) if sheets else []
    matched = _matched(root, rules) if rules else {}
    styles = _own_styles(root, matched)
    resetting = _resetting(styles)
    custom = {p: v for rule in rules for p, (v, _) in rule.decls.items() if p.startswith("--")}
    hidden = Hidden("elements")
    doomed: list = []

    def strip_own(el, why: str) -> None:
        text = " ".join(t for t in [el.text or ""] + [c.tail or "" for c in el] if t.strip())
        if text.strip():
            hidden.add(why)
            hidden.keep(text)
        el.text = None
        for c in el:  # a comment's tail is the element's own text too (a review, 2026-12-07)
            c.tail = None

    def walk(el, parent: _Style, parent_px: float) -> None:
        if not isinstance(el.tag, str):
            return
        own = styles.get(el, {})
        values = {k: v for k, v in parent.values.items() if k in INHERITED}
        values.update({k: v for k, v in own.items() if k in INHERITED or k not in values})
        style = _Style(values, parent.painted or _paints(own, custom))
        why = _reason(el, own, style, parent_px)
        if why and el.getparent() is not None and " ".join(el.text_content().split()):
            if why not in _INHERITED_REASONS or id(el) not in resetting:
                hidden.add(why)
                hidden.keep(el.text_content())
                doomed.append(el)
                return
            strip_own(el, why)
        size = _px(values["font-size"], parent_px) if "font-size" in own else None
        for child in el:
            walk(child, style, size if size is not None else parent_px)

    walk(root, _Style(), 16.0)
    for el in doomed:
        el.drop_tree()  # keeps the tail text in the flow
    return hidden
