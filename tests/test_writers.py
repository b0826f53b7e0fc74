"""One writer per format: every table format is registered once and found by
name or by a file's suffix; each writes what its golden text says."""

import numpy as np
import pytest

from roofline_sym.errors import RooflineError
from roofline_sym.numeric import writers
from roofline_sym.numeric.table import Table


def _table():
    # a text column with the characters each format must escape, a whole-number
    # column (written as integers), a time with its unit, a missing value
    return Table({"recipe": np.array(["a_b|c", "d&e"]), "M": np.array([4096.0, 8192.0]),
                  "lowp_time": np.array([1.5e-4, np.nan])})


def test_each_format_is_registered_once_with_its_suffixes():
    assert set(writers.WRITERS) == {"csv", "json", "markdown", "latex", "netcdf"}
    suffixes = [s for w in writers.WRITERS.values() for s in w.suffixes]
    assert len(suffixes) == len(set(suffixes))
    for w in writers.WRITERS.values():
        for s in w.suffixes:
            assert writers.writer_for(f"out{s.upper()}") is w  # case does not matter


def test_unknown_formats_and_suffixes_are_the_libraries_errors():
    with pytest.raises(RooflineError, match="table format"):
        writers.writer("xlsx")
    with pytest.raises(RooflineError, match="no table format for the suffix '.xlsx'"):
        writers.writer_for("out.xlsx")
    with pytest.raises(RooflineError, match="format="):
        _table().write()


def test_markdown_golden():
    # numbers right-aligned, text left; "|" escaped; NaN an empty cell
    assert _table().write(format="markdown") == (
        "| recipe | M | lowp_time_s |\n"
        "|:---|---:|---:|\n"
        "| a_b\\|c | 4096 | 0.00015 |\n"
        "| d&e | 8192 |  |")


def test_latex_golden():
    # booktabs; LaTeX's specials in cells and headers escaped
    assert _table().write(format="latex") == (
        "\\begin{tabular}{lrr}\n\\toprule\n"
        "recipe & M & lowp\\_time\\_s \\\\\n\\midrule\n"
        "a\\_b|c & 4096 & 0.00015 \\\\\n"
        "d\\&e & 8192 &  \\\\\n"
        "\\bottomrule\n\\end{tabular}")


def test_write_by_suffix_is_the_formats_writer(tmp_path):
    t = _table()
    for name, suffix in (("csv", ".csv"), ("json", ".json"), ("markdown", ".md"),
                         ("latex", ".tex")):
        path = tmp_path / f"t{suffix}"
        assert t.write(path) is None
        assert path.read_text() == t.write(format=name)
    assert t.write(format="csv") == t.to_csv() and t.write(format="json") == t.to_json()


def test_netcdf_round_trip(tmp_path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("scipy")  # xarray's netCDF3 writer without netCDF4
    t = _table()
    t.write(tmp_path / "t.nc")
    ds = xr.open_dataset(tmp_path / "t.nc")
    assert list(ds.data_vars) == ["recipe", "M", "lowp_time_s"]
    assert ds["M"].values.tolist() == [4096.0, 8192.0]
    assert ds["recipe"].values.tolist() == ["a_b|c", "d&e"]
    ds.close()
    with pytest.raises(RooflineError, match="binary"):
        t.write(format="netcdf")
