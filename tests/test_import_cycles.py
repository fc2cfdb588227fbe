"""No import circle between cudadoctor's modules (issue 23, "the house").

The import graph is read from the source with ``ast``: every ``import``/``from ... import`` of a
cudadoctor module, at module level AND inside functions (a lazy import is still a dependency: it only
hides the circle until the function runs), except under ``if TYPE_CHECKING:``. An edge to the
module's own parent packages is left out (Python imports those first anyway). Circles are the
strongly connected components of more than one module. A circle not in ``KNOWN`` fails the test, and
so does a ``KNOWN`` circle that is gone (shrink the list when one is broken).
"""

from __future__ import annotations

import ast
import pathlib
from typing import Dict, List, Optional, Set

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = ROOT / "cudadoctor"

#: Circles still to break (each with how). Empty: the three of issue 23 are broken (fleet reads, fleet_summary
#: analyses, render/fleet renders; checks/_fixes plans on top of checks/_installer; model below errortext, whose
#: for_codes lives in match, above signatures and extract). Do not add to this list: break the new circle instead.
KNOWN: List[Set[str]] = []


def modules() -> Dict[str, pathlib.Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def graph(mods: Dict[str, pathlib.Path]) -> Dict[str, Set[str]]:
    def resolve(name: str) -> Optional[str]:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    g: Dict[str, Set[str]] = {}
    for m, path in mods.items():
        deps: Set[str] = set()
        base = m.split(".") if path.name == "__init__.py" else m.split(".")[:-1]

        def visit(nodes: List[ast.stmt]) -> None:
            for n in nodes:
                if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
                    visit(n.orelse)
                    continue
                if isinstance(n, ast.Import):
                    deps.update(r for r in (resolve(a.name) for a in n.names) if r)
                elif isinstance(n, ast.ImportFrom):
                    mod = n.module or ""
                    if n.level:
                        mod = ".".join(base[: len(base) - (n.level - 1)] + ([n.module] if n.module else []))
                    for a in n.names:
                        r = f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else resolve(mod)
                        if r:
                            deps.add(r)
                for child in ast.iter_child_nodes(n):
                    if isinstance(child, ast.stmt):
                        visit([child])
                    elif isinstance(child, ast.ExceptHandler):
                        visit(child.body)

        visit(ast.parse(path.read_text(encoding="utf-8")).body)
        g[m] = {d for d in deps if d != m and not m.startswith(d + ".")}
    return g


def circles(g: Dict[str, Set[str]]) -> List[Set[str]]:
    """Tarjan's strongly connected components of more than one module (iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[Set[str]] = []
    for start in sorted(g):
        if start in index:
            continue
        work = [(start, iter(sorted(g[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.add(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def test_the_graph_sees_real_imports():
    g = graph(modules())
    # module level, relative: devices.py imports .facts; lazy, in a function: api.check imports .report
    assert "cudadoctor.facts" in g["cudadoctor.devices"]
    assert "cudadoctor.report" in g["cudadoctor.api"]
    assert "cudadoctor.render.markdown" in g["cudadoctor.render"]  # from a package's __init__


def test_the_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_new_import_circle():
    found = circles(graph(modules()))
    new = [sorted(c) for c in found if c not in KNOWN]
    gone = [sorted(c) for c in KNOWN if c not in found]
    assert not new, f"new import circle(s): {new}"
    assert not gone, f"circle(s) in KNOWN are gone (or changed): remove them from KNOWN: {gone}"


def test_the_library_does_not_import_the_cli():
    g = graph(modules())
    below = [
        m
        for m in g
        if not m.startswith(
            ("cudadoctor.commands", "cudadoctor.cli", "cudadoctor.entry", "cudadoctor.__main__", "cudadoctor.bot")
        )
    ]
    bad = {m: sorted(d for d in g[m] if d.startswith("cudadoctor.commands") or d == "cudadoctor.cli") for m in below}
    assert not {m: d for m, d in bad.items() if d}
