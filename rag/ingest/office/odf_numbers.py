"""What an OpenDocument text shows before its headings and list items: outline numbers ("2.2.1") and list labels
("B)", "iv.", "3."), rendered from the document's list and outline styles (issue 37), for :mod:`rag.ingest.office.odf`.

The rules are those of ODF 1.3 part 3 (§16.30-16.32 list styles, §16.33 the outline style, §19.880 number
formats):

* a level style is a number (``text:list-level-style-number``: ``style:num-format`` ``1``, ``a``, ``A``, ``i``,
  ``I`` or empty for none; ``style:num-prefix``, ``style:num-suffix``, ``text:display-levels`` (how many levels
  the label shows, ``2.2.1`` is three), ``text:start-value``), a bullet (``text:list-level-style-bullet``, written
  ``- `` as every reader here writes bullets) or an image (a bullet too);
* a list (``text:list``) names its style, or takes its enclosing list's, else it is a bullet list; it starts
  counting afresh unless it says ``text:continue-numbering="true"`` (it goes on from the last list of the same
  style) or ``text:continue-list="ID"`` (from the list with that ``xml:id``); an item's ``text:start-value``
  restarts its level; a ``text:list-header`` is never numbered; an item counts at its level and restarts every
  deeper level;
* headings (``text:h``) count per ``text:outline-level`` against the outline style unless
  ``text:is-list-header="true"``; ``text:restart-numbering`` / ``text:start-value`` restart the count. A heading's
  own ``text:number`` (the number its producer drew, when it wrote one) wins over the computed one.
"""

from __future__ import annotations

from dataclasses import dataclass

_ROMAN = ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"), (40, "xl"),
          (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"))


def attr(el, name: str) -> str:
    """An ODF element's attribute as written (odfdo returns booleans for some: ``True`` -> ``"true"``), ``""`` when absent."""
    try:
        value = el.get_attribute(name)
    except Exception:  # noqa: BLE001 - odfdo raises for unknown namespaces
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if value is not None else ""


def _int(value: str, default: int) -> int:
    return int(value) if value.strip().isdigit() else default


def format_number(n: int, fmt: str) -> str:
    """``n`` (>= 1) in the ODF number format ``fmt``: ``1`` -> ``"12"``, ``a``/``A`` -> ``"l"``/``"L"`` (then
    ``aa``, ``bb``: the letter repeated, as LibreOffice counts), ``i``/``I`` -> ``"xii"``/``"XII"``, ``""`` -> ``""``
    (no number); any other format (a script's own digits) -> Arabic digits."""
    if not fmt:
        return ""
    if fmt in ("a", "A"):
        letter = chr(ord(fmt) + (n - 1) % 26)
        return letter * ((n - 1) // 26 + 1)
    if fmt in ("i", "I") and 0 < n < 4000:
        out, rest = [], n
        for value, digits in _ROMAN:
            while rest >= value:
                out.append(digits)
                rest -= value
        text = "".join(out)
        return text.upper() if fmt == "I" else text
    return str(n)


@dataclass(frozen=True)
class LevelStyle:
    """One level of a list or outline style: ``numbered`` (else a bullet), ``fmt``, ``prefix``, ``suffix``,
    ``display`` (levels shown in the label, >= 1), ``start`` (the first number)."""

    numbered: bool = False
    fmt: str = ""
    prefix: str = ""
    suffix: str = ""
    display: int = 1
    start: int = 1


BULLET = LevelStyle()


def _level_styles(style) -> dict[int, LevelStyle]:
    out: dict[int, LevelStyle] = {}
    for child in style.children:
        level = _int(attr(child, "text:level"), 0)
        if not level:
            continue
        if child.tag in ("text:list-level-style-number", "text:outline-level-style"):
            out[level] = LevelStyle(True, attr(child, "style:num-format"), attr(child, "style:num-prefix"),
                                    attr(child, "style:num-suffix"), max(1, _int(attr(child, "text:display-levels"), 1)),
                                    _int(attr(child, "text:start-value"), 1))
        else:
            out[level] = BULLET
    return out


class Numbering:
    """The list and outline counters of one ODT body, walked in document order (rules in the module doc).

    Built from the odfdo document's content and styles parts (automatic list styles live in the content part,
    named ones and the outline style in the styles part); every method is cheap and never raises for a style
    it does not know (such a list is a bullet list)."""

    def __init__(self, doc) -> None:
        self.styles: dict[str, dict[int, LevelStyle]] = {}
        self.outline: dict[int, LevelStyle] = {}
        for part in (getattr(doc, "styles", None), getattr(doc, "content", None)):
            if part is None:
                continue
            for style in part.get_elements("//text:list-style"):
                self.styles[attr(style, "style:name")] = _level_styles(style)
            for style in part.get_elements("//text:outline-style"):
                self.outline = _level_styles(style) or self.outline
        self._outline_counts: dict[int, int] = {}
        self._by_style: dict[str, dict[int, int]] = {}
        self._by_id: dict[str, dict[int, int]] = {}

    # ------------------------------------------------------------------ lists

    def open_list(self, el, inherited: str = "") -> tuple[str, dict[int, int]]:
        """``(style name, counters)`` for a top-level ``text:list`` ``el`` (its own style, else ``inherited``):
        the counters of the list it continues, else fresh ones."""
        name = attr(el, "text:style-name") or inherited
        counts: dict[int, int] | None = None
        target = attr(el, "text:continue-list")
        if target:
            counts = self._by_id.get(target)
        if counts is None and attr(el, "text:continue-numbering") == "true":
            counts = self._by_style.get(name)
        if counts is None:
            counts = {}
        self._by_style[name] = counts
        if attr(el, "xml:id"):
            self._by_id[attr(el, "xml:id")] = counts
        return name, counts

    def item_label(self, style: str, counts: dict[int, int], level: int, item) -> str:
        """The label of list item ``item`` at 1-based ``level`` of a list of ``style`` (``"- "`` for a bullet,
        ``"B) "``, ``"2.1. "`` for a numbered level, ``""`` for a numbered level without a number format),
        counting it in ``counts``."""
        levels = self.styles.get(style, {})
        own = levels.get(level, BULLET)
        if item.tag == "text:list-header":
            return "" if own.numbered else "- "
        start = attr(item, "text:start-value")
        counts[level] = _int(start, 0) if start.strip().isdigit() else counts.get(level, own.start - 1) + 1
        for deeper in [k for k in counts if k > level]:
            del counts[deeper]
        if not own.numbered:
            return "- "
        return self._label(levels, counts, level)

    @staticmethod
    def _label(levels: dict[int, LevelStyle], counts: dict[int, int], level: int) -> str:
        own = levels.get(level, BULLET)
        if not own.fmt:
            return own.prefix + own.suffix + (" " if (own.prefix + own.suffix).strip() else "")
        shown = []
        for k in range(max(1, level - own.display + 1), level + 1):
            st = levels.get(k, BULLET)
            n = counts.get(k, st.start)
            text = format_number(n, st.fmt) if st.numbered else ""
            if text:
                shown.append(text)
        number = ".".join(shown)
        return f"{own.prefix}{number}{own.suffix} " if number else ""

    # ------------------------------------------------------------------ headings

    def heading_label(self, h, level: int) -> str:
        """The outline number of heading ``h`` at ``level`` followed by a space (``"2.2.1 "``), ``""`` when the
        outline style numbers no such level, counting it."""
        if attr(h, "text:is-list-header") == "true":
            return ""
        own = self.outline.get(level, BULLET)
        start = attr(h, "text:start-value")
        if attr(h, "text:restart-numbering") == "true" or start.strip().isdigit():
            self._outline_counts[level] = _int(start, own.start)
        else:
            self._outline_counts[level] = self._outline_counts.get(level, own.start - 1) + 1
        for deeper in [k for k in self._outline_counts if k > level]:
            del self._outline_counts[deeper]
        if not own.numbered or not own.fmt:
            return ""
        return self._label(self.outline, self._outline_counts, level)
