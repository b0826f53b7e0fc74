"""The README does what it says: its Python example runs and its results are
what the comments claim, its command lines run and print what they promise,
and its set-up commands name an extra, a constraint file and a script that
exist (the test command being the one CI runs)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

import roofline_sym as rs
from roofline_sym.cli import main
from roofline_sym.devices.toml_io import tomllib

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _python_example() -> str:
    (block,) = re.findall(r"```python\n(.*?)```", README, re.S)
    return block


def _indented(prefix: str) -> list[str]:
    """The README's indented command lines that start with ``prefix``, with
    continuation lines joined and trailing comments dropped."""
    lines, out = README.splitlines(), []
    for i, line in enumerate(lines):
        if not line.startswith("    " + prefix):
            continue
        text = line.strip()
        while text.endswith("\\"):
            i += 1
            text = text[:-1].rstrip() + " " + lines[i].strip()
        out.append(re.sub(r"\s+#.*$", "", text).strip())
    return out


def test_the_python_example_runs_and_its_claims_hold():
    ns: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(_python_example(), "README.md", "exec"), ns)
    # hardware named by torch's device string is the H100 SXM entry
    assert ns["hw"].name == "H100 SXM"
    # the break-even: the speedup is 1 at the root and above 1 beyond it
    mb, (root,) = ns["mb"], ns["be"].roots
    r = float(root)
    assert float(mb.evaluate(r, 8192, 8192, integer_shapes=False)["speedup"]) == \
        pytest.approx(1, rel=1e-9)
    assert float(mb.evaluate(2 * r, 8192, 8192, integer_shapes=False)["speedup"]) > 1
    # whole models: one total per GPU x recipe
    totals = ns["res"].model_total()
    assert sorted(zip(totals["gpu"], totals["recipe"])) == sorted(
        (g, r) for g in ("H100 SXM", "B200 (HGX)") for r in ("tensorwise", "rowwise"))
    # the LaTeX block and the packages it needs
    text = printed.getvalue()
    assert r"\begin{align*}" in text and r"\usepackage{amsmath}" in text


def _run(command: str, tmp_path: Path, monkeypatch) -> str:
    """Run one README command line in this process (redirects into tmp_path)."""
    argv = shlex.split(command)
    assert argv[0] == "roofline-sym"
    target = None
    if ">" in argv:
        at = argv.index(">")
        argv, target = argv[:at], tmp_path / Path(argv[at + 1]).name
    out = io.StringIO()
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(out):
        try:
            code = main(argv[1:])
        except SystemExit as done:  # --version, --print-completion: argparse exits
            code = done.code or 0
    assert code == 0, command
    if target is not None:
        target.write_text(out.getvalue())
    return out.getvalue()


def test_every_command_line_runs(tmp_path, monkeypatch):
    commands = _indented("roofline-sym")
    assert len(commands) >= 8
    shown = {c: _run(c, tmp_path, monkeypatch) for c in commands}
    assert "H200 SXM" in shown["roofline-sym hardware h200"]
    assert rs.__version__ in shown["roofline-sym --version"]
    latex = next(v for c, v in shown.items() if "--latex" in c)
    assert latex.count(r"\begin{align*}") >= 1
    # the main job: a break-even per training recipe on H100 SXM
    main_job = shown["roofline-sym"]
    assert "H100 SXM" in main_job
    assert all(r in main_job for r in rs.list_recipes("training") if "mx" not in r)


def test_your_own_gpu_next_to_a_built_in_one_gives_the_same_totals(tmp_path, monkeypatch):
    # the README's two steps: a built-in entry written out, then read back
    # under its own name; an unchanged copy of H100 SXM predicts what H100 SXM does
    (write,) = [c for c in _indented("roofline-sym") if "--toml >" in c]
    (sweep,) = [c for c in _indented("roofline-sym sweep --hardware-file")]
    _run(write, tmp_path, monkeypatch)
    text = _run(sweep, tmp_path, monkeypatch)
    rows = [ln for ln in text.splitlines() if "llama3-8b" in ln]
    custom = [ln.split()[-1] for ln in rows if "(custom)" in ln]
    builtin = [ln.split()[-1] for ln in rows if "(custom)" not in ln]
    assert custom and custom == builtin


def test_the_set_up_commands_name_what_exists():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    install, torch, test = _indented("python3 -m venv")
    assert project["scripts"]["roofline-sym"] == "roofline_sym.cli:main"
    assert install.endswith("pip install . && roofline-sym")
    # torch's CPU build: the version constraints.txt pins, a command to paste
    pin = re.search(r"^torch==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M)[1]
    assert torch.endswith(f"pip install torch=={pin}")
    # the test command: its extra exists, its constraint file pins torch, its
    # pytest options need the test extra's plugins, and CI runs it verbatim
    extra = re.search(r'"\.\[(\w+)\]"', test)[1]
    assert extra in project["optional-dependencies"]
    assert "torch==2.13.0" in (ROOT / re.search(r"-c (\S+)", test)[1]).read_text()
    if "-n " in test:
        assert any(d.startswith("pytest-xdist") for d in project["optional-dependencies"][extra])
    assert test in (ROOT / ".ci" / "run").read_text()


def test_the_docs_and_notebook_commands_name_what_exists():
    # each names an extra that brings what it runs, and CI runs the same tool
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    ci = (ROOT / ".ci" / "run").read_text()
    (docs,) = _indented('pip install ".[docs]"')
    (notebooks,) = _indented('pip install ".[notebooks]"')
    assert {"sphinx", "myst-nb", "ipykernel", "ipython", "torch", "torchao"} <= {
        re.split(r"[<>=\[;]", d)[0] for d in extras["docs"]}
    assert "nbconvert" in {re.split(r"[<>=\[;]", d)[0] for d in extras["notebooks"]}
    build = docs.split(" && ")[1]
    assert build.startswith("python -m sphinx -W") and build in ci
    assert "jupyter nbconvert --to notebook --execute" in notebooks
    assert "jupyter nbconvert --to notebook --execute" in ci and '".[notebooks]"' in ci


def test_the_readmes_counts_are_the_librarys():
    # "18 GPUs": the default dataset's entries, counted now
    (count,) = re.findall(r"\*\*Hardware as data\*\*: (\d+) GPUs", README)
    assert int(count) == len(rs.list_hardware())
    # the fidelity figures are not typed in the README: the docs build computes them
    assert not re.search(r"\d+(\.\d+)?% median", README)
