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
    assert subpackages == ["answer", "cli", "evaluation", "index", "ingest", "store"]
    for name in subpackages:
        doc = (ROOT / "rag" / name / "__init__.py").read_text()
        assert doc.lstrip().startswith('"""'), f"rag/{name}/__init__.py has no docstring describing the stage"
