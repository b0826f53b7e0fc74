"""``roofline-sym step``: the step model and its band on the command line; every
bad option is exit code 2 and one line naming it."""

import json

import pytest

import roofline_sym as rs
from roofline_sym.cli import main

BASE = ["step", "--model", "llama3-8b", "--gpu", "h100", "--gpus", "8", "--seq-len", "8192",
        "--recipe", "tensorwise", "--compile", "--ac", "selective"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_step_as_predict_steps_predicts_it(capsys):
    code, out, err = run(capsys, *BASE, "--json")
    assert code == 0, err
    (r,) = json.loads(out)  # one row, as every command's JSON
    want = rs.fidelity.predict_steps([{
        "source_id": "command line", "gpu": "h100", "gpus": "8", "model": "llama3-8b",
        "recipe": "tensorwise", "mode": "training", "seq_len": "8192", "local_batch": "1",
        "dp_shard": "8", "compile": "yes", "ac": "selective"}])
    for name in ("speedup", "low", "high", "baseline_step_s", "lowp_step_s"):
        assert r[name] == pytest.approx(float(want[name][0]), rel=1e-12)
    # tokens per second per GPU: 8192 tokens over each side's step time
    assert r["tokens_per_s_lowp"] == pytest.approx(8192 / r["lowp_step_s"], rel=1e-9)
    for side in ("baseline", "lowp"):
        shares = [v for k, v in r.items() if k.startswith(f"{side}_") and k.endswith("_share")]
        assert len(shares) == 7 and sum(shares) == pytest.approx(1.0)


def test_the_text_names_both_sides_and_the_band(capsys):
    code, out, _ = run(capsys, *BASE)
    assert code == 0
    assert "8 x H100 SXM (dp_shard 8)" in out and "compile, ac selective" in out
    assert out.count("%") >= 6 and "80% band" in out
    assert "tensorwise" in out.splitlines()[1] and "linear" in out


def test_plot_writes_stacked_bars(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "step.png"
    code, _, err = run(capsys, *BASE, "--plot", str(png))
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("change, message", [
    (["--gpus", "8", "--dp-shard", "4"], "--gpus: 8 GPUs, but dp_shard x dp_replicate x tp x pp "
                                         "x cp = 4 x 1 x 1 x 1 x 1 = 4"),
    (["--gpus", "8", "--tp", "3"], "--gpus: 8 GPUs, but"),
    (["--seq-len", "-8192"], "--seq-len: '-8192' is not positive"),
    (["--seq-len", "1e30"], "--seq-len: .*beyond"),
    (["--local-batch", "0"], "--local-batch: '0' is not positive"),
    (["--model", "llama3-8"], "--model: unknown architecture 'llama3-8' \\(did you mean"),
    (["--recipe", "tensorwize"], "--recipe: unknown recipe 'tensorwize' \\(did you mean"),
    (["--gpu", "h10"], "--gpu: unknown hardware 'h10'"),
    (["--ep", "2"], "--ep: 2, but llama3-8b has no experts to split"),
    (["--interval", "2"], "--interval: 2 is not a fraction"),
])
def test_bad_options_exit_2_with_one_line(capsys, change, message):
    code, out, err = run(capsys, *BASE, *change)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("roofline-sym: error: ")
    import re
    assert re.search(message, err), err


def test_a_config_json_model_and_its_errors(capsys, tmp_path):
    good = {"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 4,
            "num_attention_heads": 8, "intermediate_size": 4096, "vocab_size": 32000}
    (tmp_path / "config.json").write_text(json.dumps(good))
    code, out, err = run(capsys, *BASE[:2], str(tmp_path / "config.json"), *BASE[3:], "--json")
    assert code == 0, err
    assert json.loads(out)[0]["model"] == tmp_path.name
    for text, message in [("{not json", "not valid JSON"),
                          (json.dumps({**good, "num_attention_heads": 7}),
                           "num_attention_heads: 7 does not divide hidden_size = 1024"),
                          (json.dumps({**good, "hidden_size": -1024}), "hidden_size: -1024 is"),
                          (json.dumps({**good, "num_hidden_layers": 10 ** 9}), "outside 1..4096")]:
        (tmp_path / "bad.json").write_text(text)
        code, _, err = run(capsys, *BASE[:2], str(tmp_path / "bad.json"), *BASE[3:])
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert "--model: " in err and "bad.json" in err and message in err, err
