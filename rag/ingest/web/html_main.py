"""The main content of a saved web page: page furniture (navigation, sidebars, footers, banners, cookie notices)
removed by tag, ARIA role and class/id words, and the element holding the page's content chosen (issue 17;
the coverage audit's share of what is left out, issue 37). Used by :mod:`rag.ingest.web.html` and the EPUB reader."""

from __future__ import annotations

import re

#: Elements whose text is no part of the page's reading: code, styles, embedded objects, controls, and a ruby
#: annotation's reading and fallback brackets (``<rt>``, ``<rp>``: "山路(やまみち)" read as 山路, as the text it
#: annotates is searched; a walk over IDPF's Japanese EPUB found every annotated word glued to its reading).
DROP_TAGS = {"script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object", "embed",
             "head", "title", "meta", "link", "button", "select", "input", "textarea", "dialog", "map",
             "rt", "rp"}
#: A ``<form>`` is a search box, a sign-up or a comment form (its controls are dropped with :data:`DROP_TAGS`), and is
#: furniture, unless it holds :data:`MIN_WRAPPER_CHARS` of text, under :data:`LINK_SHARE` of it in links: an ASP.NET
#: WebForms page wraps its whole body in ``<form id="aspnetForm">`` (a walk over goose3's and newspaper's saved pages,
#: 2026-12-07: a Tulsa World article refused as "no main text", a press release quoted in a TNW article left out).
FORM_TAGS = {"form"}
#: ... never one whose class, id or action names a comment, search, sign-in or sign-up form (WordPress's
#: ``<form id="commentform" action=".../wp-comments-post.php">`` holds 600 characters of instructions).
_FORM_FURNITURE = ("comment", "search", "login", "signin", "sign-in", "subscribe", "newsletter", "reply")
_BOILERPLATE_TAGS = {"nav", "aside", "footer"}
_BOILERPLATE_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "dialog",
                      "alert", "toolbar"}
#: Words of a class or id that name page furniture (read by :func:`furniture_words`).
FURNITURE_WORDS = frozenset(
    "nav navbar navbox navigation menu menubar sidebar side-bar breadcrumb breadcrumbs cookie cookies consent gdpr "
    "banner footer share sharing social advert ads advertisement promo newsletter subscribe skip-link jump-link "
    "noprint related popup modal masthead site-header pagination pager".split())
#: A word before a furniture word that says the element *has* (or lacks) such a thing, not that it *is* one:
#: "o-section--has-ads", "entry-content no-share", "content-with-sidebar" (a walk over trafilatura's test pages,
#: 2026-12-07: three articles were read as their teaser alone).
_QUALIFIERS = frozenset({"has", "no", "with", "without", "not", "tag", "category", "status", "format"})
#: ... or a word after it that makes the name a state or a behaviour ("box article modal-enabled", "promo_status-promo",
#: Twitter's tweets "js-profile-popup-actionable"), for the words no size rescues (:data:`_NEVER_CONTENT`; Jetpack's
#: "sd-sharing-enabled" is the sharing box); and a header or footer of a figure, picture or table is its caption
#: ("subbuzz__figure-footer"). A postlight/parser walk, 2026-12-07: WIRED's article, a GitHub README, a Twitter thread
#: and a BuzzFeed caption were left out as furniture.
_STATES = frozenset({"enabled", "actionable", "status"})
_CAPTIONED = frozenset({"figure", "image", "img", "photo", "picture", "media", "video", "table", "embed"})
_CONTENT_WORDS = re.compile(r"(?:^|[-_\s])(content|main|article|post|entry|body-text|story|text)(?:$|[-_\s])",
                            re.IGNORECASE)
#: An element whose class names furniture ("l-sidebar-fixed l-segment l-article-body-segment", "content-with-sidebar-wrp",
#: "article-body pagination-first") but holds this share (0..1) of the text being read, with less than
#: :data:`LINK_SHARE` of it in links, wraps the page's content and is kept: a new user's walk (2026-12-07) found 6 of
#: the 181 news pages of scrapinghub's article-extraction benchmark read as their headline alone, or refused.
CONTENT_SHARE = 0.5
LINK_SHARE = 0.5
#: ... and holds at least this many characters: a short page's cookie notice, footer or "related posts" box holds
#: half its text too (a review, 2026-12-07). Furniture named by these words is never a wrapper of the content.
MIN_WRAPPER_CHARS = 500
_NEVER_CONTENT = frozenset({"cookie", "cookies", "consent", "gdpr", "popup", "modal", "newsletter", "subscribe",
                            "banner", "advert", "ads", "advertisement", "promo"})
#: Whitespace as a browser collapses it, and the heading tags with their levels (shared with the writer of
#: :mod:`rag.ingest.web.html`).
WS = re.compile(r"[ \t\n\r\f\v]+")
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


def _classes(el) -> str:
    return f"{el.get('class') or ''} {el.get('id') or ''}"


def _is_hidden(el) -> bool:
    style = (el.get("style") or "").replace(" ", "").lower()
    return el.get("hidden") is not None or el.get("aria-hidden") == "true" or "display:none" in style


def _drop(el) -> None:
    """Remove ``el`` but keep its tail text in the flow."""
    parent = el.getparent()
    if parent is not None:
        el.drop_tree()


def _is_boilerplate(el, tag: str) -> bool:
    """Whether element ``el`` (lower-cased ``tag``) is page furniture by what it is: a navigation, sidebar, footer
    or banner tag or ARIA role, or a ``<header>`` holding no heading."""
    if tag in _BOILERPLATE_TAGS or tag in FORM_TAGS or (el.get("role") or "").lower() in _BOILERPLATE_ROLES:
        return True
    return tag == "header" and not any(h in HEADINGS for h in (d.tag for d in el.iter() if isinstance(d.tag, str)))


def furniture_words(names: str, *, modifiers: bool = False) -> list[str]:
    """The words of :data:`FURNITURE_WORDS` that class and id ``names`` (space-separated) name the element by, lower
    case: each name is cut at ``-`` and ``_``; a word after one of :data:`_QUALIFIERS` ("has-ads", "no-share") or before
    one of :data:`_STATES` ("modal-enabled") does not count, nor a figure's header or footer, nor a ``js-`` name; two words joined by ``-`` count as one too ("side-bar", "skip-link"). A BEM modifier (after ``--``) is
    read only with ``modifiers``: "TestReport__Section--Ads" is an article's section that carries ads, and
    "l-region--sidebar-first" a sidebar (:func:`_named_boilerplate` reads modifiers as weaker). No regular
    expression: one pass per name."""
    out = []
    for name in names.lower().split():
        if name.startswith("js-"):  # a script's hook ("js-code-nav-container"), not what the element is
            continue
        base, _, modifier = name.partition("--")
        name = f"{base}-{modifier}" if modifiers else base
        words = [w for w in name.replace("_", "-").split("-") if w]
        for i, w in enumerate(words):
            if i and words[i - 1] in _QUALIFIERS or (i + 1 < len(words) and words[i + 1] in _STATES
                                                       and w in _NEVER_CONTENT):
                continue
            if i and w in ("header", "footer") and words[i - 1] in _CAPTIONED:
                continue
            if w in FURNITURE_WORDS:
                out.append(w)
            if i and f"{words[i - 1]}-{w}" in FURNITURE_WORDS and (i < 2 or words[i - 2] not in _QUALIFIERS):
                out.append(f"{words[i - 1]}-{w}")
    return out


def _named_boilerplate(el, tag: str, text: dict[int, int] | None = None, links: dict[int, int] | None = None) -> bool:
    """Whether ``el`` (below ``body``, ``main`` and ``article``) has a class or id that names page furniture
    (:func:`furniture_words`); named so only in a BEM modifier ("region--footer", "block--newsletter",
    "Section--Ads"), when it also holds under :data:`MIN_WRAPPER_CHARS` of text, or half of it in links (a review,
    2026-12-07: a Drupal sidebar region and a footer kept once modifiers were not read)."""
    if tag in ("body", "html", "main", "article"):
        return False
    names = _classes(el)
    if furniture_words(names):
        return True
    if not furniture_words(names, modifiers=True):
        return False
    size = (text or {}).get(id(el), 0)
    return size < MIN_WRAPPER_CHARS or (links or {}).get(id(el), 0) >= LINK_SHARE * size


def _text_sizes(nodes: list) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
    """Characters of text (spaces aside) under each element of ``nodes`` (a subtree in document order, kept alive
    by the caller: the keys are ``id``), how many of them are inside links, and how many ``<h1>`` it holds; one
    pass, children first."""
    text: dict[int, int] = {}
    links: dict[int, int] = {}
    h1s: dict[int, int] = {}
    for el in reversed(nodes):
        if not isinstance(el.tag, str):
            continue
        tag = el.tag.lower()
        if tag in DROP_TAGS:
            text[id(el)] = links[id(el)] = h1s[id(el)] = 0
            continue
        size = len((el.text or "").strip()) + sum(len((c.tail or "").strip()) for c in el)
        size += sum(text.get(id(c), 0) for c in el)
        text[id(el)] = size
        links[id(el)] = size if tag == "a" else sum(links.get(id(c), 0) for c in el)
        h1s[id(el)] = (tag == "h1") + sum(h1s.get(id(c), 0) for c in el)
    return text, links, h1s


def strip_boilerplate(root, *, keep_semantic: bool = False, left_out: list[str] | None = None) -> None:
    """Remove non-content elements from ``root`` in place: :data:`DROP_TAGS`, hidden ones and, unless
    ``keep_semantic``, navigation, sidebars, footers, banners (by tag and ARIA role, :func:`_is_boilerplate`, and
    by class/id words, :func:`_named_boilerplate`); the text of the hidden and furniture ones is added to
    ``left_out`` (for the coverage audit, issue 37). An element named like furniture that holds
    :data:`CONTENT_SHARE` of ``root``'s text or more, or ``root``'s one ``<h1>``, with less than :data:`LINK_SHARE` of its
    text in links and :data:`MIN_WRAPPER_CHARS` or more, is a wrapper of the page's content and stays (its furniture
    inside is still removed); never one named as a cookie notice, a pop-up or an advertisement."""
    nodes = list(root.iter())
    text, links, h1s = _text_sizes(nodes)
    total, title = text.get(id(root), 0), h1s.get(id(root), 0) == 1

    def wraps_content(el) -> bool:
        size = text.get(id(el), 0)
        if size < MIN_WRAPPER_CHARS or links.get(id(el), 0) >= LINK_SHARE * size:
            return False
        share, heads = size >= CONTENT_SHARE * total, title and h1s.get(id(el), 0) == 1
        if any(w in _NEVER_CONTENT for w in furniture_words(_classes(el))):  # both: ONE Esports' article sits in
            return share and heads  # "container advert-content-wrap" (a walk over newspaper4k's pages, 2026-12-07)
        return share or heads

    def rescued(el, tag: str) -> bool:  # furniture by tag that wraps the content: a form, or an aside holding the
        # page's text (BHG's slideshow article in <aside id="rightColumn">, 7,150 of 10,448 characters)
        if tag in FORM_TAGS:
            size = text.get(id(el), 0)
            names = f"{_classes(el)} {el.get('action') or ''}".lower()
            return (size >= MIN_WRAPPER_CHARS and links.get(id(el), 0) < LINK_SHARE * size
                    and not any(w in names for w in _FORM_FURNITURE))
        return tag == "aside" and (el.get("role") or "").lower() in ("", "complementary") and wraps_content(el)

    for el in nodes:
        if not isinstance(el.tag, str):
            if el.getparent() is not None:
                _drop(el)  # comments and processing instructions
            continue
        tag = el.tag.lower()
        if el.getparent() is None:
            continue
        if tag in DROP_TAGS:
            _drop(el)
        elif _is_hidden(el) or (not keep_semantic and ((_is_boilerplate(el, tag) and not rescued(el, tag)) or (
                _named_boilerplate(el, tag, text, links) and not wraps_content(el)))):
            if left_out is not None:
                left_out.append(el.text_content())
            _drop(el)


def _text_len(el) -> int:
    return len(WS.sub(" ", el.text_content()).strip())


def outside(top, root) -> list[str]:
    """The text of ``top`` that is not inside ``root``."""
    out: list[str] = []

    def walk(el) -> None:
        if el is root or not isinstance(el.tag, str) or el.tag.lower() in DROP_TAGS:
            return
        out.append(el.text or "")
        for child in el:
            walk(child)
            out.append(child.tail or "")

    walk(top)
    return out


#: Words of a class or id that name a reader's comment ("fig-comment-content", "comment-list"), unless the next word
#: makes it a state or a count ("comments-open", "comment-count": WordPress's body classes).
_COMMENT_WORDS = frozenset({"comment", "comments"})
_COMMENT_STATES = frozenset({"open", "closed", "enabled", "disabled", "count", "number", "link", "links"})


def _in_comments(el) -> bool:
    """Whether ``el`` or an ancestor below ``<body>`` is named as a reader's comment (:data:`_COMMENT_WORDS`): Le
    Figaro marks each of 160 comments ``<article class="fig-comment-content">``, and together they outweighed the
    article itself (a walk over goose3's pages, 2026-12-07: the story was read as its comments)."""
    for x in (el, *el.iterancestors()):
        if not isinstance(x.tag, str) or x.tag.lower() in ("body", "html"):
            return False
        for name in _classes(x).lower().split():
            words = [w for w in name.replace("_", "-").split("-") if w]
            if any(w in _COMMENT_WORDS and (i + 1 >= len(words) or words[i + 1] not in _COMMENT_STATES)
                   for i, w in enumerate(words)):
                return True
    return False


def main_content(doc, left_out: list[str] | None = None):
    """The element holding the page's main content (see the module docstring), boilerplate removed; the text of
    the furniture removed and of what lies outside the main content is added to ``left_out`` (issue 37)."""
    for el in list(doc.iter()):
        if isinstance(el.tag, str) and el.tag.lower() in DROP_TAGS and el.getparent() is not None:
            _drop(el)
    candidates = [el for el in doc.iter("main") if _text_len(el) > 0]
    candidates = candidates or [el for el in doc.iter() if isinstance(el.tag, str) and el.get("role") == "main"]
    if not candidates:
        articles = [el for el in doc.iter("article") if _text_len(el) > 0 and not _in_comments(el)]
        if articles:
            candidates = [max(articles, key=_text_len)] if len(articles) == 1 or _text_len(
                max(articles, key=_text_len)) > 0.6 * sum(map(_text_len, articles)) else []
    root = candidates[0] if candidates else None
    if root is None:
        strip_boilerplate(doc, left_out=left_out)
        body = doc.find(".//body")
        body = body if body is not None else doc
        marked = [el for el in body.iter() if isinstance(el.tag, str) and el.tag.lower() in ("div", "section")
                  and _CONTENT_WORDS.search(_classes(el))]
        best = max(marked, key=_text_len, default=None)
        root = best if best is not None and _text_len(best) > 0.5 * _text_len(body) else body
    header = article_header(doc, root)
    if left_out is not None:
        body = doc.find(".//body")
        left_out.extend(outside(body if body is not None else doc, root))
    strip_boilerplate(root, left_out=left_out)
    for el in reversed(header):  # the article's headline, byline and date, read before its text
        root.insert(0, el)
    return root


#: Class or id words of an article's byline or date, read when they sit before the main content, outside it.
_BYLINE_WORDS = frozenset({"byline", "author", "authors", "dateline", "timestamp", "published", "pubdate", "date",
                           "posted"})
#: At most this many byline or date elements, each of at most :data:`BYLINE_CHARS` characters.
MAX_BYLINES = 4
BYLINE_CHARS = 200


def article_header(doc, root) -> list:
    """Copies of the article's headline (the ``<h1>`` before ``root`` when ``root`` has none) and of its byline and
    date elements (class or id words :data:`_BYLINE_WORDS`, or ``<time>``, ``<address>``) that sit before ``root``,
    outside it and outside page furniture: CNN's "Analysis by Joan Biskupic ... Updated 9:22 PM EST, Mon November 6,
    2023" sit in the page's top section while its text is in ``<main>`` (a walk over newspaper4k's pages, 2026-12-07:
    asked who wrote it and when, the answer was an unrelated paragraph). ``[]`` when there is nothing to add."""
    import copy

    inside = set(map(id, root.iter()))
    above = set(map(id, root.iterancestors()))
    h1, found = None, []
    want_h1 = root.find(".//h1") is None
    for el in doc.iter():
        if el is root:
            break
        if not isinstance(el.tag, str) or id(el) in inside or id(el) in above:
            continue
        tag = el.tag.lower()
        if tag == "h1" and want_h1 and 0 < _text_len(el) <= 300 and not _in_furniture(el):
            h1 = el
        elif len(found) < MAX_BYLINES and (tag in ("time", "address") or _names_byline(el)) \
                and 3 <= _text_len(el) <= BYLINE_CHARS and not any(f in found for f in el.iterancestors()) \
                and (h1 is None or h1 not in el.iterancestors()) and not _in_furniture(el):
            found.append(el)
    picked = ([h1] if h1 is not None else []) + [el for el in found if h1 is None or el not in h1.iterancestors()]
    out = []
    for el in picked:
        twin = copy.deepcopy(el)
        twin.tail = None
        if twin.tag.lower() not in HEADINGS:  # a byline is a paragraph of its own, whatever element held it
            twin.tag = "p"
        out.append(twin)
    return out


def _names_byline(el) -> bool:
    for name in _classes(el).lower().split():
        if any(w in _BYLINE_WORDS for w in name.replace("_", "-").split("-")):
            return True
    return False


def _in_furniture(el) -> bool:
    """Whether ``el`` or an ancestor below ``<body>`` is hidden, furniture by what it is (:func:`_is_boilerplate`) or
    named as furniture (:func:`furniture_words`, a "footer" word aside); unlike :func:`_named_boilerplate`, no size
    rescues it: a byline is short."""
    for x in (el, *el.iterancestors()):
        if not isinstance(x.tag, str):
            continue
        tag = x.tag.lower()
        if tag in ("body", "html"):
            return False
        # a class's "footer" word does not count: CNN's byline sits in "headline__footer", the headline's own foot
        if _is_hidden(x) or _is_boilerplate(x, tag) or (tag not in FORM_TAGS and set(furniture_words(_classes(x))) - {"footer"}):
            return True
    return False


def paragraph_block(doc):
    """The element whose own ``<p>`` children hold the most text, with its parent when that parent holds the
    page's ``<h1>`` (the article and its title): the main content of a page without landmarks, class words or
    navigation markup, where the largest block is the site's menu. ``None`` without paragraphs."""
    best, most = None, 0
    for el in doc.iter():
        if not isinstance(el.tag, str) or el.tag.lower() not in ("div", "section", "td", "body"):
            continue
        n = sum(_text_len(p) for p in el if isinstance(p.tag, str) and p.tag.lower() == "p")
        if n > most:
            best, most = el, n
    if best is None:
        return None
    parent = best.getparent()
    if parent is not None and parent.find(".//h1") is not None and parent.tag.lower() != "body":
        return parent
    return best
