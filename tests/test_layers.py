"""The package's layers: imports point down, never in a circle, never hidden in a function.

Every module is parsed (``ast``, nothing is imported) and each import of a
module of the package becomes an edge.  A module may import its own layer
or the layers below it; ``LAYERS`` lists them bottom up.
"""

import ast
import types
from pathlib import Path

import pytest

import roofline_sym as rs
import roofline_sym.cli as cli

PACKAGE = Path(rs.__file__).parent

# bottom up; a layer is a top-level module or subpackage of roofline_sym
LAYERS = [
    ("errors",),  # RooflineError and its kinds: every module may raise them
    ("families",),  # the scaling families of low-precision GEMMs, as data
    ("validate", "datafile", "symbols", "renderers", "_version", "exports", "progress"),
    # foundations: checks, data files read and written, the symbol factory, LaTeX
    # writers, the version, a package's names loaded on first use, progress bars
    ("devices",),   # hardware entries, datasets, TOML files, sources
    ("architectures",),  # transformers as data: built-ins, Hugging Face configs
    ("evaluation",),  # expressions to numbers: code generation, runtime, kernel cache, dask
    ("model",),     # formats, terms and the roofline, GEMMs, recipes, presets, Linear
    ("solve",),     # break-even
    ("numeric",),   # shape sets, sweeps
    ("steps",),     # a whole training or serving step: every part of a model, communication
    ("output",),    # LaTeX, tables, plots
    ("fidelity",),  # the model held to measurements: published tables, your own GPU
    ("interop",),   # torch modules, Hugging Face configs, torchao filters (imported lazily)
    ("cli",),       # the command line
    ("__init__", "__main__"),  # the package: public names, `python -m`
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def _module_name(path: Path) -> str:
    parts = ("roofline_sym",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(module: str):
    """(imported module, line, inside a function) for each import of the package."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef,
                                                             ast.AsyncFunctionDef))]
    nested = {id(n) for f in functions for n in ast.walk(f) if n is not f}
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # "from pkg import name": the submodule pkg.name where there is one
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        for target in targets:
            if target == "roofline_sym" or target.startswith("roofline_sym."):
                while target not in MODULES:  # an attribute of a module
                    target = target.rpartition(".")[0]
                yield target, node.lineno, id(node) in nested


EDGES = {m: list(_imports(m)) for m in MODULES}

# modules imported by name (importlib) from a table, on first use: counted as
# imports of the module that holds the table, so the checks below see them
BY_NAME = {
    "roofline_sym": [f"roofline_sym{m}" for m in rs._MODULE_ATTRIBUTES.values()]
    + list(rs._WRITERS),
    "roofline_sym.cli": [f"roofline_sym.cli.cmd_{name}" for name in cli.COMMANDS + ("default",)],
}
for _importer, _targets in BY_NAME.items():
    EDGES[_importer] += [(target, 0, False) for target in _targets]


def test_modules_imported_by_name_exist():
    missing = [t for targets in BY_NAME.values() for t in targets if t not in MODULES]
    assert not missing
    # every command module is in the table: none is reached only by a name typed elsewhere
    commands = {m for m in MODULES if m.startswith("roofline_sym.cli.cmd_")}
    assert commands == set(BY_NAME["roofline_sym.cli"])


def test_every_module_has_a_layer():
    assert {_layer(m) for m in MODULES} <= set(RANK)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    up = [f"{target} (line {line})" for target, line, _ in EDGES[module]
          if RANK[_layer(target)] > RANK[_layer(module)]]
    assert not up, f"{module} imports a higher layer: {', '.join(up)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_of_the_package_inside_a_function(module):
    # lazy imports are for optional heavy dependencies (torch, matplotlib), not
    # for the package's own modules, where they would hide a circle
    hidden = [f"{target} (line {line})" for target, line, inside in EDGES[module] if inside]
    assert not hidden, f"{module} imports inside a function: {', '.join(hidden)}"


def test_no_import_cycle():
    graph = {m: {t for t, _, _ in EDGES[m] if t != m} for m in MODULES}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycle = path[path.index(t):] + [t]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def _defined_names(path: Path) -> set[str]:
    """Functions and classes a module defines at its top level, and its ``__all__``."""
    tree = ast.parse(path.read_text(), str(path))
    names = {n.name for n in tree.body
             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__"
                                                for t in node.targets):
            names |= {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
    return names


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_named_like_a_function_it_defines(module):
    # `roofline_sym.numeric.sweep.sweep` reads badly and, once a package
    # exports the function, hides the module behind it
    stem = module.rpartition(".")[2]
    assert stem not in _defined_names(MODULES[module]), (
        f"{module} defines or exports {stem!r}: name the module for its subject")


def _private_imports(module: str):
    """(name, source module, line) for each private name imported from another module."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")
            source = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module
                                                                    else []))
        else:
            source = node.module or ""
        if source != "roofline_sym" and not source.startswith("roofline_sym."):
            continue
        for alias in node.names:
            if alias.name.startswith("_") and not alias.name.startswith("__"):
                yield alias.name, source, node.lineno


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_private_name_of_another(module):
    # a name another module needs is public in its home module (or lives there)
    found = [f"{name} from {source} (line {line})"
             for name, source, line in _private_imports(module)]
    assert not found, f"{module} imports private names: {', '.join(found)}"


def test_the_checks_catch_what_they_look_for(tmp_path):
    # the two checks above on modules written to fail them
    bad = tmp_path / "sweep.py"
    bad.write_text("from roofline_sym.output.printer import _Hidden\n"
                   "from .table import _rows as rows\n\ndef sweep():\n    pass\n")
    assert "sweep" in _defined_names(bad)
    MODULES["roofline_sym.numeric.sweep"] = bad
    try:
        found = {(n, s) for n, s, _ in _private_imports("roofline_sym.numeric.sweep")}
    finally:
        del MODULES["roofline_sym.numeric.sweep"]
    assert found == {("_Hidden", "roofline_sym.output.printer"),
                     ("_rows", "roofline_sym.numeric.table")}


def test_no_subpackage_is_named_like_a_public_name():
    # importing roofline_sym.<name> sets the package attribute to the module
    names = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if p.suffix == ".py" or (p / "__init__.py").exists()}
    modules = {n for n in rs.__all__ if isinstance(getattr(rs, n), types.ModuleType)}
    assert {"linear", "hardware", "breakeven", "sweep", "latex", "grid"} <= set(rs.__all__)
    assert not names & (set(rs.__all__) - modules)


@pytest.mark.parametrize("package", sorted(m for m, p in MODULES.items()
                                           if p.name == "__init__.py" and m != "roofline_sym"))
def test_no_subpackage_exports_a_name_of_its_modules(package):
    module = __import__(package, fromlist=["__all__"])
    submodules = {m.rpartition(".")[2] for m in MODULES if m.rpartition(".")[0] == package}
    assert not set(getattr(module, "__all__", ())) & submodules


# -- functions a reader can hold -----------------------------------------------------
MAX_FUNCTION_LINES = 80


def _long_functions(path: Path, limit: int = MAX_FUNCTION_LINES):
    """(name, first line, lines) of each function or method over ``limit`` lines,
    its docstring and decorators included."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            lines = node.end_lineno - first + 1
            if lines > limit:
                yield node.name, first, lines


def test_no_function_is_over_80_lines():
    # the package holds no generated code (the evaluation writes its kernels at
    # run time): every function is one a person wrote and reads
    long = [f"{_module_name(p)}.{name} (line {line}): {n} lines"
            for p in MODULES.values() for name, line, n in _long_functions(p)]
    assert not long


def test_the_length_check_counts_what_it_should(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(79))
    exactly = tmp_path / "exactly.py"
    exactly.write_text(f"@staticmethod\ndef f():\n{body}\n")  # 81 lines with the decorator
    assert [(n, lines) for n, _, lines in _long_functions(exactly)] == [("f", 81)]
    under = tmp_path / "under.py"
    under.write_text(f"def f():\n{body}\n")  # 80 lines
    assert list(_long_functions(under)) == []


def test_command_line_code_lives_under_cli():
    # the library layers take arguments, not command lines: no argparse, no
    # sys.argv, no function named for the command line outside cli/
    found = []
    for module, path in MODULES.items():
        if _layer(module) in ("cli", "__init__"):
            continue
        text = path.read_text()
        if "import argparse" in text or "sys.argv" in text:
            found.append(f"{module}: argparse or sys.argv")
        found += [f"{module}.{name}" for name in _defined_names(path)
                  if name == "cli" or name.endswith("_cli")]
    assert not found
