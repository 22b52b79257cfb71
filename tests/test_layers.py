"""medvqa's floors follow the data flow, and this test keeps them (../DESIGN's layout section,
docs/development.md#floors).

Every module sits on one floor and imports only from its own floor or below; no group of
modules imports itself round in a circle. Imports inside functions (kept lazy for start-up
speed) and under `TYPE_CHECKING` count like any other: each one ties the two modules together
(tests/importgraph.py reads them from the source).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests import importgraph

# From the ground up. A module is on the floor of the longest name here that it starts with.
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    (
        "ground",
        (
            "medvqa.core.errors",
            "medvqa.core.items",
            "medvqa.core.conditions",
            "medvqa.core.results",
            "medvqa.core.usage",
            "medvqa.core.jsonl",
            "medvqa.core.validation",
            "medvqa.core.messages",
            "medvqa.core.render",
            "medvqa.core.passlines",
            "medvqa.core.hub",
            "medvqa.core.hookspecs",
            "medvqa.core.stats",
            "medvqa.core.bootstrap",
            "medvqa.core.contrasts",
            "medvqa.core.files",
            "medvqa.core.perturb",
            "medvqa.core.order",
            "medvqa.core.repeats",
            "medvqa.core.headline",
            "medvqa.core.dcq",
            "medvqa.core.cutoffs",
            "medvqa.core.calibration",
            "medvqa.core.abstention",
        ),
    ),
    # pure: a response, an item and conventions in, a score out
    ("scoring", ("medvqa.core.scoring",)),
    # what a plugin provides: a benchmark, a backend
    ("surfaces", ("medvqa.core.benchmark", "medvqa.core.inference.base")),
    ("metrics", ("medvqa.core.metrics", "medvqa.core.repeat_metrics", "medvqa.core.confidence_metrics")),
    ("plugins", ("medvqa.core.plugins",)),
    ("inference", ("medvqa.core.inference",)),
    # a run and its directory: runner, store, saved runs, item loading, eval sets, and the whole-run
    # passes (judge, extract, rescore)
    ("run", ("medvqa.core.run",)),
    # reading runs: the audit, comparisons across runs, the item browser
    ("analysis", ("medvqa.core.audit", "medvqa.core.compare", "medvqa.core.view", "medvqa.core.contamination")),
    # the Python form of each command; the conformance kit and the adapter scaffold built on it
    ("api", ("medvqa.core.api", "medvqa.core.report", "medvqa.core.conformance", "medvqa.core.scaffold")),
    ("core", ("medvqa.core",)),  # the package itself (its __init__ imports nothing)
    # the public surface, then what stands on it: commands and adapters
    ("public", ("medvqa",)),
    ("commands", ("medvqa.cli", "medvqa.adapters", "medvqa.commands")),
]

# Deliberate exceptions, each with its reason: (importer, imported) -> why.
EXCEPTIONS: dict[tuple[str, str], str] = {}


def floor_of(module: str) -> int:
    best, floor = "", -1
    for i, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, floor = prefix, i
    if floor < 0:
        raise AssertionError(f"{module} is on no floor: add it to FLOORS")
    return floor


def upward(arrows: list[importgraph.Arrow]) -> list[str]:
    found = []
    for a in arrows:
        if (a.importer, a.imported) in EXCEPTIONS:
            continue
        if floor_of(a.imported) > floor_of(a.importer):
            found.append(
                f"{a.path.relative_to(importgraph.ROOT)}:{a.line}: {a.importer} "
                f"({FLOORS[floor_of(a.importer)][0]}) imports {a.imported} "
                f"({FLOORS[floor_of(a.imported)][0]})"
            )
    return sorted(set(found))


def circles(arrows: list[importgraph.Arrow]) -> list[list[str]]:
    return importgraph.cycles([a for a in arrows if (a.importer, a.imported) not in EXCEPTIONS])


def test_every_module_is_on_a_floor():
    for module in importgraph.modules():
        floor_of(module)


def test_no_import_runs_up_a_floor():
    assert upward(importgraph.arrows()) == []


def test_no_modules_import_each_other_round_a_circle():
    assert circles(importgraph.arrows()) == []


def test_the_exceptions_are_still_needed():
    """An exception no import needs any more is taken out of the list."""
    found = {(a.importer, a.imported) for a in importgraph.arrows()}
    assert [pair for pair in EXCEPTIONS if pair not in found] == []


@pytest.fixture
def planted(monkeypatch, tmp_path):
    """A copy of the modules with one import planted, read by the same graph."""

    def plant(relative: str, line: str) -> list[importgraph.Arrow]:
        root = tmp_path / "repo"
        for folder in importgraph.FOLDERS:
            for path in (importgraph.ROOT / folder).rglob("*.py"):
                if "__pycache__" not in path.parts:
                    copy = root / path.relative_to(importgraph.ROOT)
                    copy.parent.mkdir(parents=True, exist_ok=True)
                    copy.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
        target = root / relative
        target.write_text(target.read_text(encoding="utf-8") + textwrap.dedent(line), encoding="utf-8")
        monkeypatch.setattr(importgraph, "ROOT", root)
        return importgraph.arrows()

    return plant


def test_a_planted_upward_import_inside_a_function_fails(planted):
    """The statistics (ground) reaching up to the audit, lazily, as `metrics` once reached
    into `audit/stats.py`: named with its file and line."""
    arrows = planted(
        "core/stats.py",
        """
        def _late():
            from medvqa.core.audit.pairs import STATES
            return STATES
    """,
    )
    found = upward(arrows)
    assert len(found) == 1
    assert found[0].startswith("core/stats.py:")
    assert found[0].endswith("medvqa.core.stats (ground) imports medvqa.core.audit.pairs (analysis)")


def test_a_planted_circle_on_one_floor_fails(planted):
    """Two run modules importing each other (the circle `run.saved` -> `run.options` ->
    `run.judge` -> `run.saved` was one): on one floor, still refused."""
    arrows = planted(
        "core/run/items.py",
        """
        if TYPE_CHECKING:
            from medvqa.core.run.saved import SavedRun
    """,
    )
    assert upward(arrows) == []
    assert ["medvqa.core.run.items", "medvqa.core.run.saved"] in [
        [m for m in c if m in ("medvqa.core.run.items", "medvqa.core.run.saved")] for c in circles(arrows)
    ]


def test_the_graph_reads_relative_imports():
    """`from .importer import tables_under` inside a function is an arrow like any other."""
    arrows = {(a.importer, a.imported) for a in importgraph.arrows()}
    assert ("medvqa.cli.main", "medvqa.cli.import_cmd") in arrows
    assert Path(importgraph.__file__).name == "importgraph.py"


# ---------------------------------------------------------------- rooms: modules of one size and one concern

LONG = 400  # lines, as `ruff format` writes them
REASON = "Over 400 lines:"


def long_modules() -> list[str]:
    """Modules over `LONG` lines whose docstring does not say why they are one module."""
    import ast

    found = []
    for path in importgraph.modules().values():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > LONG and REASON not in (ast.get_docstring(ast.parse(text)) or ""):
            found.append(f"{path.relative_to(importgraph.ROOT)}: {text.count(chr(10))} lines")
    return sorted(found)


def test_a_long_module_says_why_it_is_one():
    """A module over 400 lines is split by what it does, or its docstring says why not in a
    paragraph beginning "Over 400 lines:"."""
    assert long_modules() == []


# ---------------------------------------------------------------- public names between modules


def private_reads() -> list[str]:
    """`from medvqa.x import _name` and `module._name` where the module is one of medvqa's own:
    a name another module uses is public. Dunder names (`__version__`) are not private."""
    import ast

    known = importgraph.modules()
    found = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        aliases: dict[str, str] = {}  # local name -> medvqa module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                for alias in node.names:
                    if f"{base}.{alias.name}" in known:
                        aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
                    elif base in known and alias.name.startswith("_") and not alias.name.startswith("__"):
                        if base != module:
                            found.append(f"{path.relative_to(importgraph.ROOT)}:{node.lineno}: {base}.{alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in known and alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                found.append(
                    f"{path.relative_to(importgraph.ROOT)}:{node.lineno}: {aliases[node.value.id]}.{node.attr}"
                )
    return sorted(set(found))


def test_no_module_reads_another_modules_private_names():
    assert private_reads() == []
