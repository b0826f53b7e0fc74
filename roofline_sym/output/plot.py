r"""Figures for papers: speedup heatmaps, break-even curves, rooflines, regime maps.

matplotlib is an optional extra (``pip install "roofline-sym[plot]"``); it is
imported inside the functions, never when ``roofline_sym`` is imported.  Every
function takes a model bound to a GPU (or ``hw=``), returns the matplotlib
``Figure`` (no pyplot state is touched) and sizes it for one paper column
(3.5 in wide, fonts of 7-8 pt).  ``save(fig, "fig.pdf")`` writes PNG, SVG or
PDF by suffix; ``style()`` and ``new_axes()`` give other figures the same look.

* ``speedup_heatmap(model)``: speedup over (M, K = N), log axes, with the
  break-even curve from the solver (exact roots per K column) drawn on top.
* ``breakeven_curves(models)``: M*(K = N) of several recipes or GPUs.
* ``roofline(model, shape)``: arithmetic intensity vs FLOP/s, the bf16 / fp8 /
  fp4 roofs and the bandwidth slope, each GEMM and cast kernel placed on it.
* ``regime_map(model)``: which regime the low-precision GEMMs / casts are in.
* ``sensitivity_plot(model)``: the elasticity of the speedup to each hardware
  number (``rs.sensitivity``) along M, the largest ones.

Shapes: M is the number of rows (tokens), K = N the layer's width; all three
are counts of elements.
"""

from __future__ import annotations

import contextlib
import math
import re
import numbers
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import sympy

from .. import symbols as S
from ..devices import Hardware
from ..errors import InputError
from ..model.gemm import Gemm
from ..model.elasticity import sensitivity
from ..model.layer import Linear, with_hardware
from ..model.presets import describe_models
from ..model.recipes import gemm_dims, tensor_dims
from ..model.term import Regime
from ..solve import SymbolicBreakEven, breakeven as solve_breakeven
from ..validate import (SHAPE_MAX, InputTypeError, choice, count, items as listed, path as
                        file_path, positive_number, show)
from .breakeven_tables import as_numeric

if TYPE_CHECKING:  # matplotlib is an optional extra, imported when drawing
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

__all__ = [
    "speedup_heatmap",
    "breakeven_curves",
    "breakeven_curve",
    "roofline",
    "regime_map",
    "sensitivity_plot",
    "save",
    "style",
    "new_axes",
    "output_format",
    "PLOT_KINDS",
    "COLUMN_WIDTH",
]

COLUMN_WIDTH = 3.5  # inches: one column of a two-column paper
PLOT_KINDS = ("heatmap", "curves", "roofline", "regimes", "sensitivity")
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}

_RC = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "axes.linewidth": 0.6,
    "lines.linewidth": 1.2,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "figure.dpi": 100,
    "savefig.dpi": 300,
    "pdf.fonttype": 42,  # TrueType, not Type 3: what publishers ask for
    "ps.fonttype": 42,
}
_DTYPE_COLORS = {"bf16": "#1f77b4", "fp16": "#17becf", "fp8": "#d95f02", "fp4": "#1b9e77",
                 "lowp": "#7570b3"}
_TIE_COLOR = "0.82"
_M_LABEL = r"$M$ (rows)"
_K_LABEL = r"$K = N$ (elements)"


def _mpl() -> ModuleType:
    try:
        import matplotlib
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "plotting needs matplotlib: pip install 'roofline-sym[plot]' "
            "(or pip install matplotlib)") from None
    return matplotlib


@contextlib.contextmanager
def style() -> Iterator[ModuleType]:
    """The figures' matplotlib settings (7-8 pt fonts, thin lines, 300 dpi,
    TrueType fonts in PDF) as a context manager; draw and ``save`` inside it.
    ``ModuleNotFoundError`` when matplotlib is missing."""
    mpl = _mpl()
    with mpl.rc_context(_RC):
        yield mpl


def new_axes(width: float = COLUMN_WIDTH, height: float = 2.6,
             ax: Axes | None = None) -> tuple[Figure, Axes]:
    """``(Figure, Axes)``: ``ax`` and its figure, or a new ``Figure`` of
    ``width`` x ``height`` inches with one Axes (constrained layout; no pyplot
    state is touched).  Call it inside ``style()``."""
    from matplotlib.figure import Figure

    if ax is not None:
        # the root Figure, which saves: an ax in a SubFigure has that as its figure
        fig = ax.figure
        while not isinstance(fig, Figure):
            fig = fig.figure  # a SubFigure's figure is its parent's root
        return fig, ax
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def output_format(path: str | os.PathLike[str]) -> str:
    """The format of an output file by its suffix: png, svg or pdf (else ValueError).

    >>> output_format("fig.PDF")
    'pdf'
    """
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise InputError(f"cannot tell the format of {show(str(path))}: use a .png, .svg or "
                         ".pdf file name")
    return fmt


def _bound(model: Any, hw: Hardware | str | None = None) -> Linear:
    bound = with_hardware(model, hw, "a plot", keyword="hw")
    if bound.hardware is None:
        raise InputError("plots need numbers: bind a GPU first (model.on('h100')) or "
                         "pass hw='h100'")
    return bound


def _gpu(mb: Linear) -> Hardware:
    """The GPU of a model ``_bound`` returned."""
    if mb.hardware is None:
        raise InputError(f"{mb!r} is not bound to a GPU")
    return mb.hardware


def _range(value: Any, name: str) -> tuple[float, float]:
    if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(
            isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in value):
        raise InputTypeError(f"{name} must be a pair (low, high) of numbers, got {show(value)}")
    lo, hi = (float(v) for v in value)
    if not (0 < lo < hi < math.inf):
        raise InputError(f"{name} must satisfy 0 < low < high, got {show(value)}")
    return lo, hi


# a figure's cells per axis and break-even columns: beyond these nothing more is seen
MAX_CELLS, MAX_POINTS = 2048, 1024


def _points(points: int) -> int:
    """The number of break-even columns (each one exact solve)."""
    return count(points, "points", minimum=2, maximum=MAX_POINTS)


def _log_grid(lo: float, hi: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` cells on a log axis: (edges, geometric centers)."""
    edges = np.geomspace(lo, hi, count(n, "resolution", minimum=1, maximum=MAX_CELLS) + 1)
    return edges, np.sqrt(edges[:-1] * edges[1:])


@dataclass(frozen=True)
class _Cells:
    """Log-spaced cells over (M, K = N): ranges, edges, centres and the mesh."""

    m_lo: float
    m_hi: float
    k_lo: float
    k_hi: float
    m_edges: np.ndarray
    k_edges: np.ndarray
    mm: np.ndarray  # M of every cell, rows over M
    kk: np.ndarray  # K (= N) of every cell

    @classmethod
    def make(cls, m_range: Any, k_range: Any, resolution: int) -> "_Cells":
        m_lo, m_hi = _range(m_range, "m_range")
        k_lo, k_hi = _range(k_range, "k_range")
        m_edges, ms = _log_grid(m_lo, m_hi, resolution)
        k_edges, ks = _log_grid(k_lo, k_hi, resolution)
        kk, mm = np.meshgrid(ks, ms)
        return cls(m_lo, m_hi, k_lo, k_hi, m_edges, k_edges, mm, kk)

    def frame(self, ax: Axes) -> None:
        """Axis limits and power-of-two ticks of the cells."""
        ax.set_xlim(self.k_lo, self.k_hi)
        ax.set_ylim(self.m_lo, self.m_hi)
        _pow2_ticks(ax, "x", self.k_lo, self.k_hi)
        _pow2_ticks(ax, "y", self.m_lo, self.m_hi)


def _pow2_ticks(ax: Axes, axis: str, lo: float, hi: float) -> None:
    """Ticks at powers of two (2^8, 2^10, ...), labelled as plain numbers up to 65536."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    e0, e1 = math.ceil(math.log2(lo) - 1e-9), math.floor(math.log2(hi) + 1e-9)
    step = max(1, math.ceil((e1 - e0 + 1) / 6))
    ticks = [2.0 ** e for e in range(e0, e1 + 1, step)]

    def fmt(v: float, _: int | None) -> str:
        if v < 1024:
            return f"{v:g}"
        return f"{v / 1024:g}k" if v < 2 ** 20 else f"{v / 2 ** 20:g}M"

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(FixedLocator(ticks))
    target.set_major_formatter(FuncFormatter(fmt))
    target.set_minor_locator(NullLocator())


# -- break-even along K = N ---------------------------------------------------------
def breakeven_curve(model: Linear, ks: Iterable[float], *, n_ratio: float = 1.0,
                    hw: Hardware | str | None = None) -> np.ndarray:
    """Break-even M* at each K (with N = n_ratio * K), from the exact solver.

    Returns an array ``(len(ks), r)`` of the values where the speedup crosses 1
    (roots, and block-scale steps that cross without a root; NaN where a column
    has fewer than ``r``); ``r`` is the largest number in any column.

    >>> import roofline_sym as rs
    >>> m = rs.linear("tensorwise", fuse=True).on("h100")
    >>> breakeven_curve(m, [4096, 16384]).round(1)
    array([[1974.4],
           [ 655.1]])
    """
    mb = _bound(model, hw)
    columns = []
    for k in ks:
        k = float(k)
        n = k * n_ratio
        be = as_numeric(solve_breakeven(mb, solve_for="M", K=_clean(k), N=_clean(n)))
        columns.append([float(v) for v in be.crossing_values])  # roots and steps
    width = max((len(c) for c in columns), default=0)
    out = np.full((len(columns), max(width, 1)), np.nan)
    for i, c in enumerate(columns):
        out[i, :len(c)] = c
    return out


def _clean(v: float) -> int | float:
    """A shape value for the solver: an int when integral (short exact rationals)."""
    r = round(v)
    return int(r) if abs(v - r) < 1e-9 * max(1.0, abs(v)) else float(f"{v:.6g}")


def _draw_breakeven(ax: Axes, mb: Linear, k_lo: float, k_hi: float, points: int, *,
                    n_ratio: float = 1.0, label: str | None = "break-even (solver)",
                    **style: Any) -> list[Line2D]:
    ks = np.unique(np.round(np.geomspace(k_lo, k_hi, _points(points))))
    roots = breakeven_curve(mb, ks, n_ratio=n_ratio)
    lines = []
    for j in range(roots.shape[1]):
        if np.all(np.isnan(roots[:, j])):
            continue
        (line,) = ax.plot(ks, roots[:, j], label=label if j == 0 else None, **style)
        line.set_gid("breakeven")
        lines.append(line)
    return lines


def _closed_form_curve(mb: Linear, ks: np.ndarray, regime: Mapping[str, str] | None = None,
                       n_ratio: float = 1.0) -> np.ndarray:
    """M*(K) from the symbolic closed form in one regime; NaN where it does not hold."""
    be = solve_breakeven(mb, solve_for="M", regime=regime or {})
    # a regime asked for: the closed form, one root (the times are linear in M)
    if not isinstance(be, SymbolicBreakEven) or be.closed_form is None:
        raise InputError(f"no closed form of M* for {mb!r}")
    k = sympy.Dummy("k", positive=True)
    sub = {S.K: k, S.N: sympy.nsimplify(n_ratio) * k}
    f = sympy.lambdify([k], be.closed_form.xreplace(sub), modules="numpy")
    with np.errstate(all="ignore"):
        m_star = np.asarray(f(ks.astype(float)), dtype=float) * np.ones_like(ks, dtype=float)
        ok = np.isfinite(m_star) & (m_star > 0)
        for _, cond in be.conditions:
            g = sympy.lambdify([S.M, k], cond.lhs.xreplace(sub) - cond.rhs.xreplace(sub),
                               modules="numpy")
            ok &= np.asarray(g(np.where(ok, m_star, 1.0), ks.astype(float))) >= -1e-12
    return np.where(ok, m_star, np.nan)


# -- speedup heatmap -----------------------------------------------------------------
def speedup_heatmap(model: Linear, *, hw: Hardware | str | None = None,
                    m_range: Any = (16, 65536), k_range: Any = (256, 32768),
                    resolution: int = 96, breakeven: bool = True, closed_form: bool = False,
                    points: int = 48, cmap: str = "RdBu", ax: Axes | None = None,
                    title: str | None = None, width: float = COLUMN_WIDTH,
                    height: float = 2.7) -> Figure:
    """Speedup (bf16 time / low-precision time) over M and K = N, log axes.

    The break-even curve (speedup = 1) is drawn from the piecewise solver, one
    exact solve per K column (``points`` columns), not traced from the image.
    ``closed_form=True`` adds the symbolic closed form M*(K) of the default
    regime (compute-bound GEMMs, bandwidth-bound casts), dashed, where its
    regime conditions hold.  Returns the Figure.
    """
    mb = _bound(model, hw)
    cells = _Cells.make(m_range, k_range, resolution)
    k_lo, k_hi = cells.k_lo, cells.k_hi
    with style():
        from matplotlib import colormaps
        from matplotlib.colors import TwoSlopeNorm
        from matplotlib.patches import Patch

        fig, ax = new_axes(width, height, ax)
        speedup = mb.evaluate(M=cells.mm, K=cells.kk, N=cells.kk,
                              integer_shapes=False)["speedup"]  # a log grid
        lo, hi = float(np.nanmin(speedup)), float(np.nanmax(speedup))
        norm = TwoSlopeNorm(vcenter=1.0, vmin=min(lo, 0.999), vmax=max(hi, 1.001))
        # exact ties (both sides at the launch floor) are not "slightly faster": gray
        tie = np.abs(speedup - 1.0) <= 1e-12
        colors = colormaps[cmap].with_extremes(bad=_TIE_COLOR)
        mesh = ax.pcolormesh(cells.k_edges, cells.m_edges, np.ma.masked_where(tie, speedup),
                             cmap=colors, norm=norm, shading="flat", rasterized=True)
        mesh.set_gid("speedup")
        cbar = fig.colorbar(mesh, ax=ax, pad=0.02)
        cbar.set_label(r"speedup $T_{\mathrm{bf16}} / T_{\mathrm{lowp}}$ ($\times$)")
        cbar.ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        if breakeven:
            _draw_breakeven(ax, mb, k_lo, k_hi, points, color="k", lw=1.3)
        if closed_form:
            kc = np.geomspace(k_lo, k_hi, 4 * points)
            (line,) = ax.plot(kc, _closed_form_curve(mb, kc), color="#ffd92f", lw=1.1,
                              ls=(0, (3, 2)), label="closed form (one regime)")
            line.set_gid("closed_form")
        cells.frame(ax)
        ax.set_xlabel(_K_LABEL)
        ax.set_ylabel(_M_LABEL)
        _set_title(ax, title if title is not None else _describe(mb))
        handles = ax.get_legend_handles_labels()[0]
        if tie.any():
            handles.append(Patch(facecolor=_TIE_COLOR, edgecolor="0.3", lw=0.4,
                                 label="equal (both launch-bound)"))
        if handles:
            ax.legend(handles=handles, loc="best", frameon=True, framealpha=0.85,
                      borderpad=0.3, handlelength=1.6)
    return fig


def _set_title(ax: Axes, text: str) -> None:
    """``ax``'s title, each line broken after a comma or semicolon where it would
    run past the figure's edge (the title is centred on the axes, as laid out
    now): never clipped."""
    from matplotlib.backends.backend_agg import RendererAgg

    title = ax.set_title(text)
    fig = ax.get_figure(root=True)
    if fig is None:  # not reached: new_axes gives axes in a figure
        return
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)  # where the axes sits once labels and colour bars have room
    box = ax.get_position()
    centre = box.x0 + box.width / 2
    limit = 0.96 * 2 * min(centre, 1 - centre) * fig.get_figwidth() * 72  # points
    measure = RendererAgg(1, 1, 72)  # type: ignore[no-untyped-call]  # 72 dpi: pixels are points
    prop = title.get_fontproperties()

    def width(line: str) -> float:
        size = measure.get_text_width_height_descent(  # type: ignore[no-untyped-call]
            line, prop, "$" in line)
        return float(size[0])

    lines = []
    for line in text.split("\n"):
        pieces = re.split(r"(?<=[,;]) ", line)
        current = pieces[0]
        for piece in pieces[1:]:
            if width(f"{current} {piece}") > limit:
                lines.append(current)
                current = piece
            else:
                current = f"{current} {piece}"
        lines.append(current)
    title.set_text("\n".join(lines))


def _describe(mb: Linear) -> str:
    """Title: the recipe, mode and GPU, then the options the model was made with."""
    return f"{mb.recipe.name} ({mb.mode}), {_gpu(mb).name}\n{describe_models([mb])}"


# -- break-even curves --------------------------------------------------------------
def _labelled(models: Any) -> list[tuple[str, Any]]:
    if isinstance(models, Linear):
        models = [models]
    if isinstance(models, Mapping):
        items = [(str(k), v) for k, v in models.items()]
    else:
        given = listed(models, "models (bound models: a list, or a mapping of label to model)",
                       Linear)
        if not given:
            raise InputError("no models to plot")
        gpus = {m.hardware.name if getattr(m, "hardware", None) else None for m in given}
        names = [m.recipe.name if isinstance(m, Linear) else repr(m) for m in given]
        if len(gpus) > 1:
            names = [f"{n}, {m.hardware.name if m.hardware else '?'}"
                     for n, m in zip(names, given)]
        items = list(zip(names, given))
    if not items:
        raise InputError("no models to plot")
    return items


def breakeven_curves(models: Any, *, hw: Hardware | str | None = None,
                     k_range: Any = (256, 65536), points: int = 48, n_ratio: float = 1.0,
                     m_max: float = 2 ** 20, ax: Axes | None = None,
                     title: str | None = None, width: float = COLUMN_WIDTH,
                     height: float = 2.5) -> Figure:
    """Break-even M*(K) per model (recipe or GPU), K = N on a log axis.

    ``models``: a list of bound models (labelled by recipe, plus the GPU when
    they differ) or a mapping ``{label: model}``; ``hw`` binds unbound ones.
    Low precision is faster above a curve (where the solver says so).  A model
    that never breaks even in the range is listed in the legend as such.
    Returns the Figure.
    """
    items = [(label, _bound(m, hw)) for label, m in _labelled(models)]
    k_lo, k_hi = _range(k_range, "k_range")
    points = _points(points)  # before a figure is made
    with style():
        fig, ax = new_axes(width, height, ax)
        ks = np.unique(np.round(np.geomspace(k_lo, k_hi, points)))
        y_lo, y_hi = math.inf, 0.0
        for i, (label, mb) in enumerate(items):
            roots = breakeven_curve(mb, ks, n_ratio=n_ratio)
            color = f"C{i % 10}"
            shown = np.where(roots <= m_max, roots, np.nan)
            if np.all(np.isnan(shown)):
                ax.plot([], [], color=color, ls=":", label=f"{label} (no break-even)")
                continue
            for j in range(roots.shape[1]):
                (line,) = ax.plot(ks, shown[:, j], color=color, label=label if j == 0 else None,
                                  marker="o" if len(ks) <= 12 else None, ms=3)
                line.set_gid("breakeven")
            y_lo = min(y_lo, float(np.nanmin(shown)))
            y_hi = max(y_hi, float(np.nanmax(shown)))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(k_lo, k_hi)
        if y_hi > 0:
            ax.set_ylim(2 ** math.floor(math.log2(y_lo)), 2 ** math.ceil(math.log2(y_hi)))
        _pow2_ticks(ax, "x", k_lo, k_hi)
        lo, hi = ax.get_ylim()
        _pow2_ticks(ax, "y", lo, hi)
        ax.set_xlabel(_K_LABEL if n_ratio == 1 else rf"$K$ (elements), $N = {n_ratio:g}K$")
        ax.set_ylabel(r"break-even $M^{*}$ (rows)")
        ax.grid(True, which="major", lw=0.4, alpha=0.4)
        if title is None:
            hws = {_gpu(mb).name for _, mb in items}
            title = ("break-even, " + next(iter(hws))) if len(hws) == 1 else "break-even"
            title += "; low precision faster above\n" + describe_models([m for _, m in items])
        _set_title(ax, title)
        ax.legend(loc="upper right", frameon=False, handlelength=1.6)
    return fig


# -- roofline ---------------------------------------------------------------------------
def _kernel_points(mb: Linear, shape: tuple[float, float, float]) -> list[dict[str, Any]]:
    """Each GEMM and cast of a bound model at a shape: FLOPs (or ops), bytes, seconds."""
    values = dict(zip(S.SHAPE_SYMBOLS, (sympy.Float(v) for v in shape)))
    times = mb.evaluate_terms(*shape)
    out = []
    for term in mb.terms:
        id, work = term.id, term.work
        seconds = float(np.asarray(times[term.name][0]))
        nbytes = float(work.bytes.xreplace(values))
        if id.kind == "gemm":
            if "memory" not in dict(term.pieces):
                # compute-only GEMM model: operands and output, no scales
                if id.role is None:  # a GEMM's id names it
                    raise InputError(f"GEMM term {term.name} has no role")
                fmt = "bf16" if id.side == "baseline" else mb.recipe.gemm_format(id.role)
                m, k, n = (d.xreplace(values) for d in gemm_dims(mb.mode)[id.role])
                nbytes = float(Gemm(id.role, m, k, n, fmt).bytes)
            out.append(dict(name=term.name, kind="gemm", gemm=id.role, dtype=work.dtype,
                            ops=float(work.flops.xreplace(values)), bytes=nbytes,
                            seconds=seconds))
        else:
            dims = tensor_dims(mb.mode)
            d0, d1 = dims[id.role] if id.role is not None and id.role in dims else (S.M, S.K)
            ops = float((d0 * d1).xreplace(values))  # one op per element
            out.append(dict(name=term.name, kind=id.kind, gemm=None, dtype=None,
                            ops=ops, bytes=nbytes, seconds=seconds))
    return out


def roofline(model: Linear, shape: Any = (8192, 8192, 8192), *,
             hw: Hardware | str | None = None, ax: Axes | None = None,
             title: str | None = None, width: float = COLUMN_WIDTH,
             height: float = 2.6) -> Figure:
    """A roofline chart with the model's kernels placed on it at ``shape`` (M, K, N).

    x: arithmetic intensity (FLOP/byte); y: performance (TFLOP/s).  Lines: the
    achievable compute roofs of bf16 / fp8 / fp4 (peak x GEMM efficiency, for
    the dtypes the GPU has) under the achievable bandwidth slope (BW x
    eta_mem).  Points: each GEMM at (2mkn / bytes, 2mkn / modelled time), colored
    by dtype; each cast kernel at (elements / bytes, elements / time), counting
    one op per element.  Kernels that move no bytes (pure launch) have no
    intensity and are counted in the legend instead.  Returns the Figure.
    """
    mb = _bound(model, hw)
    if not isinstance(shape, (tuple, list)) or len(shape) != 3:
        raise InputTypeError(f"shape must be (M, K, N) numbers, got {show(shape)}")
    shape = tuple(positive_number(v, f"shape {d}", SHAPE_MAX) for v, d in zip(shape, "MKN"))
    h = _gpu(mb)
    bw = float(h.mem_bw) * float(h.mem_efficiency if h.mem_efficiency is not None else 1)
    points = _kernel_points(mb, shape)
    with style():
        fig, ax = new_axes(width, height, ax)
        placed = [p for p in points if p["bytes"] > 0 and p["seconds"] > 0]
        ais = [p["ops"] / p["bytes"] for p in placed]
        x_lo = 10 ** math.floor(math.log10(min(ais + [1.0])) - 0.3)
        x_hi = 10 ** math.ceil(math.log10(max(ais + [1e3])) + 0.3)
        x = np.geomspace(x_lo, x_hi, 400)
        dtypes = [d for d in ("bf16", "fp8", "fp4") if h.supports(d)]
        roofs = []
        for d in reversed(dtypes):
            peak = float(h.peak_flops[d]) * float(h.gemm_efficiency.get(d, 1))
            (line,) = ax.plot(x, np.minimum(peak, x * bw) / 1e12, color=_DTYPE_COLORS[d],
                              lw=1.2, label=f"{d} roof: {peak / 1e12:.0f} TFLOP/s")
            line.set_gid(f"roof_{d}")
            roofs.append(line)
        (slope,) = ax.plot(x, x * bw / 1e12, color="0.4", lw=0.8, ls=(0, (4, 2)),
                           label=f"bandwidth {bw / 1e12:.2f} TB/s", zorder=1)
        slope.set_gid("bandwidth")
        markers = {"output": "o", "grad_input": "s", "grad_weight": "D"}
        for p in placed:
            ai, perf = p["ops"] / p["bytes"], p["ops"] / p["seconds"] / 1e12
            if p["kind"] == "gemm":
                ax.plot(ai, perf, ls="none", marker=markers.get(p["gemm"], "o"), ms=4.5,
                        mfc=_DTYPE_COLORS.get(p["dtype"], "k"), mec="k", mew=0.5,
                        gid=p["name"], zorder=3)
            else:
                ax.plot(ai, perf, ls="none", marker="^" if p["kind"] == "cast" else "v",
                        ms=4.5, mfc="white", mec="k", mew=0.7, gid=p["name"], zorder=3)
        launch_only = sum(1 for p in points if p["bytes"] <= 0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(x_lo, x_hi)
        top = max(float(h.peak_flops[d]) for d in dtypes) / 1e12
        # four decades under the highest peak, or lower to keep every kernel in
        # view (a small shape's casts, a launch-bound (1, 1, 1)), with a margin
        # of 3x under the slowest
        perfs = [p["ops"] / p["seconds"] / 1e12 for p in placed]
        ax.set_ylim(min([top / 1e4] + [min(perfs) / 3] * bool(perfs)), top * 2.5)
        ax.set_xlabel("arithmetic intensity (FLOP/byte)")
        ax.set_ylabel("performance (TFLOP/s)")
        ax.grid(True, which="major", lw=0.4, alpha=0.4)
        m, k, n = (f"{v:g}" for v in shape)
        _set_title(ax, title if title is not None else
                     f"{mb.recipe.name}, {h.name}, $M = {m}$, $K = {k}$, $N = {n}$\n"
                     + describe_models([mb]))
        _roofline_legends(ax, roofs + [slope], placed, launch_only, markers)
    return fig



def _roofline_legends(ax: Axes, lines: list[Any], placed: list[dict[str, Any]],
                      launch_only: int, markers: dict[str, str]) -> None:
    """The roofs' legend in the empty upper left, the kernels' in the lower right."""
    from matplotlib.lines import Line2D

    kinds = [Line2D([], [], ls="none", marker=mk, mfc="0.75", mec="k", mew=0.5, ms=4.5,
                    label=f"GEMM {g.replace('_', ' ')}")
             for g, mk in markers.items() if any(p["gemm"] == g for p in placed)]
    cast_label = "cast (1 op/element)"
    if launch_only:
        cast_label += f"; +{launch_only} launch-only"
    if any(p["kind"] == "cast" for p in placed) or launch_only:
        kinds.append(Line2D([], [], ls="none", marker="^", mfc="white", mec="k", mew=0.7,
                            ms=4.5, label=cast_label))
    if any(p["kind"] == "activation" for p in placed):
        kinds.append(Line2D([], [], ls="none", marker="v", mfc="white", mec="k", mew=0.7,
                            ms=4.5, label="bf16 activation (1 op/element)"))
    # rooflines leave the upper left empty: the roofs' legend goes there
    first = ax.legend(handles=lines, loc="upper left", frameon=False,
                      handlelength=1.4, borderpad=0.3, labelspacing=0.25,
                      title=r"achievable (peak $\times$ efficiency)", alignment="left")
    ax.add_artist(first)
    ax.legend(handles=kinds, loc="lower right", frameon=True, framealpha=0.9,
              handlelength=1.4, borderpad=0.3, labelspacing=0.25)


# -- regime map ------------------------------------------------------------------------
_GEMM_HUES = {"compute": "Blues", "memory": "Oranges", "launch": "Greys",
              "compute+memory": "Purples", "memory+launch": "Greens",
              "compute+launch": "PuRd", "compute+memory+launch": "YlOrBr"}


def _abbrev(state: str) -> str:
    return Regime.parse(state).letters


def _state(labels: list[np.ndarray]) -> np.ndarray:
    """Per cell, the combined regime of several terms, written ``compute+memory``
    (``""`` where there are no terms)."""
    if not labels:
        return np.array("")
    stack = np.stack(labels)
    bits = np.zeros(stack.shape[1:], dtype=np.int64)
    for r in (Regime.COMPUTE, Regime.MEMORY, Regime.LAUNCH):
        bits |= np.where(np.any(stack == str(r), axis=0), r.value, 0)
    written = {b: str(Regime(int(b))) if b else "" for b in np.unique(bits).tolist()}
    out: np.ndarray = np.vectorize(written.__getitem__, otypes=[object])(bits)
    return out


def _category_color(gemm: str, cast: str) -> tuple[float, float, float, float]:
    from matplotlib import colormaps

    cmap = colormaps[_GEMM_HUES.get(gemm, "Purples")]
    shade = {"memory": 0.75, "memory+launch": 0.55, "launch": 0.32, "": 0.6}.get(cast, 0.45)
    return cmap(shade)


def regime_map(model: Linear, *, hw: Hardware | str | None = None,
               m_range: Any = (16, 65536), k_range: Any = (256, 32768),
               resolution: int = 96, side: str = "lowp", breakeven: bool = True,
               points: int = 48, ax: Axes | None = None, title: str | None = None,
               width: float = COLUMN_WIDTH, height: float = 3.4) -> Figure:
    """For each (M, K = N) cell, the regime of the GEMMs / casts (categorical image).

    ``side="lowp"`` (default) maps the low-precision GEMMs and casts;
    ``"baseline"`` the bf16 GEMMs.  Kernels that move no bytes are always at
    the launch floor and are left out.  The break-even curve is drawn on top.
    Returns the Figure.
    """
    if side not in ("lowp", "baseline"):
        raise InputError(f"side must be 'lowp' or 'baseline', not {side!r}")
    mb = _bound(model, hw)
    cells = _Cells.make(m_range, k_range, resolution)
    mm = cells.mm
    with style():
        from matplotlib.colors import BoundaryNorm, ListedColormap
        from matplotlib.patches import Patch

        fig, ax = new_axes(width, height, ax)
        terms = mb.evaluate_terms(mm, cells.kk, cells.kk, integer_shapes=False)
        varying = [t for t in mb.terms if len(t.pieces) > 1 and t.side == side]
        gemm = _state([terms[t.name][1] for t in varying if t.group == "gemm"])
        cast = _state([terms[t.name][1] for t in varying if t.group != "gemm"])
        gemm = np.broadcast_to(gemm, mm.shape)
        cast = np.broadcast_to(cast, mm.shape)

        def rank(s: str) -> tuple[int, ...]:
            return Regime.parse(s).order

        cats = sorted({(g, c) for g, c in zip(gemm.ravel(), cast.ravel())},
                      key=lambda gc: (rank(gc[0]), rank(gc[1])))
        index = {gc: i for i, gc in enumerate(cats)}
        codes = np.vectorize(lambda g, c: index[(g, c)], otypes=[int])(gemm, cast)
        colors = [_category_color(g, c) for g, c in cats]
        cmap = ListedColormap(colors)
        norm = BoundaryNorm(np.arange(len(cats) + 1) - 0.5, len(cats))
        mesh = ax.pcolormesh(cells.k_edges, cells.m_edges, codes, cmap=cmap, norm=norm,
                             shading="flat", rasterized=True)
        mesh.set_gid("regimes")
        ax.set_xscale("log")
        ax.set_yscale("log")
        if breakeven and side == "lowp":
            _draw_breakeven(ax, mb, cells.k_lo, cells.k_hi, points, color="k", lw=1.2,
                            label=None)
        cells.frame(ax)
        ax.set_xlabel(_K_LABEL)
        ax.set_ylabel(_M_LABEL)
        _set_title(ax, title if title is not None else _describe(mb))
        who = "low-precision" if side == "lowp" else "bf16"
        has_casts = any(c for _, c in cats)
        handles: list[Artist] = [
            Patch(facecolor=col, edgecolor="0.3", lw=0.4,
                  label=f"{_abbrev(g)} / {_abbrev(c)}" if has_casts else _abbrev(g))
            for (g, c), col in zip(cats, colors)]
        if breakeven and side == "lowp":
            from matplotlib.lines import Line2D

            handles.append(Line2D([], [], color="k", lw=1.2, label="break-even"))
        fig.legend(handles=handles, loc="outside lower center", ncol=4, frameon=False,
                   title=f"{who} GEMMs{' / casts' if has_casts else ''}: "
                         "C compute, M memory, L launch-bound",
                   handlelength=1.2, handletextpad=0.4, columnspacing=0.9)
        # for tests and callers: code -> (gemm, cast) regimes, an attribute of our own
        mesh.categories = cats  # type: ignore[attr-defined]
    return fig


# -- sensitivities ----------------------------------------------------------------------------
def sensitivity_plot(model: Linear, *, hw: Hardware | str | None = None,
                     shape: Any = (8192, 8192, 8192), m_range: Any = (16, 65536),
                     points: int = 64, top: int = 6, ax: Axes | None = None,
                     title: str | None = None, width: float = COLUMN_WIDTH,
                     height: float = 2.6) -> Figure:
    """The elasticity ``d ln speedup / d ln x`` of the ``top`` hardware numbers
    (largest anywhere on the axis) along M, at the K and N of ``shape`` (its M
    is marked).  Returns the Figure.
    """
    mb = _bound(model, hw)
    m_lo, m_hi = _range(m_range, "m_range")
    shape = tuple(positive_number(v, f"shape {d}", SHAPE_MAX) for d, v in zip("MKN", shape))
    top = count(top, "top", minimum=1, maximum=64)
    ms = np.geomspace(m_lo, m_hi, _points(points))
    found = sensitivity(mb, at=(ms, shape[1], shape[2]))
    shown = sorted(found, key=lambda x: (-float(np.max(np.abs(found[x]))), str(x)))[:top]
    with style():
        fig, ax = new_axes(width, height, ax)
        for x in shown:
            ax.plot(ms, found[x], label=f"${S.latex_name(x)}$", gid=f"elasticity {x}")
        ax.axhline(0.0, color="0.6", lw=0.6)
        if m_lo <= shape[0] <= m_hi:
            ax.axvline(shape[0], color="0.6", lw=0.6, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_xlabel(_M_LABEL)
        ax.set_ylabel(r"$\partial \ln S / \partial \ln x$")
        _set_title(ax, title if title is not None else
                     f"{_describe(mb)}, K = {shape[1]:g}, N = {shape[2]:g}")
        ax.legend(loc="best", ncol=2, frameon=False, handlelength=1.5)
    return fig


# -- output -------------------------------------------------------------------------------
def save(fig: Figure, path: str | os.PathLike[str], *, dpi: int = 300) -> Path:
    """Write ``fig`` to ``path``; the format comes from the suffix (.png, .svg, .pdf)."""
    path = Path(path)
    fmt = output_format(path)
    with style():
        fig.savefig(path, format=fmt, dpi=dpi)
    return path
