"""Cells as Excel shows them (rag/ingest/office/numfmt.py): SheetJS's number_format.xls and
xlsx-stream-d-date-cell.xls (a walk, 2026-12-07) held values the reader showed otherwise than Excel."""

import datetime as dt

import pytest

from rag.ingest.office.numfmt import format_cell, format_number, sections


@pytest.mark.parametrize(("fmt", "value", "shown"), [
    ("00000", 1235, "01235"),                       # a ZIP code ("1235" before)
    ("00000-0000", 1235, "00000-1235"),             # ZIP+4 ("1235-0000")
    ("000-00-0000", 12346, "000-01-2346"),          # a social security number ("12346-00-0000")
    ("# ?/?", 12345.6667, "12345 2/3"),             # a fraction ("12346 ?/?")
    ("# ?/?", -1.2, "-1 1/5"),
    ("#,##0,", 12345678, "12,346"),                 # shown in thousands ("12,345,678")
    ('#,##0.0,,"M"', 12345678, "12.3M"),
    ("#,##0_);(#,##0)", -12346, "(12,346)"),        # the negative section ("-12,346")
    ("[<100]000;0", 50, "050"),                     # a condition
    ("[<=9999999]###-####;(###) ###-####", 5551234567, "(555) 123-4567"),
    ("#,##0;[Red]#,##0", -5, "-5"),                 # red is not in the text: the minus stays
    ("h:mm AM/PM", 0.2564, "6:09 AM"),
    ("h:mm:ss", 0.6789, "16:17:37"),                # rounded, not cut ("16:17:36")
    ("[h]:mm:ss", 1.5, "36:00:00"),                 # a duration ("1900-01-01 12:00", shown as supported)
    ("0.00%", 0.1234, "12.34%"),
    ("#,##0.00", -1234.5, "-1,234.50"),
    ("0.00E+00", 12345, "1.23E+04"),
    ("General;-General", -3, "-3"),                 # a review's probes, 2026-12-07: the minus was lost
    ("General;(General)", -3, "(3)"),
    ('"Yes";"Yes";"No"', 1, "Yes"),                 # a section of text alone
    ('"Yes";"Yes";"No"', 0, "No"),
    ('[=5]"five";General', 5, "five"),
    ('0.0"%"', 12.5, "12.5%"),                      # a quoted % does not multiply by 100
    ("[$-409]h:mm:ss", 1.25, "6:00:00"),            # a locale is no elapsed time: hours wrap at 24
    ("[Red]h:mm", 1.25, "6:00"),
    ("#,###;;", -12.34, ""),                        # an empty section shows nothing
    ("0;-0;;@", 0, ""),
])
def test_a_number_reads_as_excel_shows_it(fmt, value, shown):
    assert format_number(value, fmt) == shown


def test_dates_times_and_durations_from_the_readers():
    assert format_cell(dt.timedelta(days=12345, seconds=58657), "[h]:mm:ss") == "296296:17:37"  # not "12345 days, ..."
    assert format_cell(dt.datetime(1899, 12, 31, 6, 9, 23), "h:mm AM/PM") == "6:09 AM"  # no invented date
    assert format_cell(dt.datetime(2014, 2, 19, 14, 30), "m/d/yy") == "2014-02-19"  # the format shows no time
    assert format_cell(dt.datetime(2014, 2, 19, 14, 30)) == "2014-02-19 14:30"
    assert format_cell("If I did this right,_x000D__x000D_This comment") == "If I did this right,\n\nThis comment"


def test_sections_are_cut_outside_quotes_and_brackets():
    assert sections('"a;b"0;[<0;]0;@') == ['"a;b"0', "[<0;]0", "@"]


@pytest.mark.parametrize("fmt", ["h:mm:ss." + "0" * 400, "#/" + "9" * 400, "[s]." + "0" * 400, "0/" * 5000,
                                 "0" * 5000 + "/" + "0" * 5000, "#" + "," * 5000, "[h", '""""', ";;;;;;"])
def test_a_hostile_format_shows_the_number_and_never_fails_the_workbook(fmt):
    # "h:mm:ss." and 400 zeros overflowed a float: the whole XLSX was refused as damaged (a review, 2026-12-07)
    assert isinstance(format_number(5, fmt), str)


def test_halves_round_away_from_zero_as_excel_does():
    # calamine's issues.xlsx (a walk, 2026-12-07): 0.5 under "0" read "0" where Excel shows 1; Python's format rounds
    # half to even on the binary value (2.675 -> "2.67")
    assert format_number(0.5, "0") == "1" and format_number(-2.5, "0") == "-3"
    assert format_number(1234.5, "#,##0") == "1,235"
    assert format_number(0.125, "0.00") == "0.13" and format_number(2.675, "0.00") == "2.68"
    assert format_number(0.0425, "0.0%") == "4.3%"


def test_a_percent_sign_stays_where_the_format_puts_it():
    # XlsxWriter's escapes06.xlsx: '[Red]0.0%\ "a"' on 123 shows "12300.0% a" (it read "12300.0 a%")
    assert format_number(123, '[Red]0.0%\\ "a"') == "12300.0% a"
    assert format_number(0.12, '0%" of total"') == "12% of total"
    assert format_number(0.5, "%0") == "%50"
    assert format_number(0.25, "0%") == "25%"
