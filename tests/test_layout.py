"""The house: packages by capability, imports in one direction without cycles, evalrun reaching
curate only through its public API, small modules, declared dependencies, tests that mirror the
packages, and a layout page (docs/explanation/layout.md) that draws every folder."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("curate", "evalrun")
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    """Return {dotted module name: file} of every module of both packages."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _bound_names(path: Path) -> set[str]:
    """Return the names a module binds at its top level (imports, functions, classes, assignments)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


BOUND = {name: _bound_names(path) for name, path in MODULES.items() if path.name == "__init__.py"}


def _imports(name: str, path: Path) -> set[str]:
    """Return the project modules `name` imports (anywhere in the file, functions included)."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # `from package import name` takes what the package binds under that name, if it does
            # (curate re-exports functions such as `progress`), else the submodule `name`
            targets = [module if alias.name in BOUND.get(module, ()) or f"{module}.{alias.name}" not in MODULES
                       else f"{module}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, result, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10_000)

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return result


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_in_either_package():
    assert _cycles(GRAPH) == []


def _subpackages(graph: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """Return {subpackage: the subpackages it imports} of one package: curate.X -> curate.Y for every
    import of a module of curate.X (function-level ones included) of a module of curate.Y, X != Y
    (a top-level module such as curate.workspace is its own; the package root is left out)."""
    def part(module: str) -> str | None:
        parts = module.split(".")
        return f"{parts[0]}.{parts[1]}" if parts[0] == package and len(parts) > 1 else None
    found: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if (here := part(module)) is None:
            continue
        found.setdefault(here, set()).update(t for t in map(part, targets) if t is not None and t != here)
    return found


def test_the_subpackage_graph_is_built_from_function_level_imports_too():
    graph = {"p.a.m": {"p.b.n"}, "p.b.n": set(), "p.b.o": {"p.a"}, "p": {"p.a.m"}, "q.x": {"p.a.m"}}
    assert _subpackages(graph, "p") == {"p.a": {"p.b"}, "p.b": {"p.a"}}
    assert _cycles(_subpackages(graph, "p")) == [["p.a", "p.b"]]
    # an import inside a function counts (`curate annotate serve` imports the server only when run)
    assert "curate.annotate.server.process" in GRAPH["curate.cli.annotate"]


def test_no_import_cycle_between_subpackages():
    """curate.checks -> curate.release -> curate.dataset, never back: each capability sits on the
    ones below it, whatever module or function the import is in."""
    for package in PACKAGES:
        assert _cycles(_subpackages(GRAPH, package)) == [], package


def test_no_library_module_imports_a_command_line():
    """The command lines sit on the libraries, never the other way round (the `python -m` entry
    points, `__main__`, are command line too)."""
    def command_line(module: str) -> bool:
        return module.startswith(("curate.cli", "evalrun.cli")) or module.endswith(".__main__")
    wrong = [f"{m} imports {t}" for m, ts in GRAPH.items() if not command_line(m) for t in ts
             if t.startswith(("curate.cli", "evalrun.cli"))]
    assert wrong == []


def test_curate_never_imports_evalrun():
    assert not [f"{m} -> {t}" for m, ts in GRAPH.items() if m.startswith("curate") for t in ts
                if t.startswith("evalrun")]


def test_evalrun_imports_curate_only_through_its_public_api():
    """The library through `curate`; evalrun's command line also through `curate.cli` (the plumbing
    both command lines share), and nothing else of evalrun touches the command line's modules."""
    wrong = [f"{m} imports {t}" for m, ts in GRAPH.items() if m.startswith("evalrun") for t in ts
             if t.startswith("curate.") and not (t == "curate.cli" and m.startswith("evalrun.cli"))]
    assert wrong == []


def test_importing_the_libraries_loads_no_command_line():
    import subprocess
    import sys
    code = ("import sys, curate, evalrun; "
            "print(sorted(m for m in sys.modules if m == 'click' or m.startswith(('curate.cli', 'evalrun.cli'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


def test_nothing_in_curate_imports_the_package_root():
    """curate/__init__ gathers the public API; a module importing it back would make a cycle."""
    assert [m for m, ts in GRAPH.items() if m.startswith("curate.") and "curate" in ts] == []


def test_no_module_is_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in MODULES.values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def _third_party_imports() -> dict[str, set[str]]:
    """Return {top-level third-party module: files of ours that import it}."""
    found: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else [])
            for module in names:
                top = module.split(".")[0]
                if top not in sys.stdlib_module_names and top not in PACKAGES and top != "__future__":
                    found.setdefault(top, set()).add(name)
    return found


def _declared() -> tuple[set[str], set[str], set[str]]:
    """Return the runtime dependencies and those of the `argilla` and `ray` extras, as normalised names."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(specs):
        return {re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0].lower().replace("_", "-") for spec in specs}
    extras = project["optional-dependencies"]
    return names(project["dependencies"]), names(extras["argilla"]), names(extras["ray"])


def test_every_imported_package_is_declared_and_every_declared_one_imported():
    runtime, argilla, ray = _declared()
    distributions = metadata.packages_distributions()
    imported = _third_party_imports()
    provided: dict[str, str] = {}
    for module, users in imported.items():
        dists = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        declared = dists & (runtime | argilla | ray)
        assert declared, f"{module} (imported by {sorted(users)}) is not declared in pyproject.toml"
        if dists & argilla and not dists & runtime:
            assert all(u.startswith("curate.annotate") for u in users), \
                f"{module} comes with the argilla extra but {sorted(users)} import it"
        if dists & ray and not dists & runtime:   # the optional engine: imported by it alone
            assert users == {"curate.engine.on_ray"}, f"{module} comes with the ray extra but {sorted(users)} import it"
        for dist in declared:
            provided[dist] = module
    assert sorted(runtime - provided.keys()) == []          # every runtime dependency is used
    assert sorted(argilla - provided.keys()) == []          # and every one of the argilla extra
    assert sorted(ray - provided.keys()) == []              # and of the ray extra


TEST_ONLY = {"support", "data"}


def test_tests_mirror_the_packages():
    folders = [p for p in (ROOT / "tests").rglob("*") if p.is_dir() and "__pycache__" not in p.parts]
    stray = [str(p.relative_to(ROOT)) for p in folders
             if not set(p.relative_to(ROOT / "tests").parts) & TEST_ONLY
             and not (ROOT / p.relative_to(ROOT / "tests")).is_dir()]
    assert stray == []


def test_the_layout_page_draws_every_folder():
    page = (ROOT / "docs" / "explanation" / "layout.md").read_text(encoding="utf-8")
    layout = page.split("```")[1]
    drawn = {line.split()[0].rstrip("/") for line in layout.strip().splitlines() if line.strip()}
    folders = {str(p.relative_to(ROOT)) for package in PACKAGES for p in (ROOT / package).rglob("*")
               if p.is_dir() and "__pycache__" not in p.parts} | set(PACKAGES)
    assert sorted(folders - drawn) == []


def test_every_module_imports():
    """Each module of both packages imports (in a fresh interpreter, deepest modules first), so none
    depends on another having been imported before it."""
    import subprocess
    names = sorted((n for n in MODULES if not n.startswith("curate.annotate.server")),
                   key=lambda n: (-n.count("."), n))
    done = subprocess.run([sys.executable, "-c", "import importlib, sys\nfor n in sys.argv[1:]: importlib.import_module(n)",
                           *names], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-800:]
