"""Shape sets: the shipped data (torchao's generators, Llama 3, DeepSeek-V3)
checked against hand derivations, and shape files validated row by row."""

import json
from importlib import resources

import numpy as np
import pytest

from roofline_sym.numeric import shapes as shapes_module
from roofline_sym.numeric.shapes import (RowNames, ShapeSet, grid, list_shape_sets,
                                        load_shape_sets, shape_set)

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

DATA = tomllib.loads(resources.files("roofline_sym").joinpath("data", "shapes.toml")
                     .read_text("utf-8"))


def test_list_names():
    assert list_shape_sets() == ["pow2", "pow2_extended", "sweep", "llama", "dsv3-671b",
                                 "dsv3-16b-671b", "llama3-8b", "llama3-70b", "llama3-405b",
                                 "dsv3-671b-moe", "qwen3-30b-a3b"]


# -- torchao's generators, derived by hand from get_name_to_shapes_iter ------------
# pow2: for p in range(10, 15): (2**p,) * 3 -> 1024 .. 16384, names 0..4
# pow2_extended: for p in range(10, 15): 2**p, then 2**p + 2**(p-1); names 0..9
# sweep: three nested loops over range(8, 16), M outermost, N innermost: 8**3 = 512
# llama: M = bsz 4 * seq_len 4096 = 16384; Llama 2 70B shards at tensor parallel 8
@pytest.mark.parametrize("name, size, first, last", [
    ("pow2", 5, (1024, 1024, 1024), (16384, 16384, 16384)),
    ("pow2_extended", 10, (1024, 1024, 1024), (24576, 24576, 24576)),
    ("sweep", 512, (256, 256, 256), (32768, 32768, 32768)),
    ("llama", 4, (16384, 8192, 1280), (16384, 3584, 8192)),
    ("dsv3-671b", 11, (81920, 7168, 1536), (81920, 7168, 2048)),
    ("dsv3-16b-671b", 3, (4096, 7168, 18432), (4096, 7168, 18432)),
])
def test_torchao_sets_size_and_ends(name, size, first, last):
    s = shape_set(name)
    assert len(s) == size
    rows = list(zip(s.M, s.K, s.N))
    assert rows[0] == first and rows[-1] == last


def test_pow2_extended_values_and_names():
    s = shape_set("pow2_extended")
    assert s.M.tolist() == [1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576]
    assert s.names == tuple(str(i) for i in range(10))
    assert np.array_equal(s.M, s.K) and np.array_equal(s.K, s.N)


def test_sweep_order_is_m_outer_n_inner():
    s = shape_set("sweep")
    assert (s.M[1], s.K[1], s.N[1]) == (256, 256, 512)  # N moves first
    assert (s.M[8], s.K[8], s.N[8]) == (256, 512, 256)  # then K
    assert (s.M[64], s.K[64], s.N[64]) == (512, 256, 256)  # then M
    assert len({(m, k, n) for m, k, n in zip(s.M, s.K, s.N)}) == 512


def test_llama2_70b_tensor_parallel_shards():
    s = shape_set("llama")
    assert s.names == ("attn.wqkv", "attn.w0", "ffn.w13", "ffn.w2")
    hidden, inter, kv = 8192, 28672, 8 * 128  # Llama 2 70B, 8 KV heads of 128
    assert s.N[0] == (hidden + 2 * kv) / 8  # fused q, k, v over 8 GPUs
    assert s.K[1] == hidden / 8 and s.N[2] == 2 * inter / 8 and s.K[3] == inter / 8
    assert s.tokens == 16384 and set(s.counts) == {80}


def test_dsv3_671b_matches_config():
    # DeepSeek-V3: hidden 7168, q_lora 1536, kv_lora 512, 128 heads, nope 128,
    # rope 64, v 128; dense FFN 18432 in 3 blocks, shared expert 2048 in 58.
    s = shape_set("dsv3-671b")
    shapes = dict(zip(s.names, zip(s.K, s.N)))
    assert shapes["attention.wq_b"] == (1536, 128 * (128 + 64))
    assert shapes["attention.wkv_a"] == (7168, 512 + 64)
    assert shapes["attention.wkv_b"] == (512, 128 * (128 + 128))
    assert shapes["attention.wo"] == (128 * 128, 7168)
    counts = dict(zip(s.names, s.counts))
    assert counts["attention.wq_a"] == 61 and counts["feed_forward.w2"] == 3
    assert counts["moe.shared_experts.w1"] == 58
    # the four shapes pytorch/ao#3645's result table prints, in its order
    assert list(zip(s.K, s.N))[:4] == [(7168, 1536), (1536, 24576), (16384, 7168), (7168, 576)]
    assert s.tokens == 81920


def test_dsv3_ffn_parameters():
    s = shape_set("dsv3-16b-671b", M=2048, dim=2048, inter_dim=10944)
    assert list(zip(s.M, s.K, s.N)) == [(2048, 2048, 10944), (2048, 10944, 2048),
                                        (2048, 2048, 10944)]
    with pytest.raises(ValueError, match="unknown parameter 'hidden'; valid: M, dim, inter_dim"):
        shape_set("dsv3-16b-671b", hidden=1)


# -- Llama 3 -----------------------------------------------------------------------
# the Llama 3 paper's Table 3 (hidden, FFN, heads, KV heads, layers), typed here
# apart from the data file the sets are built from
@pytest.mark.parametrize("name, h, f, heads, kv_heads, layers", [
    ("llama3-8b", 4096, 14336, 32, 8, 32),
    ("llama3-70b", 8192, 28672, 64, 8, 80),
    ("llama3-405b", 16384, 53248, 128, 8, 126),
])
def test_llama3_layers_follow_architecture(name, h, f, heads, kv_heads, layers):
    (raw,) = [d for d in DATA["set"] if d["name"] == name]
    assert raw["architecture"] == name  # built from the architecture, one source of truth
    s = shape_set(name)
    kn = dict(zip(s.names, zip(s.K, s.N)))
    q, kv = h, kv_heads * (h // heads)
    assert kn == {"self_attn.q_proj": (h, q), "self_attn.k_proj": (h, kv),
                  "self_attn.v_proj": (h, kv), "self_attn.o_proj": (q, h),
                  "mlp.gate_proj": (h, f), "mlp.up_proj": (h, f), "mlp.down_proj": (f, h)}
    assert list(s.names) == list(kn)  # attention first, then the MLP, as before
    assert set(s.counts) == {layers}


def test_llama3_8b_totals_by_hand():
    # Llama 3 8B, per block (K x N):
    #   q_proj 4096 x 4096  = 16,777,216     o_proj    4096 x 4096  = 16,777,216
    #   k_proj 4096 x 1024  =  4,194,304     v_proj    4096 x 1024  =  4,194,304
    #   gate   4096 x 14336 = 58,720,256     up, down  58,720,256 each
    #   block total 218,103,808; x 32 blocks = 6,979,321,856 linear parameters.
    # FLOPs per token of one forward pass = 2 * params = 13,958,643,712.
    # Cross-check with the released model: + 2 x 128256 x 4096 (embedding and
    # untied head) + (2 x 32 + 1) x 4096 (RMSNorm weights) = 8,030,261,248,
    # the parameter count of meta-llama/Meta-Llama-3-8B.
    s = shape_set("llama3-8b", M=1)
    params = float(np.sum(s.counts * s.K * s.N))
    assert params == 6_979_321_856
    assert s.total_flops == 13_958_643_712
    assert params + 2 * 128256 * 4096 + 65 * 4096 == 8_030_261_248
    assert shape_set("llama3-8b").total_flops == 8192 * 13_958_643_712  # default M = 8192


def test_model_set_token_parameter():
    s = shape_set("llama3-70b", M=4096)
    assert s.tokens == 4096 and set(s.M) == {4096}
    assert shape_set("llama3-70b").tokens == 8192
    with pytest.raises(ValueError, match="M must be positive"):
        shape_set("llama3-70b", M=-1)
    with pytest.raises(ValueError, match="fixed grid.*llama3-8b"):
        shape_set("pow2", M=4096)


def test_unknown_set_lists_names():
    with pytest.raises(ValueError, match="unknown shape set 'llama4' .*; valid: pow2, "):
        shape_set("llama4")


def test_every_number_has_a_source():
    for raw in DATA["set"]:
        numeric = {"x", "M", "K", "N", "tokens", "blocks", "layers", "params",
                   "architecture", "layer_names"} & set(raw)
        assert numeric <= set(raw["sources"]), raw["name"]


def test_rows_are_read_only():
    s = shape_set("pow2")
    with pytest.raises(ValueError):
        s.M[0] = 1.0


def test_grid_and_arrays():
    g = grid(M=[1, 2], K=[3, 4, 5], N=6)
    assert len(g) == 6 and g.M.tolist() == [1, 1, 1, 2, 2, 2] and g.K.tolist()[:3] == [3, 4, 5]
    s = ShapeSet.from_arrays([[1], [2]], [3, 4], 5)  # broadcast (2, 1) x (2,) -> 4 rows
    assert s.M.tolist() == [1, 1, 2, 2] and s.K.tolist() == [3, 4, 3, 4]
    for bad in ([0, 1], [1, np.nan], "8192", [True]):
        with pytest.raises(ValueError):
            grid(M=bad, K=1, N=1)


# -- shape files ---------------------------------------------------------------------
def test_csv_file(tmp_path):
    p = tmp_path / "mine.csv"
    p.write_text("M,K,N,name,count\n8192,4096,4096,q,32\n1e3, 2048 ,512,,\n\n")
    s = ShapeSet.from_file(p)
    assert s.name == "mine" and s.names == ("q", "1")
    assert s.M.tolist() == [8192, 1000] and s.K.tolist() == [4096, 2048]
    assert s.counts.tolist() == [32, 1]


def test_json_file_forms(tmp_path):
    p = tmp_path / "a.json"
    p.write_text(json.dumps([{"M": 1, "K": 2, "N": 3, "count": 4, "name": "x"}, [5, 6, 7]]))
    s = ShapeSet.from_file(p)
    assert list(s) == [("x", 1.0, 2.0, 3.0, 4.0), ("1", 5.0, 6.0, 7.0, 1.0)]
    p.write_text(json.dumps({"shapes": [{"m": "8192", "k": 4096, "n": 4096}]}))
    assert ShapeSet.from_file(p).M.tolist() == [8192]


@pytest.mark.parametrize("row, message", [
    ("-1,2,3", r"bad.csv: line 3, column M: '-1' is not positive"),
    ("1,0,3", "line 3, column K: '0' is not positive"),
    ("1,2,abc", "line 3, column N: 'abc' is not a number"),
    ("1,2,nan", "line 3, column N: 'nan' is not finite"),
    ("1,2,1e400", "line 3, column N: '1e400' is not finite"),
    ("__import__('os'),2,3", "line 3, column M: .*is not a number"),
    ("1,2,2**10", "line 3, column N: '2\\*\\*10' is not a number"),
    ("1.5,2,3", "line 3, column M: '1.5' is not an integer"),
    ("9007199254740993,2,3", "line 3, column M: '9007199254740993' is beyond 2\\*\\*53"),
    ("1,2,3,x", "line 3: 4 fields, but the header has 3"),
    ("1,2", "line 3: 2 fields, but the header has 3"),
    (",2,3", "line 3: missing M"),
])
def test_csv_bad_row_is_named(tmp_path, row, message):
    p = tmp_path / "bad.csv"
    p.write_text(f"M,K,N\n1,1,1\n{row}\n")
    with pytest.raises(ValueError, match=message):
        ShapeSet.from_file(p)


@pytest.mark.parametrize("payload, message", [
    ([{"M": 1, "K": 1, "N": 1}, {"M": True, "K": 1, "N": 1}], "item 2, key M"),
    ([{"M": 1, "K": 1, "N": 1, "E": 8}], "item 1: unknown key"),
    ([[1, 2]], r"item 1: expected \[M, K, N\]"),
    ([{"M": 1, "K": 1, "N": 1, "count": -2}], "item 1, key count must be positive"),
    ({"rows": []}, "expected a list of shapes"),
    ([], "no shapes"),
])
def test_json_bad_rows(tmp_path, payload, message):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(payload))
    with pytest.raises(ValueError, match=message):
        ShapeSet.from_file(p)


def test_file_errors(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        ShapeSet.from_file(tmp_path / "none.csv")
    (tmp_path / "x.txt").write_text("M,K,N\n1,1,1\n")
    with pytest.raises(ValueError, match="use .csv or .json"):
        ShapeSet.from_file(tmp_path / "x.txt")
    (tmp_path / "h.csv").write_text("M,K,batch\n1,1,1\n")
    with pytest.raises(ValueError, match="columns must be M, K, N"):
        ShapeSet.from_file(tmp_path / "h.csv")


def test_csv_with_a_byte_order_mark_reads(tmp_path):
    # Excel's "CSV UTF-8" starts with a BOM, which used to make the first column '\ufeffM'
    p = tmp_path / "excel.csv"
    p.write_bytes("M,K,N,name\r\n8192,4096,1024,kv\r\n".encode("utf-8-sig"))
    s = ShapeSet.from_file(p)
    assert list(s) == [("kv", 8192.0, 4096.0, 1024.0, 1.0)]
    j = tmp_path / "bom.json"
    j.write_bytes(json.dumps([[1, 2, 3]]).encode("utf-8-sig"))
    assert ShapeSet.from_file(j).N.tolist() == [3]


@pytest.mark.parametrize("header, column", [("M,K,N,M", "M"), ("M,K,N,name,Name", "Name"),
                                            ("m,K,N,count,M", "M")])
def test_csv_column_given_twice_is_named(tmp_path, header, column):
    p = tmp_path / "twice.csv"
    p.write_text(f"{header}\n" + ",".join(["1"] * len(header.split(","))) + "\n")
    with pytest.raises(ValueError,
                       match=f"twice.csv: line 1, column {column}: the header names it twice"):
        ShapeSet.from_file(p)


def test_json_key_given_twice_is_named(tmp_path):
    p = tmp_path / "twice.json"
    p.write_text('[{"M": 1, "K": 2, "N": 3, "M": 4}]')
    with pytest.raises(ValueError, match="twice.json: key 'M' appears twice"):
        ShapeSet.from_file(p)
    p.write_text('[{"M": 1, "K": 2, "N": 3, "m": 4}]')
    with pytest.raises(ValueError, match="twice.json: item 1: key 'm' appears twice"):
        ShapeSet.from_file(p)


def test_undecodable_file_is_named(tmp_path):
    p = tmp_path / "latin1.csv"
    p.write_bytes("M,K,N,name\n1,2,3,caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1.csv: cannot read shape file \(not UTF-8 text: "):
        ShapeSet.from_file(p)


# -- the TOML schema, on a tiny inline dataset ----------------------------------------
TINY = """
[sources]
A = "a source"

[[set]]
name = "tiny"
kind = "layers"
tokens = 64
blocks = 2
layers = [{ name = "w", K = 8, N = 16, count = 3 }]
[set.sources]
tokens = "A"
blocks = "assumed; two"
layers = "A; by hand"
"""


def test_load_tiny_toml(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(TINY)
    (s,) = load_shape_sets(p).values()
    assert list(s) == [("w", 64.0, 8.0, 16.0, 6.0)]


@pytest.mark.parametrize("edit, message", [
    (('tokens = "A"\n', ""), "field 'tokens': has no source"),
    (('"A; by hand"', '"B; by hand"'), "unknown source key.*'B'"),
    (('"assumed; two"', '"assumed"'), "need a reason"),
    (("blocks = 2\n", "blocks = 2\nshards = 8\n"), "'shards': unknown for kind 'layers'"),
    (("K = 8", "K = -8"), r"layer #1, K must be positive"),
    (("K = 8", 'K = "dim"'), "'dim' is not a parameter"),
    (('kind = "layers"', 'kind = "list"'), "'kind': 'list' is not one of"),
])
def test_bad_toml_is_named(tmp_path, edit, message):
    p = tmp_path / "s.toml"
    p.write_text(TINY.replace(*edit))
    with pytest.raises(ValueError, match=message):
        load_shape_sets(p)


ARCH_TOML = """
[[set]]
name = "qkv"
kind = "layers"
tokens = 64
architecture = "mixtral-8x7b"
layer_names = { "mlp.experts.down_proj" = "w2", "self_attn.q_proj" = "wq" }
[set.sources]
tokens = "assumed; small"
architecture = "derived; built in"
layer_names = "assumed; short names"
"""


def test_a_set_from_an_architecture_keeps_the_named_layers_in_their_order(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(ARCH_TOML)
    (s,) = load_shape_sets(p).values()
    # Mixtral: experts' down projection 14336 -> 4096 over 8 experts, 2 per token,
    # so M = 2 x 64; q_proj 4096 -> 32 heads x 128; both in each of 32 blocks
    assert list(s) == [("w2", 128.0, 14336.0, 4096.0, 32.0), ("wq", 64.0, 4096.0, 4096.0, 32.0)]
    assert s.groups.tolist() == [8.0, 1.0]


@pytest.mark.parametrize("edits", [
    (('"mlp.experts.down_proj"', '"mlp.expert.down_proj"'),
     "unknown module 'mlp.expert.down_proj' \\(did you mean 'mlp.experts.down_proj'"),
    (('"mixtral-8x7b"', '"mixtral-8x8b"'), "unknown architecture 'mixtral-8x8b'"),
    (('"mixtral-8x7b"', '7'), "expected a built-in architecture's name"),
    (('tokens = 64', 'tokens = 64\nblocks = 2'), ('tokens = "assumed; small"',
                                                 'tokens = "assumed; small"\nblocks = "A"'),
     "give no 'layers' or 'blocks'"),
    (('architecture = "mixtral-8x7b"\n', ''), ('architecture = "derived; built in"\n', ''),
     "'layer_names': names the modules"),
    (('"wq"', '"w2"'), "a set name is used twice"),
])
def test_bad_architecture_set_is_named(tmp_path, edits):
    *changes, message = edits
    text = ARCH_TOML
    for edit in changes:
        text = text.replace(*edit)
    p = tmp_path / "s.toml"
    p.write_text('[sources]\nA = "a source"\n' + text)
    with pytest.raises(ValueError, match=message):
        load_shape_sets(p)


def test_long_csv_reads_block_by_block_as_row_by_row(tmp_path, monkeypatch):
    # more rows than one block of the reader (made small here); the second
    # block has a blank line, an empty count and a name, so it is read row by row
    monkeypatch.setattr(shapes_module, "_BLOCK", 64)
    n = 64 + 100
    lines = [f"{i + 1},{2 * i + 1},3,," for i in range(n)]
    lines[n - 50] = ""
    lines[n - 20] = f"{n - 19},1e3,  7 ,last,3"
    p = tmp_path / "long.csv"
    p.write_text("M,K,N,name,count\n" + "\n".join(lines) + "\n")
    s = ShapeSet.from_file(p)
    assert len(s) == n - 1
    assert s.M[:3].tolist() == [1, 2, 3] and s.M[-1] == n
    row = n - 21  # the named row, after the blank line
    assert (s.names[row], s.M[row], s.K[row], s.N[row], s.counts[row]) == \
        ("last", n - 19, 1000, 7, 3)
    assert s.names[row - 1] == str(row - 1) and s.counts[0] == 1
    lines[n - 10] = f"{n},abc,3,,"
    p.write_text("M,K,N,name,count\n" + "\n".join(lines) + "\n")
    # the line number counts the header and the blank line
    with pytest.raises(ValueError, match=f"long.csv: line {n - 8}, column K: 'abc' "
                                         "is not a number"):
        ShapeSet.from_file(p)


def test_default_row_names_are_made_when_read():
    s = ShapeSet.from_arrays(np.arange(1, 10**6 + 1), 4096, 4096)
    assert isinstance(s.names, RowNames) and len(s.names) == 10**6
    assert s.names[0] == "0" and s.names[-1] == "999999" and s.names[5:7] == ("5", "6")
    assert list(ShapeSet.from_arrays([1, 2], 3, 4).names) == ["0", "1"]
    assert ShapeSet.from_arrays([1, 2], 3, 4).names == ("0", "1") == RowNames(2)
    assert RowNames(2) != ("0", "2") and repr(RowNames(10**6)) == "RowNames(1000000)"
    with pytest.raises(IndexError):
        s.names[10**6]
