"""rag.served (issue 26, item 4): served copies as capabilities per collection and publication, withdrawn with the
document, swept when no store holds them."""

from __future__ import annotations

import hashlib
import json
import stat
import threading

import pytest

from rag.served import RECORD, SERVED_PATH, ServedCopies, sweep

PDF = b"%PDF-1.4\n% a stand-in for a stored original\n"


def _original(store, data: bytes = PDF) -> tuple[str, object]:
    doc_id = hashlib.sha256(data).hexdigest()
    (store / "files").mkdir(parents=True, exist_ok=True)
    src = store / "files" / doc_id
    src.write_bytes(data)
    return doc_id, src


def test_a_copy_is_served_under_unguessable_names_per_collection(tmp_path):
    static = tmp_path / "static"
    a, b = tmp_path / "a", tmp_path / "b"
    doc_id, src_a = _original(a)
    _, src_b = _original(b)
    path_a = ServedCopies(a).publish(doc_id, src_a, static)
    path_b = ServedCopies(b).publish(doc_id, src_b, static)
    assert SERVED_PATH.match(path_a) and SERVED_PATH.match(path_b)
    assert doc_id[:16] not in path_a and doc_id[:16] not in path_b  # the content hash gives nothing away
    assert path_a.split("/")[0] != path_b.split("/")[0] and path_a.split("/")[1] != path_b.split("/")[1]
    assert (static / path_a).read_bytes() == PDF and not (static / path_a).is_symlink()
    assert ServedCopies(a).publish(doc_id, src_a, static) == path_a  # idempotent while published
    (static / path_a).unlink()
    assert ServedCopies(a).publish(doc_id, src_a, static) == path_a and (static / path_a).is_file()  # rewritten
    rec = a / RECORD
    assert stat.S_IMODE(rec.stat().st_mode) == 0o600  # the record holds capabilities
    assert json.loads(rec.read_text())["docs"] == {doc_id: path_a.split("/")[1][:-4]}
    assert list(static.glob(".*")) == [] and list((static / path_a.split("/")[0]).glob(".*")) == []


def test_withdraw_removes_the_copy_and_a_new_publication_gets_a_new_url(tmp_path):
    static, store = tmp_path / "static", tmp_path / "s"
    doc_id, src = _original(store)
    first = ServedCopies(store).publish(doc_id, src, static)
    assert ServedCopies(store).withdraw(doc_id) == 1
    assert not (static / first).exists() and ServedCopies(store).record().docs == {}
    assert ServedCopies(store).withdraw(doc_id) == 0
    again = ServedCopies(store).publish(doc_id, src, static)
    assert again != first and again.split("/")[0] == first.split("/")[0]  # same collection, new publication


def test_copies_in_every_static_folder_written_go(tmp_path):
    store = tmp_path / "s"
    doc_id, src = _original(store)
    one, two = tmp_path / "one", tmp_path / "two"
    p = ServedCopies(store).publish(doc_id, src, one)
    assert ServedCopies(store).publish(doc_id, src, two) == p
    assert ServedCopies(store).withdraw(doc_id) == 2
    assert not (one / p).exists() and not (two / p).exists()


def test_a_removed_original_is_never_published(tmp_path):
    store = tmp_path / "s"
    doc_id, src = _original(store)
    src.unlink()
    with pytest.raises(FileNotFoundError, match="not in the store"):
        ServedCopies(store).publish(doc_id, src, tmp_path / "static")
    assert ServedCopies(store).record() is None
    with pytest.raises(ValueError, match="not a document id"):
        ServedCopies(store).publish("../../etc/passwd", src, tmp_path / "static")


def test_publish_and_withdraw_racing_leave_no_copy(tmp_path):
    """Many threads publish while one removes the original and withdraws (as Store.delete does): once both are
    done, no copy is left and the record names nothing."""
    static, store = tmp_path / "static", tmp_path / "s"
    doc_id, src = _original(store)
    served = ServedCopies(store)
    served.publish(doc_id, src, static)
    errors = []

    def publish():
        for _ in range(30):
            try:
                served.publish(doc_id, src, static)
            except FileNotFoundError:
                pass
            except Exception as e:  # noqa: BLE001
                errors.append(e)

    threads = [threading.Thread(target=publish) for _ in range(4)]
    for t in threads:
        t.start()
    src.unlink()
    served.withdraw(doc_id)
    for t in threads:
        t.join()
    assert not errors
    assert served.record().docs == {} and [p for p in static.rglob("*") if p.is_file()] == []


def test_withdraw_all_removes_the_collection_folder_and_record(tmp_path):
    static, store = tmp_path / "static", tmp_path / "s"
    ids = []
    for i in range(3):
        doc_id, src = _original(store, PDF + bytes([i]))
        ServedCopies(store).publish(doc_id, src, static)
        ids.append(doc_id)
    key = ServedCopies(store).record().key
    assert ServedCopies(store).withdraw_all() == 3
    assert not (static / key).exists() and not (store / RECORD).exists()


def test_sweep_removes_what_no_store_holds_and_nothing_else(tmp_path):
    static = tmp_path / "static"
    kept, gone = tmp_path / "kept", tmp_path / "gone"
    keep_id, src = _original(kept, PDF + b"keep")
    drop_id, src2 = _original(kept, PDF + b"drop")
    keep_path = ServedCopies(kept).publish(keep_id, src, static)
    drop_path = ServedCopies(kept).publish(drop_id, src2, static)
    other_id, src3 = _original(gone)
    other_path = ServedCopies(gone).publish(other_id, src3, static)
    legacy = static / f"{keep_id}.pdf"  # the shared layout before issue 26
    legacy.write_bytes(PDF)
    stray = static / keep_path.split("/")[0] / ("0" * 32 + ".pdf")
    stray.write_bytes(PDF)
    own = static / "logo.png"  # the app's own static file
    own.write_bytes(b"png")
    unreadable = tmp_path / "unreadable"
    u_id, src4 = _original(unreadable)
    u_path = ServedCopies(unreadable).publish(u_id, src4, static)

    held = {kept: {keep_id}, unreadable: None}
    removed = sweep(static, [kept, unreadable], lambda p: held[p])  # `gone`'s data folder is not listed any more
    assert removed == 4  # drop's copy, the stray file, gone's folder, the legacy copy; nothing of `unreadable`
    assert (static / keep_path).is_file() and own.is_file() and (static / u_path).is_file()
    assert not (static / drop_path).exists() and not stray.exists() and not legacy.exists()
    assert not (static / other_path.split("/")[0]).exists()
    assert ServedCopies(kept).record().docs == {keep_id: keep_path.split("/")[1][:-4]}
    assert sweep(static, [kept, unreadable], lambda p: held[p]) == 0
    assert sweep(tmp_path / "no-static-yet", [kept], lambda p: {keep_id}) == 0
