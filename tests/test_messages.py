"""The messages a new user meets first: missing extras and files named,
third-party noise kept off the output, values answered by name, help for
every option, no documented call writing into the installed package."""

import argparse
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import roofline_sym as rs
from roofline_sym.cli import _parser, main
from roofline_sym.fidelity.published_tables import gpu_fits

DOCS = Path(__file__).parents[1] / "docs"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_hardware_labels_never_run_into_their_values(capsys):
    # "slow-accumulation factor" is 24 characters, wider than the old 22 of
    # the label column: it printed "factorfp8"
    code, out, _ = run(capsys, "hardware", "mi300x")
    assert code == 0 and "slow-accumulation factor  fp8 1" in out
    for line in out.splitlines()[1:]:
        if not line.startswith("  note") and not line.startswith("  aliases"):
            assert re.match(r"  \S.{0,23}\s{2,}\S", line), line


def test_a_config_path_without_transformers_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "transformers", None)  # import fails
    with pytest.raises(ImportError, match=r"roofline-sym\[hf\]"):
        rs.shape_set("hfcfg/mistral-7b")
    code, _, err = run(capsys, "sweep", "--gpu", "h100", "--shapes", "hfcfg/mistral-7b")
    assert code == 2 and "roofline-sym[hf]" in err and "unknown shape set" not in err
    # a name that is not a path is still a shipped set's name, with its list
    code, _, err = run(capsys, "sweep", "--gpu", "h100", "--shapes", "llama3-8")
    assert code == 2 and "unknown shape set 'llama3-8'" in err and "llama3-8b" in err


def test_a_config_not_on_disk_is_said_missing(capsys, tmp_path):
    pytest.importorskip("transformers")
    missing = str(tmp_path / "no-such-model")
    for name in ("hfcfg/mistral-7b", missing):
        code, _, err = run(capsys, "sweep", "--gpu", "h100", "--shapes", name)
        assert code == 2 and "unknown shape set" not in err, err
        assert "no Hugging Face config.json" in err and "cache" in err


def test_reading_a_config_prints_no_third_party_warnings(tmp_path):
    # torchao logs "Failed to load" for CUDA kernels a CPU machine cannot load and
    # torch deprecation warnings as they are imported: a fresh process, where
    # neither is imported yet, prints only the table
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    transformers.LlamaConfig(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2,
                             vocab_size=1000).save_pretrained(tmp_path / "tiny")
    env = {**os.environ, "PYTHONPATH": str(Path(rs.__file__).parents[1])}
    out = subprocess.run([sys.executable, "-m", "roofline_sym", "sweep", "--gpu", "h100",
                          "--recipe", "rowwise", "--shapes", str(tmp_path / "tiny")],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and "self_attn.q_proj" in out.stdout
    assert out.stderr == ""


@pytest.mark.parametrize("argv, said", [
    (["eval", "--gpu", "h100", "--shape", "-8192,8192,8192"], "M: '-8192' is not positive"),
    (["sensitivity", "--gpu", "h100", "--recipe", "rowwise", "--shape", "-1,8192,8"],
     "M: '-1' is not positive"),
])
def test_a_negative_shape_is_answered_by_name(capsys, argv, said):
    code, _, err = run(capsys, *argv)
    assert code == 2 and said in err and "expected one argument" not in err, err


def _options(parser, path=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, path + (name,))
        else:
            yield path, action


def test_every_option_of_every_command_has_help():
    seen = [(path, action) for path, action in _options(_parser())]
    assert sum(1 for path, _ in seen if path == ("breakeven",)) >= 15
    missing = [(" ".join(path), action.option_strings or action.dest)
               for path, action in seen if not action.help]
    assert missing == []


def test_no_documented_call_writes_into_the_installed_package():
    # the dataset writer takes both paths: nothing defaults to the shipped files
    params = inspect.signature(gpu_fits.write_dataset).parameters
    assert list(params) == ["path", "implementations_path"]
    assert all(p.default is inspect.Parameter.empty for p in params.values())
    for page in DOCS.glob("*.md"):
        assert "write_dataset()" not in page.read_text(encoding="utf-8"), page.name
