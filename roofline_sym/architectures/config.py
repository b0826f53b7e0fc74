"""An ``Architecture`` from a Hugging Face ``config.json``: parsed as JSON, never run.

Read per ``model_type``: llama, mistral, qwen2, qwen3 (dense, gated SiLU MLP),
mixtral, qwen3_moe (mixtures of experts), deepseek_v2 and deepseek_v3
(latent attention, shared experts, leading dense blocks), mpt (MosaicML's MPT
as llm-foundry writes it: GELU MLP, LayerNorm, biases unless ``no_bias``,
learned positions or ALiBi).  Every number is
checked (a whole number, in a plausible range; heads that divide the hidden
size unless ``head_dim`` is given; KV heads that divide the heads); an error
names the file and the key, with close spellings of a key not found.  Keys
the architecture does not need are ignored, as transformers ignores them.

>>> a = from_config({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
...                  "num_attention_heads": 32, "num_key_value_heads": 8,
...                  "intermediate_size": 14336, "vocab_size": 128256}, "config.json")
>>> a.head_dim, a.params
(128, 8030261248)
>>> from_config({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": -1},
...             "config.json")
Traceback (most recent call last):
roofline_sym.architectures.shape.ArchitectureError: config.json: key num_hidden_layers: -1 is outside 1..4096, the plausible layers
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping

from ..datafile import parse_json, read_text
from ..validate import close_matches, label, show, unknown_name
from .shape import LIMITS, MLA, Architecture, ArchitectureError, MoE

__all__ = ["from_config", "read_config", "MODEL_TYPES"]

# the activation of a gated MLP: SiLU gates make SwiGLU
_GATED_ACTS = ("silu", "swish")


class _Config:
    """A config's keys, read with checks that name the file and the key; every
    key read is remembered, so a citation can follow it to a field."""

    def __init__(self, raw: Mapping[str, Any], source: str, prefix: str = "",
                 used: dict[str, str] | None = None):
        self.raw, self.source, self.prefix = raw, source, prefix
        self.used: dict[str, str] = {} if used is None else used  # field -> config key

    def fail(self, key: str, problem: str) -> ArchitectureError:
        return ArchitectureError(f"{self.source}: key {self.prefix}{key}: {problem}")

    def missing(self, key: str) -> ArchitectureError:
        close = close_matches(key, [k for k in self.raw if isinstance(k, str)], n=1)
        hint = f" (did you mean {self.prefix + close[0]!r}?)" if close else ""
        return ArchitectureError(f"{self.source}: key {self.prefix}{key} is missing{hint}")

    def section(self, key: str) -> "_Config":
        """A nested object of keys (MPT's ``attn_config``), empty when absent;
        its errors name ``key.inner``."""
        value = self.raw.get(key)
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            raise self.fail(key, f"expected an object of keys, got {show(value)}")
        return _Config(value, self.source, f"{self.prefix}{key}.", self.used)

    def choice(self, key: str, valid: Mapping[str, Any] | tuple[str, ...], default: str) -> str:
        """A name from ``valid`` (``default`` when absent); close spellings suggested."""
        value = self.raw.get(key, default)
        if not isinstance(value, str) or value not in valid:
            raise unknown_name(key, value, tuple(valid),
                               error=ArchitectureError, where=f"{self.source}: key {self.prefix}{key}: ")
        return value

    def size(self, key: str, limit: str, field: str | None = None, default: Any = ...,
            minimum: int = 1) -> int:
        """A whole number in ``[minimum, LIMITS[limit]]``; ``default`` when absent
        (or null, as configs write an unused size)."""
        value = self.raw.get(key)
        if value is None:
            if default is ...:
                raise self.missing(key)
            return int(default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected a whole number, got {show(value)}")
        if not minimum <= value <= LIMITS[limit]:
            raise self.fail(key, f"{value} is outside {minimum}..{LIMITS[limit]}, the "
                            f"plausible {limit.replace('_', ' ')}")
        self.used[field or limit] = self.prefix + key
        return value

    def flag(self, key: str, field: str, default: bool) -> bool:
        value = self.raw.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {show(value)}")
        if key in self.raw:
            self.used[field] = self.prefix + key
        return value

    def layer_list(self, key: str, layers: int) -> list[int]:
        value = self.raw.get(key) or []
        if not isinstance(value, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < layers for i in value):
            raise self.fail(key, f"expected a list of layer numbers 0..{layers - 1}, got "
                            f"{show(value)}")
        return value


def _common(c: _Config) -> dict[str, Any]:
    """Sizes every model type has: hidden, layers, heads, vocabulary, embeddings."""
    act = c.raw.get("hidden_act", "silu")
    if act not in _GATED_ACTS:
        raise c.fail("hidden_act", f"{show(act)} is not a gated SiLU MLP; this reader knows "
                     f"{', '.join(_GATED_ACTS)}")
    return dict(hidden=c.size("hidden_size", "hidden"), layers=c.size("num_hidden_layers", "layers"),
                heads=c.size("num_attention_heads", "heads"), vocab=c.size("vocab_size", "vocab"),
                tied_embeddings=c.flag("tie_word_embeddings", "tied_embeddings", False),
                mlp="swiglu")


def _heads(c: _Config, out: dict[str, Any], default_head_dim: int | None = None) -> None:
    """KV heads and head width: heads divide the hidden size unless ``head_dim`` is given."""
    hidden, heads = out["hidden"], out["heads"]
    out["kv_heads"] = c.size("num_key_value_heads", "kv_heads", default=heads)
    if heads % out["kv_heads"]:
        raise c.fail("num_key_value_heads", f"{out['kv_heads']} does not divide "
                     f"num_attention_heads = {heads}")
    given = c.raw.get("head_dim")
    if given is None and default_head_dim is None and hidden % heads:
        raise c.fail("num_attention_heads", f"{heads} does not divide hidden_size = {hidden} "
                     "(and no head_dim is given)")
    fallback = default_head_dim if default_head_dim is not None else hidden // heads
    out["head_dim"] = c.size("head_dim", "head_dim", default=fallback)


def _dense(c: _Config, *, qk_norm: bool = False, bias: str = "none",
           head_dim: int | None = None) -> dict[str, Any]:
    out = _common(c)
    _heads(c, out, head_dim)
    out["intermediate"] = c.size("intermediate_size", "intermediate")
    if c.flag("mlp_bias", "mlp_bias", False):
        raise c.fail("mlp_bias", "MLP biases are not modelled")
    if bias == "none" and c.flag("attention_bias", "attention_bias", False):
        bias = "all"
    return {**out, "qk_norm": qk_norm, "attention_bias": bias}


def _llama(c: _Config) -> dict[str, Any]:
    return _dense(c)


def _qwen2(c: _Config) -> dict[str, Any]:
    return _dense(c, bias="qkv")  # Qwen2 biases q, k and v, not o


def _qwen3(c: _Config) -> dict[str, Any]:
    return _dense(c, qk_norm=True, head_dim=128)  # Qwen3Config's default head_dim


def _mixtral(c: _Config) -> dict[str, Any]:
    out = _common(c)
    _heads(c, out)
    size = c.size("intermediate_size", "expert_intermediate")  # each expert's MLP
    out["intermediate"] = size
    out["moe"] = MoE(experts=c.size("num_local_experts", "experts"),
                     top_k=c.size("num_experts_per_tok", "top_k"), shared_experts=0,
                     expert_intermediate=size)
    return {**out, "attention_bias": "none"}


def _qwen3_moe(c: _Config) -> dict[str, Any]:
    out = _dense(c, qk_norm=True, head_dim=128)
    layers = out["layers"]
    step = c.size("decoder_sparse_step", "layers", "moe.sparse_step", default=1)
    dense_only = set(c.layer_list("mlp_only_layers", layers))
    dense = sum(1 for i in range(layers) if i in dense_only or (i + 1) % step)
    out["moe"] = _moe(c, "num_experts", shared=0, dense=dense)
    return out


def _deepseek(c: _Config, v3: bool) -> dict[str, Any]:
    out = _common(c)
    heads, layers = out["heads"], out["layers"]
    mla = MLA(q_lora_rank=c.size("q_lora_rank", "rank", "mla.q_lora_rank", default=0),
              kv_lora_rank=c.size("kv_lora_rank", "rank", "mla.kv_lora_rank"),
              qk_nope_head_dim=c.size("qk_nope_head_dim", "head_dim", "mla.qk_nope_head_dim"),
              qk_rope_head_dim=c.size("qk_rope_head_dim", "head_dim", "mla.qk_rope_head_dim"),
              v_head_dim=c.size("v_head_dim", "head_dim", "mla.v_head_dim"))
    # latent attention caches one latent per token: every head has its own key
    # and value, read from the latent (num_key_value_heads repeats the heads)
    out.update(kv_heads=heads, head_dim=mla.qk_head_dim, mla=mla,
               intermediate=c.size("intermediate_size", "intermediate"), attention_bias="none")
    if c.raw.get("n_routed_experts") is not None:
        first = c.size("first_k_dense_replace", "dense_layers", "moe.dense_layers", default=0,
                      minimum=0)
        freq = c.size("moe_layer_freq", "layers", "moe.layer_freq", default=1)
        dense = sum(1 for i in range(layers) if i < first or i % freq)
        out["moe"] = _moe(c, "n_routed_experts",
                          shared=c.size("n_shared_experts", "shared_experts",
                                       "moe.shared_experts", default=0, minimum=0),
                          dense=dense, router_bias=v3)
    return out


def _moe(c: _Config, experts_key: str, *, shared: int, dense: int,
         router_bias: bool = False) -> MoE:
    return MoE(experts=c.size(experts_key, "experts", "moe.experts"),
               top_k=c.size("num_experts_per_tok", "top_k", "moe.top_k"),
               shared_experts=shared,
               expert_intermediate=c.size("moe_intermediate_size", "expert_intermediate",
                                         "moe.expert_intermediate"),
               dense_layers=dense, router_bias=router_bias)


# MPT's norms by llm-foundry's registry name; its attention kinds -> KV heads
_MPT_NORMS = {"layernorm": "layernorm", "low_precision_layernorm": "layernorm",
              "rmsnorm": "rmsnorm", "low_precision_rmsnorm": "rmsnorm",
              "triton_rmsnorm": "rmsnorm"}
_MPT_ATTENTION = ("multihead_attention", "multiquery_attention", "grouped_query_attention")


def _mpt_kv_heads(attn: _Config, heads: int) -> int:
    kind = attn.choice("attn_type", _MPT_ATTENTION, "multihead_attention")
    if kind == "multihead_attention":
        return heads
    if kind == "multiquery_attention":
        return 1
    kv = attn.size("kv_n_heads", "kv_heads")
    if heads % kv:
        raise attn.fail("kv_n_heads", f"{kv} does not divide n_heads = {heads}")
    return kv


def _mpt_positions(c: _Config, attn: _Config) -> dict[str, Any]:
    """Rotary (``attn_config.rope``), ALiBi (``attn_config.alibi``) and a
    learned table of ``max_seq_len`` rows (``learned_pos_emb``, llm-foundry's
    default unless ALiBi) as the architecture's ``rotary`` and ``learned_positions``."""
    rope, alibi = attn.flag("rope", "rotary", False), attn.flag("alibi", "alibi", False)
    if rope and alibi:
        raise attn.fail("alibi", "rotary embeddings and ALiBi together are not an MPT")
    # llm-foundry turns the learned table off when ALiBi is on
    learned = c.flag("learned_pos_emb", "learned_positions", True) and not alibi
    rows = c.size("max_seq_len", "positions", "learned_positions") if learned else 0
    return {"rotary": rope, "learned_positions": rows}


def _mpt_intermediate(c: _Config, ffn: _Config, hidden: int) -> int:
    """``ffn_config.ffn_hidden_size``, else ``expansion_ratio * d_model`` (a
    whole number, as llm-foundry rounds it down)."""
    ffn.choice("ffn_type", ("mptmlp",), "mptmlp")  # gated MPT MLPs are not read
    act = ffn.raw.get("ffn_act_fn")
    if act is not None and (not isinstance(act, Mapping) or act.get("name") != "gelu"):
        raise ffn.fail("ffn_act_fn", f"{show(act)} is not a GELU; this reader knows MPT's "
                       "default GELU MLP")
    if ffn.raw.get("ffn_hidden_size") is not None:
        return ffn.size("ffn_hidden_size", "intermediate")
    ratio = c.raw.get("expansion_ratio", 4)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio <= 64:
        raise c.fail("expansion_ratio", f"expected a number in (0, 64], got {show(ratio)}")
    size = int(hidden * ratio)
    if size < 1:
        raise c.fail("expansion_ratio", f"{ratio} x d_model = {hidden} leaves no MLP")
    c.used["intermediate"] = "expansion_ratio"
    return size


def _mpt(c: _Config) -> dict[str, Any]:
    """llm-foundry's MPT: fused QKV and an out projection, a GELU MLP, biases on
    every projection and LayerNorm unless ``no_bias``, tied embeddings."""
    hidden, heads = c.size("d_model", "hidden"), c.size("n_heads", "heads")
    if hidden % heads:
        raise c.fail("n_heads", f"{heads} does not divide d_model = {hidden}")
    attn, ffn = c.section("attn_config"), c.section("ffn_config")
    if attn.flag("qk_ln", "qk_norm", False):
        raise attn.fail("qk_ln", "a LayerNorm of the whole query and key is not modelled")
    norm = _MPT_NORMS[c.choice("norm_type", _MPT_NORMS, "low_precision_layernorm")]
    biased = not c.flag("no_bias", "attention_bias", False)
    return dict(hidden=hidden, layers=c.size("n_layers", "layers"), heads=heads,
                kv_heads=_mpt_kv_heads(attn, heads), head_dim=hidden // heads, mlp="gelu",
                intermediate=_mpt_intermediate(c, ffn, hidden),
                vocab=c.size("vocab_size", "vocab"),
                tied_embeddings=c.flag("tie_word_embeddings", "tied_embeddings", True),
                norm=norm, attention_bias="all" if biased else "none", mlp_bias=biased,
                norm_bias=biased and norm == "layernorm", **_mpt_positions(c, attn))


_READERS: dict[str, Callable[[_Config], dict[str, Any]]] = {
    "llama": _llama, "mistral": _llama, "qwen2": _qwen2, "qwen3": _qwen3,
    "mixtral": _mixtral, "qwen3_moe": _qwen3_moe,
    "deepseek_v2": lambda c: _deepseek(c, v3=False),
    "deepseek_v3": lambda c: _deepseek(c, v3=True),
    "mpt": _mpt,
}
MODEL_TYPES = tuple(_READERS)


def from_config(config: Mapping[str, Any], source: str = "config", *, name: str | None = None,
                citations: Mapping[str, str] | None = None) -> Architecture:
    """The architecture a config mapping describes; ``source`` names it in errors.

    ``citations``: config key -> citation, turned into the architecture's
    field -> citation; by default each field cites ``source`` and its key.
    """
    if not isinstance(config, Mapping):
        raise ArchitectureError(f"{source}: expected a JSON object of config keys, got "
                                f"{show(config)}")
    model_type = config.get("model_type")
    if not isinstance(model_type, str):
        raise ArchitectureError(f"{source}: key model_type: expected one of "
                                f"{', '.join(MODEL_TYPES)}, got {show(model_type)}")
    if model_type not in _READERS:
        raise unknown_name("model_type", model_type, MODEL_TYPES, error=ArchitectureError,
                           where=f"{source}: key model_type: ")
    c = _Config(config, source)
    title = name or str(config.get("_name_or_path") or model_type)
    try:
        fields = _READERS[model_type](c)
        cite = citations if citations is not None else {k: f"{source}, {k}"
                                                        for k in c.used.values()}
        sources = {fld: cite[key] for fld, key in c.used.items() if key in cite}
        return Architecture(name=title, sources=sources, **fields)
    except ArchitectureError as exc:
        # a size that fails together with another (heads and KV heads, top-k and
        # experts) is checked by the dataclasses: say which file
        message = str(exc)
        raise ArchitectureError(message if message.startswith(f"{source}: ")
                                else f"{source}: {message}") from None


def read_config(path: str | os.PathLike[str]) -> Architecture:
    """The architecture of a ``config.json`` file (or of a directory holding one)."""
    name = os.fspath(path)
    if os.path.isdir(name):
        name = os.path.join(name, "config.json")
    name, text = read_text(name, "Hugging Face config")
    shown = label(name)
    config = parse_json(text, shown)
    folder = os.path.basename(os.path.dirname(os.path.abspath(name)))
    stem = os.path.splitext(os.path.basename(name))[0]
    return from_config(config, shown, name=folder if stem == "config" and folder else stem)
