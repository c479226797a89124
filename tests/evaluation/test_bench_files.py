"""``rag bench files`` (issue 35, item 6b): every file through the whole indexing path, each ending ready or
failed with its reason, its seconds, memory and the stage of a failure."""

from __future__ import annotations

from click.testing import CliRunner

from rag.cli.main import main
from rag.evaluation.bench.files import run_files


def test_each_file_ends_with_its_outcome_reason_and_stage(tmp_path, hash_embedder):
    folder = tmp_path / "inputs"
    folder.mkdir()
    (folder / "guide.md").write_text("# Guide\n\nThe widget ships in March. It costs twelve euros.\n")
    (folder / "empty.txt").write_text("   \n")
    (folder / "fake.pdf").write_bytes(b"%PDF-1.7 not really")
    lines: list[str] = []
    got = run_files([folder], lines.append, embedder=hash_embedder)
    by_name = {r["file"].rsplit("/", 1)[-1]: r for r in got["files"]}
    assert by_name["guide.md"]["outcome"] == "ready" and by_name["guide.md"]["stage"] == ""
    assert by_name["empty.txt"]["outcome"] == "failed" and by_name["empty.txt"]["reason"]
    assert by_name["fake.pdf"]["outcome"] == "failed" and by_name["fake.pdf"]["stage"]
    assert got["hung"] == 0 and sum(got["outcomes"].values()) == 3
    assert any("/inputs/guide.md | ready |" in line for line in lines) and "hung: 0" in lines[-1]


def test_without_folders_it_says_so_and_exits_zero(tmp_path):
    r = CliRunner().invoke(main, ["bench", "files", "--shared", str(tmp_path / "nowhere")])
    assert r.exit_code == 0 and "skipped: no folders to index" in r.output
