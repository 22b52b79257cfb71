"""Every import between medvqa's own modules, read from the source with `ast`.

setup.py maps `core/` onto `medvqa.core` (and `cli/`, `adapters/`), so import tools that walk the
installed package do not see these folders; this reads the files where they are. Every import
counts: at the top of a module, inside a function (kept lazy for start-up speed) and under
`TYPE_CHECKING` alike, since each one ties the two modules together.

    python -m tests.importgraph            # every arrow, `importer -> imported`
    python -m tests.importgraph --cycles   # the import circles, if any
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the package each top-level folder installs as (setup.py's ROOTS)
FOLDERS = {"medvqa": "medvqa", "core": "medvqa.core", "adapters": "medvqa.adapters", "cli": "medvqa.cli"}


@dataclass(frozen=True)
class Arrow:
    importer: str
    imported: str
    path: Path
    line: int


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    parts = [FOLDERS[rel.parts[0]], *rel.parts[1:]]
    parts[-1] = parts[-1].removesuffix(".py")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" not in path.parts:
                found[module_name(path)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module `name` starts with (`medvqa.core.items.Item` -> `medvqa.core.items`)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def arrows() -> list[Arrow]:
    known = modules()
    found = []
    for module, path in known.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                # `from pkg import mod` imports the module pkg.mod when there is one
                targets = [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                imported = _resolve(target, known)
                if imported and imported != module and not module.startswith(imported + "."):
                    found.append(Arrow(module, imported, path, node.lineno))
    return found


def cycles(edges: list[Arrow]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for arrow in edges:
        graph.setdefault(arrow.importer, set()).add(arrow.imported)
        graph.setdefault(arrow.imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


if __name__ == "__main__":
    edges = arrows()
    if "--cycles" in sys.argv:
        for component in cycles(edges):
            print(len(component), " ".join(component))
    else:
        for arrow in sorted(edges, key=lambda a: (a.importer, a.imported)):
            print(f"{arrow.importer} -> {arrow.imported}  ({arrow.path.relative_to(ROOT)}:{arrow.line})")
