"""Pairs ``dropout`` and ``dropout_functional``: a recomputed block holding ``nn.Dropout``, or functional dropout."""
from __future__ import annotations

import functools

import mindspore
import torch.nn.functional as F
from mindspore import nn as msnn
from mindspore import ops
from torch import nn as tnn
from torch.utils.checkpoint import checkpoint

from .. import checkpoint_on_mindspore as ms_compat
from .. import recompute_on_torch as torch_compat
from . import Pair, register
from .layers import randn


class TorchDropoutNet(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint", functional=False):
        super().__init__()
        self.fc1 = tnn.Linear(8, 16)
        self.block = TorchDropBlock(functional)
        self.fc2 = tnn.Linear(16, 4)
        self.recompute = recompute
        self.form = form

    def forward(self, x):
        h = F.relu(self.fc1(x))
        if self.recompute and self.form == "checkpoint":
            h = checkpoint(self.block, h, use_reentrant=False)              # preserve_rng_state=True (default)
        elif self.recompute and self.form == "compat":
            h = torch_compat.recompute(self.block, h)                       # save_rng_state=True (default)
        else:
            h = self.block(h)
        return self.fc2(h)


class TorchDropBlock(tnn.Module):
    def __init__(self, functional):
        super().__init__()
        self.dense = tnn.Linear(16, 16)
        self.drop = tnn.Dropout(p=0.5)
        self.functional = functional

    def forward(self, x):
        h = F.relu(self.dense(x))
        return F.dropout(h, p=0.5, training=self.training) if self.functional else self.drop(h)


class MsDropBlock(msnn.Cell):
    def __init__(self, functional):
        super().__init__()
        self.dense = msnn.Dense(16, 16)
        self.relu = msnn.ReLU()
        self.drop = msnn.Dropout(p=0.5)
        self.functional = functional

    def construct(self, x):
        h = self.relu(self.dense(x))
        if self.functional:
            return ops.dropout(h, p=0.5, training=self.training)
        return self.drop(h)


class MsDropoutNet(msnn.Cell):
    def __init__(self, recompute=True, form="cell", functional=False):
        super().__init__()
        self.fc1 = msnn.Dense(8, 16)
        self.relu = msnn.ReLU()
        self.block = MsDropBlock(functional)
        self.fc2 = msnn.Dense(16, 4)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            self.block.recompute()

    def construct(self, x):
        h = self.relu(self.fc1(x))
        if self.function_form:
            h = mindspore.recompute(self.block, h)
        elif self.compat_form:
            h = ms_compat.checkpoint(self.block, h, use_reentrant=True)
        else:
            h = self.block(h)
        return self.fc2(h)


_DROPOUT_NOTE = ("torch: checkpoint gradients equal the plain run (preserve_rng_state=True restores the RNG). "
                 "MindSpore: nn.Dropout's primitive owns its mask stream (seeded at construction; set_seed does not "
                 "rewind it), so the twins with recompute on and off are built after the same seed. torch and "
                 "MindSpore draw different masks: they are compared in eval mode (dropout off).")

register(Pair(
    name="dropout",
    checkpointed=("block",),
    description="A block Dense-ReLU-nn.Dropout(p=0.5) between two Dense layers, recomputed: torch checkpoint(block, "
                "h, use_reentrant=False) or compat.recompute_on_torch.recompute(block, h); MindSpore "
                "block.recompute(), mindspore.recompute(block, h), or compat.checkpoint(block, h, "
                "use_reentrant=True).",
    torch_factory=functools.partial(TorchDropoutNet, functional=False),
    mindspore_factory=functools.partial(MsDropoutNet, functional=False),
    inputs=lambda rng: [randn(rng, 8, 8)],
    torch_forms=("checkpoint", "compat"), mindspore_forms=("cell", "function", "compat"),
    graph_forms=("cell", "function", "compat"),
    cross_training=False,
    known_differences={
        "mindspore:function": "mindspore.recompute(cell, x) (reentrant) draws a new nn.Dropout mask when it "
                              "recomputes: the loss equals the plain run, the gradients do not, and the primitive's "
                              "stream runs one draw ahead afterwards.",
    },
    notes=(_DROPOUT_NOTE,
           "Equal to the plain run: block.recompute() (MindSpore's reentrant engine caches the random op's output "
           "per primitive; it holds while each dropout layer runs once per step in one region -- nested marks break "
           "it from the second step, see tests/test_shims.py) and compat.checkpoint (its mask tape replays the "
           "forward's masks, in every form and pattern measured).",
           "Not equal: mindspore.recompute(block, h), reentrant or not (a new mask in the recomputation).",
           "GRAPH mode: block.recompute() and mindspore.recompute(block, h) both give gradients equal to the plain "
           "graph (the graph-level recompute keeps the mask)."),
))

register(Pair(
    name="dropout_functional",
    checkpointed=("block",),
    description="The dropout pair with functional dropout: torch F.dropout(h, 0.5, self.training), MindSpore "
                "ops.dropout(h, p=0.5, training=self.training) inside the recomputed block.",
    torch_factory=functools.partial(TorchDropoutNet, functional=True),
    mindspore_factory=functools.partial(MsDropoutNet, functional=True),
    inputs=lambda rng: [randn(rng, 8, 8)],
    torch_forms=("checkpoint", "compat"), mindspore_forms=("compat", "cell", "function"),
    graph_forms=("cell", "function", "compat"),
    cross_training=False,
    known_differences={
        "mindspore:cell": "Cell.recompute() keeps nn.Dropout masks but not ops.dropout's: the functional op takes "
                          "fresh seeds at every call (and opts out of the random cache), so the recomputation draws a "
                          "new mask.",
        "mindspore:function": "mindspore.recompute draws a new mask for ops.dropout (fresh seeds at every call).",
    },
    notes=(_DROPOUT_NOTE,
           "Equal to the plain run only through compat.checkpoint: its mask tape replays the forward's masks (the "
           "functional op builds a new primitive, with fresh seeds, at every call).",
           "GRAPH mode: the cell and function forms give gradients equal to the plain graph."),
))
