"""The module graph of groove: no import cycle, no private name taken from another module.

import-linter checks the layers between packages; it cannot see a cycle between two
modules of one package, nor ``from groove.x import _helper``. This test reads every module
of groove/ with ``ast``, keeps every import it names (at the top, inside a function, and
under ``if TYPE_CHECKING:`` too: a type-only import is still a dependency, and a result
type whose card module imports it back is a circle), and looks for strongly connected
components. Only an ``if __name__ == "__main__":`` block is left out: it runs as the script
``__main__``, never as the module it sits in. KNOWN_CYCLES and KNOWN_PRIVATE are empty; an
entry needs a reason, and the lists may only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "groove"

# Each entry: the modules of one cycle (sorted) and why it still stands.
KNOWN_CYCLES: dict[tuple[str, ...], str] = {}

# (importer, module, name): private names still taken from another module, and why.
KNOWN_PRIVATE: dict[tuple[str, str, str], str] = {}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_script_block(node: ast.If) -> bool:
    """``if __name__ == "__main__":``: what runs when the file is the script, not a module."""
    test = node.test
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def _module_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of the module, type-only ones included (module docstring)."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_script_block(child):
                stack.extend(child.orelse)
            elif isinstance(child, ast.Import | ast.ImportFrom):
                found.append(child)
            else:
                stack.append(child)
    return found


def _graph() -> tuple[dict[str, set[str]], list[tuple[str, str, str]]]:
    """(module -> the groove modules it imports, the private names imported across modules)."""
    modules = _modules()

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {name: set() for name in modules}
    private: list[tuple[str, str, str]] = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _module_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [owner(alias.name) for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                targets = []
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    targets.append(full if full in modules else owner(base))
                    private_name = alias.name.startswith("_") and not alias.name.startswith("__")
                    if private_name and full not in modules and base.startswith("groove"):
                        private.append((name, base, alias.name))
            edges[name] |= {t for t in targets if t and t != name}
    return edges, private


def _cycles(edges: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
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
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(tuple(sorted(component)))
    return sorted(found)


def test_no_import_cycle_between_modules() -> None:
    found = _cycles(_graph()[0])
    new = [c for c in found if c not in KNOWN_CYCLES]
    gone = [c for c in KNOWN_CYCLES if c not in found]
    assert new == [], f"import cycles (type-only imports count too): {new}"
    assert gone == [], f"these cycles are gone: remove them from KNOWN_CYCLES: {gone}"


def test_no_module_imports_a_private_name_of_another() -> None:
    found = _graph()[1]
    new = [p for p in found if p not in KNOWN_PRIVATE]
    gone = [p for p in KNOWN_PRIVATE if p not in found]
    assert new == [], f"private names imported from another module (make them public): {new}"
    assert gone == [], f"these are fixed: remove them from KNOWN_PRIVATE: {gone}"


def test_the_checks_see_a_cycle_and_a_private_import() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [("a", "b", "c")]
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from groove.x import X\n"
        "def f():\n    from groove.y import _z\n"
        "if __name__ == '__main__':\n    from groove.cli import cli\n"
    )
    names = {
        node.module or "" for node in _module_imports(tree) if isinstance(node, ast.ImportFrom)
    }
    assert names == {"typing", "groove.x", "groove.y"}
