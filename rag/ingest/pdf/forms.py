"""PDF form fields and annotations (stage 1, PDF branch; issue 13, item 8; case c27).

A filled form draws each widget's value through an appearance stream that MuPDF extracts as ordinary
page text: the value comes out after all the labels, in the widget's (often larger) font, so it became a
heading and even the title, and a checked box read as its ZapfDingbats glyph. Here:

* text lines lying inside a widget's rectangle are removed from the text layer (:func:`widget_rects`);
* each widget becomes one line ``label: value`` at the widget's place (:func:`form_lines`), where the
  label is the text on the same row running across the widget, else just left of it (else the field's
  tooltip, else the last part of its name); a check box standing before its option is named by the option
  after it, with its row's question;
  a check box or radio button reads ``Yes (checked)`` / ``No (unchecked)``;
* FreeText annotations whose words are not already in the page text are added as lines at their place.

Every such line has ``kind="form"`` or ``"annot"``: never a heading or the title.
"""

from __future__ import annotations

from rag.ingest.pdf.layout import Line
from rag.text import WORD_RE

_CHECK_TYPES = ("CheckBox", "RadioButton")


def _inside(ln: Line, r) -> bool:
    cx, cy = (ln.x0 + ln.x1) / 2, (ln.y0 + ln.y1) / 2
    return r.x0 - 1 <= cx <= r.x1 + 1 and r.y0 - 2 <= cy <= r.y1 + 2


def widget_rects(page) -> list:
    """Rectangles (page points) of the page's form widgets that carry a value or a state."""
    try:
        return [w.rect for w in page.widgets() or ()]
    except Exception:  # noqa: BLE001 - a broken form must not lose the page's text
        return []


def _appearance_state(w) -> str | None:
    """The widget's own appearance state (``/AS``: ``Off`` or its on-state name), ``None`` when it has none."""
    try:
        kind, value = w.parent.parent.xref_get_key(w.xref, "AS")
    except Exception:  # noqa: BLE001 - no state to read: the field's value decides
        return None
    return value.lstrip("/") if kind == "name" else None


def _value(w) -> str | None:
    if w.field_type_string in _CHECK_TYPES:
        state = _appearance_state(w)  # each box of a group shows its own state; the group's value is one option's
        if state is not None:  # (pdfbox's AcroFormsBasicFields: four boxes, two ticked, all read "checked")
            on = state != "Off"
        else:
            on = w.field_value not in (None, "", "Off", False) and str(w.field_value) != "Off"
        return "Yes (checked)" if on else "No (unchecked)"
    v = w.field_value
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    shown = _option_texts(w)
    if shown:  # a choice's export value is hidden; the box shows the option's text ("0" -> "Default": a walk, 2026-12-07)
        v = [shown.get(str(x), x) for x in v] if isinstance(v, (list, tuple)) else shown.get(str(v), v)
    if isinstance(v, (list, tuple)):
        v = ", ".join(map(str, v))
    return " ".join(str(v).split())


def _option_texts(w) -> dict[str, str]:
    """``{export value: text shown}`` of a combo or list box's options given as pairs (``[(0)(Default)]``)."""
    try:
        options = w.choice_values or []
    except Exception:  # noqa: BLE001 - a damaged option list shows no pairs
        return {}
    return {str(o[0]): str(o[1]) for o in options if isinstance(o, (list, tuple)) and len(o) == 2}


def _on_row(ln: Line, r) -> bool:
    return min(ln.y1, r.y1) - max(ln.y0, r.y0) > 0.3 * ln.height


def _label_line(w, text_lines: list[Line]) -> Line | None:
    """The text line naming widget ``w``: a line on its row that runs across it (the box sits inside its words:
    "Check [x] if self-employed"), else the nearest line on its row to its left. Before, a box inside a line took
    the line left of that one: Form 1040's "Check if self-employed" box read "Date: Yes (checked)", and an answer
    quoting it was shown as supported (a new user's walk, 2026-12-07)."""
    r = w.rect
    across = [ln for ln in text_lines if ln.x0 < r.x0 - 1 and ln.x1 > r.x1 + 1 and _on_row(ln, r)]
    if across:
        return min(across, key=lambda ln: ln.x1 - ln.x0)
    row = [ln for ln in text_lines if ln.x1 <= r.x0 + 2 and _on_row(ln, r)]
    return max(row, key=lambda ln: ln.x1) if row else None


def _page_words(page) -> list:
    """The page's words (``get_text("words")``), read once per page (cached on a list the caller holds)."""
    try:
        return page.get_text("words")
    except Exception:  # noqa: BLE001 - a page whose words cannot be read names its boxes by their line
        return []


def _words_after(words: list, r, others: list) -> str:
    """The words (``words``: :func:`_page_words`) right of box ``r`` on its row, up to the next box there (at
    most 6): an option's name when several boxes sit in one line ("Filing status: [ ] Single [x] Married")."""
    stop = min((o.x0 for o in others if o.x0 > r.x1 - 1 and min(o.y1, r.y1) - max(o.y0, r.y0) > 0), default=1e9)
    row = sorted((w for w in words if w[0] >= r.x1 - 1 and w[2] <= stop + 1
                  and min(w[3], r.y1) - max(w[1], r.y0) > 0.3 * (w[3] - w[1])), key=lambda w: (w[5:7], w[0]))
    return " ".join(w[4] for w in row[:6])


def _label(w, text_lines: list[Line], page=None, others: list | None = None, words: list | None = None) -> str:
    """Widget ``w``'s label (module doc); ``words`` caches the page's words once a line holds several boxes or a
    check box may be named by the words after it (:func:`_option_after`)."""
    line = _label_line(w, text_lines)

    def page_words() -> list:
        if words is None:
            return _page_words(page)
        if not words:
            words.extend(_page_words(page))
        return words

    if page is not None and w.field_type_string in _CHECK_TYPES and not _across(line, w.rect):
        option = _option_after(w, line, text_lines, page_words(), others or [])
        if option:
            return option
    if page is not None and w.field_type_string not in _CHECK_TYPES and not _across(line, w.rect):
        printed = _tooltip_printed(w, page_words(), others or [])
        if printed:
            return printed
    if line is not None:
        text = " ".join(line.text.rstrip(":").split())
        inside = [o for o in others or () if line.x0 < o.x0 and o.x1 < line.x1 and _on_row(line, o)]
        if page is not None and len(inside) >= 2:  # several boxes in one line: each is named by its option
            after = _words_after(page_words(), w.rect, inside)
            return f"{text} \u2013 {after}" if after else text
        return text
    tip = " ".join(str(w.field_label or "").split())
    if tip:
        return tip
    # a field's full name is a path no reader sees ("topmostSubform[0].Page1[0].c1_07[0]"): its last part
    name = str(w.field_name or "").rsplit(".", 1)[-1].split("[", 1)[0].strip()
    return name or "field"


def _tooltip_printed(w, words: list, others: list) -> str:
    """The field's tooltip as printed right under or over the field, within its width (``""`` when not): many forms
    print each field's label beneath it ("SUFFIX", "PREFIX", "DATE OF BIRTH"), and the line left of the field is
    then the label of the field before it (pdf-lib's sample_form.pdf, a walk, 2026-12-07: "First: Jr" for the
    suffix, "MALE: 08/29/2020" for the date of birth). A word within one field height below or above the field
    (by its middle), within its width and inside no field (``others``: their rectangles; a value drawn there is no
    label), must be the tooltip's first word, and the tooltip at most 8 words."""
    tip = " ".join(str(w.field_label or "").split())
    first = tip.split(" ", 1)[0].casefold().strip(":.()") if tip else ""
    if not first or len(tip.split()) > 8:
        return ""
    r = w.rect
    h = max(r.y1 - r.y0, 6.0)
    boxes = [r, *others]

    def free(x) -> bool:
        cx, cy = (x[0] + x[2]) / 2, (x[1] + x[3]) / 2
        return not any(b.x0 <= cx <= b.x1 and b.y0 <= cy <= b.y1 for b in boxes)

    near = sorted((x for x in words if r.x0 - 2 <= (x[0] + x[2]) / 2 <= r.x1 + 2 and free(x)
                   and (r.y1 <= (x[1] + x[3]) / 2 <= r.y1 + h or r.y0 - h <= (x[1] + x[3]) / 2 <= r.y0)),
                  key=lambda x: (x[1], x[0]))
    top = next((x[1] for x in near if x[4].casefold().strip(":.()") == first), None)
    if top is None:
        return ""
    return " ".join(x[4] for x in sorted((x for x in near if abs(x[1] - top) < 2), key=lambda x: x[0])).rstrip(":")


def _across(line: Line | None, r) -> bool:
    return line is not None and line.x0 < r.x0 - 1 and line.x1 > r.x1 + 1


#: A check box is named by the words after it when they start within this many box widths of it, and at most
#: 1 / :data:`NEARER` as far as the line before it ends ("I agree to the terms  [x]   Date signed" keeps its label).
OPTION_GAP = 2.0
NEARER = 2.0


def _option_after(w, left: Line | None, text_lines: list[Line], words: list, others: list) -> str:
    """A check box's option when the box stands before its words ("[x] NAVY  [ ] AIR FORCE", most US government
    forms), else ``""``: the words right after the box (:func:`_words_after`) start within :data:`OPTION_GAP` box
    widths, nearer than the line left of it ends (half as far, unless that line is another box's option or a line's
    number: evenly spaced "Married [ ]  Single [x]" keeps its labels before its boxes); or the field's tooltip names
    them. The row's question, the line left of its first box, comes first ("2. COMPONENT AT TIME \u2013 RESERVE").
    Before, each box took the option before it: a form ticked NAVY read "ARMY: Yes (checked)" (a new user's walk, 2026-12-07)."""
    r = w.rect
    row = sorted((x for x in words if x[0] >= r.x1 - 1 and min(x[3], r.y1) - max(x[1], r.y0) > 0.3 * (x[3] - x[1])),
                 key=lambda x: x[0])
    after = _words_after(words, r, others)
    if not row or not after:
        return ""
    right_gap = row[0][0] - r.x1
    left_gap = r.x0 - left.x1 if left is not None else 1e9
    tip = f' {" ".join(WORD_RE.findall(str(w.field_label or "").casefold()))} '
    named = f' {" ".join(WORD_RE.findall(after.casefold()))} ' in tip  # 'Select for "NAVY."'
    # the words before the box are another box's option ("[ ] ARMY [x] NAVY") or a line's number ("1 [ ] Single"):
    # the words after it need only be nearer; else they must be much nearer
    owned = left is not None and (len(left.text.strip()) <= 3 or any(
        _on_row_rect(o, r) and o.x1 <= left.x0 + 1 and left.x0 - o.x1 <= OPTION_GAP * o.width for o in others))
    if not (named or (right_gap <= OPTION_GAP * max(r.width, 1.0)
                      and (right_gap < left_gap if owned else NEARER * right_gap <= left_gap))):
        return ""
    first = min((o for o in others if _on_row_rect(o, r) and o.x1 <= r.x1), key=lambda o: o.x0, default=r)
    ask = [ln for ln in text_lines if ln.x1 <= first.x0 + 2 and _on_row(ln, first)]
    question = " ".join(max(ask, key=lambda ln: ln.x1).text.rstrip(":").split()) if ask else ""
    return f"{question} \u2013 {after}" if question and question != after else after


def _on_row_rect(a, b) -> bool:
    return min(a.y1, b.y1) - max(a.y0, b.y0) > 0.3 * min(a.height, b.height)


def form_lines(page, text_lines: list[Line], page_h: float, block_base: int) -> tuple[list[Line], list[Line]]:
    """``(kept, added)``: the page's text lines without widget appearance text and label lines that a
    widget took over, and the new ``label: value`` lines (``kind="form"``). Coordinates are page points
    (forms are read only on pages whose frame is upright)."""
    try:
        widgets = list(page.widgets() or ())
    except Exception:  # noqa: BLE001
        widgets = []
    if not widgets:
        return text_lines, []
    rects = [w.rect for w in widgets]
    kept = [ln for ln in text_lines if not any(_inside(ln, r) for r in rects)]
    added, used, words = [], set(), []
    for i, w in enumerate(sorted(widgets, key=lambda w: (w.rect.y0, w.rect.x0))):
        value = _value(w)
        if value is None:
            continue
        label = _label(w, kept, page, rects, words)
        r = w.rect
        for ln in kept:
            if " ".join(ln.text.rstrip(":").split()) == label and (ln.x1 <= r.x0 + 2 or ln.x0 < r.x0 < ln.x1):
                used.add(id(ln))
                r = type(r)(ln.x0, min(ln.y0, r.y0), r.x1, max(ln.y1, r.y1))
                break
        size = min((ln.size for ln in kept), default=10.0)
        added.append(Line(f"{label}: {value}", r.x0, r.y0, r.x1, r.y1, size, False, block_base + i, page_h,
                          kind="form"))
    return [ln for ln in kept if id(ln) not in used], added


def annotation_lines(page, text_lines: list[Line], page_h: float, block_base: int) -> list[Line]:
    """FreeText annotations whose words are not in the page's text, as lines (``kind="annot"``)."""
    try:
        annots = list(page.annots() or ())
    except Exception:  # noqa: BLE001
        return []
    have = " ".join(ln.text for ln in text_lines)
    out = []
    for i, a in enumerate(annots):
        if a.type[1] != "FreeText":
            continue
        content = " ".join((a.info.get("content") or "").split())
        if not content or content in have:
            continue
        r = a.rect
        out.append(Line(content, r.x0, r.y0, r.x1, r.y1, 10.0, False, block_base + i, page_h, kind="annot"))
    return out


#: Annotations whose text a reader opens from an icon (a sticky note, an attached file's description): named in
#: a warning, not read, as DOCX and ODF comments are (a walk over qpdf's test files, 2026-12-07: "Salad" in a
#: note was lost without a word).
NOTE_TYPES = ("Text", "FileAttachment", "Sound")


def note_count(page) -> int:
    """How many annotations of :data:`NOTE_TYPES` with text (``/Contents``) ``page`` holds (0 when unreadable)."""
    try:
        return sum(1 for a in (page.annots() or ()) if a.type[1] in NOTE_TYPES and (a.info.get("content") or "").strip())
    except Exception:  # noqa: BLE001 - a damaged annotation array counts nothing
        return 0
