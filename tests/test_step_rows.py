"""Step tables: every cell of an end-to-end row checked, errors that name the
file, the line and the column."""

import pytest

import roofline_sym as rs
from roofline_sym.fidelity.published_tables.step_table import COLUMNS, read_steps

HEADER = ",".join(COLUMNS)
ROW = {"source_id": "s1", "gpu": "h100", "gpus": "8", "model": "llama3-8b",
       "recipe": "tensorwise", "mode": "training", "seq_len": "8192", "local_batch": "1",
       "dp_shard": "8", "dp_replicate": "", "tp": "", "pp": "", "cp": "", "ep": "",
       "compile": "yes", "ac": "selective", "fp8_all_gather": "", "implementation": "",
       "timer": "", "measured_speedup": "1.25", "notes": "a note, quoted"}


def _csv(tmp_path, *rows, header=HEADER, name="steps.csv"):
    lines = [header] + [",".join(f'"{r.get(c, "")}"' for c in COLUMNS) for r in rows]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_row_read_with_its_blanks_and_defaults(tmp_path):
    (row,) = read_steps(_csv(tmp_path, ROW))
    assert (row.gpus, row.dp_shard, row.dp_replicate, row.tp, row.pp, row.cp, row.ep) == \
        (8, 8, 1, 1, 1, 1, 1)
    assert (row.compile, row.fp8_all_gather, row.ac, row.implementation) == \
        (True, False, "selective", "torch")
    assert row.model is rs.architecture("llama3-8b") and row.line == 2
    assert rs.fidelity.read_steps is read_steps


def test_the_measured_speedup_is_never_read(tmp_path):
    # a table to predict: the measured column may be blank or hold anything
    for value in ("", "n/a", "-3"):
        (row,) = read_steps(_csv(tmp_path, {**ROW, "measured_speedup": value}))
        assert row.seq_len == 8192


def test_a_config_json_relative_to_the_table(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "tiny.json").write_text(
        '{"model_type": "mixtral", "hidden_size": 256, "intermediate_size": 512, '
        '"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, '
        '"vocab_size": 1000, "num_local_experts": 8, "num_experts_per_tok": 2}')
    row = {**ROW, "model": "configs/tiny.json", "ep": "4"}
    (got,) = read_steps(_csv(tmp_path / "configs" / "..", row))
    assert got.model.moe.experts == 8 and got.ep == 4
    (tmp_path / "configs" / "bad.json").write_text('{"model_type": "mixtral",')
    with pytest.raises(ValueError, match=r"steps.csv: line 2, column model: .*bad.json: "
                       "line 1, column 26: not valid JSON"):
        read_steps(_csv(tmp_path, {**ROW, "model": "configs/bad.json"}))


@pytest.mark.parametrize("change, column, message", [
    ({"gpus": "-8"}, "gpus", "is not positive"),
    ({"gpus": "8.5"}, "gpus", "not an integer"),
    ({"seq_len": "1e12"}, "seq_len", "beyond"),
    ({"seq_len": "2**13"}, "seq_len", "is not a number"),
    ({"local_batch": ""}, "local_batch", "empty"),
    ({"dp_shard": "4"}, "gpus", "8 GPUs, but dp_shard x dp_replicate x tp x pp x cp = "
                                "4 x 1 x 1 x 1 x 1 = 4"),
    ({"dp_shard": "4", "tp": "2", "pp": "2"}, "gpus", "= 16"),
    ({"ep": "2"}, "ep", "llama3-8b has no experts to split"),
    ({"mode": "trainning"}, "mode", "unknown mode 'trainning' \\(did you mean 'training'"),
    ({"ac": "selectiv"}, "ac", "did you mean 'selective'"),
    ({"compile": "true"}, "compile", "unknown compile 'true'; valid: yes, no"),
    ({"recipe": "tensorwize"}, "recipe", "did you mean 'tensorwise'"),
    ({"recipe": "nvfp4"}, "recipe", "unknown recipe 'nvfp4'"),  # an inference recipe
    ({"model": "llama3-7b"}, "model", "unknown architecture 'llama3-7b' \\(did you mean"),
    ({"gpu": "h10"}, "gpu", "unknown hardware 'h10' \\(did you mean"),
    ({"implementation": "cublass"}, "implementation", "cublas"),
    ({"timer": "throughput/s"}, "timer", "did you mean 'throughput'"),
])
def test_bad_cells_are_named(tmp_path, change, column, message):
    path = _csv(tmp_path, ROW, {**ROW, **change})
    with pytest.raises(ValueError, match=f"steps.csv: line 3, column {column}: .*{message}"):
        read_steps(path)


def test_expert_parallel_degrees(tmp_path):
    moe = {**ROW, "model": "mixtral-8x7b"}
    (row,) = read_steps(_csv(tmp_path, {**moe, "ep": "8"}))
    assert row.ep == 8
    with pytest.raises(ValueError, match="column ep: 16 does not divide the 8 experts"):
        read_steps(_csv(tmp_path, {**moe, "gpus": "16", "dp_shard": "16", "ep": "16"}))
    with pytest.raises(ValueError, match="column ep: 4 does not divide dp_shard x cp = 2"):
        read_steps(_csv(tmp_path, {**moe, "dp_shard": "2", "tp": "4", "ep": "4"}))


def test_the_header_is_exactly_the_schema(tmp_path):
    with pytest.raises(ValueError, match="line 1: unknown column 'seqlen' \\(did you mean "
                       "'seq_len'"):
        read_steps(_csv(tmp_path, ROW, header=HEADER.replace("seq_len", "seqlen")))
    with pytest.raises(ValueError, match="missing column\\(s\\) 'notes'"):
        read_steps(_csv(tmp_path, ROW, header=HEADER.replace(",notes", "")))
    swapped = HEADER.replace("tp,pp", "pp,tp")
    with pytest.raises(ValueError, match="columns out of order"):
        read_steps(_csv(tmp_path, ROW, header=swapped))
    with pytest.raises(ValueError, match="steps.csv: no rows"):
        read_steps(_csv(tmp_path))
    with pytest.raises(ValueError, match="cannot read step table"):
        read_steps(tmp_path / "absent.csv")


def test_the_published_table_reads_whole():
    rows = read_steps(rs.fidelity.published_tables.step_table.published_steps_path())
    assert len(rows) >= 40 and {r.mode for r in rows} == {"training", "prefill", "decode"}
    assert any(r.model.name == "qwen2.5-0.5b" for r in rows)  # a config.json beside it


def test_rows_in_memory():
    (row,) = read_steps([ROW])
    assert row.source == "<rows>" and row.line == 1
    with pytest.raises(ValueError, match="<rows>: row 2, column tp: .*is not positive"):
        read_steps([ROW, {**ROW, "tp": "-1"}])
    with pytest.raises(TypeError, match="row 1 is not a mapping"):
        read_steps([["s1"]])
    with pytest.raises(TypeError, match="a CSV path or a list of rows"):
        read_steps(ROW)
