"""The base of the column tables (``numeric.columnar.Columns``) on small tables made here,
and the tables built on it."""

import io
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, strategies as st

from roofline_sym.fidelity.own_gpu.measurement_file import parse_csv
from roofline_sym.fidelity.published_tables.gemm_kernels import GemmRows
from roofline_sym.fidelity.published_tables.speedup_table import SpeedupTable, read
from roofline_sym.numeric.columnar import Columns, row_indices


@dataclass(frozen=True, eq=False)
class Runs(Columns):
    gpu: np.ndarray
    seconds: np.ndarray
    source: str = "runs.csv"
    lines: tuple[int, ...] = ()


def _runs(lines=(2, 3, 5, 8)):
    return Runs(np.array(["h100", "b200", "h100", "mi300x"], dtype=object),
                np.array([2.0, 1.0, 3.0, 4.0]), lines=lines)


def test_length_and_columns_by_name():
    t = _runs()
    assert len(t) == 4
    assert t.column_names() == ("gpu", "seconds")  # not source, not lines
    assert t["seconds"] is t.seconds


def test_select_with_a_mask_keeps_the_rows_their_lines_and_the_source():
    t = _runs()
    h100 = t.select(t["gpu"] == "h100")
    assert type(h100) is Runs
    assert h100.gpu.tolist() == ["h100", "h100"]
    assert h100.seconds.tolist() == [2.0, 3.0]
    assert h100.lines == (2, 5) and h100.source == "runs.csv"
    assert len(t.select(np.zeros(4, bool))) == 0


def test_select_with_indices_takes_their_order():
    t = _runs()
    picked = t.select([3, 0, -1])
    assert picked.gpu.tolist() == ["mi300x", "h100", "mi300x"]
    assert picked.lines == (8, 2, 8)
    assert t.select([]).lines == () and len(t.select([])) == 0


def test_select_without_lines_stays_without():
    assert _runs(lines=()).select([1]).lines == ()


@pytest.mark.parametrize("rows, message", [
    ([True, False], "a mask of 2 values for 4 rows"),
    ([4], "out of bounds"),
    ([0.5], "integer indices"),
    ([[0, 1]], "1-d"),
])
def test_a_bad_selection_is_an_index_error(rows, message):
    with pytest.raises(IndexError, match=message):
        _runs().select(rows)


def test_an_unknown_column_names_close_matches_and_every_column():
    with pytest.raises(KeyError) as err:
        _runs()["secnds"]
    assert err.value.args[0] == ("unknown column 'secnds' (did you mean 'seconds'?); "
                                 "valid: gpu, seconds")
    with pytest.raises(KeyError, match="unknown column 'lines'"):
        _runs()["lines"]  # a field, but not a column


@given(st.lists(st.booleans(), min_size=1, max_size=30))
def test_a_mask_and_its_indices_pick_the_same_rows(mask):
    # the oracle: a list comprehension over the rows
    n = len(mask)
    t = Runs(np.array([f"g{i}" for i in range(n)], dtype=object), np.arange(n, dtype=float),
             lines=tuple(range(10, 10 + n)))
    want = [i for i, keep in enumerate(mask) if keep]
    by_mask, by_index = t.select(np.array(mask)), t.select(want)
    assert by_mask.seconds.tolist() == by_index.seconds.tolist() == [float(i) for i in want]
    assert by_mask.lines == by_index.lines == tuple(10 + i for i in want)
    assert row_indices(mask, n).tolist() == want


def test_the_fidelity_tables_are_column_tables():
    t = read(io.StringIO("gpu,recipe,mode,workload,M,K,N,measured_speedup\n"
             "h100,rowwise,training,linear,1024,1024,1024,1.2\n"
             "b200,tensorwise,training,linear,2048,2048,2048,1.4\n"))
    assert isinstance(t, SpeedupTable) and isinstance(t, Columns)
    b200 = t.select(t["gpu"] == "b200")
    assert (b200.M.tolist(), b200.measured.tolist(), b200.lines) == ([2048.0], [1.4], (3,))
    with pytest.raises(KeyError, match="did you mean 'measured'"):
        t["measure"]
    assert issubclass(GemmRows, Columns)


def test_measurements_pick_rows_as_the_column_tables_do():
    m = parse_csv("component,M,K,N,time_s\nmicro.launch,1,1,1,2e-6\n"
                  "micro.launch,2,1,1,3e-6\nmicro.launch,4,1,1,5e-6\n")
    assert m.select([2, 0]).time_s.tolist() == [5e-6, 2e-6]
    assert m.select(np.array([False, True, False])).lines == (3,)
    assert m.select(lambda c: c.M >= 2).columns["M"] == ("2", "4")
    with pytest.raises(IndexError, match="a mask of 2 values for 3 rows"):
        m.select([True, False])
