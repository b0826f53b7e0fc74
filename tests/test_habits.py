"""What users expect of a command and a table: --version, python -m, completion,
tables that print their values, HTML in Jupyter, exports as text."""

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest

import roofline_sym as rs
from roofline_sym.cli import main
from roofline_sym.devices.toml_io import tomllib
from roofline_sym.numeric.table import Table

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- the command -----------------------------------------------------------------------
def test_version_comes_from_pyproject(capsys):
    want = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert rs.__version__ == version("roofline-sym") == want
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"roofline-sym {want}\n"


def test_python_dash_m_runs_the_command():
    out = subprocess.run([sys.executable, "-m", "roofline_sym", "hardware", "h200"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "4.8 TB/s" in out.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_script(capsys, shell):
    with pytest.raises(SystemExit):
        main(["--print-completion", shell])
    text = capsys.readouterr().out
    assert "complete -o default -F _roofline_sym roofline-sym" in text
    for word in ("breakeven", "sweep", "--preset)", "torchao", "--hardware-file"):
        assert word in text


def test_completion_completes_in_bash(capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["--print-completion", "bash"])
    script = tmp_path / "c.sh"
    script.write_text(capsys.readouterr().out)
    probe = (f"source {script}; COMP_WORDS=(roofline-sym breakeven --preset ''); "
             "COMP_CWORD=3; _roofline_sym; echo ${COMPREPLY[@]}")
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True)
    assert out.stdout.split() == ["default", "torchao", "seed"]


# -- tables -----------------------------------------------------------------------------
def _table():
    return Table({"gpu": np.array(["H100 SXM"] * 12, dtype=object),
                  "M": np.arange(1, 13) * 1024.0,
                  "lowp_time": np.linspace(1e-4, 2e-4, 12),
                  "speedup": np.linspace(0.9, 1.5, 12)}, caption="preset default")


def test_table_repr_shows_first_rows_with_units():
    text = repr(_table())
    lines = text.splitlines()
    assert lines[0] == "Table: 12 rows x 4 columns; preset default"
    assert lines[1].split() == ["gpu", "M", "lowp_time_s", "speedup"]
    assert lines[2].split()[-3:] == ["1024", "0.0001", "0.9"]
    assert lines[-1] == "... 2 more rows"


def test_table_html_for_jupyter():
    page = _table()._repr_html_()
    assert page.startswith("<table><caption>Table: 12 rows x 4 columns; preset default")
    assert "<th>lowp_time_s</th>" in page and page.count("<tr>") == 13


def test_exports_without_a_path_return_text():
    t = _table()
    csv = t.to_csv()
    assert csv.splitlines()[:2] == ["gpu,M,lowp_time_s,speedup", "H100 SXM,1024,0.0001,0.9"]
    rows = json.loads(t.to_json())
    assert rows[0] == {"gpu": "H100 SXM", "M": 1024, "lowp_time_s": 0.0001, "speedup": 0.9}
    assert isinstance(rows[0]["M"], int)


def test_sweep_result_states_its_options():
    res = rs.sweep(rs.model_grid("tensorwise", "h100"), rs.shape_set("llama3-8b", M=8192))
    first = repr(res).splitlines()[0]
    assert first.startswith("SweepResult: 7 rows x 26 columns; preset default, casts not fused")
    assert "self_attn.q_proj" in repr(res)
    assert "preset default, casts not fused, dataset default" in res._repr_html_()
    assert repr(res.model_total()).startswith(
        "Table: 1 rows x 14 columns; all linear layers, not attention, norms or communication; "
        "preset default")
    assert res.to_csv().splitlines()[1].split(",")[7:11] == ["8192", "4096", "4096", "32"]


def test_cli_exports_integers_and_units(capsys):
    code, out, _ = run(capsys, "eval", "--gpu", "h100", "--recipe", "tensorwise", "--csv")
    head, row = out.splitlines()
    assert head.split(",")[2:6] == ["M", "K", "N", "baseline_gemm_time_s"]
    assert row.split(",")[2:5] == ["8192", "8192", "8192"]


# -- one default everywhere, and said ----------------------------------------------------
def test_main_job_and_breakeven_agree_and_say_how(capsys):
    _, main_job, _ = run(capsys)
    row = next(ln.split() for ln in main_job.splitlines() if ln.startswith("tensorwise "))
    # recipe, x*, its range, regime (4 words), M*
    x_star, x_range, m_star = row[1], row[2], row[8]
    lo, hi = (float(v) for v in x_range.split("-"))
    # the range is where the measured x* lies (the band of the class's left-out
    # residuals, which may sit to one side of the model's own x*), not a band around x*
    model = rs.linear("tensorwise").on("h100")
    band = rs.fidelity.speedup_band(model, 0.8)
    for edge, f in ((lo, band[1]), (hi, band[0])):
        assert float(model.evaluate(edge, edge, edge)["speedup"]) * f == pytest.approx(1, abs=0.01)
    _, fixed, _ = run(capsys, "breakeven", "--gpu", "h100", "--recipe", "tensorwise",
                      "--solve-for", "M", "--at", "K=8192,N=8192")
    _, cube, _ = run(capsys, "breakeven", "--gpu", "h100", "--recipe", "tensorwise")
    assert fixed.splitlines()[2].split()[3] == m_star
    assert cube.splitlines()[2].split()[3] == x_star
    for text in (main_job, fixed, cube):
        assert "preset default, casts not fused, dataset default" in text.splitlines()[0]
    be = rs.breakeven(rs.linear("tensorwise").on("h100"), solve_for="M", K=8192, N=8192)
    assert f"{float(be.root_values[0]):.0f}" == m_star


# -- one's own GPU next to a built-in one -------------------------------------------------
def test_hardware_toml_starts_a_file_that_mixes_with_built_in_gpus(capsys, tmp_path):
    code, text, _ = run(capsys, "hardware", "h100", "--toml")
    assert code == 0 and 'name = "H100 SXM (custom)"' in text
    path = tmp_path / "mine.toml"
    path.write_text(text.replace("mem_bw_bytes_per_s = 3.35e+12", "mem_bw_bytes_per_s = 4e+12"))
    mine = rs.load_hardware(path).entries[0]
    assert float(mine.mem_bw) == 4e12 and mine.sources["mem_bw"].startswith("NVIDIA")
    code, out, _ = run(capsys, "sweep", "--hardware-file", str(path), "--gpu",
                       "H100 SXM (custom)", "--gpu", "h100", "--recipe", "tensorwise",
                       "--shapes", "llama3-8b", "-M", "8192", "--total")
    lines = out.splitlines()
    assert code == 0 and "dataset custom / default" in lines[0]
    custom, builtin = (float(ln.split()[-1]) for ln in lines[2:4])
    assert lines[2].startswith("H100 SXM (custom)") and custom != builtin
    # the Python API takes entries and names together
    ms = rs.model_grid("tensorwise", [*rs.load_hardware(path), "h100"])
    assert [m.hardware.name for m in ms] == ["H100 SXM (custom)", "H100 SXM"]


def test_unknown_gpu_with_a_hardware_file_is_one_line(capsys, tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(run(capsys, "hardware", "b200", "--toml")[1])
    code, _, err = run(capsys, "eval", "--hardware-file", str(path), "--gpu", "nope")
    assert code == 2 and len(err.splitlines()) == 1 and "neither in" in err


def test_fidelity_reads_the_gpu_from_the_sample_file(capsys):
    sample = ROOT / "roofline_sym" / "data" / "measurements" / "sample.csv"
    code, out, err = run(capsys, "fidelity", str(sample), "--no-regimes")
    assert code == 0 and err == ""
    assert "before: H200 SXM (default dataset)" in out and "SYNTHETIC" in out


def test_the_workload_is_an_option_and_is_stated(capsys):
    code, out, _ = run(capsys, "breakeven", "--gpu", "h100", "--recipe", "tensorwise",
                       "--workload", "ln-linear-sigmoid")
    assert code == 0 and out.splitlines()[0].endswith("workload ln-linear-sigmoid")
    ms = rs.model_grid("tensorwise", "h100", workload="ln-linear-sigmoid")
    assert ms[0].workload.name == "ln-linear-sigmoid"
    assert rs.sweep(ms, "pow2").caption.endswith("workload ln-linear-sigmoid")
