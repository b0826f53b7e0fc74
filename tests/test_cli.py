"""The command line, through its real entry point."""

import json
import shutil
import subprocess
import sys

import pytest

from roofline_sym.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_no_arguments_runs_the_main_job(capsys):
    code, out, err = run(capsys)
    assert code == 0 and err == ""
    assert "H100 SXM" in out and "break-even" in out
    for recipe in ("tensorwise", "rowwise", "blockwise", "dynamic", "delayed"):
        assert recipe in out
    # MX recipes need block-scaled GEMMs, which Hopper lacks: said, not priced
    assert "mxfp8_cublas" in out.split("not run on")[1]
    # the tensorwise row carries the cube break-even solved by rs.breakeven,
    # with the same default options, stated on the first line
    import roofline_sym as rs

    assert out.splitlines()[0].endswith("preset default, casts not fused, dataset default, "
                                        "workload linear")
    model = rs.linear("tensorwise").on("h100")
    x_star = rs.breakeven(model, along="cube").root_values[0]
    row = next(line for line in out.splitlines() if line.startswith("tensorwise"))
    assert f"{x_star:.0f}" == row.split()[1]


def test_console_script_entry_point():
    exe = shutil.which("roofline-sym")
    cmd = [exe] if exe else [sys.executable, "-m", "roofline_sym.cli"]
    out = subprocess.run(cmd + ["hardware", "h200"], capture_output=True, text=True)
    assert out.returncode == 0 and "4.8 TB/s" in out.stdout


def test_hardware_list_and_show(capsys):
    code, out, _ = run(capsys, "hardware")
    assert code == 0 and "MI355X" in out and "Gaudi 3" in out
    code, out, _ = run(capsys, "hardware", "NVIDIA H100 80GB HBM3")
    assert code == 0 and "3.35 TB/s" in out and "NVIDIA" in out  # a source is shown
    code, out, _ = run(capsys, "hardware", "--dataset", "torchao", "NVIDIA GeForce RTX 5090")
    assert code == 0 and "1.792e15" in out  # the correction is flagged
    code, out, _ = run(capsys, "hardware", "--json")
    assert code == 0 and any(e["name"] == "B200 (HGX)" for e in json.loads(out))


def test_hardware_file(capsys, tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('[[gpu]]\nname = "Mine"\npeak_flops_per_s = { bf16 = 1e15 }\n'
                    'mem_bw_bytes_per_s = 2e12\n[gpu.sources]\n'
                    'peak_flops_per_s = "assumed; spec"\nmem_bw_bytes_per_s = "assumed; spec"\n')
    code, out, _ = run(capsys, "hardware", "--hardware-file", str(path))
    assert code == 0 and "Mine" in out


def test_recipes(capsys):
    code, out, _ = run(capsys, "recipes", "--mode", "inference")
    assert code == 0 and out.split() == [
        "tensorwise", "tensorwise_static", "rowwise", "mxfp8", "mxfp4", "nvfp4",
        "nvfp4_static", "nvfp4_no_global_scale", "blockwise"]


def test_eval_json(capsys):
    code, out, _ = run(capsys, "eval", "--gpu", "h100", "--recipe", "rowwise",
                       "--shape", "4096,4096,4096", "--shape", "8192,8192,8192", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["M"] for r in rows] == [4096, 8192]
    assert rows[1]["speedup"] > rows[0]["speedup"] > 0


def test_breakeven_cube_and_solve_for(capsys):
    code, out, _ = run(capsys, "breakeven", "--gpu", "h100", "--recipe", "tensorwise",
                       "--fuse", "--preset", "torchao", "--solve-for", "M",
                       "--at", "K=8192,N=8192")
    assert code == 0 and "1094" in out
    code, out, _ = run(capsys, "breakeven", "--gpu", "b200", "--recipe", "mxfp8",
                       "--mode", "inference", "--json")
    (row,) = json.loads(out)
    assert code == 0 and row["variable"] == "x" and not row["aligned"] and row["steps"] == []


def test_formula_text_and_latex(capsys):
    code, out, _ = run(capsys, "formula", "--recipe", "rowwise", "--mode", "inference")
    assert code == 0 and out.startswith("baseline_gemm_time = Max(")
    code, out, _ = run(capsys, "formula", "--recipe", "rowwise", "--term",
                       "lowp.gemm.output", "--latex")
    assert code == 0 and r"P_{\mathrm{fp8}}" in out


def test_sweep_total_and_csv(capsys, tmp_path):
    code, out, _ = run(capsys, "sweep", "--gpu", "h100", "--recipe", "tensorwise",
                       "--shapes", "llama3-70b", "-M", "16384", "--total")
    assert code == 0 and "llama3-70b" in out
    shapes = tmp_path / "s.csv"
    shapes.write_text("M,K,N\n4096,4096,4096\n8192,8192,8192\n")
    code, out, _ = run(capsys, "sweep", "--gpu", "h200", "--recipe", "rowwise",
                       "--shapes", str(shapes), "--csv")
    lines = out.strip().splitlines()
    assert code == 0 and len(lines) == 3 and "speedup" in lines[0]


def test_plot_writes_files(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    for kind, extra, name in (("heatmap", ["--fuse"], "h.png"),
                              ("roofline", ["--shape", "4096,8192,8192"], "r.svg")):
        out = tmp_path / name
        code, text, _ = run(capsys, "plot", kind, "--gpu", "h100", "--recipe", "tensorwise",
                            *extra, "-o", str(out))
        assert code == 0 and out.stat().st_size > 1000 and str(out) in text


def test_formula_breakeven_closed_form(capsys):
    code, out, _ = run(capsys, "formula", "--recipe", "tensorwise", "--fuse", "--preset",
                       "torchao", "--breakeven")
    assert code == 0 and "M* = (5*t_launch + 8*K*N/(BW*eta_mem))" in out


def test_fidelity_on_the_synthetic_sample(capsys, tmp_path):
    from roofline_sym.fidelity.own_gpu.comparison import sample_path

    out_toml = tmp_path / "cal.toml"
    code, out, _ = run(capsys, "fidelity", str(sample_path()), "--gpu", "h200",
                       "--write-hardware", str(out_toml), "--no-regimes")
    assert code == 0 and "SYNTHETIC" in out and "after:" in out
    import roofline_sym as rs

    (hw,) = rs.load_hardware(out_toml)
    assert hw.peak_flops == rs.hardware("h200").peak_flops


def test_measure_without_a_gpu_is_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "measure", "--out", str(tmp_path / "m.csv"))
    assert code == 2 and err.count("\n") == 1 and ("CUDA" in err or "torch" in err)


def test_outputs_are_valid_json_and_flat_csv(capsys):
    code, out, _ = run(capsys, "breakeven", "--gpu", "h100", "--recipe", "tensorwise",
                       "--recipe", "rowwise", "--json")
    rows = json.loads(out)  # strict: no NaN or Infinity
    assert code == 0 and all(isinstance(r["first_root"], float) for r in rows)
    assert rows[0]["faster"][-1][1] is None  # (x*, oo)
    code, out, _ = run(capsys, "hardware", "--csv")
    header = out.splitlines()[0].split(",")
    assert code == 0 and "peak_fp8_flops_per_s" in header and "{" not in out
    code, out, _ = run(capsys, "hardware", "h200", "--json")
    (row,) = json.loads(out)
    assert row["mem_bw_bytes_per_s"] == 4.8e12 and row["peak_fp4_flops_per_s"] is None


def test_skipped_pairs_are_one_note(capsys):
    code, out, err = run(capsys, "eval", "--gpu", "h100", "--gpu", "a100", "--recipe",
                         "tensorwise", "--recipe", "mxfp8_cublas")
    assert code == 0 and err.count("\n") == 1 and "skipped 3 recipe x GPU pair(s)" in err
    assert "H100 SXM" in out and "tensorwise" in out


def test_sweep_output_format_from_suffix(capsys, tmp_path):
    out = tmp_path / "s.json"
    code, _, _ = run(capsys, "sweep", "--gpu", "h100", "--recipe", "rowwise", "--shapes",
                     "pow2", "-o", str(out))
    assert code == 0 and len(json.loads(out.read_text())) == 5


def test_fuse_default_follows_the_preset(capsys):
    _, seed, _ = run(capsys, "formula", "--recipe", "dynamic", "--preset", "seed")
    _, seed_unfused, _ = run(capsys, "formula", "--recipe", "dynamic", "--preset", "seed",
                             "--no-fuse")
    assert seed != seed_unfused and "3*t_launch" in seed


def test_help_everywhere_has_examples(capsys):
    for cmd in ("hardware", "recipes", "formula", "eval", "breakeven", "sweep", "plot",
                "measure", "fidelity"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        assert "examples:" in capsys.readouterr().out


BAD_INPUT = [
    (["hardware", "h20"], "unknown hardware 'h20'"),
    (["eval", "--gpu", "a100", "--recipe", "tensorwise"], "no dense fp8 peak"),
    (["eval", "--gpu", "h100", "--recipe", "mxfp4_cutlass"], "no dense fp4 peak"),
    (["eval", "--gpu", "h100", "--shape", "1,2"], "expected three numbers"),
    (["eval", "--gpu", "h100", "--shape", "1,-2,3"], "positive finite"),
    (["eval", "--gpu", "h100", "--shape", "1,nan,3"], "positive finite"),
    (["eval", "--gpu", "h100", "--shape", "1.5,8192,8192"], "'1.5' is not an integer"),
    (["eval", "--gpu", "h100", "--shape", "9007199254740993,1,1"], "is beyond 2**53"),
    (["sweep", "--gpu", "h100", "--shapes", "llama3-8b", "-M", "1.5"], "'1.5' is not an integer"),
    (["sweep", "--gpu", "h100", "--shapes", "pow2", "--csv", "-o", "x.json"],
     "the file name says json"),
    (["sweep", "--gpu", "h100", "--shapes", "pow2", "--json", "-o", "x.csv"],
     "the file name says csv"),
    (["sweep", "--gpu", "h100", "--shapes", "pow2", "--csv", "--max-rows", "5"],
     "--max-rows limits the rows shown as text"),
    (["formula", "--recipe", "rowwise", "--at", "K=8192"], "it needs --breakeven"),
    (["formula", "--recipe", "rowwise", "--breakdown", "--term", "lowp.gemm.output"],
     "give one of --term, --breakdown"),
    (["fidelity", "x.csv", "--no-calibrate", "--size-dependent"], "--size-dependent"),
    (["eval", "--recipe", "tensorwse"], "did you mean 'tensorwise'"),
    (["eval", "--gpu", "h100", "--shape", "__import__('os'),1,1"], "not numbers"),
    (["eval", "--gpu", "h100", "--recipe", "fp6"], "unknown training recipe 'fp6'"),
    (["hardware", "--hardware-file", "/nonexistent.toml"], "cannot read hardware file"),
    (["eval", "--gpu", "h100", "--hardware-file", "/nonexistent.toml"], "cannot read"),
    (["breakeven", "--gpu", "h100", "--solve-for", "Q", "--at", "K=1,N=1"], "solve for M, K or N"),
    (["breakeven", "--gpu", "h100", "--solve-for", "M", "--at", "K=8192"], "needs fixed values for N"),
    (["breakeven", "--gpu", "h100", "--solve-for", "M", "--at", "K=1e400,N=1"], "positive finite"),
    (["breakeven", "--gpu", "h100", "--solve-for", "M", "--at", "K8192"], "NAME=NUMBER"),
    (["breakeven", "--gpu", "h100", "--solve-for", "M", "--at", "K=1,N=1,n=2"],
     "unknown --at name 'n' (did you mean 'N'?); valid: M, K, N"),
    (["breakeven", "--gpu", "h100", "--solve-for", "M", "--along", "cube"], "not both"),
    (["sweep", "--gpu", "h100", "--shapes", "llama5"], "unknown shape set"),
    (["sweep", "--gpu", "h100"], "--shapes is required"),
    (["sweep", "--gpu", "h100", "--shapes", "/nonexistent.csv"], "nonexistent.csv"),
    (["formula", "--recipe", "rowwise", "--term", "lowp.gemm.nope"],
     "unknown term 'lowp.gemm.nope' (did you mean 'lowp.gemm.output'"),
    (["fidelity", "/nonexistent.csv"], "nonexistent.csv"),
    (["plot", "heatmap", "--gpu", "h100", "--recipe", "tensorwise", "-o", "x.txt"],
     "use a .png, .svg or .pdf"),
    (["plot", "roofline", "--gpu", "h100", "--recipe", "tensorwise", "--shape", "1,2",
      "-o", "x.png"], "expected three numbers"),
    (["plot", "heatmap", "--gpu", "h100", "--recipe", "tensorwise", "--shape", "1,2,3",
      "-o", "x.png"], "plot heatmap takes none"),
    (["plot", "heatmap", "--gpu", "h100", "-o", "x.png"], "draws one model"),
    (["breakeven", "--gpu", "h100", "--recipe", "tensorwise", "--solve-for", "M",
      "--at", "K=1e300,N=1e300"], "up to 2**53"),
    (["eval", "--gpu", "h100", "--shape", "1e300,1e300,1e300"], "up to 2**53"),
    (["breakeven", "--gpu", "h100", "--along", "cube", "--at", "K=5"], "--at fixes"),
    (["breakeven", "--gpu", "h100", "--solve-for", "M", "--at", "K=8,N=8,M=5"],
     "cannot also be fixed"),
    (["breakeven", "--gpu", "h100", "--solve-for", "M", "--at", "K=8", "--at", "K=9,N=1"],
     "'K' given twice"),
    (["sweep", "--gpu", "h100", "--recipe", "rowwise", "--shapes", "pow2", "-o", "x.txt"],
     "use a .csv or .json file"),
    (["formula", "--recipe", "rowwise", "--recipe", "tensorwise"], "one --recipe"),
    (["hardware", "--dataset", "seed", "--hardware-file", "x.toml"], "not both"),
    (["eval", "--mode", "bogus"], "invalid choice: 'bogus'"),
    (["sweep", "--shapes", "pow2", "--max-rows", "-1"], "must be 0 or more"),
    (["nonsense"], "invalid choice"),
    (["eval", "--gpu", "b200", "--groups", "0"], "'0' is not a number of experts"),
    (["eval", "--gpu", "b200", "--groups", "1.5"], "'1.5' is not a number of experts"),
    (["eval", "--gpu", "b200", "--groups", "x"], "'x' is not a number of experts"),
    (["filter", "--gpu", "h100", "--shapes", "llama3-8b"], "one --recipe"),
    # every recipe on an A100 but the emulated one (bf16 GEMMs) needs an fp8 peak
    (["eval", "--gpu", "a100", "--recipe", "blockwise"], "no dense fp8 peak"),
]


@pytest.mark.parametrize("argv, message", BAD_INPUT)
def test_bad_input_one_line_exit_2(capsys, argv, message):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("module, argv, says", [
    ("scipy.optimize", ["fidelity", "--published", "--heldout"], "roofline-sym[fit]"),
    ("matplotlib", ["fidelity", "--published", "--plot", "{tmp}/f.png"], "roofline-sym[plot]"),
])
def test_a_missing_extra_is_one_line_naming_it(capsys, monkeypatch, tmp_path, module, argv, says):
    monkeypatch.setitem(sys.modules, module, None)  # `import module` raises ImportError
    code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and says in err and err.count("\n") == 1 and "Traceback" not in err


def test_every_command_prints_times_in_seconds(capsys):
    # one convention: eval's text, sweep's totals and every export give seconds,
    # the unit in the header (``_s``), the value the API returns
    import re

    import roofline_sym as rs

    model = rs.linear("rowwise").on("h100")
    want = model.evaluate(16384, 8192, 28672)
    code, out, _ = run(capsys, "eval", "--gpu", "h100", "--recipe", "rowwise", "--shape",
                       "16384,8192,28672")
    head, row = out.splitlines()[1:]
    cells = dict(zip(head.split(), re.split(r"\s{2,}", row.strip())))
    assert code == 0 and "us" not in head.split()
    for column in ("baseline_time", "lowp_time"):
        assert float(cells[column + "_s"]) == pytest.approx(float(want[column]), rel=1e-3)
    total = rs.sweep(model, rs.shape_set("llama3-8b")).model_total()
    code, out, _ = run(capsys, "sweep", "--gpu", "h100", "--recipe", "rowwise", "--shapes",
                       "llama3-8b", "--total")
    head, row = out.splitlines()[1:3]
    cells = dict(zip(head.split(), re.split(r"\s{2,}", row.strip())))
    assert float(cells["lowp_time_s"]) == pytest.approx(total["lowp_time"][0], rel=1e-3)
    code, out, _ = run(capsys, "eval", "--gpu", "h100", "--recipe", "rowwise", "--csv")
    assert "lowp_time_s" in out.splitlines()[0]


def test_filter_prints_each_decision_and_the_total(capsys):
    import re

    import numpy as np

    import roofline_sym as rs

    code, out, _ = run(capsys, "filter", "--gpu", "h100", "--recipe", "rowwise", "--preset",
                       "torchao", "--shapes", "llama3-8b", "--skip", "o_proj")
    assert code == 0
    lines = out.splitlines()
    rows = {re.split(r"\s{2,}", line.strip())[0]: re.split(r"\s{2,}", line.strip())
            for line in lines[2:9]}
    res = rs.sweep(rs.linear("rowwise", preset="torchao").on("NVIDIA H100"), "llama3-8b")
    for name, speedup in zip(res["name"], res["speedup"]):
        want = ("bf16 (skipped)" if "o_proj" in name else
                "convert" if speedup > 1 else "bf16 (slower)")
        assert rows[name][-1] == want, name
    kept = {n for n, s in zip(res["name"], res["speedup"]) if s > 1 and "o_proj" not in n}
    total = res.model_total(convert=kept).rows[0]
    count, converted, speedup, every = lines[-1].split()
    assert (float(count), float(converted)) == (total["count"], total["converted"])
    assert float(speedup) == pytest.approx(total["speedup"], rel=1e-3)
    assert float(every) == pytest.approx(total["speedup_all"], rel=1e-3)
    assert "not attention, norms or communication" in out
    code, out, _ = run(capsys, "filter", "--gpu", "h100", "--recipe", "rowwise", "--shapes",
                       "llama3-8b", "--json")
    decisions = json.loads(out)
    assert code == 0 and len(decisions) == 7 and set(decisions[0]) >= {"name", "decision"}
    assert np.all([d["M"] == 8192 for d in decisions])


def test_sweep_takes_a_hugging_face_config_directory(capsys, tmp_path):
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(hidden_size=256, intermediate_size=512,
                                      num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, vocab_size=1000)
    config.save_pretrained(tmp_path / "tiny")
    code, out, err = run(capsys, "sweep", "--gpu", "h100", "--recipe", "rowwise", "--shapes",
                         str(tmp_path / "tiny"), "-M", "1024", "--csv")
    assert code == 0, err
    lines = out.splitlines()
    # 4 distinct shapes of the blocks; lm_head left out, as in the shipped sets
    assert len(lines) == 1 + 4 and not any("lm_head" in line for line in lines)
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "sweep", "--gpu", "h100", "--shapes", str(tmp_path / "empty"))
    assert code == 2 and "without config.json" in err


def test_groups_on_the_command_line(capsys):
    import roofline_sym as rs

    code, out, _ = run(capsys, "eval", "--gpu", "b200", "--recipe", "mxfp8_cublas", "--groups",
                       "8", "--shape", "131072,7168,2048", "--json")
    (row,) = json.loads(out)
    want = rs.linear("mxfp8_cublas", groups=8).on("b200").evaluate(131072, 7168, 2048)
    assert code == 0 and row["speedup"] == pytest.approx(float(want["speedup"]), rel=1e-12)
    assert row["speedup"] != pytest.approx(float(rs.linear("mxfp8_cublas").on("b200").evaluate(
        131072, 7168, 2048)["speedup"]), rel=1e-6)
    code, out, _ = run(capsys, "sweep", "--gpu", "h100", "--recipe", "rowwise", "--shapes",
                       "dsv3-671b-moe", "--max-rows", "2")
    assert out.splitlines()[1].split()[3:7] == ["M", "K", "N", "groups"]


def test_recipes_mark_where_each_comes_from(capsys):
    code, out, _ = run(capsys, "recipes")
    lines = dict(line.split(None, 1) if " " in line else (line, "") for line in out.splitlines())
    assert code == 0
    assert lines["dynamic"] == lines["delayed"] == "[seed document only]"
    assert lines["rowwise"] == "" and lines["mxfp8_32x32_weight"] == "[modelled only]"
    code, out, _ = run(capsys, "recipes", "-v")
    at = out.splitlines().index(next(line for line in out.splitlines()
                                      if line.startswith("rowwise ")))
    assert "one fp32 scale per row" in out.splitlines()[at]
    assert out.splitlines()[at + 1].strip() == ('torchao: convert_to_float8_training(model, '
                                                'config=Float8LinearConfig.from_recipe_name'
                                                '("rowwise"))')
    code, out, _ = run(capsys, "recipes", "--mode", "inference", "--json")
    rows = {r["recipe"]: r for r in json.loads(out)}
    assert "PerRow()" in rows["rowwise"]["torchao"] and rows["nvfp4"]["origin"] == "torchao"


def test_seed_only_recipes_are_marked_wherever_recipes_are_listed(capsys):
    # the main job's table: the seed's scalings carry the mark, torchao's do not
    code, out, _ = run(capsys)
    rows = {line.split()[0]: line for line in out.splitlines()
            if line.split() and line.split()[0] in rs_recipes()}
    assert code == 0 and set(rows) >= {"tensorwise", "dynamic", "delayed"}
    for name, line in rows.items():
        assert ("[seed document only]" in line) == (name in ("dynamic", "delayed")), line
    assert "seed document only: dynamic, delayed" in out
    # commands that run every recipe say which ones are the seed's
    code, out, err = run(capsys, "eval", "--gpu", "h100")
    assert code == 0 and "dynamic, delayed: the seed document's fp8 scalings" in err
    code, out, err = run(capsys, "eval", "--gpu", "h100", "--recipe", "rowwise")
    assert code == 0 and "seed" not in err


def rs_recipes():
    import roofline_sym as rs

    return rs.list_recipes("training")


def test_fractional_shapes_refused_on_the_command_line_as_in_python(capsys):
    # a layer's shape is a whole number; Linear.evaluate refuses a fraction too
    # unless asked for real shapes (tests/test_linear_properties.py)
    code = main(["eval", "--preset", "torchao", "--gpu", "NVIDIA H100", "--recipe",
                 "tensorwise", "--shape", "1093.8,8192,8192"])
    assert code == 2 and "is not an integer" in capsys.readouterr().err


def test_the_program_skips_the_last_collection_a_call_does_not():
    # run as the program (argv None) the command ends the process: its objects
    # are frozen out of the final collection; main(argv) called in a process
    # that goes on leaves the collector as it was
    code = ("import gc, sys; from roofline_sym.cli import main; "
            "main(['recipes']); a = gc.get_freeze_count(); "
            "sys.argv = ['roofline-sym', 'recipes']; main(); "
            "print(a, gc.get_freeze_count() > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()[-1]
    assert out == "0 True"
