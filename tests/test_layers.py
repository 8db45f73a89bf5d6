"""The package's import graph: layered as docs/map.md draws it, with no circle. A module imports from its
own layer or from those below it, never from one above; every import counts, a deferred one inside a
function too. A new module must be given its layer here (and in docs/map.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_gaamas"

#: Lowest first. A name ending in ``.*`` is a package, every module in it.
LAYERS: dict[str, tuple[str, ...]] = {
    "foundations": (
        "pytest_gaamas", "lazy", "inert", "redact", "safejson", "safeyaml", "counterbalance", "beside_pytest_recording",
        "figures", "data", "errors", "usage", "stats", "verdicts", "metrics", "people", "null_runs", "thinking", "cues",
        "confinement", "sandbox", "sandbox.*",
    ),
    "games": ("play", "answers", "trials", "strategy", "fidelity", "games", "games.*"),
    "playing": ("models", "models.*", "strategy_run", "cassettes", "journal", "model_meta", "heartbeat"),
    "record": ("report", "runlog", "compare", "gate", "provenance", "drawing", "rounds"),
    "views": ("report_html", "report_markdown"),
    "experiment": ("settings", "recording", "scoring", "experiment"),
    "session": ("session", "session.*"),
    "wiring": ("plugin", "__main__", "suite", "cue_capture"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {module for module in found if module in known and module != name}


def layer_of(name: str) -> int | None:
    short = name.removeprefix("pytest_gaamas.") if name != "pytest_gaamas" else name
    for rank, members in enumerate(LAYERS.values()):
        for member in members:
            if short == member or (member.endswith(".*") and short.startswith(member[:-1])):
                return rank
    return None


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(edges[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def test_every_module_has_a_layer():
    unplaced = [name for name in modules() if layer_of(name) is None]
    assert not unplaced, f"give these modules a layer in tests/test_layers.py and docs/map.md: {unplaced}"


def test_no_module_imports_from_a_layer_above_its_own():
    names = list(LAYERS)
    upward = [
        f"{name} ({names[layer_of(name) or 0]}) imports {target} ({names[layer_of(target) or 0]})"
        for name, targets in graph().items() for target in sorted(targets)
        if (layer_of(target) or 0) > (layer_of(name) or 0)
    ]  # fmt: skip
    assert not upward, "\n".join(upward)


def test_the_import_graph_has_no_circle():
    assert circles(graph()) == []


@pytest.mark.parametrize(("edges", "expected"), [
    ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
])  # fmt: skip
def test_the_circle_finder_finds_circles_and_only_them(edges, expected):
    assert circles(edges) == expected


def test_an_upward_import_is_seen(tmp_path):
    """The checks read what the source says: a deferred import inside a function is an import too."""
    source = tmp_path / "pytest_gaamas" / "stats.py"
    source.parent.mkdir()
    source.write_text("def f():\n    from .plugin import STATE\n    return STATE\n", encoding="utf-8")
    assert imports("pytest_gaamas.stats", source, {"pytest_gaamas.stats", "pytest_gaamas.plugin"}) == {"pytest_gaamas.plugin"}
    assert layer_of("pytest_gaamas.plugin") > layer_of("pytest_gaamas.stats")


#: Classes still past the bound, each to be split; the list may only shrink.
LONGER_CLASSES: set[str] = set()
MAX_CLASS_LINES = 250


def test_no_class_is_longer_than_250_lines_and_the_wiring_stays_thin():
    longer = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES:
                longer.add(f"{path.relative_to(PACKAGE).as_posix()}::{node.name}")
    assert longer <= LONGER_CLASSES, f"classes past {MAX_CLASS_LINES} lines: {sorted(longer - LONGER_CLASSES)}"
    assert longer == LONGER_CLASSES, f"no longer past the bound, so off the list: {sorted(LONGER_CLASSES - longer)}"
    assert len((PACKAGE / "plugin.py").read_text(encoding="utf-8").splitlines()) <= MAX_CLASS_LINES
