"""PDF check boxes read by their own state (rag.ingest.pdf.forms)."""

from __future__ import annotations

from types import SimpleNamespace

from rag.ingest.pdf.forms import _value


def _box(group_value: str, own_state: str | None):
    doc = SimpleNamespace(xref_get_key=lambda xref, key: ("name", f"/{own_state}") if own_state else ("null", "null"))
    return SimpleNamespace(field_type_string="CheckBox", field_value=group_value, xref=7,
                           parent=SimpleNamespace(parent=doc))


def test_each_box_of_a_group_reads_its_own_state_not_the_group_s_value():
    """pdfbox's AcroFormsBasicFields.pdf: a group of four boxes whose value is "Option3", two of them ticked; all four
    read "Yes (checked)" and an answer built on them was shown as supported (a walk, 2026-12-07)."""
    assert _value(_box("Option3", "Off")) == "No (unchecked)"
    assert _value(_box("Option3", "Option3")) == "Yes (checked)"
    assert _value(_box("Yes", None)) == "Yes (checked)"  # no appearance state: the field's value decides
    assert _value(_box("Off", None)) == "No (unchecked)"
