"""Spreadsheet cells as Excel shows them (ECMA-376 part 1, 18.8.31; moved out of :mod:`rag.ingest.office.sheets`):
:func:`format_cell` and :func:`format_number` (fixed decimals, thousands separators, percentages, currency,
scientific, General), with the parts of a number format a reader's eye depends on beyond those: sections,
conditions, zero padding, fractions, thousands scaling, times of day and elapsed times.

A walk over SheetJS's test files (2026-12-07) found numbers shown otherwise than Excel shows them: a ZIP code
``00000`` as "1235" for "01235", ``000-00-0000`` as "12346-00-0000", ``# ?/?`` as "12346 ?/?", ``#,##0,`` (thousands)
as "12,345,678", a negative section ``(#,##0)`` ignored; a duration ``[h]:mm:ss`` as "1900-01-01 12:00" (an answer
on it was shown as supported) or as Python's "12345 days, 16:17:36.960000"; a time ``h:mm AM/PM`` with an invented
date "1899-12-31 06:09:23"; seconds cut, not rounded. No maintained Python library formats them (``ssf`` 0.2.2,
SheetJS's port, fails on today's Babel), so these rules are written here, each from the standard.

Every function is linear in the format's length; formats come from untrusted files, and the two regular expressions
kept from the common formats (:data:`_BRACKET`, :data:`_NUMBER`) are linear ones.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction

_BRACKET = re.compile(r"\[\$([^\][-]*)[^\][]*\]|\[[^\][]*\]")
_NUMBER = re.compile(r"[0#?][0#?,]*(?:\.([0#?]+))?(?:[eE][+-]?0+)?|\.([0#?]+)")


def sections(fmt: str) -> list[str]:
    """``fmt`` cut at each ``;`` outside quotes, brackets and after a backslash (a format has up to four sections:
    positive; negative; zero; text)."""
    out, cur, quoted, bracket, escaped = [], [], False, False, False
    for ch in fmt:
        if escaped:
            escaped = False
        elif ch == "\\" and not quoted:
            escaped = True
        elif ch == '"' and not bracket:
            quoted = not quoted
        elif ch == "[" and not quoted:
            bracket = True
        elif ch == "]" and not quoted:
            bracket = False
        elif ch == ";" and not quoted and not bracket:
            out.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur))
    return out


def _condition(section: str) -> tuple[str, float] | None:
    """The ``[<100]``-style condition opening ``section``, as ``(operator, number)``, or ``None``."""
    start = section.find("[")
    while start >= 0:
        end = section.find("]", start)
        if end < 0:
            return None
        body = section[start + 1:end]
        for op in ("<=", ">=", "<>", "<", ">", "="):
            if body.startswith(op):
                try:
                    return op, float(body[len(op):])
                except ValueError:
                    return None
        start = section.find("[", end)
    return None


def _holds(cond: tuple[str, float], x: float) -> bool:
    op, n = cond
    return {"<": x < n, "<=": x <= n, ">": x > n, ">=": x >= n, "=": x == n, "<>": x != n}[op]


def pick_section(fmt: str, x: float) -> tuple[str, bool]:
    """The section of ``fmt`` that shows number ``x``, and whether it shows ``abs(x)`` (its own signs or
    parentheses stand for the minus): one section for all; two: non-negative, negative; three or more: positive,
    negative, zero; conditions (``[<100]``) decide where the first two sections carry them."""
    parts = sections(fmt)
    first = _condition(parts[0])
    if first is not None:
        if _holds(first, x):
            return parts[0], False
        second = _condition(parts[1]) if len(parts) > 1 else None
        if len(parts) > 1 and (second is None or _holds(second, x)):
            return parts[1], second is None and x < 0 and len(parts) > 2
        return (parts[2], False) if len(parts) > 2 else (parts[-1], False)
    if len(parts) == 1 or (x > 0 or (x == 0 and len(parts) == 2)):
        return parts[0], False
    if x < 0:
        return parts[1], True
    return parts[2] if len(parts) > 2 else parts[0], False


def tokens(section: str) -> list[tuple[str, str]]:
    """``section`` as ``(kind, text)`` pairs: ``lit`` (quoted text, escaped characters, other literals), ``br``
    (a bracket's content), ``pad`` (``_x`` spacing: a space), ``code`` (every other character)."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(section)
    while i < n:
        ch = section[i]
        if ch == '"':
            end = section.find('"', i + 1)
            end = n if end < 0 else end
            out.append(("lit", section[i + 1:end]))
            i = end + 1
        elif ch == "\\" and i + 1 < n:
            out.append(("lit", section[i + 1]))
            i += 2
        elif ch in "_*" and i + 1 < n:
            out.append(("pad", " " if ch == "_" else ""))
            i += 2
        elif ch == "[":
            end = section.find("]", i)
            end = n if end < 0 else end
            out.append(("br", section[i + 1:end]))
            i = end + 1
        else:
            out.append(("code", ch))
            i += 1
    return out


def _codes(section: str) -> str:
    return "".join(t for k, t in tokens(section) if k == "code").lower()


def is_elapsed(section: str) -> bool:
    """Whether ``section`` shows an elapsed time (``[h]``, ``[mm]``, ``[ss]``: hours, minutes or seconds past 24/60)."""
    return any(k == "br" and t and set(t.lower()) <= set("hms") and len(set(t.lower())) == 1 for k, t in tokens(section))


def is_time_only(section: str) -> bool:
    """Whether ``section`` shows a time of day and no date (hours or seconds, no year, day or month name)."""
    codes = _codes(section)
    return ("h" in codes or "s" in codes) and "y" not in codes and "d" not in codes and not is_elapsed(section)


def shows_time(section: str) -> bool:
    """Whether a date format shows the time of day too (``h`` or ``s`` among its codes)."""
    codes = _codes(section)
    return "h" in codes or "s" in codes


def format_time(days: float, section: str) -> str:
    """A time of day or an elapsed time (``days``: an Excel serial or its fraction) under ``section``: ``h``/``hh``,
    ``m``/``mm`` (minutes after an hour or before a second), ``s``/``ss``, ``AM/PM`` and ``A/P``, ``[h]``/``[m]``/
    ``[s]`` (totals), fractions of a second (``.0``-``.000``); literals as written. Seconds are rounded to the
    shown precision, as Excel does ("16:17:37", not "16:17:36")."""
    toks = tokens(section)
    elapsed = is_elapsed(section)
    codes = "".join(t for k, t in toks if k == "code").lower()
    decimals = 0
    if ".0" in codes:
        at = codes.index(".0") + 1
        while at < len(codes) and codes[at] == "0":
            decimals, at = decimals + 1, at + 1
    decimals = min(decimals, 6)  # Excel shows at most thousandths of a second
    unit = 10 ** decimals
    total = round(abs(days) * 86400 * unit)  # in 1/unit seconds
    sign = "-" if days < 0 and total else ""
    frac, secs = total % unit, total // unit
    ampm = "am/pm" in codes or "a/p" in codes
    out: list[str] = []
    elapsed_done = False
    i = 0
    letters = toks
    while i < len(letters):
        kind, text = letters[i]
        low = text.lower()
        if kind == "br" and low and set(low) <= set("hms") and not elapsed_done:
            value = {"h": secs // 3600, "m": secs // 60, "s": secs}[low[0]]
            out.append(str(value).zfill(len(low)))
            elapsed_done = True
            i += 1
            continue
        if kind != "code":
            out.append(text if kind in ("lit", "pad") else "")
            i += 1
            continue
        run = 1
        while i + run < len(letters) and letters[i + run] == (kind, text):
            run += 1
        if low == "h":
            hours = secs // 3600 if elapsed else (secs // 3600) % 24
            if ampm:
                hours = hours % 12 or 12
            out.append(str(hours).zfill(min(run, 2)))
        elif low == "m":
            out.append(str((secs // 60) % 60).zfill(min(run, 2)))
        elif low == "s":
            out.append(str(secs % 60).zfill(min(run, 2)))
        elif low == "a" and "".join(t for _, t in letters[i:i + 5]).lower() == "am/pm":
            out.append("AM" if (secs // 3600) % 24 < 12 else "PM")
            run = 5
        elif low == "a" and "".join(t for _, t in letters[i:i + 3]).lower() == "a/p":
            out.append("A" if (secs // 3600) % 24 < 12 else "P")
            run = 3
        elif text == "." and decimals and i + 1 < len(letters) and letters[i + 1] == ("code", "0"):
            out.append("." + str(frac).zfill(decimals))
            run = 1 + decimals
        elif low in ("0", "#", "?", "y", "d", "e", "g", "b"):
            pass
        else:
            out.append(text * run)
        i += run
    return sign + "".join(out)


def _digits_spec(section: str) -> tuple[str, str, str, str, int]:
    """``(prefix, integer placeholders with their literals, decimals, suffix, scale)`` of a number section."""
    toks = tokens(section)
    first, last = None, None
    for idx, (k, t) in enumerate(toks):
        if k == "code" and t in "0#?":
            first = idx if first is None else first
            last = idx
    if first is None:
        return "", "", "", "", 0
    prefix = "".join(t if k in ("lit", "pad", "code") else "" for k, t in toks[:first])  # a "%" stays where it is
    scale = 0
    after = toks[last + 1:]
    while after and after[0] == ("code", ","):
        scale += 1
        after = after[1:]
    suffix = "".join(t for k, t in after if k in ("lit", "pad", "code"))
    body = toks[first:last + 1]
    int_part, dec_part, in_dec = [], [], False
    for k, t in body:
        if k == "code" and t == ".":
            in_dec = True
            continue
        (dec_part if in_dec else int_part).append(t if k == "code" and t in "0#?," else "\x00" + t)
    return prefix, "".join(int_part), "".join(c for c in dec_part if c in "0#?"), suffix, scale


def format_fraction(x: float, section: str) -> str | None:
    """``x`` as a fraction under a section with ``/`` between digit placeholders (``# ?/?``, ``?/8``), or ``None``
    when ``section`` is no fraction format."""
    codes = tokens(section)
    slash = next((i for i, (k, t) in enumerate(codes) if k == "code" and t == "/"), None)
    if slash is None:
        return None
    den_spec = "".join(t for k, t in codes[slash + 1:] if k == "code" and (t in "0#?" or t.isdigit()))
    num_spec = ""
    j = slash - 1
    while j >= 0 and codes[j][0] == "code" and codes[j][1] in "0#?":
        num_spec = codes[j][1] + num_spec
        j -= 1
    if not den_spec or not num_spec or len(den_spec) > MAX_DIGITS:
        return None
    whole_part = any(k == "code" and t in "0#?" for k, t in codes[:j + 1])
    sign = "-" if x < 0 else ""
    x = abs(x)
    if den_spec.isdigit():
        den = int(den_spec)
        frac = Fraction(round(x * den), den) if den else Fraction(round(x))
    else:
        frac = Fraction(x).limit_denominator(10 ** len(den_spec) - 1)
    whole = math.floor(frac) if whole_part else 0
    rest = frac - whole
    if rest == 0:
        return f"{sign}{whole}" if whole_part else f"{sign}{frac.numerator}/{frac.denominator}"
    num, den = rest.numerator, rest.denominator
    return f"{sign}{whole} {num}/{den}" if whole_part and whole else f"{sign}{num}/{den}"


def format_padded(x: float, section: str) -> str | None:
    """``x`` under a section whose integer placeholders carry zeros or literals between them (``00000``,
    ``00000-0000``, ``000-00-0000``) or thousands scaling (``#,##0,``, ``0.0,,"M"``), or ``None`` when the
    section has neither (the common formats stay with :func:`format_number`)."""
    prefix, int_spec, dec_spec, suffix, scale = _digits_spec(section)
    if not int_spec and not dec_spec:
        return None
    literal_inside = "\x00" in int_spec.strip(",")
    zeros = int_spec.count("0")
    if not scale and not literal_inside and zeros <= 1:
        return None
    percent = "%" in _codes(section)
    x = x * (100 if percent else 1) / (1000 ** scale)
    grouped = "," in int_spec.replace("\x00,", "")
    digits = f"{abs(x):.{len(dec_spec)}f}"
    whole, _, dec = digits.partition(".")
    if whole == "0" and not zeros:
        whole = ""
    if literal_inside:
        # fill the placeholders from the right, the literals staying where they are; extra digits go first
        whole = whole.zfill(zeros)
        out, k = [], len(whole)
        spec = int_spec
        i = len(spec) - 1
        while i >= 0:
            c = spec[i]
            if c in "0#?":
                k -= 1
                out.append(whole[k] if k >= 0 else ("0" if c == "0" else ""))
            elif i > 0 and spec[i - 1] == "\x00":
                out.append(c)
                i -= 1
            elif c not in ",\x00":
                out.append(c)
            i -= 1
        body = (whole[:max(k, 0)] if k > 0 else "") + "".join(reversed(out))
    else:
        whole = whole.zfill(zeros) if zeros else whole
        # grouped by thousands unless zero padding is wanted (leading zeros kept as written)
        body = f"{int(whole):,}" if grouped and whole and len(whole) == len(str(int(whole))) else whole
    if dec_spec:
        body += "." + dec
    sign = "-" if x < 0 and float(digits) != 0 else ""
    return sign + prefix + body + suffix.replace("\x00", "")


def _literal(text: str, percent: bool = False) -> str:
    """The literal characters of a number-format fragment: quoted and escaped text as written, padding and spacing
    marks removed, and an unquoted ``%`` (a code) too unless ``percent`` (then it stays where the format puts it:
    ``0.0%\\ "a"`` shows "12300.0% a", ``%0`` "%50"; a walk over XlsxWriter's files, 2026-12-07, read "12300.0 a%")."""
    return "".join(t if k == "lit" or (k == "code" and (percent or t != "%")) else "" for k, t in tokens(text))


#: Decimal places and fraction digits read at most (Excel allows 30 decimals): a hostile format's "0." and 400
#: zeros overflowed a float and had the whole workbook refused (a review, 2026-12-07).
MAX_DIGITS = 30


def _general(value: float | int) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:.15g}"


def format_number(value: float | int, fmt: str | None) -> str:
    """A number as Excel displays it under number format ``fmt``: the section for its sign or condition
    (:func:`pick_section`), times and elapsed times, fractions, zero padding and thousands scaling, a section of
    text alone ("Yes";"Yes";"No"), else the common formats (fixed decimals, thousands separators, percentages,
    currency, scientific; General). A negative number under a section that shows no sign of its own (Excel shows it
    in red) keeps its minus: a colour is not in the text. A format this cannot apply shows the number as General."""
    general = _general(value)
    fmt = fmt or "General"
    if fmt in ("General", "@", ""):
        return general
    x = float(value)
    if not math.isfinite(x):
        return general
    try:
        return _formatted(x, fmt, general)
    except (ValueError, OverflowError, ZeroDivisionError):  # a format too large or odd to apply
        return general


def _formatted(x: float, fmt: str, general: str) -> str:
    section, absolute = pick_section(fmt, x)
    if not section.strip() and ";" in fmt:  # an empty section shows nothing ("#,###;;": negatives and zero blank)
        return ""
    minus = ""
    if absolute:
        x = abs(x)
        shown = "".join(t for k, t in tokens(section) if k in ("lit", "code"))
        minus = "" if ("-" in shown or "(" in shown) else "-"
    if is_elapsed(section) or is_time_only(section):
        return minus + format_time(x, section)
    for special in (format_fraction, format_padded):
        got = special(x, section)
        if got is not None:
            return minus + got
    section = _BRACKET.sub(lambda m: m.group(1) or "", section)
    m = _NUMBER.search(section)
    if not m:
        at = section.lower().find("general")
        if at >= 0:  # "-General", "(General)": the section's own text round the number
            shown = _general(abs(x)) if absolute else general
            return minus + _literal(section[:at]) + shown + _literal(section[at + 7:])
        plain = _literal(section).strip()
        if plain:  # a section of text alone: '"Yes";"Yes";"No"', '[=5]"five"'
            return plain
        return minus + general.lstrip("-") if absolute else general
    spec = m.group(0)
    decimals = len(m.group(1) or m.group(2) or "")
    percent = "%" in _codes(section)
    x = x * (100 if percent else 1)
    decimals = min(decimals, MAX_DIGITS)
    if x == 0 and "0" not in spec:  # "#" and "?" show no insignificant zero (an accounting zero reads "$ -")
        body = ""
    elif "e" in spec.lower():
        body = f"{abs(x):.{decimals}E}"
    else:
        body = fixed(abs(x), decimals, grouped="," in spec)
    sign = "-" if x < 0 and body and float(body.replace(",", "").replace("E", "e")) != 0 else ""
    return minus + sign + _literal(section[: m.start()], percent) + body + _literal(section[m.end():], percent)


def fixed(x: float, decimals: int, grouped: bool = False) -> str:
    """``x`` with ``decimals`` places (thousands grouped with ``,`` when ``grouped``), rounded as Excel rounds: half
    away from zero, on the value's 15 significant digits (0.5 under ``0`` shows "1", 2.675 under ``0.00`` "2.68";
    Python's ``f"{x:.0f}"`` gave "0" and "2.67": a walk over calamine's test workbooks, 2026-12-07)."""
    if not math.isfinite(x):  # no number to round (a chart's cached "INF")
        return f"{x}"
    d = Decimal(f"{x:.15g}")
    with localcontext() as ctx:
        ctx.prec = 400  # a float's 309 integer digits and MAX_DIGITS decimals
        q = d.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return f"{q:,.{decimals}f}" if grouped else f"{q:.{decimals}f}"


#: Excel's day 0 in the 1900 date system, for serials from March 1900 on (times of day and elapsed times read only
#: a date's fraction and a duration's total).
_EPOCH = dt.datetime(1899, 12, 30)


def format_cell(value, fmt: str | None = None) -> str:
    """A cell value as text: numbers by :func:`format_number`, dates ISO 8601 (with the time only when ``fmt`` shows
    one), a time of day or an elapsed time as ``fmt`` shows it ("36:00:00", "6:09 AM"; with no format, "H:MM:SS"),
    booleans ``TRUE``/``FALSE``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return format_number(value, fmt)
    section = sections(fmt)[0] if fmt else ""
    timed = bool(section) and (is_elapsed(section) or is_time_only(section))
    if isinstance(value, dt.timedelta):
        days = value.total_seconds() / 86400
        return format_time(days, section if timed else "[h]:mm:ss")
    if isinstance(value, dt.datetime):
        if timed:
            days = (value - _EPOCH).total_seconds() / 86400
            return format_time(days if is_elapsed(section) else days % 1, section)
        if value.time() == dt.time(0, 0) or (section and not shows_time(section)):
            return value.date().isoformat()
        value = (value + dt.timedelta(microseconds=500_000)).replace(microsecond=0)
        return value.isoformat(sep=" ", timespec="seconds" if value.second else "minutes")
    if isinstance(value, dt.time):
        days = (value.hour * 3600 + value.minute * 60 + value.second + value.microsecond / 1e6) / 86400
        return format_time(days, section if timed else "hh:mm:ss")
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value)
    if "_x" in text:  # OOXML's escape of a character XML cannot hold ("abc_x000D_ def"), left in a formula's cached
        # string by openpyxl, which unescapes shared strings only (a walk over SheetJS's files, 2026-12-07)
        from openpyxl.utils.escape import unescape

        text = unescape(text).replace("\r\n", "\n").replace("\r", "\n")
        text = "".join(c for c in text if c >= " " or c in "\t\n")
    return text
