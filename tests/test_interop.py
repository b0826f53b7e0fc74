"""From a PyTorch model to shapes and a verdict: nn.Module shapes (meta device,
traced inputs, convolutions, fused experts), FLOPs against torch's own
FlopCounterMode, Hugging Face configs, torchao's module filters."""

import pytest

import roofline_sym as rs

torch = pytest.importorskip("torch")
nn = torch.nn


class Block(nn.Module):
    def __init__(self, d: int, f: int):
        super().__init__()
        self.q, self.o = nn.Linear(d, d, bias=False), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, f, bias=False), nn.Linear(f, d, bias=False)

    def forward(self, x):
        x = x + self.o(torch.relu(self.q(x)))
        return x + self.down(torch.relu(self.up(x)))


class Net(nn.Module):
    def __init__(self, d: int = 64, f: int = 96, blocks: int = 3, vocab: int = 80):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(Block(d, f) for _ in range(blocks))
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def test_shapes_of_a_meta_model_merge_equal_shapes():
    with torch.device("meta"):
        net = Net(d=4096, f=14336, blocks=32, vocab=128256)
    s = rs.shapes_from_module(net, M=8192, name="tiny")
    rows = {name: (k, n, c) for name, _, k, n, c in s}
    assert rows == {
        "layers.*.q + layers.*.o": (4096, 4096, 64),
        "layers.*.up": (4096, 14336, 32),
        "layers.*.down": (14336, 4096, 32),
        "head": (4096, 128256, 1),
    }
    assert set(s.M) == {8192} and s.tokens == 8192 and s.name == "tiny"
    assert all(p.device.type == "meta" for p in net.parameters())


def test_shapes_need_a_token_count_or_inputs():
    net = nn.Linear(8, 8)
    with pytest.raises(ValueError, match="M="):
        rs.shapes_from_module(net)
    with pytest.raises(ValueError, match="not both"):
        rs.shapes_from_module(net, M=8, example_inputs=torch.ones(2, 8))
    with pytest.raises(ValueError, match="positive"):
        rs.shapes_from_module(net, M=-1)
    with pytest.raises(TypeError, match="nn.Module"):
        rs.shapes_from_module("llama", M=8)
    with pytest.raises(ValueError, match="no nn.Linear"):
        rs.shapes_from_module(nn.ReLU(), M=8)


def test_traced_shapes_of_convolutions_are_implicit_gemms():
    with torch.device("meta"):
        net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.Conv2d(64, 128, 3, stride=2),
                            nn.Conv2d(128, 128, 3, groups=4))
        net1 = nn.Conv1d(16, 32, 5)
        net3 = nn.Conv3d(4, 8, (1, 3, 3))
    s = rs.shapes_from_module(net, example_inputs=torch.empty(2, 3, 32, 32, device="meta"))
    rows = {name: (m, k, n, c) for name, m, k, n, c in s}
    assert set(rows) == {"0", "1", "2"}  # the convolutions, nothing else
    assert rows["0"] == (2 * 32 * 32, 3 * 9, 64, 1)
    assert rows["1"] == (2 * 15 * 15, 64 * 9, 128, 1)
    assert rows["2"] == (2 * 13 * 13, 32 * 9, 32, 4)  # one GEMM per convolution group
    s1 = rs.shapes_from_module(net1, example_inputs=torch.empty(4, 16, 100, device="meta"))
    assert list(s1)[0][1:] == (4 * 96, 16 * 5, 32, 1)
    s3 = rs.shapes_from_module(net3, example_inputs=(torch.empty(1, 4, 2, 8, 8, device="meta"),))
    assert list(s3)[0][1:] == (2 * 6 * 6, 4 * 9, 8, 1)


def _gemm_flops(model: rs.Linear, shapes: rs.ShapeSet) -> float:
    """FLOPs of the model's bf16 GEMMs at every row, times the row's count."""
    gemms = [t.work.flops for t in model.terms if t.side == "baseline" and t.id.kind == "gemm"]
    total = 0.0
    for _, m, k, n, count in shapes:
        at = {rs.M: m, rs.K: k, rs.N: n}
        total += count * sum(float(f.subs(at)) for f in gemms)
    return total


def test_flop_counter_equals_the_models_gemm_flops():
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    net = Net()
    # (torch's counter prices a grouped convolution's grad_weight as ungrouped,
    # so the grouped one is checked forward only, below)
    conv = nn.Conv2d(8, 16, 3)
    ids = torch.randint(0, 80, (2, 24))
    image = torch.randn(2, 8, 10, 10, requires_grad=True)
    with FlopCounterMode(display=False) as counter:
        net(ids).square().mean().backward()
        conv(image).square().mean().backward()
    measured = counter.get_total_flops()
    training = rs.linear("tensorwise")
    shapes = rs.shapes_from_module(net, example_inputs=ids)
    images = rs.shapes_from_module(conv, example_inputs=image)
    assert list(shapes.M) == [48.0] * len(shapes)
    predicted = _gemm_flops(training, shapes) + _gemm_flops(training, images)
    assert measured == predicted
    # forward only: the inference model's one GEMM
    grouped = nn.Conv2d(8, 16, 3, groups=4)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        net(ids)
        grouped(image)
    inference = rs.linear("rowwise", mode="inference")
    assert counter.get_total_flops() == _gemm_flops(inference, shapes) + _gemm_flops(
        inference, rs.shapes_from_module(grouped, example_inputs=image))


class Experts(nn.Module):
    """Fused experts as transformers holds them: [experts, out, in]."""

    def __init__(self, experts: int, hidden: int, inter: int):
        super().__init__()
        self.num_experts, self.hidden_dim = experts, hidden
        self.gate_up_proj = nn.Parameter(torch.empty(experts, 2 * inter, hidden))
        self.down_proj = nn.Parameter(torch.empty(experts, hidden, inter))


def test_fused_experts_are_grouped_rows():
    with torch.device("meta"):
        moe = nn.ModuleDict({"attn": nn.Linear(2048, 4096),
                             "experts": Experts(128, 2048, 768)})
    s = rs.shapes_from_module(moe, M=4096, top_k=8)
    rows = {name: (m, k, n, g) for (name, m, k, n, _), g in zip(s, s.groups)}
    assert rows["experts.gate_up_proj"] == (8 * 4096, 2048, 1536, 128)
    assert rows["experts.down_proj"] == (8 * 4096, 768, 2048, 128)
    assert rows["attn"] == (4096, 2048, 4096, 1)
    with pytest.raises(ValueError, match="top_k"):
        rs.shapes_from_module(moe, M=4096)


def test_shape_set_takes_a_module_and_still_the_shipped_names():
    with torch.device("meta"):
        net = Net()
    assert len(rs.shape_set(net, M=1024)) == 4
    assert rs.shape_set("llama3-8b", M=4096).tokens == 4096
    with pytest.raises(ValueError, match="unknown shape set 'no-such-model'"):
        rs.shape_set("no-such-model")
    # a path or model id is read as a config, and its absence said as such
    with pytest.raises(ValueError, match="'no-such/model': no Hugging Face config.json"):
        rs.shape_set("no-such/model")


# -- Hugging Face ---------------------------------------------------------------------
def _tiny_llama_config():
    transformers = pytest.importorskip("transformers")
    return transformers.LlamaConfig(hidden_size=256, intermediate_size=512,
                                    num_hidden_layers=2, num_attention_heads=4,
                                    num_key_value_heads=2, vocab_size=1000)


def test_hugging_face_config_on_the_meta_device():
    s = rs.shape_set(_tiny_llama_config(), M=4096)
    rows = {name: (k, n, c) for name, _, k, n, c in s}
    assert rows == {
        "model.layers.*.self_attn.q_proj + model.layers.*.self_attn.o_proj": (256, 256, 4),
        "model.layers.*.self_attn.k_proj + model.layers.*.self_attn.v_proj": (256, 128, 4),
        "model.layers.*.mlp.gate_proj + model.layers.*.mlp.up_proj": (256, 512, 4),
        "model.layers.*.mlp.down_proj": (512, 256, 2),
    }
    assert "without lm_head" in s.description
    with_head = {name: (k, n, c) for name, _, k, n, c in
                 rs.shape_set(_tiny_llama_config(), M=4096, lm_head=True)}
    assert with_head == {**rows, "lm_head": (256, 1000, 1)}


def test_hugging_face_model_id_found_locally(tmp_path):
    _tiny_llama_config().save_pretrained(tmp_path / "tiny-llama")
    s = rs.shape_set(str(tmp_path / "tiny-llama"), M=128)
    assert len(s) == 4 and set(s.M) == {128}
    assert len(rs.shape_set(str(tmp_path / "tiny-llama"), M=128, lm_head=True)) == 5


def test_a_hugging_face_llama_config_and_the_shipped_set_agree():
    # Llama 3 8B's config (L3-CFG) through the Hugging Face path and the shipped
    # set llama3-8b: the same shapes, 32 blocks of each layer (lm_head in neither)
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(hidden_size=4096, intermediate_size=14336,
                                      num_hidden_layers=32, num_attention_heads=32,
                                      num_key_value_heads=8, vocab_size=128256)
    hf = rs.shape_set(config, M=8192)
    shipped = rs.shape_set("llama3-8b", M=8192)

    def per_shape(s):
        out = {}
        for _, m, k, n, count in s:
            out[(m, k, n)] = out.get((m, k, n), 0) + count
        return out

    assert per_shape(hf) == per_shape(shipped) == {
        (8192, 4096, 4096): 64, (8192, 4096, 1024): 64, (8192, 4096, 14336): 64,
        (8192, 14336, 4096): 32}
    assert hf.total_flops == shipped.total_flops
    with_head = rs.shape_set(config, M=8192, lm_head=True)
    assert with_head.total_flops - hf.total_flops == 2 * 8192 * 4096 * 128256


def test_skip_fqns_leaves_layers_out_of_a_module_set():
    with torch.device("meta"):
        net = nn.Sequential(nn.Linear(64, 128), nn.Linear(128, 64))
    s = rs.shapes_from_module(net, M=16, skip_fqns=("1",))
    assert list(s) == [("0", 16.0, 64.0, 128.0, 1.0)] and "without 1" in s.description


def test_hugging_face_moe_config_counts_experts_as_grouped():
    transformers = pytest.importorskip("transformers")
    config = transformers.Qwen3MoeConfig(
        hidden_size=256, intermediate_size=512, moe_intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, vocab_size=1000, num_experts=8,
        num_experts_per_tok=2)
    s = rs.shape_set(config, M=1024)
    grouped = [(n, m, k, nn_, g) for (n, m, k, nn_, _), g in zip(s, s.groups) if g > 1]
    assert sorted(grouped) == [
        ("model.layers.*.mlp.experts.down_proj", 2048, 64, 256, 8),
        ("model.layers.*.mlp.experts.gate_up_proj", 2048, 256, 128, 8)]


def test_hugging_face_flops_against_the_flop_counter():
    transformers = pytest.importorskip("transformers")
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(_tiny_llama_config())
    ids = torch.randint(0, 1000, (2, 16))
    with FlopCounterMode(display=False) as counter:
        model(input_ids=ids).logits.float().square().mean().backward()
    ops = counter.get_flop_counts()["Global"]
    linear_flops = sum(v for op, v in ops.items() if str(op) in ("aten.mm", "aten.addmm"))
    shapes = rs.shapes_from_module(model, example_inputs={"input_ids": ids})
    assert linear_flops == _gemm_flops(rs.linear("tensorwise"), shapes)


# -- torchao filters --------------------------------------------------------------------
def _net_of(sizes):
    with torch.device("meta"):
        return nn.Sequential(*(nn.Linear(k, n) for k, n in sizes), nn.LayerNorm(8))


SIZES = [(8192, 8192), (4096, 1024), (1024, 256), (8192, 28672), (1000, 4096)]


@pytest.mark.parametrize("gpu,recipe", [("h100", "rowwise"), ("b200", "tensorwise"),
                                        ("b200", "mxfp8_cublas")])
def test_filter_keeps_exactly_the_layers_predicted_faster(gpu, recipe):
    keep = rs.float8_module_filter(gpu, recipe, M=8192)
    model = rs.linear(recipe).on(gpu)
    net = _net_of(SIZES)
    for fqn, module in net.named_modules():
        expected = isinstance(module, nn.Linear) and module.in_features % 32 == 0 and float(
            model.evaluate(8192, module.in_features, module.out_features)["speedup"]) > 1
        assert keep(module, fqn) == expected, fqn
    assert keep(net[4], "4") is False  # K = 1000 is no multiple of 16
    assert keep.speedup(8192, 8192) == pytest.approx(
        float(model.evaluate(8192, 8192, 8192)["speedup"]))


def test_filter_threshold_token_count_and_skipped_names():
    keep_default = rs.float8_module_filter("h100", "rowwise", M=8192)
    lenient = rs.float8_module_filter("h100", "rowwise", M=8192, min_speedup=0.3)
    strict = rs.float8_module_filter("h100", "rowwise", M=8192, min_speedup=1.5)
    few_tokens = rs.float8_module_filter("h100", "rowwise", M=256)
    skipping = rs.float8_module_filter("h100", "rowwise", M=8192, skip_fqns=("head",))
    big = _net_of([(8192, 8192)])[0]
    assert lenient.keeps(4096, 1024) and not keep_default.keeps(4096, 1024)
    assert keep_default(big, "x") and not strict(big, "x")
    assert not few_tokens.keeps(8192, 8192)
    assert not skipping(big, "model.head") and skipping(big, "model.mlp")
    with pytest.raises(ValueError, match="positive"):
        rs.float8_module_filter("h100", "rowwise", M=0)
    with pytest.raises(ValueError, match="fp8"):
        rs.float8_module_filter("a100", "rowwise", M=8192)


def test_filter_drives_torchao_conversion():
    float8 = pytest.importorskip("torchao.float8")
    net = _net_of(SIZES)
    keep = rs.float8_module_filter("h100", "rowwise", M=8192)
    config = float8.Float8LinearConfig.from_recipe_name("rowwise")
    float8.convert_to_float8_training(net, config=config, module_filter_fn=keep)
    converted = [type(m).__name__ == "Float8Linear" for m in net[:-1]]
    assert converted == [keep.keeps(k, n) for k, n in SIZES] and any(converted)


def test_filter_for_torchao_inference_quantize():
    quantization = pytest.importorskip("torchao.quantization")
    net = _net_of(SIZES)
    keep = rs.float8_module_filter("h100", "rowwise", M=8192, mode="inference",
                                   min_speedup=100)
    seen = []

    def spy(module, fqn):
        seen.append(fqn)
        return keep(module, fqn)

    config = quantization.Float8DynamicActivationFloat8WeightConfig(
        granularity=quantization.PerRow())
    quantization.quantize_(net, config, filter_fn=spy)  # nothing passes: nothing changes
    assert "0" in seen and all(type(m) is nn.Linear for m in net[:-1])
    assert keep.model.mode == "inference"
