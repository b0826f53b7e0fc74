"""Architectures: parameter counts derived by hand and checked against published
counts and against transformers' own models; every bad config refused by name."""

import json

import pytest
from hypothesis import given, settings, strategies as st

import roofline_sym as rs
from roofline_sym.architectures import (MLA, Architecture, ArchitectureError, LinearShape, MoE,
                                        architecture, from_config, list_architectures,
                                        parse_architectures, read_config)


# -- parameter counts, by hand ------------------------------------------------------
def test_llama3_8b_parameters_by_hand():
    # per block: q, o 4096 x 4096 = 16,777,216 each; k, v 4096 x 1024 = 4,194,304 each;
    # gate, up, down 4096 x 14336 = 58,720,256 each; two RMSNorms 2 x 4096:
    #   33,554,432 + 8,388,608 + 176,160,768 + 8,192 = 218,112,000; x 32 = 6,979,584,000
    # embedding and untied output 2 x 128256 x 4096 = 1,050,673,152; final norm 4,096
    # total 8,030,261,248: the count of meta-llama/Meta-Llama-3-8B
    a = rs.architecture("llama3-8b")
    assert a.params == 8_030_261_248 == a.active_params
    assert a.embedding_params == 128256 * 4096
    assert sum(s.weights for s in a.linears(lm_head=False)) == 6_979_321_856


@pytest.mark.parametrize("name, params, active", [
    # Llama 2 7B: block 4 x 16,777,216 + 3 x 4096 x 11008 (135,266,304) + 8,192
    #   = 202,383,360; x 32 = 6,476,267,520; + 2 x 32000 x 4096 + 4096 = 6,738,415,616
    #   (the published 6.74B)
    ("llama2-7b", 6_738_415_616, 6_738_415_616),
    # Llama 3 70B: block 2 x 67,108,864 + 2 x 8,388,608 + 3 x 234,881,024 + 16,384
    #   = 855,654,400; x 80 = 68,452,352,000; + 2 x 128256 x 8192 + 8192 = 70,553,706,496
    ("llama3-70b", 70_553_706_496, 70_553_706_496),
    # Llama 3.1 405B: block 2 x 268,435,456 + 2 x 16,777,216 + 3 x 872,415,232 + 32,768
    #   = 3,187,703,808; x 126 = 401,650,679,808; + 2 x 128256 x 16384 + 16384
    #   = 405,853,388,800 (the published 405B)
    ("llama3-405b", 405_853_388_800, 405_853_388_800),
    # Mixtral 8x7B: attention 41,943,040, norms 8,192, 8 experts x 176,160,768
    #   = 1,409,286,144, router 8 x 4096 = 32,768: block 1,451,270,144; x 32
    #   = 46,440,644,608; + 2 x 32000 x 4096 + 4096 = 46,702,792,704 (published 46.7B);
    #   active: 2 experts, block 394,305,536 x 32 + 262,148,096 = 12,879,925,248 (12.9B)
    ("mixtral-8x7b", 46_702_792_704, 12_879_925_248),
    # DeepSeek-V3: attention q_a 7168 x 1536 + norm 1536 + q_b 1536 x 24576 + kv_a
    #   7168 x 576 + norm 512 + kv_b 512 x 32768 + o 16384 x 7168 = 187,107,328; block
    #   norms 14,336; 3 dense blocks of MLP 3 x 7168 x 18432 = 396,361,728; 58 MoE
    #   blocks of 257 experts x 44,040,192 + router 256 x 7168 + its bias 256
    #   = 11,320,164,608; embedding and output 2 x 129280 x 7168, final norm 7168:
    #   3 x 583,483,392 + 58 x 11,507,286,272 + 1,853,358,080 + 7,168 = 671,026,419,200
    #   (the published 671B, without the 14B multi-token-prediction module);
    #   active: 9 experts, 58 x 585,318,656 + 1,750,450,176 + 1,853,365,248
    #   = 37,552,297,472 (the published 37B)
    ("deepseek-v3", 671_026_419_200, 37_552_297_472),
    # Qwen3-30B-A3B: attention 8,388,608 x 2 + 1,048,576 x 2 + q/k norms 256
    #   = 18,874,624; norms 4,096; 128 experts x 4,718,592 = 603,979,776; router
    #   262,144: block 623,120,640; x 48 = 29,909,790,720; + 2 x 151936 x 2048 + 2048
    #   = 30,532,122,624 (published 30.5B); active: 8 experts, block 56,889,600 x 48
    #   + 622,331,904 = 3,353,032,704 (published 3.3B)
    ("qwen3-30b-a3b", 30_532_122_624, 3_353_032_704),
    # Qwen3-235B-A22B: attention 33,554,432 x 2 + 2,097,152 x 2 + 256 = 71,303,424;
    #   norms 8,192; 128 x 18,874,368 = 2,415,919,104; router 524,288: block
    #   2,487,755,008; x 94 + 2 x 151936 x 4096 + 4096 = 235,093,634,560 (235B);
    #   active: block 222,830,848 x 94 + 1,244,663,808 = 22,190,763,520 (22B)
    ("qwen3-235b-a22b", 235_093_634_560, 22_190_763_520),
    # Qwen2.5-7B: attention 2 x 12,845,056 + 2 x 1,835,008 + biases 3584 + 2 x 512
    #   = 29,364,736; MLP 3 x 3584 x 18944 = 203,685,888; norms 7,168: block
    #   233,057,792; x 28 + 2 x 152064 x 3584 + 3584 = 7,615,616,512 (published 7.61B)
    ("qwen2.5-7b", 7_615_616_512, 7_615_616_512),
])
def test_published_parameter_counts(name, params, active):
    a = architecture(name)
    assert (a.params, a.active_params) == (params, active)


def test_deepseek_v2_lite_against_its_published_counts():
    # DeepSeek-V2-Lite is published as 15.7B total, 2.4B active; its active count
    # leaves out the input embedding (102400 x 2048 = 209,715,200): 2.45B, cut to 2.4B
    a = architecture("deepseek-v2-lite")
    assert round(a.params / 1e9, 1) == 15.7
    assert 2.4e9 <= a.active_params - a.embedding_params < 2.5e9
    assert a.mla.q_lora_rank == 0 and "self_attn.q_proj" in [s.name for s in a.linears()]


def test_linears_of_deepseek_v3():
    a = architecture("deepseek-v3")
    shapes = {s.name: s for s in a.linears()}
    assert shapes["self_attn.q_b_proj"][1:3] == (1536, 128 * (128 + 64))
    assert shapes["self_attn.kv_a_proj_with_mqa"][1:3] == (7168, 512 + 64)
    assert shapes["self_attn.kv_b_proj"][1:3] == (512, 128 * (128 + 128))
    assert shapes["self_attn.o_proj"][1:3] == (128 * 128, 7168)
    assert shapes["mlp.gate_proj"].blocks == 3 and shapes["mlp.experts.up_proj"].blocks == 58
    assert shapes["mlp.experts.down_proj"] == LinearShape(
        "mlp.experts.down_proj", 2048, 7168, 58, 256, 8, "experts")
    assert shapes["mlp.gate"].part == "router" and shapes["lm_head"].part == "output"
    assert shapes["mlp.shared_experts.gate_proj"].N == 2048
    assert a.head_dim == 192 and a.kv_heads == 128


def test_every_built_in_field_has_a_source():
    for name in list_architectures():
        a = architecture(name)
        for field in ("hidden", "layers", "heads", "vocab"):
            assert "on Hugging Face" in a.sources[field], (name, field)
    assert "arXiv:2412.19437" in architecture("deepseek-v3").sources["moe.experts"]


def test_names_are_case_insensitive_and_aliases_share_the_architecture():
    assert architecture("LLAMA3.1-8B") is architecture("llama3-8b")
    a = architecture("llama3-8b")
    assert architecture(a) is a
    with pytest.raises(ArchitectureError, match="did you mean 'mixtral-8x7b'"):
        architecture("mixtral-8x7")
    with pytest.raises(ArchitectureError, match="not int 7"):
        architecture(7)


# -- the oracle: transformers' own models, built on the meta device -----------------
TINY = {
    "llama": dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=1000),
    "qwen2": dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
                  tie_word_embeddings=False),
    "qwen3": dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=32, vocab_size=1000,
                  tie_word_embeddings=False),
    "mixtral": dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
                    num_local_experts=4, num_experts_per_tok=2),
    "qwen3_moe": dict(hidden_size=256, intermediate_size=512, moe_intermediate_size=64,
                      num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                      head_dim=64, vocab_size=1000, num_experts=8, num_experts_per_tok=2,
                      mlp_only_layers=[1], tie_word_embeddings=False),
    "deepseek_v3": dict(hidden_size=256, intermediate_size=512, moe_intermediate_size=64,
                        num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=4,
                        vocab_size=1000, q_lora_rank=96, kv_lora_rank=64, qk_nope_head_dim=32,
                        qk_rope_head_dim=16, v_head_dim=32, n_routed_experts=8,
                        n_shared_experts=1, num_experts_per_tok=2, first_k_dense_replace=1,
                        n_group=1, topk_group=1),
    "deepseek_v2": dict(hidden_size=256, intermediate_size=512, moe_intermediate_size=64,
                        num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=4,
                        vocab_size=1000, q_lora_rank=None, kv_lora_rank=64,
                        qk_nope_head_dim=32, qk_rope_head_dim=16, v_head_dim=32,
                        n_routed_experts=8, n_shared_experts=2, num_experts_per_tok=2,
                        first_k_dense_replace=1, n_group=1, topk_group=1),
}


@pytest.mark.parametrize("model_type", sorted(TINY))
def test_parameters_equal_those_of_the_transformers_model(model_type):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    config = {"model_type": model_type, **TINY[model_type]}
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(
            transformers.AutoConfig.for_model(**config))
    # DeepSeek-V3's router correction bias is a buffer in transformers and a
    # parameter in DeepSeek's own code and checkpoint
    bias = sum(b.numel() for n, b in model.named_buffers() if "e_score_correction_bias" in n)
    want = sum(p.numel() for p in model.parameters()) + bias
    a = from_config(json.loads(json.dumps(config)))
    assert a.params == want
    # the GEMM weights: every 2-d weight but the embedding, experts' stacked ones
    weights = sum(p.numel() for n, p in model.named_parameters()
                  if p.ndim >= 2 and "embed_tokens" not in n)
    assert sum(s.weights for s in a.linears(lm_head=not a.tied_embeddings)) == weights


# MPT as the Hub's mosaicml/mpt-7b writes it (no biases, ALiBi, no position table):
# the shape transformers' own MptForCausalLM builds
MPT_HUB = dict(d_model=256, n_heads=4, n_layers=2, expansion_ratio=4, max_seq_len=2048,
               vocab_size=1000, no_bias=True, learned_pos_emb=False,
               attn_config={"alibi": True, "attn_type": "multihead_attention"})


def test_mpt_parameters_equal_those_of_the_transformers_model():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    config = {"model_type": "mpt", **MPT_HUB}
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(
            transformers.AutoConfig.for_model(**config))
    a = from_config(json.loads(json.dumps(config)))
    assert a.params == sum(p.numel() for p in model.parameters())
    assert not a.rotary and a.learned_positions == 0 and a.mlp == "gelu"


# llm-foundry's MPT benchmarks (scripts/train/benchmarking/README.md) print each
# run's parameter count: its yamls leave no_bias at llm-foundry's False and learned
# positions on, so every count holds a table of max_seq_len rows.  By hand, the
# 1b model (d = 2048, 24 layers, MLP 4d, vocabulary 50368) at max_seq_len 512:
# per layer 4d^2 + 2 d 4d weights, 3d + d + 4d + d biases, two LayerNorms of 2d:
# 24 (12 d^2 + 13 d) = 1_208_598_528; the final norm 2d = 4096; the embedding
# (50368 + 512) d = 104_202_240; sum 1_312_804_864, the README's count
@pytest.mark.parametrize("d, layers, heads, seq, params", [
    (2048, 24, 16, 512, 1_312_804_864), (2048, 24, 16, 8192, 1_328_533_504),
    (2048, 24, 16, 32768, 1_378_865_152), (2560, 32, 20, 512, 2_647_905_280),
    (2560, 32, 20, 8192, 2_667_566_080), (2560, 32, 20, 32768, 2_730_480_640)])
def test_mpt_parameters_equal_llm_foundry_published_counts(d, layers, heads, seq, params):
    a = from_config({"model_type": "mpt", "d_model": d, "n_heads": heads, "n_layers": layers,
                     "expansion_ratio": 4, "max_seq_len": seq, "vocab_size": 50368,
                     "attn_config": {"attn_impl": "flash"}})
    assert a.params == params
    assert (a.attention_bias, a.mlp_bias, a.norm_bias, a.learned_positions) == \
        ("all", True, True, seq)
    assert [(s.name, s.K, s.N) for s in a.linears()][-3:] == [
        ("mlp.up_proj", d, 4 * d), ("mlp.down_proj", 4 * d, d), ("lm_head", d, 50368)]


@pytest.mark.parametrize("change, message", [
    ({"d_model": 0}, "key d_model: 0 is outside"),
    ({"n_heads": 5}, "key n_heads: 5 does not divide d_model = 256"),
    ({"expansion_ratio": "4"}, "key expansion_ratio: expected a number in \\(0, 64\\], got '4'"),
    ({"expansion_ratio": 1e9}, "key expansion_ratio: expected a number"),
    ({"max_seq_len": 2 ** 30, "learned_pos_emb": True, "attn_config": {}},
     "key max_seq_len: .* is outside"),
    ({"no_bias": "yes"}, "key no_bias: expected true or false"),
    ({"norm_type": "layer_norm"}, "key norm_type: unknown norm_type 'layer_norm' \\(did you"),
    ({"attn_config": [1]}, "key attn_config: expected an object of keys"),
    ({"attn_config": {"attn_type": "grouped_query_attention"}},
     "key attn_config.kv_n_heads is missing"),
    ({"attn_config": {"attn_type": "grouped_query_attention", "kv_n_heads": 3}},
     "key attn_config.kv_n_heads: 3 does not divide n_heads = 4"),
    ({"attn_config": {"alibi": True, "rope": True}}, "key attn_config.alibi: rotary"),
    ({"attn_config": {"qk_ln": True}}, "key attn_config.qk_ln: a LayerNorm"),
    ({"attn_config": {"attn_type": "cross"}}, "key attn_config.attn_type: unknown attn_type"),
    ({"ffn_config": {"ffn_type": "mptglu"}}, "key ffn_config.ffn_type: unknown ffn_type"),
    ({"ffn_config": {"ffn_act_fn": {"name": "silu"}}}, "key ffn_config.ffn_act_fn: .* not a GELU"),
    ({"ffn_config": {"ffn_hidden_size": -1}}, "key ffn_config.ffn_hidden_size: -1 is outside"),
])
def test_bad_mpt_values_are_named(change, message):
    with pytest.raises(ArchitectureError, match="^mpt.json: " + message):
        from_config({"model_type": "mpt", **MPT_HUB, **change}, "mpt.json")


def test_mpt_variants():
    gqa = from_config({"model_type": "mpt", **MPT_HUB, "ffn_config": {"ffn_hidden_size": 640},
                       "attn_config": {"attn_type": "grouped_query_attention",
                                       "kv_n_heads": 2, "rope": True}})
    assert (gqa.kv_heads, gqa.intermediate, gqa.rotary) == (2, 640, True)
    assert from_config({"model_type": "mpt", **MPT_HUB, "attn_config":
                        {"attn_type": "multiquery_attention"}}).kv_heads == 1
    assert from_config({"model_type": "mpt", **MPT_HUB, "norm_type": "rmsnorm",
                        "no_bias": False}).norm_bias is False
    assert from_config({"model_type": "mpt", **MPT_HUB, "expansion_ratio": 2.5}
                       ).intermediate == 640
    # ALiBi turns llm-foundry's learned position table off, as its MPTConfig does
    assert from_config({"model_type": "mpt", **MPT_HUB, "learned_pos_emb": True}
                       ).learned_positions == 0
    with pytest.raises(ArchitectureError, match="learned_positions = -1 is outside 0"):
        Architecture("x", 256, 2, 4, 4, 64, "gelu", 512, 1000, False, learned_positions=-1)


# -- bad input ----------------------------------------------------------------------
LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
         "vocab_size": 128256}


@pytest.mark.parametrize("change, message", [
    ({"hidden_size": -4096}, "key hidden_size: -4096 is outside 1..131072"),
    ({"num_hidden_layers": 0}, "key num_hidden_layers: 0 is outside"),
    ({"num_hidden_layers": 10 ** 12}, "key num_hidden_layers: 1000000000000 is outside"),
    ({"vocab_size": 2 ** 40}, "key vocab_size: .* is outside"),
    ({"hidden_size": 4096.5}, "key hidden_size: expected a whole number, got 4096.5"),
    ({"hidden_size": "4096"}, "key hidden_size: expected a whole number, got '4096'"),
    ({"hidden_size": True}, "key hidden_size: expected a whole number, got True"),
    ({"num_attention_heads": 24}, "key num_attention_heads: 24 does not divide hidden_size"),
    ({"num_key_value_heads": 5}, "key num_key_value_heads: 5 does not divide num_attention_"),
    ({"tie_word_embeddings": "no"}, "key tie_word_embeddings: expected true or false"),
    ({"hidden_act": "gelu"}, "key hidden_act: 'gelu' is not a gated SiLU MLP"),
    ({"model_type": "lama"}, "key model_type: unknown model_type 'lama' \\(did you mean 'll"),
    ({"model_type": None}, "key model_type: expected one of llama"),
    ({"mlp_bias": True}, "key mlp_bias: MLP biases are not modelled"),
])
def test_bad_config_values_are_named(change, message):
    with pytest.raises(ArchitectureError, match="^cfg.json: " + message):
        from_config({**LLAMA, **change}, "cfg.json")


def test_heads_need_not_divide_the_hidden_size_when_head_dim_is_given():
    a = from_config({**LLAMA, "num_attention_heads": 24, "num_key_value_heads": 8,
                     "head_dim": 128})
    assert [s[1:3] for s in a.linears()][:2] == [(4096, 3072), (4096, 1024)]


def test_a_missing_key_suggests_the_close_spelling():
    config = dict(LLAMA)
    config["hiden_size"] = config.pop("hidden_size")
    with pytest.raises(ArchitectureError, match="key hidden_size is missing "
                       "\\(did you mean 'hiden_size'\\?\\)"):
        from_config(config, "cfg.json")


def test_moe_and_mla_checks():
    with pytest.raises(ArchitectureError, match="num_experts_per_tok: 3000 is outside"):
        from_config({**TINY["mixtral"], "model_type": "mixtral", "num_experts_per_tok": 3000})
    with pytest.raises(ArchitectureError, match="^c.json: moe.top_k = 5 exceeds moe.experts = 4"):
        from_config({**TINY["mixtral"], "model_type": "mixtral", "num_experts_per_tok": 5},
                    "c.json")
    with pytest.raises(ArchitectureError, match="mlp_only_layers: expected a list of layer"):
        from_config({**TINY["qwen3_moe"], "model_type": "qwen3_moe", "mlp_only_layers": [7]})
    with pytest.raises(ArchitectureError, match="leaves none of the 3 layers"):
        from_config({**TINY["deepseek_v3"], "model_type": "deepseek_v3",
                     "first_k_dense_replace": 3})
    with pytest.raises(ArchitectureError, match="key kv_lora_rank is missing"):
        from_config({k: v for k, v in TINY["deepseek_v3"].items() if k != "kv_lora_rank"}
                    | {"model_type": "deepseek_v3"})
    with pytest.raises(ArchitectureError, match="head_dim = 64 differs from the MLA"):
        Architecture("x", 256, 2, 4, 4, 64, "swiglu", 512, 1000, False,
                     mla=MLA(0, 64, 32, 16, 32))
    with pytest.raises(ArchitectureError, match="moe.experts = 1 is outside 2"):
        MoE(1, 1, 0, 64)
    with pytest.raises(ArchitectureError, match="mlp = 'geglu' is not one of"):
        Architecture("x", 256, 2, 4, 4, 64, "geglu", 512, 1000, False)


def test_config_files(tmp_path):
    folder = tmp_path / "my-llama"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA))
    a = read_config(folder)
    assert a.name == "my-llama" and a.params == 8_030_261_248
    assert architecture(str(folder / "config.json")) == a
    assert a.sources["hidden"].endswith("config.json, hidden_size")
    (tmp_path / "bad.json").write_text('{"model_type": "llama",\n "hidden_size": 40 96}')
    with pytest.raises(ValueError, match="bad.json: line 2, column 20: not valid JSON"):
        architecture(str(tmp_path / "bad.json"))
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="list.json: expected a JSON object"):
        architecture(str(tmp_path / "list.json"))
    (tmp_path / "twice.json").write_text('{"hidden_size": 1, "hidden_size": 2}')
    with pytest.raises(ValueError, match="twice.json: key 'hidden_size' appears twice"):
        architecture(str(tmp_path / "twice.json"))
    with pytest.raises(ValueError, match="nothing.json: cannot read Hugging Face config"):
        architecture(str(tmp_path / "nothing.json"))
    (tmp_path / "huge.json").write_text(json.dumps({**LLAMA, "num_hidden_layers": 1e300}))
    with pytest.raises(ValueError, match="huge.json: key num_hidden_layers: expected a whole"):
        architecture(str(tmp_path / "huge.json"))


def test_the_data_file_is_checked():
    entry = {"name": "t", "config": {"model_type": "llama", **TINY["llama"]},
             "sources": {"config": "A"}}
    good = parse_architectures({"sources": {"A": "a source"}, "architecture": [entry]}, "f")
    assert good["t"].sources["hidden"] == "a source"
    for change, message in [
        ({"sources": {"config": "B"}}, "cites unknown source key"),
        ({"sources": {}}, "config key model_type: source has no source"),
        ({"sources": {"config": "A", "hidden": "A"}}, "cite 'hidden', which is not a config"),
        ({"size": 7}, "unknown field 'size'"),
        ({"aliases": [7]}, "aliases must be a list of names"),
    ]:
        with pytest.raises(ArchitectureError, match=message):
            parse_architectures({"sources": {"A": "a source"},
                                 "architecture": [{**entry, **change}]}, "f")


# -- properties -----------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(hidden_heads=st.sampled_from([(256, 4), (512, 8), (1024, 16)]),
       layers=st.integers(1, 8), experts=st.integers(2, 16), top_k=st.integers(1, 4),
       shared=st.integers(0, 2), dense=st.integers(0, 3))
def test_active_parameters_are_at_most_the_total(hidden_heads, layers, experts, top_k, shared,
                                                 dense):
    hidden, heads = hidden_heads
    top_k, dense = min(top_k, experts), min(dense, layers - 1)
    a = Architecture("p", hidden, layers, heads, heads, hidden // heads, "swiglu", 2 * hidden,
                     1000, False, moe=MoE(experts, top_k, shared, hidden // 2, dense))
    assert a.active_params <= a.params
    assert (a.active_params == a.params) == (top_k == experts)
    # one more block adds one block's parameters, no fewer
    b = Architecture("p", hidden, layers + 1, heads, heads, hidden // heads, "swiglu",
                     2 * hidden, 1000, False, moe=MoE(experts, top_k, shared, hidden // 2, dense))
    assert b.params > a.params and b.active_params > a.active_params
