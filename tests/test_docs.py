"""The documentation site: every public name in the API reference, every page
in a table of contents, and the strict build in CI (the build itself, which
runs the notebooks, is a CI step: ``sphinx-build -W`` in ``.ci/run``)."""

import re
from pathlib import Path

import roofline_sym as rs
from roofline_sym.devices.toml_io import tomllib

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
DIRECTIVE = re.compile(r"^\.\. (?:auto(?:function|class|exception|data|module)|py:(?:data|"
                       r"module|function|class))::\s+roofline_sym\.([A-Za-z_]\w*)\s*$", re.M)


def test_every_public_name_has_an_api_entry():
    documented = set(DIRECTIVE.findall((DOCS / "api.md").read_text()))
    assert set(rs.__all__) - documented == set()
    assert documented - set(rs.__all__) == set()


def test_every_page_is_in_a_table_of_contents():
    # the gallery's pages are the notebooks/ folder, copied to docs/gallery/ by conf.py
    generated = {"_build", "jupyter_execute", "gallery"}
    pages = {p.relative_to(DOCS).with_suffix("").as_posix()
             for p in DOCS.rglob("*") if p.suffix in (".md", ".ipynb")
             and not generated & set(p.relative_to(DOCS).parts)}
    pages |= {f"gallery/{p.stem}" for p in (ROOT / "notebooks").glob("*.ipynb")}
    listed = {"index"}
    for page in DOCS.rglob("*.md"):
        if "_build" in page.parts:
            continue
        for block in re.findall(r"```\{toctree\}\n(.*?)```", page.read_text(), re.S):
            base = page.parent.relative_to(DOCS)
            listed |= {(base / line.strip()).as_posix() for line in block.splitlines()
                       if line.strip() and not line.startswith(":")}
    assert pages == listed


def test_docs_extra_and_the_strict_build_in_ci():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["docs"]
    assert {re.split(r"[<>=]", e)[0] for e in extras} >= {"sphinx", "myst-nb", "furo",
                                                         "ipykernel"}
    ci = (ROOT / ".ci" / "run").read_text()
    build = ci.index("sphinx -W")
    assert ci.index("pytest") < build and '".[docs]"' in ci[:build]
