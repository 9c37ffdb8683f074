"""Pair ``transformer``: two pre-LN transformer layers, checkpointed layer by layer (Hugging Face style)."""
from __future__ import annotations

import functools

import numpy as np

import mindspore
import torch
from mindspore import nn as msnn
from mindspore import ops
from torch import nn as tnn
from torch.utils.checkpoint import checkpoint

from .. import checkpoint_on_mindspore as ms_compat
from .. import recompute_on_torch as torch_compat
from . import Pair, register
from .layers import ms_ln


class TorchAttention(tnn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q = tnn.Linear(dim, dim)
        self.k = tnn.Linear(dim, dim)
        self.v = tnn.Linear(dim, dim)
        self.o = tnn.Linear(dim, dim)

    def forward(self, x, mask):
        b, t, d = x.shape
        hd = d // self.heads

        def split(y):
            return y.reshape(b, t, self.heads, hd).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) * (hd ** -0.5) + mask.reshape(b, 1, 1, t)
        att = torch.softmax(scores, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, d)
        return self.o(y)


class TorchTransformerLayer(tnn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.ln1 = tnn.LayerNorm(dim)
        self.attn = TorchAttention(dim, heads)
        self.ln2 = tnn.LayerNorm(dim)
        self.mlp = tnn.Sequential(tnn.Linear(dim, hidden), tnn.GELU(), tnn.Linear(hidden, dim))

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.mlp(self.ln2(x))


class TorchTransformer(tnn.Module):
    """Hugging Face style: ``if self.gradient_checkpointing and self.training:
    self._gradient_checkpointing_func(layer.__call__, hidden, mask)``."""

    def __init__(self, recompute=True, form="checkpoint", vocab=16, dim=16, heads=2, hidden=32, layers=2):
        super().__init__()
        self.embed = tnn.Embedding(vocab, dim)
        self.layers = tnn.ModuleList([TorchTransformerLayer(dim, heads, hidden) for _ in range(layers)])
        self.ln_f = tnn.LayerNorm(dim)
        self.head = tnn.Linear(dim, 8)
        self.gradient_checkpointing = recompute and form == "checkpoint"
        self._gradient_checkpointing_func = functools.partial(checkpoint, use_reentrant=False)
        if recompute and form == "compat":
            for layer in self.layers:
                torch_compat.mark_recompute(layer)          # MindSpore's layer.recompute(), on torch

    def forward(self, ids, mask):
        hidden = self.embed(ids)
        extended = (1.0 - mask) * -10000.0
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden = self._gradient_checkpointing_func(layer.__call__, hidden, extended)
            else:
                hidden = layer(hidden, extended)
        return self.head(self.ln_f(hidden))


class MsAttention(msnn.Cell):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5   # of the scores; an attribute, so a planted bug can change it
        self.q = msnn.Dense(dim, dim)
        self.k = msnn.Dense(dim, dim)
        self.v = msnn.Dense(dim, dim)
        self.o = msnn.Dense(dim, dim)

    def construct(self, x, mask):
        b, t, d = x.shape
        hd = d // self.heads
        q = ops.transpose(self.q(x).reshape(b, t, self.heads, hd), (0, 2, 1, 3))
        k = ops.transpose(self.k(x).reshape(b, t, self.heads, hd), (0, 2, 1, 3))
        v = ops.transpose(self.v(x).reshape(b, t, self.heads, hd), (0, 2, 1, 3))
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) * self.scale + mask.reshape(b, 1, 1, t)
        att = ops.softmax(scores, axis=-1)
        y = ops.transpose(ops.matmul(att, v), (0, 2, 1, 3)).reshape(b, t, d)
        return self.o(y)


class MsTransformerLayer(msnn.Cell):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.ln1 = ms_ln(dim)
        self.attn = MsAttention(dim, heads)
        self.ln2 = ms_ln(dim)
        self.mlp = msnn.SequentialCell([msnn.Dense(dim, hidden), msnn.GELU(approximate=False),
                                        msnn.Dense(hidden, dim)])

    def construct(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.mlp(self.ln2(x))


class MsTransformer(msnn.Cell):
    def __init__(self, recompute=True, form="function", vocab=16, dim=16, heads=2, hidden=32, layers=2):
        super().__init__()
        self.embed = msnn.Embedding(vocab, dim)
        self.layers = msnn.CellList([MsTransformerLayer(dim, heads, hidden) for _ in range(layers)])
        self.ln_f = ms_ln(dim)
        self.head = msnn.Dense(dim, 8)
        self.gradient_checkpointing = recompute and form in ("function", "compat")
        self.compat_form = form == "compat"
        self._gradient_checkpointing_func = functools.partial(ms_compat.checkpoint, use_reentrant=False)
        if recompute and form == "cell":
            for layer in self.layers:
                layer.recompute()

    def construct(self, ids, mask):
        hidden = self.embed(ids)
        extended = (1.0 - mask) * -10000.0
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                if self.compat_form:
                    hidden = self._gradient_checkpointing_func(layer.__call__, hidden, extended)
                else:
                    hidden = mindspore.recompute(layer, hidden, extended)
            else:
                hidden = layer(hidden, extended)
        return self.head(self.ln_f(hidden))


def _transformer_inputs(rng):
    ids = rng.integers(0, 16, size=(2, 6)).astype(np.int64)
    mask = np.ones((2, 6), np.float32)
    mask[1, 4:] = 0.0                                          # padding in the second sequence
    return [ids, mask]


register(Pair(
    name="transformer",
    checkpointed=("layers.0", "layers.1"),
    description="Two pre-LN transformer layers (2-head attention with an additive padding mask, GELU MLP, "
                "LayerNorm) over token embeddings, checkpointed per layer behind a gradient_checkpointing flag: "
                "torch functools.partial(checkpoint, use_reentrant=False)(layer.__call__, hidden, mask) (Hugging "
                "Face style) or compat.recompute_on_torch.mark_recompute(layer); MindSpore "
                "mindspore.recompute(layer, hidden, mask), layer.recompute(), or the torch call through "
                "compat.checkpoint.",
    torch_factory=TorchTransformer, mindspore_factory=MsTransformer,
    inputs=_transformer_inputs,
    torch_forms=("checkpoint", "compat"), mindspore_forms=("function", "cell", "compat"),
    graph_forms=("cell", "function"),
    grad_inputs=(),
    notes=("Inputs that need no gradient: integer token ids and a float padding mask (turned into an additive "
           "mask inside the model, passed to every checkpointed layer).",
           "GELU is exact on both sides (MindSpore GELU(approximate=False)); LayerNorm epsilon 1e-5 on both.",
           "GRAPH mode: the compat form does not compile -- not the shim: GRAPH mode cannot compile the "
           "expression layer.__call__ (Cell.__call__ calls context functions construct may not call); "
           "checkpoint(layer, ...) compiles.",
           "GRAPH mode: the function form recomputes each layer's attention but not its mlp (a SequentialCell, "
           "which mindspore.recompute does not recompute when compiled); the cell form recomputes both (measured "
           "with compat.graph_recompute)."),
))
