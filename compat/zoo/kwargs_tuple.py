"""Pair ``kwargs_tuple``: a recomputed block taking a tuple and keyword arguments, returning a tuple."""
from __future__ import annotations

import numpy as np

import mindspore
import torch
from mindspore import nn as msnn
from mindspore import ops
from torch import nn as tnn
from torch.utils.checkpoint import checkpoint

from .. import checkpoint_on_mindspore as ms_compat
from . import Pair, register
from .layers import randn


class TorchKwTupleBlock(tnn.Module):
    def __init__(self):
        super().__init__()
        self.fa = tnn.Linear(6, 8)
        self.fb = tnn.Linear(6, 8)
        self.fo = tnn.Linear(8, 3)

    def forward(self, xs, mask=None, scale=1.0):
        a, b = xs
        h = torch.tanh(self.fa(a) + self.fb(b)) * scale
        if mask is not None:
            h = h * mask
        return h, self.fo(h)


class TorchKwTuple(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint"):
        super().__init__()
        self.block = TorchKwTupleBlock()
        self.head = tnn.Linear(8, 2)
        self.recompute = recompute

    def forward(self, a, b, mask):
        if self.recompute:
            h, o = checkpoint(self.block, (a, b), mask=mask, scale=0.5, use_reentrant=False)
        else:
            h, o = self.block((a, b), mask=mask, scale=0.5)
        return self.head(h), o


class MsKwTupleBlock(msnn.Cell):
    def __init__(self):
        super().__init__()
        self.fa = msnn.Dense(6, 8)
        self.fb = msnn.Dense(6, 8)
        self.fo = msnn.Dense(8, 3)

    def construct(self, xs, mask=None, scale=1.0):
        a, b = xs
        h = ops.tanh(self.fa(a) + self.fb(b)) * scale
        if mask is not None:
            h = h * mask
        return h, self.fo(h)


class MsKwTuple(msnn.Cell):
    def __init__(self, recompute=True, form="function"):
        super().__init__()
        self.block = MsKwTupleBlock()
        self.head = msnn.Dense(8, 2)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            self.block.recompute(use_reentrant=False, early_stop=False)   # tensors inside a tuple: non-reentrant

    def construct(self, a, b, mask):
        if self.function_form:
            h, o = mindspore.recompute(self.block, (a, b), mask=mask, scale=0.5, use_reentrant=False,
                                       early_stop=False)
        elif self.compat_form:
            h, o = ms_compat.checkpoint(self.block, (a, b), mask=mask, scale=0.5, use_reentrant=False)
        else:
            h, o = self.block((a, b), mask=mask, scale=0.5)
        return self.head(h), o


register(Pair(
    name="kwargs_tuple",
    checkpointed=("block",),
    description="A block taking a tuple (a, b) and keyword arguments (mask=, scale=), returning a tuple; the model "
                "returns a tuple too. torch checkpoint(block, (a, b), mask=m, scale=0.5, use_reentrant=False); "
                "MindSpore mindspore.recompute(block, (a, b), mask=m, scale=0.5, use_reentrant=False), "
                "block.recompute(use_reentrant=False), or compat.checkpoint.",
    torch_factory=TorchKwTuple, mindspore_factory=MsKwTuple,
    inputs=lambda rng: [randn(rng, 4, 6), randn(rng, 4, 6), (rng.random((4, 8)) > 0.3).astype(np.float32)],
    mindspore_forms=("function", "cell", "compat"),
    graph_forms=("cell", "function", "compat"),
    grad_inputs=(0, 1),
    notes=("Tensors inside a tuple get gradients only through non-reentrant recompute (torch and MindSpore alike; "
           "compat.checkpoint gives them gradients with either flag); the mask is a float input that needs no "
           "gradient.",),
))
