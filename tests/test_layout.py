"""The package layout (issue 12): every module imports on its own, no import cycle, the library never imports streamlit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Imports each module with the project's own modules purged from ``sys.modules`` before it, so an import cycle
#: (which only fails for some entry points) shows up; third-party modules stay cached to keep it quick. argv[1]
#: and argv[2] pick every argv[2]-th module from the argv[1]-th (the probe runs as slices that pytest-xdist spreads
#: over its processes: one interpreter for every module was the fast tier's longest test). After the library's
#: modules it says whether any of them imported streamlit (the UI's modules, which do, come after).
_PROBE = r"""
import importlib, pkgutil, sys, traceback
import rag
k, n = int(sys.argv[1]), int(sys.argv[2])
library = (["rag"] + [m.name for m in pkgutil.walk_packages(rag.__path__, "rag.")])[k::n]
ui = ["ui.format", "ui.services", "ui.chat"] if k == n - 1 else []
failed = []
for name in library + ui:
    if ui and name == ui[0]:
        print("STREAMLIT", "streamlit" in sys.modules)
    for m in [m for m in sys.modules if m == "rag" or m.startswith(("rag.", "ui"))]:
        del sys.modules[m]
    try:
        importlib.import_module(name)
    except Exception:
        failed.append(name + ": " + traceback.format_exc().strip().splitlines()[-1])
if not ui:
    print("STREAMLIT", "streamlit" in sys.modules)
print("\n".join(failed))
print("MODULES", len(library + ui))
"""

#: Slices of the probe (two per core of the 2-core machines, so that no slice is the tier's tail).
_SLICES = 4


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("k", range(_SLICES))
def test_every_module_imports_first_in_a_fresh_interpreter_and_the_library_never_imports_streamlit(k):
    r = _run(_PROBE, str(k), str(_SLICES))
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.strip().splitlines() if line]
    assert lines[-1].startswith("MODULES") and int(lines[-1].split()[1]) > 30
    assert lines[0] == "STREAMLIT False", "a module of rag/ imports streamlit"
    assert lines[1:-1] == [], "modules that fail to import first (import cycle or error):\n" + "\n".join(lines[1:-1])


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
