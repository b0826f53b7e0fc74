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


# -- a command's rows: a Table, written by the same writers --------------------------
def test_rows_become_typed_columns():
    t = Table.from_rows([{"gpu": "h100", "n": 3, "x": 1.5, "ok": True, "steps": [1.0, 2.0]},
                         {"gpu": "b200", "n": 4, "x": None, "ok": False, "steps": []},
                         {"gpu": "x", "n": 5, "x": float("inf"), "ok": True}])
    assert [t[c].dtype.kind for c in t.columns] == ["O", "i", "f", "b", "O"]
    assert np.isnan(t["x"][1:]).all()  # None and infinity: no value
    assert t["steps"][0] == [1.0, 2.0] and t["steps"][2] is None  # a list stays one cell
    # CSV stays flat: a list's items joined by ';'; JSON keeps it a list; a
    # float column whose every value is whole is written as integers
    assert t.to_csv().splitlines()[1:] == ["h100,3,1.5,True,1.0;2.0", "b200,4,,False,",
                                           "x,5,,True,"]
    assert t.to_json().startswith('[{"gpu": "h100", "n": 3, "x": 1.5, "ok": true, '
                                  '"steps": [1.0, 2.0]}')


def test_nested_cells_in_json_have_no_nan():
    import json

    t = Table.from_rows([{"faster": [[0.0, 12.5], [12.5, float("inf")]], "at": {"M": np.nan}}])
    (row,) = json.loads(t.to_json())  # strict JSON: no NaN or Infinity
    assert row == {"faster": [[0.0, 12.5], [12.5, None]], "at": {"M": None}}


def test_the_command_line_has_one_export_path():
    # no command writes JSON or CSV itself: each hands a Table to common.emit
    from pathlib import Path

    import roofline_sym.cli as cli

    for path in Path(cli.__file__).parent.glob("*.py"):
        text = path.read_text("utf-8")
        assert "json.dump" not in text and "CsvWriter" not in text, path.name
        if "common.emit(" in text:
            assert "Table" in text, path.name


def test_a_command_writes_what_its_table_writes(capsys):
    from roofline_sym.cli import main
    from roofline_sym.devices import dataset

    assert main(["hardware", "--csv"]) == 0
    rows = [h.as_row() for h in dataset("default")]
    assert capsys.readouterr().out == Table.from_rows(rows).to_csv()
    assert main(["hardware", "--json"]) == 0
    assert capsys.readouterr().out == Table.from_rows(rows).to_json() + "\n"
