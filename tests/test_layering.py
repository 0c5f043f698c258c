"""The package's layering, read from the source with ``ast``: every import counts, those under
``if TYPE_CHECKING:`` and those inside functions included."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

import budgetctx

PACKAGE = Path(budgetctx.__file__).resolve().parent
ROOT = PACKAGE.parent

#: The rooms of the package, lowest first, and what each may not import. A room may import
#: any room listed before it (and ``budgetctx._errors`` / ``budgetctx._version``), never one
#: after it: ``_core`` is shared by all, the components are the algorithms, ``build`` makes one
#: context from them, ``chat`` fits messages with ``build``, ``batch`` runs ``build`` over
#: many documents, and the front ends (cli, serve, integrations) and the research harness
#: (eval, generate) sit on top.
COMPONENTS = ("router", "selectors", "objectives", "representations", "unitizers", "tokenizers")
FRONT = ("cli", "serve", "integrations", "eval", "generate")
ROOMS: dict[str, tuple[str, ...]] = {
    "_core": ("profiles", *COMPONENTS, "build", "chat", "batch", *FRONT),
    **dict.fromkeys(COMPONENTS, ("build", "chat", "batch", *FRONT)),
    "profiles": (*COMPONENTS, "build", "chat", "batch", *FRONT),
    "build": ("chat", "batch", *FRONT),
    "chat": ("batch", *FRONT),
    "batch": FRONT,
    "serve": ("cli", "eval", "integrations"),
    "integrations": ("cli", "serve", "eval"),
    "generate": ("cli", "serve", "eval", "integrations"),
    "eval": ("cli", "serve", "integrations"),
    "cli": (),
}
#: What the top of the tree may hold besides the rooms: a new module belongs in a room.
TOP_MODULES = {"__init__", "_errors", "_version", "profiles"}
TOP_PACKAGES = {*ROOMS, "data"} - {"profiles"}

#: Import cycles still present, each with why. None: keep it that way.
KNOWN_CYCLES: set[frozenset[str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imported(name: str, path: Path) -> set[str]:
    """Every budgetctx module ``name`` imports (``from pkg import mod`` counts ``pkg.mod``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    modules = _modules()
    return {m for m in found if m in modules and m != name}


@cache
def _graph() -> dict[str, frozenset[str]]:
    return {name: frozenset(_imported(name, path)) for name, path in _modules().items()}


def _cycles(graph: dict[str, frozenset[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(frozenset(component))
    return out


def test_the_parser_sees_every_kind_of_import() -> None:
    graph = _graph()
    # a function-local import (cli imports eval inside its commands)
    assert "budgetctx.eval" in graph["budgetctx.cli._eval"]
    # a type-only import (under `if TYPE_CHECKING:`)
    assert "budgetctx.eval._store" in graph["budgetctx.eval._calibrate"]
    # relative and absolute imports of private modules
    assert "budgetctx.router._budget" in graph["budgetctx.router"]
    assert len(graph) > 50


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_no_room_imports_a_room_above_it(room: str) -> None:
    prefix = f"budgetctx.{room}"
    forbidden = [f"budgetctx.{r}" for r in ROOMS[room]]
    bad = {
        (name, target)
        for name, targets in _graph().items()
        if name == prefix or name.startswith(prefix + ".")
        for target in targets
        if any(target == f or target.startswith(f + ".") for f in forbidden)
    }
    assert not bad, f"{room} imports upward: {sorted(bad)}"


def test_the_top_of_the_tree_holds_only_the_rooms() -> None:
    """A new engineer reads the tree to know where a change belongs: no loose modules."""
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert modules == TOP_MODULES, f"move {sorted(modules - TOP_MODULES)} into a room"
    assert packages == TOP_PACKAGES, f"unexpected packages: {sorted(packages ^ TOP_PACKAGES)}"


def test_result_objects_import_no_machinery() -> None:
    """_core/results.py holds results (Context, RouteDecision): reading one imports nothing else."""
    assert _graph()["budgetctx._core.results"] <= {"budgetctx._errors"}


def test_no_import_cycles_but_the_known_ones() -> None:
    found = set(_cycles(dict(_graph())))
    new = found - KNOWN_CYCLES
    assert not new, f"import cycles: {[sorted(c) for c in new]}"
    assert not KNOWN_CYCLES - found, "a known cycle is gone: remove it from KNOWN_CYCLES"


def test_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset()}
    assert _cycles(graph) == [frozenset({"a", "b", "c"})]
