"""The package layout (issue 12): every module imports on its own, no import cycle, the library never imports streamlit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Imports each module with the project's own modules purged from ``sys.modules`` before it, so an import cycle
#: (which only fails for some entry points) shows up; third-party modules stay cached to keep it quick.
_PROBE = r"""
import importlib, pkgutil, sys, traceback
import rag
names = ["rag"] + [m.name for m in pkgutil.walk_packages(rag.__path__, "rag.")] + ["ui.format", "ui.services", "ui.chat"]
failed = []
for name in names:
    for k in [k for k in sys.modules if k == "rag" or k.startswith(("rag.", "ui"))]:
        del sys.modules[k]
    try:
        importlib.import_module(name)
    except Exception:
        failed.append(name + ": " + traceback.format_exc().strip().splitlines()[-1])
print("\n".join(failed))
print("MODULES", len(names))
"""


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_every_module_imports_first_in_a_fresh_interpreter():
    r = _run(_PROBE)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[-1].startswith("MODULES") and int(lines[-1].split()[1]) > 30
    assert lines[:-1] == [], "modules that fail to import first (import cycle or error):\n" + "\n".join(lines[:-1])


def test_library_never_imports_streamlit():
    code = (
        "import importlib, pkgutil, sys\nimport rag\n"
        "for m in pkgutil.walk_packages(rag.__path__, 'rag.'):\n    importlib.import_module(m.name)\n"
        "print('streamlit' in sys.modules)"
    )
    r = _run(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_subpackages_name_the_pipeline_stages():
    subpackages = sorted(p.name for p in (ROOT / "rag").iterdir() if (p / "__init__.py").is_file())
    assert subpackages == ["answer", "api", "cli", "evaluation", "index", "ingest", "store"]
    for name in subpackages:
        doc = (ROOT / "rag" / name / "__init__.py").read_text()
        assert doc.lstrip().startswith('"""'), f"rag/{name}/__init__.py has no docstring describing the stage"


def test_every_module_is_named_in_its_package_index():
    """Each subpackage's docstring lists its modules (review 2026-12-01, defect 5: answer/ and cli/ had stale
    indexes): a new module is one line there."""
    missing = []
    for init in sorted((ROOT / "rag").rglob("__init__.py")):
        pkg = ".".join(init.parent.relative_to(ROOT).parts)
        doc = init.read_text(encoding="utf-8")
        for mod in sorted(init.parent.glob("*.py")):
            if mod.stem != "__init__" and f"{pkg}.{mod.stem}" not in doc:
                missing.append(f"{pkg}.{mod.stem}")
        for sub in sorted(p for p in init.parent.iterdir() if (p / "__init__.py").is_file()):
            if f"{pkg}.{sub.name}" not in doc:
                missing.append(f"{pkg}.{sub.name} (subpackage)")
    assert missing == [], "modules missing from their package's docstring: " + ", ".join(missing)


def test_readme_layout_table_names_every_module():
    """The README's layout table matches the tree (issue 23): each folder's row names every module in it."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(rag/[a-z/]+/)` \|[^|]*\|(.*)\|$", readme, re.M)}
    folders = ["rag/ingest/", "rag/ingest/pdf/", "rag/ingest/office/", "rag/ingest/web/", "rag/index/", "rag/store/",
               "rag/answer/", "rag/answer/gate/", "rag/answer/check/", "rag/evaluation/", "rag/api/", "rag/cli/"]
    assert set(folders) <= set(rows), sorted(rows)
    missing = [f"{folder}{m.stem}" for folder in folders for m in sorted((ROOT / folder).glob("*.py"))
               if m.stem != "__init__" and f"`{m.stem}`" not in rows[folder]]
    assert missing == [], "modules missing from the README layout table: " + ", ".join(missing)


def test_no_module_of_rag_is_over_500_lines():
    """The guide's rule (issue 23 brought store.py from 678 and bench_scale.py from 657 under it): a module that
    grows past 500 lines splits by concern."""
    long = {str(p.relative_to(ROOT)): n for p in sorted((ROOT / "rag").rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert long == {}, f"modules over 500 lines: {long}"
