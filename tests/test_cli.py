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
    assert "H100 SXM" in out
    for recipe in ("tensorwise", "rowwise", "mxfp8_cublas", "blockwise"):
        assert recipe in out


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
        "tensorwise", "rowwise", "mxfp8", "mxfp4", "nvfp4", "nvfp4_static",
        "nvfp4_no_global_scale"]


def test_eval_json(capsys):
    code, out, _ = run(capsys, "eval", "--gpu", "h100", "--recipe", "rowwise",
                       "--shape", "4096,4096,4096", "--shape", "8192,8192,8192", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["M"] for r in rows] == [4096, 8192]
    assert rows[1]["speedup"] > rows[0]["speedup"] > 0


BAD_INPUT = [
    (["hardware", "h20"], "no hardware 'h20'"),
    (["eval", "--gpu", "a100", "--recipe", "tensorwise"], "no dense fp8 peak"),
    (["eval", "--gpu", "h100", "--recipe", "mxfp4_cutlass"], "no dense fp4 peak"),
    (["eval", "--gpu", "h100", "--shape", "1,2"], "expected three numbers"),
    (["eval", "--gpu", "h100", "--shape", "1,-2,3"], "positive finite"),
    (["eval", "--gpu", "h100", "--shape", "1,nan,3"], "positive finite"),
    (["eval", "--gpu", "h100", "--shape", "__import__('os'),1,1"], "not numbers"),
    (["eval", "--gpu", "h100", "--recipe", "fp6"], "unknown training recipe 'fp6'"),
    (["hardware", "--hardware-file", "/nonexistent.toml"], "cannot read hardware file"),
]


@pytest.mark.parametrize("argv, message", BAD_INPUT)
def test_bad_input_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
