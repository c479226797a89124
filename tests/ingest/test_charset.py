"""Which legacy encoding a text file is in (rag/ingest/charset.py): chardet's candidates, mojibake passed over."""

from rag.ingest.charset import badness, guess
from rag.ingest.extract import extract_bytes


def test_a_short_french_note_is_not_read_as_cyrillic():
    # chardet's first candidate is Mac Cyrillic ("Le cafй est trиs bon"): words mixing scripts are mojibake
    note = "Le café est très bon, même à Noël."
    assert guess(note.encode("cp1252")) == "cp1252"
    doc = extract_bytes(note.encode("cp1252"), "note.txt")
    assert doc.canonical.strip() == note and any("decoded as cp1252" in w for w in doc.warnings)


def test_notes_in_other_code_pages_keep_their_letters():
    for text, enc in (("Příliš žluťoučký kůň úpěl ďábelské ódy.", "cp1250"), ("Привет, как дела? Всё хорошо.", "cp1251"),
                      ("Mañana es el cumpleaños de mi señora.", "cp1252"), ("Καλημέρα, τι κάνεις;", "cp1253"),
                      ("Ação e reação: não há solução fácil.", "cp1252")):
        got = guess(text.encode(enc))
        assert got and text.encode(enc).decode(got) == text, (text, got)


def test_a_cyrillic_csv_is_read_as_cyrillic():
    # until 2026-12-07 every guessed single-byte CSV was read as Windows-1252: "Èìÿ" for "Имя"
    rows = "Имя;Город;Сумма\n" + "".join(f"Иван Петров {k};Москва;{k * 100}\n" for k in range(8))
    doc = extract_bytes(rows.encode("cp1251"), "clients.csv")
    assert "| Иван Петров 3 | Москва | 300 |" in doc.canonical


def test_badness_counts_mixed_script_words_and_controls_not_japanese():
    assert badness("Le cafй est trиs bon") == (2, 5)
    assert badness("会議は明日の午後三時です") == (0, 1)
    assert badness("a\x85b") == (1, 2)
    assert badness("ﾄﾅﾌﾁ") == (4, 1)


def test_bytes_the_guessed_encoding_has_no_character_for_are_said_in_the_warning(monkeypatch):
    from rag.ingest import charset, textfile

    monkeypatch.setattr(charset, "guess", lambda data: "cp1251")  # the guess is the detector's; this is the plumbing
    got = textfile.decode("Всё хорошо".encode("cp1251") + b"\x98")
    assert got.text.startswith("Всё хорошо") and "1 byte sequence(s) not valid in it" in got.warning


def test_a_note_that_names_an_office_xml_format_is_still_text():
    note = b'How to read <office:document> files: the namespace is urn:oasis:names:tc:opendocument:xmlns:office:1.0.'
    assert "office:document" in extract_bytes(note, "howto.txt").canonical
