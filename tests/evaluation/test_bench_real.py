"""``rag bench real`` (issue 37): the real-document benchmark on a small generated folder, and on the shared
``corpus/real`` manifest when it is there (skipped cleanly otherwise)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rag.cli.main import main
from rag.evaluation.bench.real import format_rows, manifest, real_dir, run_real, tally


def _folder(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "md").mkdir()
    (tmp_path / "html").mkdir()
    (tmp_path / "md" / "guide.md").write_text("# Guide\n\nThe quick brown fox\njumps over the dog.\n\n"
                                              "| Name | Size |\n|---|---|\n| alpha | 12 |\n", encoding="utf-8")
    (tmp_path / "html" / "page.html").write_text(
        "<html><body><main><h1>Page</h1><p>Visible words of the page.</p></main></body></html>", encoding="utf-8")
    (tmp_path / "html" / "broken.html").write_bytes(b"")
    rows = [
        {"file": "md/guide.md", "format": "md", "needles": [
            {"text": "quick brown fox jumps over", "where": "body"},  # crosses a line break
            {"text": "alpha 12", "where": "table"},  # two cells of a Markdown row
            {"text": "not in the file at all", "where": "footnote"}]},
        {"file": "html/page.html", "format": "html", "needles": [{"text": "Visible words of the page", "where": "body"}]},
        {"file": "html/broken.html", "format": "html", "needles": [{"text": "anything", "where": "title"}]},
    ]
    (tmp_path / "MANIFEST.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return tmp_path


def test_bench_real_counts_needles_by_placement_and_format(tmp_path):
    lines: list[str] = []
    out = run_real(_folder(tmp_path), lines.append)
    assert lines[0].startswith("bench real  ") and "load" in lines[0]
    assert out["placements"] == {"body": (2, 2), "footnote": (0, 1), "table": (1, 1), "title": (0, 1)}
    assert out["by_format"] == {"html": (1, 2), "md": (2, 3)}
    rows = {r["format"]: r for r in out["formats"]}
    assert rows["html"]["files"] == 2 and rows["html"]["refused"] == 1 and rows["md"]["refused"] == 0
    assert rows["md"]["coverage_median"] == 1.0 and rows["md"]["audited"] == 1  # issue 37: Markdown is audited now
    assert {(m["file"], m["where"]) for m in out["misses"]} == {("md/guide.md", "footnote"),
                                                                ("html/broken.html", "title")}
    assert any("refused: html/broken.html: empty file" in ln for ln in lines)
    assert any(ln.startswith("all ") and "3/5" in ln for ln in lines)


def test_bench_real_keeps_only_the_formats_asked(tmp_path):
    out = run_real(_folder(tmp_path), lambda _: None, formats=["MD"])
    assert [r["format"] for r in out["formats"]] == ["md"] and out["by_format"] == {"md": (2, 3)}


def test_format_rows_take_median_and_minimum_of_audited_files():
    from rag.evaluation.bench.real import FileResult

    rs = [FileResult("a.odt", "odt", coverage=0.9), FileResult("b.odt", "odt", coverage=1.0),
          FileResult("c.odt", "odt", coverage=0.99), FileResult("d.odt", "odt")]
    (row,) = format_rows(rs)
    assert row["coverage_median"] == 0.99 and row["coverage_min"] == 0.9 and row["audited"] == 3
    assert tally(rs, lambda r, n: n.where) == {}


def test_cli_writes_json_and_skips_cleanly_without_the_folder(tmp_path):
    folder = _folder(tmp_path / "real")
    r = CliRunner().invoke(main, ["bench", "real", "--folder", str(folder), "--json", str(tmp_path / "o.json")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "o.json").read_text())["by_format"]["md"] == [2, 3]
    r = CliRunner().invoke(main, ["bench", "real", "--shared", str(tmp_path / "nowhere")])
    assert r.exit_code == 0 and "skipped: no real-document corpus at" in r.output


def test_shared_manifest_matches_its_readme(shared_dir):
    folder = real_dir(shared_dir)
    if not (folder / "MANIFEST.jsonl").is_file():
        pytest.skip(f"no real-document corpus at {folder}")
    rows = manifest(folder)
    assert all((folder / r["file"]).is_file() for r in rows)
    assert sum(len(r.get("needles") or ()) for r in rows) >= 200
