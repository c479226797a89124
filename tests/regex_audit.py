"""The regular expressions of ``rag/`` against adversarial input (issue 35, item 1; rule: ``docs/patterns.md``).

Two halves:

* :func:`collect` finds every pattern: the compiled ``re.Pattern`` objects the modules of ``rag/`` hold
  (module globals, one level into tuples, lists, sets and dicts, and class attributes), and the string
  literals handed to ``re.search``/``re.sub``/... inside functions (read from the source with :mod:`ast`).
  :func:`dynamic_calls` lists the calls whose pattern is neither (built at run time): each must be named,
  with the reason it is safe, in the test's allow-list.
* :func:`adversarial` builds, for one pattern, the strings most likely to make a backtracking engine
  explode: long runs (10,000 characters) of each of the pattern's own atoms, of each pair of neighbouring
  atoms, of the whole atom sequence, of the usual suspects (dot leaders, spaces, dashes, digits, letters,
  brackets, mixed scripts), each with and without a character the pattern cannot match at the end (the
  "closing token" it expects, missing). :func:`worst_ms` runs ``finditer`` (a search from every position)
  and ``fullmatch`` over them and returns the slowest CPU time.

Run as a program (``python tests/regex_audit.py FIRST LAST``) it checks patterns ``FIRST..LAST-1`` of
:func:`collect` and prints one JSON line per pattern *before* (``start``) and after (``done``) it, so that the
parent (``tests/test_patterns.py``) can kill a child stuck on one pattern and name it.
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

try:  # Python 3.11+
    from re import _constants as sre_c  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants as sre_c  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
RAG = ROOT / "rag"

#: Length of every adversarial string (characters), as issue 35 asks.
LENGTH = 10_000
#: ``re`` calls whose first argument is the pattern.
RE_CALLS = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
#: Strings every pattern meets, whatever its atoms: the shapes of real hostile lines.
GENERIC = (".", ". ", " .", "-", " ", "\t", "\n", "a", "A", "1", "1.", "a ", "a.", "a-", "(", ")", "[", "]", "((",
           "[[", "<", "</", "\\", "*", "_", "#", "|", "aé中", "é", "\u00a0", "\u2026", "» ", "http://", "a,", "1,")
#: What ends a string so that a pattern expecting something else there fails (and backtracks).
ENDINGS = ("", "\x00", "!", "\n")


@dataclass(frozen=True)
class Found:
    """One pattern of ``rag/``: ``where`` is ``module:name`` (compiled at import) or ``path:line`` (a literal)."""

    where: str
    pattern: str
    flags: int


def _modules() -> list[str]:
    names = ["rag"]
    for info in pkgutil.walk_packages([str(RAG)], prefix="rag."):
        if not info.name.endswith("__main__"):
            names.append(info.name)
    return sorted(names)


def _patterns_in(value, depth: int = 0):
    if isinstance(value, re.Pattern):
        yield value
    elif depth < 2 and isinstance(value, (tuple, list, set, frozenset)):
        for v in value:
            yield from _patterns_in(v, depth + 1)
    elif depth < 2 and isinstance(value, dict):
        for v in list(value.keys()) + list(value.values()):
            yield from _patterns_in(v, depth + 1)


def _flag_value(node: ast.expr) -> int | None:
    """The value of a flags expression made of ``re.X`` names and ``|``; ``None`` when it is anything else."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
        v = getattr(re, node.attr, None)
        return int(v) if isinstance(v, (int, re.RegexFlag)) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        a, b = _flag_value(node.left), _flag_value(node.right)
        return None if a is None or b is None else a | b
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    return None


def _re_calls(tree: ast.AST):
    """``(call, function name, pattern node, flags node, in_function)`` for each ``re.<call>(...)``."""
    def walk(node, in_func: bool):
        for child in ast.iter_child_nodes(node):
            inner = in_func or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
                    and isinstance(child.func.value, ast.Name) and child.func.value.id == "re"
                    and child.func.attr in RE_CALLS and child.args):
                flags = next((k.value for k in child.keywords if k.arg == "flags"), None)
                pos = 1 if child.func.attr == "compile" else {"sub": 3, "subn": 3, "split": 2}.get(child.func.attr, 2)
                if flags is None and len(child.args) > pos:
                    flags = child.args[pos]
                yield child, child.func.attr, child.args[0], flags, inner
            yield from walk(child, inner)
    yield from walk(tree, False)


def _function_of(tree: ast.AST, lineno: int) -> str:
    best = "<module>"
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= lineno <= (node.end_lineno or 0):
            best = node.name
    return best


def _sources():
    for path in sorted(RAG.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def collect() -> list[Found]:
    """Every pattern of ``rag/`` (see the module doc), sorted, without repeats of the same pattern and flags."""
    seen: dict[tuple[str, int], Found] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for attr, value in sorted(vars(module).items()):
            candidates = list(_patterns_in(value))
            if isinstance(value, type) and value.__module__ == name:
                for cvalue in vars(value).values():
                    candidates += list(_patterns_in(cvalue))
            for p in candidates:
                seen.setdefault((p.pattern if isinstance(p.pattern, str) else repr(p.pattern), p.flags),
                                Found(f"{name}:{attr}", p.pattern, p.flags))
    for path, tree in _sources():
        for call, _, pat, flags, _ in _re_calls(tree):
            if isinstance(pat, ast.Constant) and isinstance(pat.value, str):
                fv = 0 if flags is None else _flag_value(flags)
                compiled = re.compile(pat.value, fv or 0)
                key = (compiled.pattern, compiled.flags)
                seen.setdefault(key, Found(f"{path.relative_to(ROOT)}:{call.lineno}", pat.value, compiled.flags))
    return sorted(seen.values(), key=lambda f: (f.where, f.pattern))


def dynamic_calls() -> list[str]:
    """``path:function`` of each ``re`` call inside a function whose pattern is not a string literal (a
    pattern built at run time, which :func:`collect` cannot see), sorted and without repeats."""
    out: set[str] = set()
    for path, tree in _sources():
        for call, _, pat, _, in_func in _re_calls(tree):
            literal = isinstance(pat, ast.Constant) and isinstance(pat.value, str)
            if in_func and not literal:
                out.add(f"{path.relative_to(ROOT)}:{_function_of(tree, call.lineno)}")
    return sorted(out)


# --------------------------------------------------------------------------- adversarial strings

_CATEGORY_CHAR = {
    sre_c.CATEGORY_DIGIT: "7", sre_c.CATEGORY_NOT_DIGIT: "a", sre_c.CATEGORY_SPACE: " ",
    sre_c.CATEGORY_NOT_SPACE: "a", sre_c.CATEGORY_WORD: "a", sre_c.CATEGORY_NOT_WORD: ".",
    sre_c.CATEGORY_LINEBREAK: "\n", sre_c.CATEGORY_NOT_LINEBREAK: "a",
}
_PROBES = "a .-1(\n#A_é"


def _in_char(items, compiled: "_InProbe") -> str | None:
    negate = any(op is sre_c.NEGATE for op, _ in items)
    if negate:
        return next((c for c in _PROBES if compiled.search(c) is None), None) or "a"
    for op, av in items:
        if op is sre_c.LITERAL:
            return chr(av)
        if op is sre_c.RANGE:
            return chr(av[0])
        if op is sre_c.CATEGORY:
            return _CATEGORY_CHAR.get(av, "a")
    return None


def atoms(pattern: str, flags: int) -> list[str]:
    """The characters a pattern is made of, in its order, without repeats: one per literal, class and ``.``."""
    out: list[str] = []
    try:
        tree = sre_parse.parse(pattern, flags & ~re.DEBUG & ~re.UNICODE & ~re.ASCII)
    except re.error:
        return out

    def add(c: str | None) -> None:
        if c and c not in out:
            out.append(c)

    def walk(seq) -> None:
        for op, av in seq:
            if op is sre_c.LITERAL:
                add(chr(av))
            elif op is sre_c.NOT_LITERAL:
                add("a" if av != ord("a") else "b")
            elif op is sre_c.ANY:
                add("a")
            elif op is sre_c.IN:
                add(_in_char(av, _InProbe(av)))
            elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
                walk(av[2])
            elif op is sre_c.SUBPATTERN:
                walk(av[-1])
            elif op is sre_c.BRANCH:
                for branch in av[1]:
                    walk(branch)
            elif op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
                walk(av[1])
            elif op is getattr(sre_c, "ATOMIC_GROUP", None):
                walk(av)
            elif op is sre_c.GROUPREF_EXISTS:
                walk(av[1])
                if av[2]:
                    walk(av[2])

    walk(tree)
    return out


class _InProbe:
    """A stand-in pattern for a parsed ``[...]`` class: ``search(c)`` says whether ``c`` is in it."""

    def __init__(self, items):
        self.items = items

    def search(self, c: str):
        hit = False
        for op, av in self.items:
            if op is sre_c.LITERAL and ord(c) == av:
                hit = True
            elif op is sre_c.RANGE and av[0] <= ord(c) <= av[1]:
                hit = True
            elif op is sre_c.CATEGORY:
                cat = {sre_c.CATEGORY_DIGIT: c.isdigit(), sre_c.CATEGORY_NOT_DIGIT: not c.isdigit(),
                       sre_c.CATEGORY_SPACE: c.isspace(), sre_c.CATEGORY_NOT_SPACE: not c.isspace(),
                       sre_c.CATEGORY_WORD: c.isalnum() or c == "_",
                       sre_c.CATEGORY_NOT_WORD: not (c.isalnum() or c == "_")}
                hit = hit or cat.get(av, False)
        negate = any(op is sre_c.NEGATE for op, _ in self.items)
        return (not hit) if negate else (hit or None)


def _fill(unit: str, n: int = LENGTH) -> str:
    return (unit * (n // max(1, len(unit)) + 1))[:n]


def adversarial(pattern: str, flags: int, n: int = LENGTH) -> list[str]:
    """The adversarial strings for one pattern (see the module doc), each ``n`` characters long."""
    a = atoms(pattern, flags)[:20]
    units: list[str] = list(dict.fromkeys(a + list(GENERIC)))
    units += [x + y for x, y in zip(a, a[1:])]
    if len(a) > 2:
        units.append("".join(a))
    out: list[str] = []
    for u in dict.fromkeys(units):
        for end in ENDINGS:
            out.append(_fill(u, n - len(end)) + end)
    return out


def worst_ms(pattern: str, flags: int, n: int = LENGTH, stop_ms: float | None = None) -> tuple[float, str]:
    """The slowest CPU time (ms) of ``finditer`` and ``fullmatch`` of the pattern over its adversarial
    strings, and a short description of the string that took it; stops at the first string over ``stop_ms``."""
    p = re.compile(pattern, flags)
    worst, what = 0.0, ""
    strings = adversarial(pattern.decode("latin-1") if isinstance(pattern, bytes) else pattern, flags, n)
    if isinstance(pattern, bytes):
        strings = [s.encode("utf-8")[:n] for s in strings]
    for s in strings:
        for op in ("finditer", "fullmatch"):
            t = time.process_time()
            if op == "finditer":
                for _ in p.finditer(s):
                    pass
            else:
                p.fullmatch(s)
            ms = (time.process_time() - t) * 1000
            if ms > worst:
                worst, what = ms, f"{op} on {s[:12]!r}...{s[-3:]!r}"
            if stop_ms is not None and worst > stop_ms:
                return worst, what
    return worst, what


def _main(first: int, last: int) -> None:  # pragma: no cover - the child of tests/test_patterns.py
    found = collect()
    for i in range(first, min(last, len(found))):
        f = found[i]
        print(json.dumps({"i": i, "start": f.where}), flush=True)
        ms, what = worst_ms(f.pattern, f.flags, stop_ms=float(sys.argv[3]) if len(sys.argv) > 3 else None)
        print(json.dumps({"i": i, "done": f.where, "ms": round(ms, 2), "what": what}), flush=True)


if __name__ == "__main__":  # pragma: no cover
    sys.path.insert(0, str(ROOT))
    _main(int(sys.argv[1]), int(sys.argv[2]))
