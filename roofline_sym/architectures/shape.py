"""A transformer described as data: sizes in, linear layers and parameter counts out.

An ``Architecture`` holds what a config.json says about a decoder-only
transformer (hidden size, layers, heads, MLP, vocabulary; a mixture of
experts, ``MoE``; DeepSeek's latent attention, ``MLA``) and derives the rest:
every linear layer per token (``linears``) and the parameter counts.

>>> a = Architecture("tiny", hidden=256, layers=2, heads=4, kv_heads=2, head_dim=64,
...                  mlp="swiglu", intermediate=512, vocab=1000, tied_embeddings=False)
>>> [(s.name, s.K, s.N) for s in a.linears()][:3]
[('self_attn.q_proj', 256, 256), ('self_attn.k_proj', 256, 128), ('self_attn.v_proj', 256, 128)]
>>> a.params, a.active_params  # derived by hand in tests/test_architectures.py
(1692928, 1692928)
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Mapping, NamedTuple

from ..errors import InputError

from ..errors import InputError

__all__ = ["MoE", "MLA", "LinearShape", "Architecture", "MLP_KINDS", "NORMS", "PARTS",
           "ATTENTION_BIAS", "LIMITS", "ArchitectureError"]

MLP_KINDS = ("swiglu", "gelu", "relu2")  # gated (three matrices), plain (two), plain
NORMS = ("rmsnorm", "layernorm")
ATTENTION_BIAS = ("none", "qkv", "all")  # biases of q, k, v (Qwen2); of every projection
PARTS = ("attention", "mlp", "experts", "shared_experts", "router", "output")

# the largest plausible value of each size: past it a number is a typo or an
# attack (a config of 10**12 layers), not a model; each is many times the
# largest published model's (Llama 3 405B: hidden 16384, 126 layers, 128 heads;
# DeepSeek-V3: 256 experts; vocabularies up to about 256k)
LIMITS = {
    "hidden": 2 ** 17, "layers": 2 ** 12, "heads": 2 ** 12, "kv_heads": 2 ** 12,
    "head_dim": 2 ** 12, "intermediate": 2 ** 20, "vocab": 2 ** 23,
    "experts": 2 ** 14, "top_k": 2 ** 10, "shared_experts": 2 ** 8,
    "expert_intermediate": 2 ** 20, "dense_layers": 2 ** 12, "rank": 2 ** 16,
    "positions": 2 ** 22,
}


class ArchitectureError(InputError):
    """An architecture that cannot be: a size out of range, heads that do not divide."""


def _size(value: object, name: str, limit: str, minimum: int = 1) -> int:
    """A whole number in ``[minimum, LIMITS[limit]]``; errors name the field."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArchitectureError(f"{name} must be a whole number, not "
                                f"{type(value).__name__} {value!r:.40}")
    if not minimum <= value <= LIMITS[limit]:
        raise ArchitectureError(f"{name} = {value} is outside {minimum}..{LIMITS[limit]}, "
                                f"the plausible {limit.replace('_', ' ')}")
    return value


@dataclass(frozen=True)
class MoE:
    """A mixture of experts: ``top_k`` of ``experts`` routed experts per token,
    plus ``shared_experts`` every token passes; ``dense_layers`` blocks keep a
    dense MLP (DeepSeek's ``first_k_dense_replace``; Qwen's ``mlp_only_layers``).

    >>> MoE(experts=8, top_k=2, shared_experts=0, expert_intermediate=14336).top_k
    2
    """

    experts: int
    top_k: int
    shared_experts: int
    expert_intermediate: int
    dense_layers: int = 0
    router_bias: bool = False  # DeepSeek-V3's e_score_correction_bias, one number per expert

    def __post_init__(self) -> None:
        _size(self.experts, "moe.experts", "experts", minimum=2)
        _size(self.top_k, "moe.top_k", "top_k")
        _size(self.shared_experts, "moe.shared_experts", "shared_experts", minimum=0)
        _size(self.expert_intermediate, "moe.expert_intermediate", "expert_intermediate")
        _size(self.dense_layers, "moe.dense_layers", "dense_layers", minimum=0)
        if self.top_k > self.experts:
            raise ArchitectureError(f"moe.top_k = {self.top_k} exceeds moe.experts = "
                                    f"{self.experts}")


@dataclass(frozen=True)
class MLA:
    """DeepSeek's multi-head latent attention: queries through a rank
    ``q_lora_rank`` (0: a plain query projection), keys and values through a
    shared latent of rank ``kv_lora_rank`` plus one rotary key per token.

    >>> MLA(1536, 512, 128, 64, 128).qk_head_dim
    192
    """

    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int

    def __post_init__(self) -> None:
        _size(self.q_lora_rank, "mla.q_lora_rank", "rank", minimum=0)
        _size(self.kv_lora_rank, "mla.kv_lora_rank", "rank")
        _size(self.qk_nope_head_dim, "mla.qk_nope_head_dim", "head_dim")
        _size(self.qk_rope_head_dim, "mla.qk_rope_head_dim", "head_dim")
        _size(self.v_head_dim, "mla.v_head_dim", "head_dim")

    @property
    def qk_head_dim(self) -> int:
        """The width of one head's query and key: ``qk_nope_head_dim + qk_rope_head_dim``."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim


class LinearShape(NamedTuple):
    """One linear layer of a block kind, per token: ``K`` inputs, ``N`` outputs,
    held by ``blocks`` blocks; a grouped GEMM of ``groups`` experts takes
    ``top_k`` rows per token (its M is ``top_k`` x tokens)."""

    name: str
    K: int
    N: int
    blocks: int
    groups: int = 1
    top_k: int = 1
    part: str = "attention"

    @property
    def weights(self) -> int:
        """Weights of the layer in the whole model: ``K * N * groups * blocks``."""
        return self.K * self.N * self.groups * self.blocks


@dataclass(frozen=True)
class Architecture:
    """A decoder-only transformer's sizes (see the module docstring).

    ``head_dim``: the width of one query/key head (under MLA, nope + rope);
    ``intermediate``: the dense MLP's size (a mixture of experts with no dense
    block repeats the expert size); ``attention_bias``: ``"qkv"`` (Qwen2) or
    ``"all"`` projections carry a bias; ``qk_norm``: a norm of each query and
    key head (Qwen3); ``mlp_bias``: the MLP's projections carry a bias;
    ``norm_bias``: a LayerNorm has a bias besides its weight; ``rotary``:
    positions enter as rotary embeddings of queries and keys (else through a
    bias of the scores, ALiBi, or a table); ``learned_positions``: rows of a
    learned position table added to the token embedding (0: none; MPT);
    ``sources``: field -> citation.
    """

    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    mlp: str
    intermediate: int
    vocab: int
    tied_embeddings: bool
    norm: str = "rmsnorm"
    moe: MoE | None = None
    mla: MLA | None = None
    attention_bias: str = "none"
    qk_norm: bool = False
    mlp_bias: bool = False
    norm_bias: bool = True
    rotary: bool = True
    learned_positions: int = 0
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name in LIMITS:
                _size(getattr(self, f.name), f.name, f.name)
        for name, valid in (("mlp", MLP_KINDS), ("norm", NORMS),
                            ("attention_bias", ATTENTION_BIAS)):
            if getattr(self, name) not in valid:
                raise ArchitectureError(f"{name} = {getattr(self, name)!r} is not one of "
                                        f"{', '.join(valid)}")
        _size(self.learned_positions, "learned_positions", "positions", minimum=0)
        for name in ("tied_embeddings", "qk_norm", "mlp_bias", "norm_bias", "rotary"):
            if not isinstance(getattr(self, name), bool):
                raise ArchitectureError(f"{name} must be true or false, not "
                                        f"{getattr(self, name)!r:.40}")
        if self.heads % self.kv_heads:
            raise ArchitectureError(f"kv_heads = {self.kv_heads} does not divide heads = "
                                    f"{self.heads}")
        if self.moe is not None and self.moe.dense_layers >= self.layers:
            raise ArchitectureError(f"moe.dense_layers = {self.moe.dense_layers} leaves none "
                                    f"of the {self.layers} layers a mixture of experts")
        if self.mla is not None and self.head_dim != self.mla.qk_head_dim:
            raise ArchitectureError(f"head_dim = {self.head_dim} differs from the MLA query "
                                    f"head, {self.mla.qk_head_dim}")
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))

    # -- blocks ---------------------------------------------------------------------
    @property
    def moe_layers(self) -> int:
        """Blocks whose MLP is a mixture of experts (0 for a dense model)."""
        return 0 if self.moe is None else self.layers - self.moe.dense_layers

    @property
    def dense_layers(self) -> int:
        """Blocks with a dense MLP."""
        return self.layers - self.moe_layers

    def _attention(self) -> list[LinearShape]:
        h, n, L = self.hidden, self.heads, self.layers
        if self.mla is None:
            q, kv = n * self.head_dim, self.kv_heads * self.head_dim
            return [LinearShape("self_attn.q_proj", h, q, L), LinearShape("self_attn.k_proj", h, kv, L),
                    LinearShape("self_attn.v_proj", h, kv, L),
                    LinearShape("self_attn.o_proj", q, h, L)]
        m = self.mla
        query = ([LinearShape("self_attn.q_a_proj", h, m.q_lora_rank, L),
                  LinearShape("self_attn.q_b_proj", m.q_lora_rank, n * m.qk_head_dim, L)]
                 if m.q_lora_rank else [LinearShape("self_attn.q_proj", h, n * m.qk_head_dim, L)])
        return query + [
            LinearShape("self_attn.kv_a_proj_with_mqa", h, m.kv_lora_rank + m.qk_rope_head_dim, L),
            LinearShape("self_attn.kv_b_proj", m.kv_lora_rank,
                        n * (m.qk_nope_head_dim + m.v_head_dim), L),
            LinearShape("self_attn.o_proj", n * m.v_head_dim, h, L)]

    def _mlp(self, prefix: str, size: int, blocks: int, part: str, groups: int = 1,
             top_k: int = 1) -> list[LinearShape]:
        h = self.hidden
        up = [LinearShape(f"{prefix}.gate_proj", h, size, blocks, groups, top_k, part)] \
            if self.mlp == "swiglu" else []
        return up + [LinearShape(f"{prefix}.up_proj", h, size, blocks, groups, top_k, part),
                     LinearShape(f"{prefix}.down_proj", size, h, blocks, groups, top_k, part)]

    def linears(self, lm_head: bool = True) -> tuple[LinearShape, ...]:
        """Every linear layer, blocks first (attention, dense MLP, shared experts,
        routed experts, router), then the output layer (``lm_head``); the
        embedding is a lookup, not a GEMM.

        >>> a = Architecture("gelu", hidden=256, layers=2, heads=4, kv_heads=4, head_dim=64,
        ...                  mlp="gelu", intermediate=1024, vocab=1000, tied_embeddings=True)
        >>> [s.name for s in a.linears() if s.part != "attention"]
        ['mlp.up_proj', 'mlp.down_proj', 'lm_head']
        """
        out = self._attention()
        if self.dense_layers:
            out += self._mlp("mlp", self.intermediate, self.dense_layers, "mlp")
        if self.moe is not None:
            e = self.moe
            if e.shared_experts:
                out += self._mlp("mlp.shared_experts", e.shared_experts * e.expert_intermediate,
                                 self.moe_layers, "shared_experts")
            out += self._mlp("mlp.experts", e.expert_intermediate, self.moe_layers, "experts",
                             e.experts, e.top_k)
            out.append(LinearShape("mlp.gate", self.hidden, e.experts, self.moe_layers,
                                   part="router"))
        if lm_head:
            out.append(LinearShape("lm_head", self.hidden, self.vocab, 1, part="output"))
        return tuple(out)

    # -- parameters -----------------------------------------------------------------
    @property
    def embedding_params(self) -> int:
        """The token embedding, ``vocab * hidden``, and a learned position
        table, ``learned_positions * hidden``."""
        return (self.vocab + self.learned_positions) * self.hidden

    def _non_linear_params(self) -> int:
        """Everything but the linear layers' weights and the embedding: norms,
        biases, the router's correction bias."""
        per_norm = self.hidden * (2 if self.norm == "layernorm" and self.norm_bias else 1)
        norms = (2 * self.layers + 1) * per_norm  # two per block, one final
        width = 2 if self.norm == "layernorm" else 1
        if self.qk_norm:
            norms += 2 * self.head_dim * width * self.layers
        if self.mla is not None:  # a norm of each latent
            norms += (self.mla.q_lora_rank + self.mla.kv_lora_rank) * width * self.layers
        bias = 0
        if self.attention_bias != "none":
            attention = {s.name: s.N for s in self._attention()}
            biased = [n for n in attention if self.attention_bias == "all"
                      or n.rsplit(".", 1)[1] in ("q_proj", "k_proj", "v_proj")]
            bias = sum(attention[n] for n in biased) * self.layers
        if self.mlp_bias:  # one bias per output of every MLP projection, experts' too
            bias += sum(s.N * s.groups * s.blocks for s in self.linears(lm_head=False)
                        if s.part in ("mlp", "shared_experts", "experts"))
        if self.moe is not None and self.moe.router_bias:
            bias += self.moe.experts * self.moe_layers
        return norms + bias

    @property
    def params(self) -> int:
        """Every parameter: linear weights (the output layer's unless tied),
        the embedding, norms and biases."""
        weights = sum(s.weights for s in self.linears(lm_head=not self.tied_embeddings))
        return weights + self.embedding_params + self._non_linear_params()

    @property
    def active_params(self) -> int:
        """The parameters one token uses: ``params`` with ``top_k`` routed experts
        in place of all of them (embedding and output counted whole, as
        published "active" counts do)."""
        if self.moe is None:
            return self.params
        idle = sum(s.weights // s.groups * (s.groups - s.top_k) for s in self.linears()
                   if s.part == "experts")
        return self.params - idle

