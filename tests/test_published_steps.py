"""Published end-to-end rows (``published/steps.csv``): the schema the step
predictions read, names that resolve, degrees that multiply out, and a source
entry for every row."""

import csv
import json
import re
from pathlib import Path

import pytest

import roofline_sym as rs

PUBLISHED = Path(rs.__file__).parent / "data" / "measurements" / "published"
STEPS = PUBLISHED / "steps.csv"
README = PUBLISHED / "README.md"
HEADER = ("source_id,gpu,gpus,model,recipe,mode,seq_len,local_batch,dp_shard,dp_replicate,"
          "tp,pp,cp,ep,compile,ac,fp8_all_gather,implementation,timer,measured_speedup,notes")
DEGREES = ("dp_shard", "dp_replicate", "tp", "pp", "cp", "ep")
# the built-in architectures agreed for the step model; checked against the
# architecture reader itself wherever the package ships one
AGREED_BUILTINS = {"llama2-7b", "llama3-8b", "llama3-70b", "llama3-405b", "llama3.1-8b",
                   "llama3.1-70b", "llama3.1-405b", "mixtral-8x7b", "deepseek-v3", "qwen3-30b-a3b",
                   "qwen3-235b-a22b"}
MOE = {"mixtral-8x7b", "deepseek-v3", "qwen3-30b-a3b", "qwen3-235b-a22b"}
TIMERS = {"throughput", "serving"}


def _rows():
    with STEPS.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _degree(row, name):
    text = row[name]
    return 1 if text == "" else int(text)


def _end_to_end_section():
    text = README.read_text(encoding="utf-8")
    start = text.index("## End-to-end steps")
    rest = text[start + 1:]
    end = rest.find("\n## ")
    return rest if end < 0 else rest[:end]


def test_header_is_the_agreed_one():
    first = STEPS.read_text(encoding="utf-8").splitlines()[0]
    assert first == HEADER


def test_enough_rows_from_enough_sources():
    rows = _rows()
    sources = {r["source_id"] for r in rows}
    # a source family is the id's first word (ao, tt, llmq, ...): torchao's and
    # torchtitan's pages count as two families, and at least three more join them
    families = {s.split("-")[0] for s in sources}
    assert len(rows) >= 40
    assert {"ao", "tt"} <= families and len(families - {"ao", "tt"}) >= 3
    # a source is one page or thread: its id less the trailing GPU word
    # (llmq-h100 and llmq-rtx4090 are one README); beyond torchao's and
    # torchtitan's own pages, at least eight
    documents = {s.rsplit("-", 1)[0] for s in sources if s.split("-")[0] not in ("ao", "tt")}
    assert len(documents) >= 8, sorted(documents)


def test_every_value_is_of_its_column():
    for line, r in enumerate(_rows(), start=2):
        where = f"steps.csv line {line}"
        assert r["mode"] in ("training", "prefill", "decode"), where
        assert r["ac"] in ("none", "selective", "full"), where
        assert r["compile"] in ("", "yes", "no") and r["fp8_all_gather"] in ("", "yes", "no"), where
        assert r["timer"] in TIMERS, where
        assert int(r["gpus"]) >= 1 and int(r["seq_len"]) >= 1 and int(r["local_batch"]) >= 1, where
        speedup = float(r["measured_speedup"])
        assert 0.3 < speedup < 3.0, where  # an end-to-end step gains less than its GEMMs do
        assert r["notes"], where
        if r["fp8_all_gather"] == "yes":  # only a sharded, trained model gathers weights
            assert r["mode"] == "training" and _degree(r, "dp_shard") > 1, where


def test_parallel_degrees_multiply_to_the_gpu_count():
    for line, r in enumerate(_rows(), start=2):
        degrees = {d: _degree(r, d) for d in DEGREES}
        assert all(v >= 1 for v in degrees.values()), line
        product = (degrees["dp_shard"] * degrees["dp_replicate"] * degrees["tp"]
                   * degrees["pp"] * degrees["cp"])
        assert product == int(r["gpus"]), (line, degrees, r["gpus"])
        # experts shard inside the data-parallel (and context) group, as torchtitan does
        assert (degrees["dp_shard"] * degrees["cp"]) % degrees["ep"] == 0, line
        if degrees["ep"] > 1:
            assert r["model"] in MOE, line


def test_gpus_and_recipes_resolve():
    inference = set(rs.list_recipes(mode="inference"))
    training = set(rs.list_recipes(mode="training"))
    for line, r in enumerate(_rows(), start=2):
        rs.hardware(r["gpu"])  # an unknown name raises, naming close matches
        known = training if r["mode"] == "training" else inference
        assert r["recipe"] in known, (line, r["recipe"])


def _architecture_reader():
    try:
        from roofline_sym.architectures import architecture
    except ImportError:
        return None
    return architecture


# the size keys of a config: hidden, layers, heads, then the rest; MPT names its own
_SIZE_KEYS = {"": ("hidden_size", "num_hidden_layers", "num_attention_heads",
                   "intermediate_size", "vocab_size"),
              "mpt": ("d_model", "n_layers", "n_heads", "expansion_ratio", "vocab_size")}


def test_models_resolve():
    architecture = _architecture_reader()
    for line, r in enumerate(_rows(), start=2):
        model = r["model"]
        if model.endswith(".json"):
            path = PUBLISHED / model
            config = json.loads(path.read_text(encoding="utf-8"))
            assert isinstance(config, dict) and isinstance(config.get("model_type"), str), line
            keys = _SIZE_KEYS.get(config["model_type"], _SIZE_KEYS[""])
            hidden, heads = keys[0], keys[2]
            for key in keys:
                assert isinstance(config[key], int) and config[key] > 0, (model, key)
            assert config[hidden] % config[heads] == 0, model
            target = str(path)
        else:
            assert model in AGREED_BUILTINS, (line, model)
            target = model
        if architecture is not None:
            architecture(target)


def test_every_config_is_used_and_cited():
    used = {r["model"] for r in _rows() if r["model"].endswith(".json")}
    shipped = {f"configs/{p.name}" for p in (PUBLISHED / "configs").glob("*.json")}
    assert shipped == used
    section = _end_to_end_section()
    for name in shipped:
        assert name in section, name


def test_every_source_has_an_entry():
    section = _end_to_end_section()
    for source in {r["source_id"] for r in _rows()}:
        assert re.search(rf"`{re.escape(source)}`", section), source


_PAIR = re.compile(r"(\d+(?:\.\d+)?)(k?) vs (?:bf16|BF16) (\d+(?:\.\d+)?)(k?)")


def test_speedups_are_the_ratios_the_notes_quote():
    # an independent reading of each row: the two throughputs its notes quote
    # (low precision first) give its speedup to the printed precision
    checked = 0
    for line, r in enumerate(_rows(), start=2):
        pairs = _PAIR.findall(r["notes"])
        if not pairs:  # the source prints only its ratio, and the notes say so
            assert "printed" in r["notes"], line
            continue
        low, k1, base, k2 = pairs[-1]
        ratio = (float(low) * (1e3 if k1 else 1)) / (float(base) * (1e3 if k2 else 1))
        printed = r["measured_speedup"]
        digits = len(printed.split(".")[1])
        assert abs(ratio - float(printed)) <= 0.5 * 10 ** -digits + 1e-12, (line, ratio, printed)
        checked += 1
    assert checked >= 0.9 * len(_rows())


@pytest.mark.parametrize("column", ["gpus", "seq_len", "local_batch"])
def test_sizes_are_whole_numbers(column):
    for r in _rows():
        assert re.fullmatch(r"[1-9][0-9]*", r[column]), (column, r[column])
