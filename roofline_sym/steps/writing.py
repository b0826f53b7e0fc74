r"""A step's LaTeX: its composition, then each group as a weighted sum of its terms.

``rs.latex(step)`` (and ``step.latex()``) writes an ``aligned`` block: the
speedup, each side's step time from its group totals, each group total as
the sum of its named terms times how often they run per step, and with
``definitions=True`` every term written out (long: a model has hundreds of
maxima).  Hardware symbols print as everywhere else (``symbols``).

>>> import roofline_sym as rs
>>> tex = rs.latex(rs.step("llama3-8b", "tensorwise", gpus=8))
>>> tex.splitlines()[1]
'\\mathrm{speedup} &= \\frac{T_{\\mathrm{bf16}}}{T_{\\mathrm{fp8}}} \\\\'
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from .. import renderers
from ..model.term_time import tex_text
from .pieces import TERM_GROUPS, StepTerm

__all__ = ["StepPieces", "write_step", "term_tex"]


@dataclass(frozen=True)
class StepPieces:
    """What a step's LaTeX shows: its terms, the bubble, the low-precision label."""

    terms: tuple[StepTerm, ...]
    bubble: sympy.Rational
    lowp_label: str
    definitions: bool = False


def term_tex(name: str, label: str) -> str:
    r"""``t^{\mathrm{backward}}_{\mathrm{attention.core},\mathrm{bf16}}`` for
    ``baseline.attention.core.backward`` on the side ``label`` names."""
    _, *parts = name.split(".")
    what, last = ".".join(parts[:-1]), parts[-1]
    return (rf"t^{{\mathrm{{{tex_text(last)}}}}}_{{\mathrm{{{tex_text(what)}}},"
            rf"\mathrm{{{tex_text(label)}}}}}")


def _total(side: str, group: str, label: str) -> str:
    return rf"T^{{\mathrm{{{tex_text(group)}}}}}_{{\mathrm{{{tex_text(label)}}}}}"


def write_step(p: StepPieces, digits: int | None = None) -> str:
    """The ``aligned`` block of ``p`` (``digits``: unused; numbers stay exact)."""
    labels = {"baseline": "bf16", "lowp": p.lowp_label}
    rows = [rf"\mathrm{{speedup}} &= \frac{{T_{{\mathrm{{bf16}}}}}}"
            rf"{{T_{{\mathrm{{{tex_text(p.lowp_label)}}}}}}}"]
    for side, label in labels.items():
        g = {group: _total(side, group, label) for group in TERM_GROUPS}
        compute = f"{g['linear']} + {g['attention']} + {g['pointwise']}"
        bubble = "" if p.bubble == 0 else rf" \left(1 + {sympy.latex(p.bubble)}\right)"
        rows.append(rf"T_{{\mathrm{{{tex_text(label)}}}}} &= \left({compute}\right){bubble}"
                    rf" + {g['comm_exposed']} + \max\left(0, {g['comm']} - "
                    rf"\varphi_{{\mathrm{{overlap}}}} \left({compute}\right)\right)"
                    rf" + {g['optimizer']} + {g['fixed']}")
        for group in TERM_GROUPS:
            members = [t for t in p.terms if t.side == side and t.group == group]
            if not members:
                continue
            parts = [(f"{sympy.latex(t.weight)} " if t.weight != 1 else "")
                     + term_tex(t.name, label) for t in members]
            rows.append(rf"{g[group]} &= " + " + ".join(parts))
    if p.definitions:
        rows += [rf"{term_tex(t.name, labels[t.side])} &= {sympy.latex(t.expr / t.weight)}"
                 for t in p.terms]
    return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"


renderers.register(StepPieces, write_step)
