"""Compile LaTeX snippets with pdflatex in a standalone document (tests only)."""

from __future__ import annotations

import re
import shutil
import textwrap
import subprocess
from pathlib import Path
from typing import Sequence

PREAMBLE = r"""\documentclass{article}
\usepackage{amsmath}
\usepackage{booktabs}
\begin{document}
"""


def have_pdflatex() -> bool:
    return shutil.which("pdflatex") is not None


def document(math: Sequence[str] = (), tables: Sequence[str] = ()) -> str:
    """A standalone document: each math string in ``\\[ \\]``, tables as they are."""
    body = [f"\\[\n{m}\n\\]" for m in math]
    body += [f"{t}\n\n\\bigskip\n" for t in tables]
    return PREAMBLE + "\n\n".join(body) + "\n\\end{document}\n"


def compile_latex(source: str, workdir: Path, name: str = "doc") -> subprocess.CompletedProcess:
    """Run pdflatex once (non-interactive, halting on the first error)."""
    tex = Path(workdir) / f"{name}.tex"
    tex.write_text(source)
    return subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name],
        cwd=workdir, capture_output=True, text=True, timeout=120,
    )


def doc_blocks(path: Path, lang: str = "python") -> list[str]:
    """The fenced ``lang`` code blocks of a Markdown file, in order."""
    blocks, current = [], None
    for line in Path(path).read_text().splitlines():
        if current is None and line.strip() == f"```{lang}":
            current = []
        elif current is not None and line.strip() == "```":
            blocks.append(textwrap.dedent("\n".join(current)))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


TWOCOLUMN = r"""\documentclass[twocolumn]{article}
%s
\begin{document}
"""


def twocolumn(blocks: Sequence[str], preamble: str) -> tuple[str, list[int]]:
    """A two-column article with each block in its own paragraph; the line each
    block starts on."""
    head = TWOCOLUMN % preamble
    text, starts = head, []
    for block in blocks:
        text += "\n"
        starts.append(text.count("\n") + 1)
        text += block + "\n\nText between the blocks.\n"
    return text + "\\end{document}\n", starts


def overfull(log: str) -> list[tuple[float, int]]:
    """(points too wide, source line) of every overfull \\hbox in a pdflatex log."""
    out = []
    for m in re.finditer(r"Overfull \\hbox \(([\d.]+)pt too wide\) (?:in paragraph at lines "
                         r"(\d+)--\d+|detected at line (\d+)|in alignment at lines (\d+))",
                         log):
        out.append((float(m.group(1)), int(next(g for g in m.groups()[1:] if g))))
    return out
