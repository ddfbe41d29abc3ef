"""The Python package's layout: its modules import each other without a cycle, every import
of one of them by another is at module level, where a reader sees it (none inside a function),
and ``BloomIndex``'s two backends are reached only through ``index``, which picks one.

Read with ``ast`` from the source files, so nothing is imported: an import inside a function
body, or under ``if TYPE_CHECKING:``, counts as much as one at the top of the module.
"""

from __future__ import annotations

import ast
import pathlib

PACKAGE = "bloomindex"
ROOT = pathlib.Path(__file__).resolve().parents[1] / "python" / PACKAGE


def _modules() -> dict[str, pathlib.Path]:
    """Dotted module name -> source file, for every module of the package."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> list[str]:
    """The modules among ``known`` that ``node``, in ``module`` (a package's ``__init__`` when
    ``is_package``), imports."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".")
            if not is_package:
                base.pop()
            base = base[:len(base) - (node.level - 1)]
            origin = ".".join(base + ([node.module] if node.module else []))
        else:
            origin = node.module or ""
        # `from .m import n` imports m, and n too when n is a submodule of m.
        names = [origin] + [f"{origin}.{alias.name}" for alias in node.names]
    return [n for n in names if n in known]


def _imports(module: str) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for each import of a package module."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package, known = path.name == "__init__.py", set(MODULES)
    out: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                targets = _targets(module, is_package, child, known)
                out.extend((t, child.lineno, in_function) for t in targets if t != module)
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return out


def _graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: line of its first import}."""
    graph: dict[str, dict[str, int]] = {}
    for module in MODULES:
        edges = graph.setdefault(module, {})
        for target, line, _ in _imports(module):
            edges.setdefault(target, line)
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle (as a closed path) per back edge met in a depth-first search."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                found.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_the_package_is_found():
    assert {PACKAGE, f"{PACKAGE}.sbbf", f"{PACKAGE}.filters", f"{PACKAGE}.parquet"} <= set(MODULES)


def test_the_reader_sees_every_form_of_import():
    # Every form a cycle could hide behind, from a module and from the package's __init__.
    src = ("from . import a\nfrom .b import x\nimport bloomindex.c\nfrom bloomindex import d\n"
           "def f():\n    from .e import y\n    import bloomindex\n    from .. import outside\n")
    known = {"bloomindex", "bloomindex.a", "bloomindex.b", "bloomindex.c", "bloomindex.d", "bloomindex.e"}
    nodes = [n for n in ast.walk(ast.parse(src)) if isinstance(n, (ast.Import, ast.ImportFrom))]
    for module, is_package in (("bloomindex.z", False), ("bloomindex", True)):
        assert {t for n in nodes for t in _targets(module, is_package, n, known)} == known


def test_import_graph_is_acyclic():
    graph = _graph()
    cycles = _cycles(graph)
    shown = ["  " + " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(c, c[1:])) + f" -> {c[-1]}"
             for c in cycles]
    assert not cycles, "import cycles in the Python package:\n" + "\n".join(shown)


def test_no_package_import_inside_a_function():
    hidden = [f"{MODULES[m].name}:{line} imports {t}" for m in MODULES for t, line, inside in _imports(m) if inside]
    assert not hidden, "imports of the package's modules inside functions:\n  " + "\n  ".join(hidden)


BACKEND = f"{PACKAGE}._backend"
BACKENDS = {f"{PACKAGE}._classic", f"{PACKAGE}._connect"}


def test_only_index_picks_a_backend_and_each_backend_stands_alone():
    graph = _graph()
    assert BACKENDS | {BACKEND} <= set(MODULES)
    users = {m for m, edges in graph.items() if BACKENDS & set(edges)}
    assert users == {f"{PACKAGE}.index"}, f"modules importing a backend: {sorted(users)}"
    for backend in sorted(BACKENDS):
        assert BACKEND in graph[backend], f"{backend} does not implement {BACKEND}.Backend"
        wrong = sorted((BACKENDS | {f"{PACKAGE}.index"}) & set(graph[backend]))
        assert not wrong, f"{backend} imports {wrong}"
