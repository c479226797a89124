"""Line-end hyphens (stage 1, PDF branch; issue 13, item 4): join a split word only when the document
says it is one word.

A line ``... word-`` followed by a line starting with a letter is decided by :meth:`Lexicon.join`:

1. the joined word (``cli`` + ``mate`` -> ``climate``) occurs elsewhere in the document: join;
2. the hyphenated form (``state-of-the-art``, ``self-managed``) occurs elsewhere: keep the hyphen;
3. both parts occur elsewhere as words of their own (``self`` and ``managed``), or the second part
   does and both have 4+ letters (``paddle-`` / ``shaped``, ``thirteen-`` / ``segment``): a
   compound, keep;
4. the split part is prose (2+ letters, not all capitals) and the continuation is 2+ lower-case
   letters: join (the usual typographic split, ``Mög-`` / ``lichkeit``, ``cli-`` / ``mate``);
5. otherwise keep: ``state-of-the-`` / ``art`` (a part of a compound), ``HPC-related``, ``Open-Domain``, ``10-20``, ``n-tridecanal``, ``for-`` before
   ``splncs04.bst``.

A soft hyphen (U+00AD) at a line's end joins, unless the document draws its hyphens as soft hyphens (one stands
inside a line: the IRS's "same\u00adsex", "W\u00ad2"; :attr:`Lexicon.soft_drawn`), when it is decided as a hyphen
is; inside a line it is the hyphen drawn unless the document's words join the parts (:func:`soft_hyphens`). Every join made is recorded (``Lexicon.joins``) so ``bench extract``
can list them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from rag.text import line_joiner

_HYPHENS = ("-", "\u2010")
SOFT_DRAWN_MIN = 3
SOFT_DRAWN_SHARE = 0.2
_WORD = re.compile(r"[^\W\d_]+(?:[-\u2010][^\W\d_]+)*")
_LETTERS = re.compile(r"[^\W\d_]+")


@dataclass
class Lexicon:
    """The words of one document, lower-cased: ``words`` whole words (hyphenated forms split into their
    parts too), ``compounds`` hyphenated forms. ``joins`` the ``(split, joined)`` pairs joined so far."""

    words: set[str] = field(default_factory=set)
    compounds: set[str] = field(default_factory=set)
    joins: list[tuple[str, str]] = field(default_factory=list)
    #: Whether the document draws its hyphens as soft hyphens: :data:`SOFT_DRAWN_MIN` of them or more stand inside a
    #: line, between two letters or digits, :data:`SOFT_DRAWN_SHARE` of all (the IRS's "same\u00adsex": 73 of 158).
    #: Then a soft hyphen is decided as a hyphen is; else it is the break it marks and always joins ("orienta\u00ad"
    #: / "tion", "over\u00ad" / "load": a guide of 212 soft hyphens, 2 inside a line).
    soft_drawn: bool = False

    @classmethod
    def of(cls, texts: Iterable[str]) -> Lexicon:
        """The lexicon of ``texts`` (the lines of a document). A word split at a line end counts only
        through its parts' other occurrences: the line-final fragment (``cli-``) is left out."""
        lex = cls()
        after_hyphen = False
        soft = inside = 0  # soft hyphens, and those inside a line between two letters or digits
        for text in texts:
            body = text
            if after_hyphen:  # the line continues a split word: its first word is a fragment
                body = body.split(None, 1)[1] if " " in body.strip() else ""
            after_hyphen = text.endswith((*_HYPHENS, "\u00ad")) and text[-2:-1].isalpha()
            if "\u00ad" in text:
                for k, ch in enumerate(text):
                    if ch == "\u00ad":
                        soft += 1
                        inside += text[k - 1:k].isalnum() and text[k + 1:k + 2].isalnum()
            if after_hyphen:  # the line-final fragment (``cli-``) is no word either
                body = body.rsplit(None, 1)[0] if " " in body.strip() else ""
            for m in _WORD.finditer(body):
                w = m.group(0).lower()
                if "-" in w or "\u2010" in w:
                    lex.compounds.add(w.replace("\u2010", "-"))
                    lex.words.update(re.split(r"[-\u2010]", w))
                else:
                    lex.words.add(w)
        lex.soft_drawn = inside >= SOFT_DRAWN_MIN and inside >= SOFT_DRAWN_SHARE * soft
        return lex

    def join(self, left: str, right: str) -> bool:
        """Whether ``left`` (a line ending in a hyphen) and ``right`` (the next line) join into one word.

        Rules 1-5 of the module doc; records the join when it returns True.
        """
        frag_m = re.search(r"(?<![^\W\d_])([^\W\d_]+)[-\u2010]$", left)
        cont_m = re.match(r"[^\W\d_]+", right)
        if not frag_m or not cont_m:
            return False
        frag, cont = frag_m.group(1), cont_m.group(0)
        rest = right[cont_m.end():cont_m.end() + 1]
        if rest and (rest.isdigit() or rest == "_"):
            return False  # ``for-`` + ``splncs04.bst``: the next token is no word
        joined = (frag + cont).lower()
        decision = None
        if joined in self.words:
            decision = True  # ``CC-Va-`` / ``riante``: ``Variante`` is a word of the document
        elif left[:frag_m.start()].endswith(_HYPHENS):
            decision = False  # ``state-of-the-`` / ``art``: the split falls inside a hyphenated compound
        elif f"{frag}-{cont}".lower() in self.compounds:
            decision = False
        elif len(frag) > 1 and len(cont) > 1 and frag.lower() in self.words and cont.lower() in self.words:
            decision = False
        elif len(frag) >= 4 and len(cont) >= 4 and cont.lower() in self.words:
            decision = False  # ``paddle-`` / ``shaped``: the second part is a word of its own, a compound
        elif len(frag) >= 2 and len(cont) >= 2 and not frag.isupper() and cont.islower():
            decision = True
        if decision:
            self.joins.append((f"{frag}-{cont}", frag + cont))
        return bool(decision)


def _url_tail(line: str) -> bool:
    """Whether the last token of ``line`` is a web address (``https://...``, ``www.``...)."""
    token = line.rsplit(None, 1)[-1].lower() if line.strip() else ""
    return token.startswith(("http://", "https://", "www.", "ftp://"))


def _url_goes_on(line: str, nxt: str, lexicon: Lexicon) -> bool:
    """Whether the next line's first word continues the web address ending ``line``: after ``://``, a word with
    ``/``, ``.``, ``-``, ``_`` or digits in it, or one that is no word of the document ("https://www.nasa.gov/" /
    "and read" stays two words: a reviewer's probe, 2026-12-07)."""
    word = nxt.split(None, 1)[0]
    if line.endswith("://"):
        return True
    if word.endswith(":"):  # the next line's label ("http://www.wwoofusa.org/" / "e-mail: ...": a new user's walk)
        return False
    if any(c in word for c in "/.-_=?&") or any(c.isdigit() for c in word):
        return True
    return word.lower() not in lexicon.words


def join_lines(texts: list[str], lexicon: Lexicon) -> str:
    """Join a paragraph's lines with spaces, undoing line-end hyphenation where :meth:`Lexicon.join` says
    so; a hyphen or an en dash between digits (``10-`` / ``20``, ``FAA\u20132020\u2013`` / ``0686``) joins without
    a space, keeping the dash, and so does a web address broken after a slash (``https://`` / ``www.x.gov``:
    a new user's walk, 2026-12-07, found 23 such identifiers with a space in one Federal Register rule); a dash
    with a space before it (``The Buried Moon -`` / ``An English Fairy Tale``) ends no word and keeps the space."""
    out = texts[0] if texts else ""
    for nxt in texts[1:]:
        if out.endswith("\u00ad"):  # a soft hyphen breaks a word; a producer's hyphen drawn as one may not
            drawn = lexicon.soft_drawn and out[-2:-1].isalpha() and not lexicon.join(out[:-1] + "-", nxt)
            out = out[:-1] + ("-" if drawn else "") + nxt
        elif out.endswith(_HYPHENS) and (len(out) == 1 or out[-2].isspace()):
            out = out + " " + nxt
        elif out.endswith(_HYPHENS) and nxt[:1].isalpha():
            out = (out[:-1] if lexicon.join(out, nxt) else out) + nxt
        elif out.endswith((*_HYPHENS, "\u2013")) and nxt[:1].isdigit() and out[-2:-1].isdigit():
            out = out + nxt  # "FAA\u20132020\u2013" / "0686": a docket number, a telephone number
        elif out.endswith("/") and _url_tail(out) and nxt[:1].isalnum() and _url_goes_on(out, nxt, lexicon):
            out = out + nxt  # "https://" / "www.regulations.gov": a web address broken at a slash
        else:
            out = out + line_joiner(out, nxt) + nxt  # no space inside wrapped Chinese or Japanese
    return out


def soft_hyphens(text: str, lexicon: Lexicon) -> str:
    """``text`` with each soft hyphen (U+00AD) inside a line read as the producer drew it: between two letters or
    digits it is the hyphen on the page unless :meth:`Lexicon.join` makes the two parts one word of the document
    ("same\u00adsex" -> "same-sex", "W\u00ad2" -> "W-2", "infor\u00admation" -> "information"); elsewhere it is
    dropped. A walk over pdf-lib's test PDFs (2026-12-07): the IRS's Form 1040 instructions encode every hyphen as
    U+00AD, and "same-sex", "Self-Employment", "Form W-2" were read "samesex", "SelfEmployment", "Form W2". No regular
    expression: one pass over the soft hyphens."""
    if "\u00ad" not in text:
        return text
    if not lexicon.soft_drawn:  # soft hyphens mark where a word may break: none is drawn inside a line
        return text.replace("\u00ad", "")
    out: list[str] = []
    pos = 0
    for i, ch in enumerate(text):
        if ch != "\u00ad":
            continue
        out.append(text[pos:i])
        pos = i + 1
        before, after = text[i - 1:i], text[i + 1:i + 2]
        if before.isalnum() and after.isalnum():
            a = i
            while a > 0 and text[a - 1].isalnum():
                a -= 1
            b = i + 1
            while b < len(text) and text[b].isalnum():
                b += 1
            if not lexicon.join(text[a:i] + "-", text[i + 1:b]):
                out.append("-")
    out.append(text[pos:])
    return "".join(out)
