"""Pair ``frozen_input``: a recomputed first block fed an input that needs no gradient."""
from __future__ import annotations

import mindspore
from mindspore import nn as msnn
from torch import nn as tnn
from torch.utils.checkpoint import checkpoint

from .. import checkpoint_on_mindspore as ms_compat
from .. import recompute_on_torch as torch_compat
from . import Pair, register
from .layers import randn


class TorchFrozenInput(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint"):
        super().__init__()
        self.block = tnn.Sequential(tnn.Linear(8, 16), tnn.ReLU(), tnn.Linear(16, 16), tnn.Tanh())
        self.head = tnn.Linear(16, 4)
        self.recompute = recompute
        self.form = form

    def forward(self, x):
        if self.recompute and self.form == "checkpoint":
            h = checkpoint(self.block, x, use_reentrant=False)
        elif self.recompute:
            h = torch_compat.recompute(self.block, x)       # MindSpore's reentrant default, on torch
        else:
            h = self.block(x)
        return self.head(h)


class MsFrozenInput(msnn.Cell):
    def __init__(self, recompute=True, form="function"):
        super().__init__()
        self.block = msnn.SequentialCell([msnn.Dense(8, 16), msnn.ReLU(), msnn.Dense(16, 16), msnn.Tanh()])
        self.head = msnn.Dense(16, 4)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            self.block.recompute()

    def construct(self, x):
        if self.function_form:
            h = mindspore.recompute(self.block, x)
        elif self.compat_form:
            h = ms_compat.checkpoint(self.block, x, use_reentrant=False)
        else:
            h = self.block(x)
        return self.head(h)


register(Pair(
    name="frozen_input",
    checkpointed=("block",),
    graph_unrecomputed=dict.fromkeys(
        ("function", "compat"),
        "mindspore.recompute of a SequentialCell (its construct loops over its cells) recomputes nothing in GRAPH mode "
        "(MindSpore 2.10; measured with compat.graph_recompute, pinned in tests/test_graph_recompute.py); "
        "Cell.recompute() on it does (the cell form)"),
    description="The first block of a model, fed raw data that needs no gradient, recomputed: torch "
                "checkpoint(block, x, use_reentrant=False) or compat.recompute_on_torch.recompute(block, x); "
                "MindSpore mindspore.recompute(block, x) (reentrant), block.recompute(), or compat.checkpoint.",
    torch_factory=TorchFrozenInput, mindspore_factory=MsFrozenInput,
    inputs=lambda rng: [randn(rng, 4, 8)],
    torch_forms=("checkpoint", "compat"), mindspore_forms=("function", "cell", "compat"),
    graph_forms=("cell", "function", "compat"),
    grad_inputs=(),
    notes=("torch's reentrant checkpoint with no input requiring grad returns an output without grad: the block's "
           "parameters would get no gradient (torch warns). MindSpore's reentrant form computes them. The torch "
           "twin uses use_reentrant=False; compat.recompute_on_torch.recompute switches to it by itself in that "
           "case.",),
))
