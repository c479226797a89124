"""A Beamer-style slide deck made with PyMuPDF for the tests and the deck measurement (issue 28, item 1).

It is drawn the way LaTeX Beamer's common themes draw one (Madrid, Warsaw): 4:3 pages of 364 x 273 pt; a
headline band with the section navigation and mini-frame dots; the frame title in a band of its own; items
with a ``▶`` marker (sub-items ``–``); a footline of two bars of touching boxes, ``author`` |
``short title`` over ``institute`` | ``date  page / pages``, white on colour; incremental overlays (``\\pause``) whose items not
yet shown are drawn transparent; a plain title slide that names the author. The facts live on slides 2-40;
:data:`QUESTIONS` are answered by them (and never by the title slide or the footline).
"""

from __future__ import annotations

import pymupdf

TITLE = "The BSD family of operating systems"
AUTHOR = "Ada Example"
INSTITUTE = "Univ. of Somewhere"
DATE = "12 May 2025"
SECTIONS = ("History", "Systems", "Licences")

#: (section, frame title, items); an item starting with "-" is a sub-item.
SLIDES: list[tuple[str, str, list[str]]] = [
    ("History", "Where BSD comes from", ["BSD began at the University of California, Berkeley, in 1977",
                                         "Bill Joy shipped the first Berkeley Software Distribution",
                                         "-It was an add-on to Bell Labs Research Unix"]),
    ("History", "The Unix wars", ["AT&T sued BSDi and the University of California in 1992",
                                  "The case was settled in January 1994",
                                  "-Three of 18,000 files had to be removed"]),
    ("History", "4.4BSD-Lite", ["4.4BSD-Lite was released in June 1994 without AT&T code",
                                "Every later BSD system is based on it"]),
    ("Systems", "FreeBSD", ["FreeBSD 1.0 was released in November 1993",
                            "It aims at servers and desktops on common hardware",
                            "-Jails isolate services since FreeBSD 4.0"]),
    ("Systems", "NetBSD", ["NetBSD runs on more than 50 hardware platforms",
                           "Its motto is Of course it runs NetBSD",
                           "-The pkgsrc package system came from NetBSD in 1997"]),
    ("Systems", "OpenBSD", ["Theo de Raadt founded OpenBSD in 1995 after leaving NetBSD",
                            "OpenBSD puts security and correct code first",
                            "-OpenSSH was written by the OpenBSD project in 1999"]),
    ("Systems", "DragonFly BSD", ["Matthew Dillon forked DragonFly BSD from FreeBSD 4.8 in 2003",
                                  "Its HAMMER2 file system keeps snapshots cheaply"]),
    ("Licences", "The BSD licences", ["The BSD systems use the two-clause or three-clause BSD licence",
                                      "The licence lets anyone reuse the code in closed products",
                                      "-The four-clause advertising clause was dropped in 1999"]),
    ("Licences", "Who reuses BSD code", ["macOS and iOS contain large parts of FreeBSD's user land",
                                         "The PlayStation 4 system software is based on FreeBSD 9"]),
]

#: Questions a user asks of the deck, each with the strings its answer must contain (every group).
QUESTIONS = [
    {"id": "b1", "query": "Who founded OpenBSD and when?", "answer_keys": [["Theo de Raadt"], ["1995"]]},
    {"id": "b2", "query": "On how many hardware platforms does NetBSD run?", "answer_keys": [["50"]]},
    {"id": "b3", "query": "Which licences do the BSD systems use?",
     "answer_keys": [["two-clause", "2-clause"], ["three-clause", "3-clause"]]},
    {"id": "b4", "query": "When was FreeBSD 1.0 released?", "answer_keys": [["November 1993"]]},
    {"id": "b5", "query": "When was the lawsuit against BSDi settled?", "answer_keys": [["1994"]]},
]

W, H = 364.0, 273.0
DARK, MID = (0.1, 0.1, 0.45), (0.2, 0.2, 0.7)


def _headline(page, section: str, frame_no: int) -> None:
    """Warsaw's headline: two bars of two touching boxes (sections | subsections), the navigation in them."""
    for y0, y1 in ((0, 10), (10, 16)):
        page.draw_rect(pymupdf.Rect(0, y0, W / 2, y1), color=None, fill=DARK)
        page.draw_rect(pymupdf.Rect(W / 2, y0, W, y1), color=None, fill=MID)
    x = 8
    for name in SECTIONS:
        page.insert_text((x, 7), name, fontsize=5, color=(1, 1, 1) if name == section else (0.6, 0.6, 0.8))
        for i in range(3):  # mini-frame dots: drawn circles, as Beamer draws them
            page.draw_circle((x + 2 + 5 * i, 13), 1.5, color=(1, 1, 1), fill=(1, 1, 1) if i == frame_no % 3 else None)
        x += 60
    page.insert_text((W / 2 + 8, 7), f"{section}: overview", fontsize=5, color=(1, 1, 1))


def _footline(page, number: int, total: int) -> None:
    """The footline: two bars of two touching boxes, author (institute) | short title, date | page / pages."""
    short = TITLE.split(" of ")[0]
    cells = [(0, H - 16, f"{AUTHOR}", DARK), (W / 2, H - 16, short, MID),
             (0, H - 8, INSTITUTE, DARK), (W / 2, H - 8, f"{DATE}        {number} / {total}", MID)]
    for x, y, text, colour in cells:
        page.draw_rect(pymupdf.Rect(x, y, x + W / 2, y + 8), color=None, fill=colour)
        page.insert_text((x + 6, y + 6), text, fontsize=5, color=(1, 1, 1))


def _frame(page, title: str) -> None:
    page.draw_rect(pymupdf.Rect(0, 16, W, 34), color=None, fill=MID)
    page.insert_text((10, 29), title, fontsize=11, color=(1, 1, 1))


def _items(page, items: list[str], shown: int) -> None:
    y = 58
    for i, item in enumerate(items):
        sub = item.startswith("-")
        text = item.lstrip("-")
        x = 42 if sub else 24
        opacity = 1.0 if i < shown else 0.0  # Beamer's \\pause: items not yet uncovered are drawn transparent
        marker = "\u2013" if sub else "\u2022"
        page.insert_text((x, y), marker, fontsize=9, color=MID, fill_opacity=opacity)
        page.insert_text((x + 10, y), text, fontsize=9 if not sub else 8, fill_opacity=opacity)
        y += 22


def beamer_deck() -> bytes:
    """The 41-page deck as PDF bytes: a title slide, 39 frames (the :data:`SLIDES`, each shown in overlays
    item by item, then numbered lab slides until page 40), and a closing slide."""
    frames: list[tuple[str, str, list[str], int]] = []
    for section, title, items in SLIDES:
        for shown in range(2, len(items) + 1):
            frames.append((section, title, items, shown))
    lab = 0
    while len(frames) < 39:  # lab slides, one step each, fill the deck to 41 pages like a lecture's exercises
        lab += 1
        frames.append(("Systems", f"Lab session {lab}", [f"Step {lab}.1: boot virtual machine number {lab}",
                                                          f"Step {lab}.2: record the uptime after {lab * 7} minutes"], 2))
    frames = frames[:39]
    total = 41
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    page.insert_text((40, 100), TITLE, fontsize=16, color=DARK)
    page.insert_text((140, 140), AUTHOR, fontsize=10)
    page.insert_text((130, 156), INSTITUTE, fontsize=8)
    page.insert_text((150, 180), DATE, fontsize=8)
    for n, (section, title, items, shown) in enumerate(frames, start=2):
        page = doc.new_page(width=W, height=H)
        _headline(page, section, n)
        _frame(page, title)
        _items(page, items, shown)
        _footline(page, n, total)
    page = doc.new_page(width=W, height=H)
    _headline(page, SECTIONS[-1], total)
    page.insert_text((130, 140), "Questions?", fontsize=16, color=DARK)
    _footline(page, total, total)
    doc.set_metadata({"title": TITLE, "author": AUTHOR})
    return doc.tobytes()
