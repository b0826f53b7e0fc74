"""No stale names: every dotted name of the package that the code, docs or data
cite resolves, and no module name the package has since dropped appears."""

import importlib
import re
from pathlib import Path

import pytest

import roofline_sym

ROOT = Path(roofline_sym.__file__).parent.parent
PACKAGE = ROOT / "roofline_sym"
# what a reader or user sees: the package with its data, the docs, the
# notebooks and benchmarks, the README
FILES = sorted(
    [p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".toml", ".csv", ".json", ".md")]
    + [p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts]
    + list((ROOT / "notebooks").glob("*.ipynb")) + list((ROOT / "benchmarks").glob("*.py"))
    + [ROOT / "README.md"])

# modules the package once had, by the name a reader would meet: each is now
# elsewhere under a name that says what it holds (docs/architecture.md)
DROPPED = ("calibrate", "calibrations", "harness", "speedup_fit", "speedup_report",
           "speedup_tables", "kernel_tables", "measure_cuda", "blocked")
# a dropped name used as a module: an attribute of it, an import of it, its
# file, its folder (a data file's name such as speedups.csv is not a module)
_DROPPED_USE = re.compile(
    rf"(?<![\w-])(?:{'|'.join(DROPPED)})(?:\.(?!(?:csv|json|toml|md|png|pdf|svg|ipynb)\b)"
    rf"[A-Za-z_]|/)|\bimport (?:{'|'.join(DROPPED)})\b|\bas (?:{'|'.join(DROPPED)})\b")
_DOTTED = re.compile(r"(?<![\w.])(roofline_sym|rs)((?:\.[A-Za-z_]\w*)+)")


def _resolves(parts: list[str]) -> bool:
    obj, path = roofline_sym, "roofline_sym"
    for part in parts:
        path += "." + part
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module(path)
        except ImportError:
            return False
    return True


def _lines(path: Path):
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        yield f"{path.relative_to(ROOT)}:{n}", line


def test_the_dropped_names_are_found_where_they_appear():
    # the pattern finds what it is for and passes over words that only look alike
    hits = ["from . import gpu_fits as calibrations", "calibrate.fit(spec)",
            "roofline_sym/harness/fidelity.py", "import kernel_tables"]
    misses = ["calibrate a GPU.", "--no-calibrate", "the measurement harness.",
              "published/speedups.csv", "calibrations refitted"]
    assert all(_DROPPED_USE.search(t) for t in hits)
    assert not any(_DROPPED_USE.search(t) for t in misses)


def test_no_dropped_module_name_appears():
    found = [f"{where}: {line.strip()[:100]}" for path in FILES
             for where, line in _lines(path) if _DROPPED_USE.search(line)]
    assert not found


def test_every_dotted_name_of_the_package_resolves():
    missing = sorted({f"{where}: {m.group(0)}" for path in FILES for where, line in _lines(path)
                      for m in _DOTTED.finditer(line)
                      if not _resolves(m.group(2).lstrip(".").split("."))})
    assert not missing


@pytest.mark.parametrize("dotted, resolves", [
    ("fidelity.fit_speedups", True), ("devices.UnknownHardwareError", True),
    ("calibrate.fit_speedups", False), ("fidelity.report", False)])
def test_resolving_a_dotted_name(dotted, resolves):
    assert _resolves(dotted.split(".")) is resolves
