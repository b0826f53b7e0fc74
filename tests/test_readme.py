"""The README's set-up commands are the ones CI runs."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.startswith("    python3 -m venv")]


def test_readme_has_exactly_two_setup_commands():
    cmds = _commands()
    assert len(cmds) == 2
    assert cmds[0].endswith("roofline-sym") and "pytest" in cmds[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert _commands()[1] in ci
    assert "torch==2.13.0" in ci
