"""Layers point one way (issue 23): every import of the project's own modules goes down the stack, never up.

The order, lowest first (a module may import its own package and anything in a LOWER rank):

======  ==============================================================================================
rank    packages
======  ==============================================================================================
0       the ground floor: ``rag`` itself, ``rag.types``, ``rag.text``, ``rag.tokens``, ``rag.language``,
        ``rag.question``, ``rag.settings``, ``rag.errors``, ``rag.models``, ``rag.collections``, ``rag.access``,
        ``rag.served``
1       ``rag.ingest`` (bytes -> Document -> chunks) and ``rag.index`` (embed, dense, BM25, fusion, rerank):
        side by side, neither imports the other
2       ``rag.store`` (SQLite, index files, the ingest path: calls ingest and index, downwards)
3       ``rag.answer`` (gate, cite, generate, check)
4       ``rag.evaluation`` (recall, sweeps, benchmarks)
5       ``rag.api`` (the HTTP API and the MCP server: on top of answer, under the command that serves it)
6       ``rag.cli`` (the command line, ``rag.__main__``)
top     ``ui``, ``app_pages/``, ``app.py`` (Streamlit): ``rag`` never imports them
======  ==============================================================================================

Inside ``rag.ingest`` and ``rag.answer`` the wide floors are split by what they do (issue 36, item 5): the readers'
families ``rag.ingest.pdf``, ``rag.ingest.office`` and ``rag.ingest.web``, and ``rag.answer.gate`` (stage 7) and
``rag.answer.check`` (stage 9). :data:`SUBFLOORS` pins them, and which of them may import which (:data:`SIDEWAYS`).

Every import counts: top-level, function-local and ``TYPE_CHECKING`` ones alike. And no module of ``rag`` is in an
import circle, a type-only one or one closed by an import inside a function included (issue 36): :func:`import_cycles`
follows every import between the modules themselves. The scan reads the source
(``ast``), so it needs no import to succeed and names the file and line of each climbing import.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

GROUND = {"types", "text", "tokens", "language", "question", "settings", "errors", "models", "collections", "access",
          "served"}
RANK = {"ground": 0, "ingest": 1, "index": 1, "store": 2, "answer": 3, "evaluation": 4, "api": 5, "cli": 6}
SUBPACKAGES = {"ingest", "index", "store", "answer", "evaluation", "api", "cli"}
#: The sub-floors of a floor (issue 36, item 5): siblings, none imports another unless :data:`SIDEWAYS` names it.
SUBFLOORS = {"ingest": {"pdf", "office", "web"}, "answer": {"gate", "check"}}
#: ``(importer, imported)`` sub-floors and why: the shared pieces that live in one family and another reads.
SIDEWAYS = {
    ("office", "pdf"): "the Strict OOXML reader counts words as the PDF audit does (rag.ingest.pdf.audit.words)",
    ("web", "office"): "what the CSS hides is told in office_hidden's Hidden record (the one record of hidden text)",
    ("check", "gate"): "a judged answer's confidence reads the gate's decision (rag.answer.check.judged.Featured)",
}


def layer(module: str) -> str | None:
    """The layer of a dotted module name: a :data:`RANK` key, ``"ui"`` for the Streamlit side, ``None`` if not ours."""
    parts = module.split(".")
    if parts[0] in ("ui", "app_pages", "app"):
        return "ui"
    if parts[0] != "rag":
        return None
    if len(parts) == 1 or parts[1] in GROUND:
        return "ground"
    if parts[1] == "__main__":
        return "cli"
    return parts[1] if parts[1] in SUBPACKAGES else "ground"


def module_name(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def imported(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, dotted name)`` of every absolute import; ``from a.b import c`` gives ``a.b.c`` when ``a.b`` is a
    package of ours (``c`` may be a module), else ``a.b``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            pkg = node.module.split(".")
            if pkg[0] == "rag" and (len(pkg) == 1 or (len(pkg) == 2 and pkg[1] in SUBPACKAGES)):
                out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, node.module))
    return out


def climbing_imports() -> list[str]:
    bad = []
    for path in sorted((ROOT / "rag").rglob("*.py")):
        here = layer(module_name(path))
        for line, name in imported(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            there = layer(name)
            if there is None or there == here:
                continue
            if there == "ui" or RANK[there] >= RANK[here]:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {here} imports {name} ({there})")
    return bad


def test_layers_point_one_way():
    assert climbing_imports() == []


def test_the_scan_sees_every_kind_of_import():
    tree = ast.parse("from rag.store.store import Store\nfrom rag import language\nimport ui.format\n"
                     "def f():\n    from rag.answer import pipeline\n")
    assert sorted(n for _, n in imported(tree)) == ["rag.answer.pipeline", "rag.language", "rag.store.store", "ui.format"]
    assert [layer(n) for n in ("rag.store.store", "rag.language", "ui.format", "rag.answer.pipeline", "numpy")] == [
        "store", "ground", "ui", "answer", None]
    # ingest and index are side by side: an import between them climbs as surely as one into answer
    assert RANK["ingest"] == RANK["index"] < RANK["store"] < RANK["answer"] < RANK["evaluation"] < RANK["api"] < RANK["cli"]


def subfloor(module: str) -> str | None:
    """The sub-floor of a dotted module name (``rag.ingest.pdf.layout`` -> ``pdf``), ``None`` outside them."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[0] == "rag" and parts[2] in SUBFLOORS.get(parts[1], ()):
        return parts[2]
    return None


def sideways_imports() -> list[str]:
    bad = []
    for path in sorted((ROOT / "rag").rglob("*.py")):
        here = subfloor(module_name(path))
        if here is None:
            continue
        for line, name in imported(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            there = subfloor(name)
            if there not in (None, here) and (here, there) not in SIDEWAYS:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {here} imports {name} ({there})")
    return bad


def test_sub_floors_do_not_import_each_other():
    assert sideways_imports() == []
    assert subfloor("rag.ingest.pdf.layout") == "pdf" and subfloor("rag.ingest.pdf") == "pdf"
    assert subfloor("rag.ingest.extract") is None and subfloor("rag.answer.check.verdict") == "check"


def test_every_sub_floor_is_pinned():
    for floor, subs in SUBFLOORS.items():
        found = {p.name for p in (ROOT / "rag" / floor).iterdir() if (p / "__init__.py").is_file()}
        assert found == subs, f"rag/{floor}/: give a new sub-package its place in tests/test_layers.py"
    assert {s for pair in SIDEWAYS for s in pair} <= set().union(*SUBFLOORS.values())


def module_graph(root: Path = ROOT, *, lazy: bool = True) -> dict[str, set[str]]:
    """Module -> the modules of ``rag`` it imports (``from a import b`` is ``a.b`` when that is a module); ``lazy``
    False leaves out imports inside functions (module level and ``if TYPE_CHECKING:`` blocks only)."""
    paths = {".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): p
             for p in (root / "rag").rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        if lazy:
            nodes = list(ast.walk(tree))
        else:
            nodes = list(tree.body) + [n for top in tree.body if isinstance(top, ast.If) for n in top.body]
        deps = set()
        for node in nodes:
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in paths}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module in paths:
                deps |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in paths else node.module
                         for a in node.names}
        graph[name] = deps - {name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The import circles of ``graph``: its strongly connected components of two modules or more (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_type_only_ones_included():
    assert import_cycles(module_graph(lazy=False)) == []
    assert import_cycles(module_graph()) == []  # nor one closed by an import inside a function


def test_the_circle_scan_sees_a_type_only_circle(tmp_path):
    pkg = tmp_path / "rag"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from rag.b import B\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rag.a import A\n")
    (pkg / "c.py").write_text("def f():\n    from rag import a\n")
    (pkg / "d.py").write_text("from rag import c\n")
    assert import_cycles(module_graph(tmp_path, lazy=False)) == [frozenset({"rag.a", "rag.b"})]
    (pkg / "a.py").write_text("from rag.b import B\nfrom rag import d\n")
    assert import_cycles(module_graph(tmp_path, lazy=False)) == [frozenset({"rag.a", "rag.b"})]
    assert set(import_cycles(module_graph(tmp_path))) == {frozenset({"rag.a", "rag.b", "rag.c", "rag.d"})}


def test_every_subpackage_has_a_rank():
    found = {p.name for p in (ROOT / "rag").iterdir() if (p / "__init__.py").is_file()}
    assert found == SUBPACKAGES
    loose = {p.stem for p in (ROOT / "rag").glob("*.py")} - {"__init__", "__main__"}
    assert loose == GROUND, "a new module at rag/'s top level: give it a layer in tests/test_layers.py"
