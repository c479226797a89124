"""Roles decided on what the entries look like, not on the heading's word alone (issue 37): an HR handbook's
"References" section about employment references is body text; a standard's "Normative References" list and a
reading list under "References" are reference lists. Documents are Markdown written here."""

from __future__ import annotations

from rag.ingest.extract import extract_bytes
from rag.ingest.roles import find_roles, looks_like_entry, reads_as_references
from rag.types import TextRole


def _roles(md: str) -> list[tuple[TextRole, str]]:
    doc = extract_bytes(md.encode(), "doc.md")
    return [(r.role, doc.canonical[r.start:r.end]) for r in find_roles(doc)]


HANDBOOK = """# Staff handbook

## References

When a former employee asks us for a reference, only the HR team may give one. Managers must not give
references by phone or by e-mail, even to a colleague at another company.

A reference states the dates of employment and the last job title. It never rates performance.

## Leave

Every employee has 25 days of paid leave.
"""

STANDARD = """# SARIF rich messages

## 1.3 Normative References

[ECMA404] "The JSON Data Interchange Format", 1st Edition, ECMA-404, October 2013.

[RFC2119] Bradner, S., "Key words for use in RFCs to Indicate Requirement Levels", BCP 14, RFC 2119, March 1997.

## 2 Conformance

A conforming producer writes valid JSON.
"""


def test_prose_about_employment_references_is_body_text():
    assert _roles(HANDBOOK) == []


def test_a_normative_references_list_is_tagged():
    (role, text), = _roles(STANDARD)
    assert role == TextRole.REFERENCES and text.strip().startswith("[ECMA404]") and "Conformance" not in text


def test_a_reading_list_under_references_is_tagged():
    body = "\n\nFor more information, see also:\n\n- OWASP Session Management Cheat Sheet\n- NIST SP 800-63B\n"
    assert reads_as_references(body)
    assert looks_like_entry("Brown, Wendy. Undoing the Demos. New York: Zone Books, 2015.")
    assert not looks_like_entry("Managers must not give references by phone. They ask HR first.")


#: A PDF's reference list as extraction joins it (pdf-dev 08, the ion-crystal paper): one paragraph, entries running on.
JOINED = ("1. Nielsen, M. A. & Chuang, I. L. Quantum computation and quantum information (Cambridge university press, "
          "2010). 2. Ladd, T. D. et al. Quantum computers. Nature 464, 45-53 (2010). 3. Blatt, R. & Wineland, D. "
          "Entangled states of trapped atomic ions. Nature 453, 1008-1015 (2008). 4. Monroe, C. et al. Large-scale "
          "modular quantum-computer architecture with atomic memory and photonic interconnects. Phys. Rev. A 89, "
          "022317 (2014).")


def test_a_reference_list_joined_into_one_paragraph_is_tagged():
    """Issue 36, item 3: the entries of a PDF's reference list run on in a paragraph of thousands of characters,
    too long for one entry: they are cut into entries and the list is tagged at ingest (the answer layer no
    longer decides references)."""
    from rag.ingest.roles import joined_entries

    spans = joined_entries(JOINED)
    assert [JOINED[a:b][:12] for a, b in spans] == ["1. Nielsen, ", "2. Ladd, T. ", "3. Blatt, R.", "4. Monroe, C"]
    body = "# Micromotion\n\nThe ions sit in a planar crystal.\n\n"
    (role, text), = _roles(body + JOINED + "\n\nAcknowledgments\n\nWe thank T. Choi.\n")
    assert role == TextRole.REFERENCES and text == JOINED
    # under a References heading, a section of joined paragraphs reads as a reference list
    first, second = JOINED[:JOINED.index(" 3. ")], JOINED[JOINED.index("3. "):]
    assert reads_as_references(f"\n\n{first}\n\n{second}\n")


def test_a_numbered_procedure_in_one_paragraph_is_body_text():
    steps = ("1. Open the settings page of your account. 2. Choose Keys, then Add key. 3. Paste the public key "
             "and save it. 4. Push again from the terminal.")
    from rag.ingest.roles import joined_entries

    assert joined_entries(steps) == []
    assert _roles("# Keys\n\n" + steps + "\n") == []
