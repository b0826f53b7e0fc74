"""Progress on long work: a bar where standard error is a terminal, not a byte
where it is a pipe (or a file, a notebook, a test's capture).

Both sides are run for real: a pseudo-terminal (``os.openpty``) and a pipe
as a child process's standard error, and in this process a stream that says
it is a terminal, through the command line and the cross-validation."""

from __future__ import annotations

import fcntl
import io
import os
import select
import struct
import subprocess
import sys
import termios
import textwrap
from pathlib import Path

import pytest

import roofline_sym as rs
from roofline_sym import fidelity, progress
from roofline_sym.cli import main

pytest.importorskip("tqdm")

ROOT = Path(rs.__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}

# a child that runs both forms (an iterable, a (done, total) callback) with no
# delay before the bar, then prints to stdout that it is done
CHILD = textwrap.dedent("""
    import roofline_sym.progress as p
    p.DELAY_S = 0
    assert list(p.with_progress(range(4), "refits", unit="GPU")) == [0, 1, 2, 3]
    with p.Progress(10, "sweep", unit="row") as bar:
        bar(6, 10)
        bar(10, 10)
        shown = bar.shown
    print("done", shown)
""")


class _Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """``terminal()``: standard error replaced by a stream that is a terminal,
    bars drawn at once.  Called in the test's body: pytest's capture puts its
    own stream back between a fixture's setup and the test."""
    def install() -> _Terminal:
        stream = _Terminal()
        monkeypatch.setattr(sys, "stderr", stream)
        monkeypatch.setattr(progress, "DELAY_S", 0)
        return stream

    return install


def test_a_pipe_gets_nothing():
    done = subprocess.run([sys.executable, "-c", CHILD], env=ENV, capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout == "done False\n"
    assert done.stderr == ""


def test_a_terminal_gets_a_bar():
    primary, secondary = os.openpty()
    # a terminal 100 columns wide (a new pseudo-terminal has none: nothing fits)
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    try:
        done = subprocess.run([sys.executable, "-c", CHILD], env=ENV, stdout=subprocess.PIPE,
                              stderr=secondary, text=True, timeout=60, check=True)
        out, shown = done.stdout, b""
        # the terminal's side stays open here (closed, Linux answers EIO), and
        # what the child wrote reaches it a moment later
        while select.select([primary], [], [], 0.2 if shown else 5.0)[0]:
            shown += os.read(primary, 1 << 16)
    finally:
        os.close(secondary)
        os.close(primary)
    assert out == "done True\n"
    text = shown.decode()
    # each bar names its work, its total and its unit; then it is erased
    assert "refits" in text and "/4" in text and "GPU" in text
    assert "sweep" in text and "/10" in text and "row" in text


def test_quick_work_draws_nothing_even_on_a_terminal(monkeypatch):
    stream = _Terminal()
    monkeypatch.setattr(sys, "stderr", stream)  # DELAY_S as shipped
    assert list(progress.with_progress(range(3), "quick")) == [0, 1, 2]
    assert stream.getvalue() == ""


def test_the_bar_follows_the_callback(terminal):
    stream = terminal()
    with progress.Progress(None, "rows") as bar:
        assert bar.shown
        bar(3, 8)  # the total learnt from the callback is drawn at once
        bar(8, 8)
    assert "3/8" in stream.getvalue() and "rows" in stream.getvalue()


def test_a_sweep_on_a_terminal_and_in_a_pipe(terminal, capsys):
    args = ["sweep", "--gpu", "h100", "--recipe", "tensorwise", "--shapes", "pow2", "--total"]
    stream = terminal()
    assert main(args) == 0
    drawn = stream.getvalue()
    assert "sweep" in drawn and "/5" in drawn and "row" in drawn  # pow2: five shapes
    # the same command with standard error captured (not a terminal): not a byte
    # (a sweep of 100,000 rows or more used to print a progress line per chunk there)
    sys.stderr = io.StringIO()
    assert main(args) == 0
    assert sys.stderr.getvalue() == ""
    assert "H100" in capsys.readouterr().out


def test_cross_validation_shows_its_sources(terminal):
    stream = terminal()
    # a source no calibration reads: predicted, not refitted (quick)
    cv = fidelity.leave_one_source_out(sources=["gfb-rtx4090-20260811"])
    assert cv.pooled["rows"] == 3
    assert "cross-validation" in stream.getvalue() and "/1" in stream.getvalue()
