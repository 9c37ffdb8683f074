"""Pair ``selective_block``: two Llama-style blocks under selective activation checkpointing, torchtitan's way.

The policy is torchtitan's default selective AC (torchtitan 0.3.0, ``distributed/activation_checkpoint.py``): save the
outputs of the compute-intensive ops (mm, bmm, addmm, the attention kernels, max, topk), but recompute every second
matmul (a count kept per region, in the forward). It is written once, over a framework's ``ops`` and
``CheckpointPolicy``: the torch twin passes torch's, the MindSpore twin recompat's (``compat.selective``), as the
translator writes it.
"""
from __future__ import annotations

import functools

import mindspore
import torch
from mindspore import nn as msnn
from mindspore import ops as msops
from torch import nn as tnn
from torch.utils import checkpoint as torch_checkpoint

from .. import checkpoint_on_mindspore as ms_compat
from .. import selective
from . import Pair, register
from .layers import ms_ln, randn


def titan_policy(ops, CheckpointPolicy):
    """torchtitan's selective AC policy, over one framework's op names: a fresh count per region."""
    mm_ops = (ops.aten.mm.default, ops.aten.linear.default)
    save_ops = {ops.aten.mm.default, ops.aten.bmm.default, ops.aten.addmm.default, ops.aten.linear.default,
                ops.aten.max.default, ops.aten.topk.default,
                ops.aten._scaled_dot_product_flash_attention.default,
                ops.aten._scaled_dot_product_efficient_attention.default,
                ops.aten._scaled_dot_product_cudnn_attention.default,
                ops._c10d_functional.reduce_scatter_tensor.default}
    meta = {"forward_mm_count": 0, "recompute_mm_count": 0}

    def policy(ctx, func, *args, **kwargs):
        key = f"{'recompute' if ctx.is_recompute else 'forward'}_mm_count"
        if func in mm_ops:
            meta[key] += 1
        if func in save_ops:
            if func in mm_ops and meta[key] % 2 == 0:
                return CheckpointPolicy.PREFER_RECOMPUTE
            return CheckpointPolicy.MUST_SAVE
        return CheckpointPolicy.PREFER_RECOMPUTE
    return policy


def _torch_contexts():
    return torch_checkpoint.create_selective_checkpoint_contexts(titan_policy(torch.ops, torch_checkpoint.CheckpointPolicy))


def _ms_contexts():
    return selective.create_selective_checkpoint_contexts(titan_policy(selective.ops, selective.CheckpointPolicy))


class TorchBlock(tnn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.attention_norm = tnn.LayerNorm(dim)
        self.wq, self.wk, self.wv, self.wo = (tnn.Linear(dim, dim, bias=False) for _ in range(4))
        self.ffn_norm = tnn.LayerNorm(dim)
        self.w1 = tnn.Linear(dim, 4 * dim, bias=False)
        self.w2 = tnn.Linear(4 * dim, dim, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.heads
        h = self.attention_norm(x)
        q, k, v = (w(h).reshape(b, t, self.heads, hd).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        att = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * hd ** -0.5, dim=-1)
        x = x + self.wo(torch.matmul(att, v).transpose(1, 2).reshape(b, t, d))
        return x + self.w2(torch.nn.functional.silu(self.w1(self.ffn_norm(x))))


class TorchModel(tnn.Module):
    """Each block wrapped as torchtitan does: checkpoint(block, use_reentrant=False, context_fn=..., early_stop=False):
    the whole region is recomputed, so every op the policy does not save runs again."""

    def __init__(self, recompute=True, form="selective", dim=16, heads=2, layers=2):
        super().__init__()
        self.layers = tnn.ModuleList([TorchBlock(dim, heads) for _ in range(layers)])
        self.norm = tnn.LayerNorm(dim)
        self.output = tnn.Linear(dim, 8)
        self.context_fn = _torch_contexts if form == "selective" else torch_checkpoint.noop_context_fn
        self.recompute = recompute

    def forward(self, x):
        for layer in self.layers:
            if self.recompute:
                x = torch_checkpoint.checkpoint(layer, x, use_reentrant=False, context_fn=self.context_fn,
                                                early_stop=False)
            else:
                x = layer(x)
        return self.output(self.norm(x))


class MsBlock(msnn.Cell):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.attention_norm = ms_ln(dim)
        self.wq, self.wk, self.wv, self.wo = (msnn.Dense(dim, dim, has_bias=False) for _ in range(4))
        self.ffn_norm = ms_ln(dim)
        self.w1 = msnn.Dense(dim, 4 * dim, has_bias=False)
        self.w2 = msnn.Dense(4 * dim, dim, has_bias=False)

    def construct(self, x):
        b, t, d = x.shape
        hd = d // self.heads
        h = self.attention_norm(x)
        q = msops.transpose(self.wq(h).reshape(b, t, self.heads, hd), (0, 2, 1, 3))
        k = msops.transpose(self.wk(h).reshape(b, t, self.heads, hd), (0, 2, 1, 3))
        v = msops.transpose(self.wv(h).reshape(b, t, self.heads, hd), (0, 2, 1, 3))
        att = msops.softmax(msops.matmul(q, k.swapaxes(-1, -2)) * hd ** -0.5, -1)
        x = x + self.wo(msops.transpose(msops.matmul(att, v), (0, 2, 1, 3)).reshape(b, t, d))
        return x + self.w2(msops.silu(self.w1(self.ffn_norm(x))))


class MsModel(msnn.Cell):
    """selective: mindspore.recompute(block, x, use_reentrant=False, context_fn=...) with recompat's contexts;
    compat: the torch call through compat.checkpoint, same contexts; function: mindspore.recompute, no policy."""

    def __init__(self, recompute=True, form="selective", dim=16, heads=2, layers=2):
        super().__init__()
        self.layers = msnn.CellList([MsBlock(dim, heads) for _ in range(layers)])
        self.norm = ms_ln(dim)
        self.output = msnn.Dense(dim, 8)
        self.form = form if recompute else None
        self.context_fn = _ms_contexts if form in ("selective", "compat") else None

    def construct(self, x):
        for layer in self.layers:
            if self.form == "compat":
                x = ms_compat.checkpoint(layer, x, use_reentrant=False, context_fn=self.context_fn)
            elif self.form == "selective":
                x = mindspore.recompute(layer, x, use_reentrant=False, context_fn=self.context_fn, early_stop=False)
            elif self.form == "function":
                x = mindspore.recompute(layer, x, use_reentrant=False, early_stop=False)
            else:
                x = layer(x)
        return self.output(self.norm(x))


register(Pair(
    name="selective_block",
    checkpointed=("layers.0", "layers.1"),
    description="Two Llama-style blocks (bias-free projections, matmul-softmax attention, SiLU MLP, LayerNorm), "
                "each checkpointed with torchtitan's selective policy (save the matmuls, attention and max, "
                "recompute every second mm): torch checkpoint(block, use_reentrant=False, context_fn=partial("
                "create_selective_checkpoint_contexts, policy)); MindSpore mindspore.recompute(block, "
                "use_reentrant=False, context_fn=...) with compat.selective's contexts, or compat.checkpoint. "
                "The checkpoint and function forms recompute whole blocks (no policy).",
    torch_factory=TorchModel, mindspore_factory=MsModel,
    inputs=lambda rng: [randn(rng, 2, 8, 16)],
    torch_forms=("selective", "checkpoint"), mindspore_forms=("selective", "compat", "function"),
    graph_forms=("selective", "compat", "function"),
    selective={"torch": ("selective", "checkpoint"), "mindspore": ("selective", "function")},
    notes=("The policy runs in the forward only; torch 2.13's ctx.is_recompute is always False, and so is "
           "compat.selective's.",
           "GRAPH mode: every form compiles and gives the gradients of the plain graph (measured), but a compiled "
           "graph runs no Python dispatch hook: the policy's contexts are not run there (compat.selective).",
           "LayerNorm epsilon 1e-5 on both sides."),
))
