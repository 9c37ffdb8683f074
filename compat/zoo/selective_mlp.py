"""Pair ``selective_mlp``: a biased MLP block with dropout under a selective save list, through recompat's shim.

The save list is torch's ``[aten.addmm.default]``: on MindSpore each ``nn.Dense`` runs ``MatMul`` then ``BiasAdd``, one
addmm to the policy (mappings/selective.yaml), saved whole. The dropout in the block is recomputed: torch restores
its RNG state (preserve_rng_state), recompat's ``checkpoint`` replays the forward's masks, so gradients equal the
plain run on both sides.
"""
from __future__ import annotations

import functools

import torch
import torch.nn.functional as F
from mindspore import nn as msnn
from mindspore import ops as msops
from torch import nn as tnn
from torch.utils import checkpoint as torch_checkpoint

from .. import checkpoint_on_mindspore as ms_compat
from .. import selective
from . import Pair, register
from .layers import randn


class TorchBlock(tnn.Module):
    def __init__(self):
        super().__init__()
        self.up = tnn.Linear(16, 32)
        self.drop = tnn.Dropout(p=0.25)
        self.down = tnn.Linear(32, 16)

    def forward(self, x):
        return self.down(self.drop(F.relu(self.up(x))))


class TorchMlp(tnn.Module):
    def __init__(self, recompute=True, form="selective"):
        super().__init__()
        self.fc = tnn.Linear(8, 16)
        self.block = TorchBlock()
        self.head = tnn.Linear(16, 4)
        self.recompute = recompute
        self.context_fn = (functools.partial(torch_checkpoint.create_selective_checkpoint_contexts,
                                             [torch.ops.aten.addmm.default])
                           if form == "selective" else torch_checkpoint.noop_context_fn)

    def forward(self, x):
        h = F.relu(self.fc(x))
        if self.recompute:
            h = torch_checkpoint.checkpoint(self.block, h, use_reentrant=False, context_fn=self.context_fn,
                                            early_stop=False)
        else:
            h = self.block(h)
        return self.head(h)


class MsBlock(msnn.Cell):
    def __init__(self):
        super().__init__()
        self.up = msnn.Dense(16, 32)
        self.drop = msnn.Dropout(p=0.25)
        self.down = msnn.Dense(32, 16)

    def construct(self, x):
        return self.down(self.drop(msops.relu(self.up(x))))


class MsMlp(msnn.Cell):
    """selective: compat.checkpoint(block, h, use_reentrant=False, context_fn=<recompat's contexts for [addmm]>);
    compat: the same call without a policy (the block recomputed whole)."""

    def __init__(self, recompute=True, form="selective"):
        super().__init__()
        self.fc = msnn.Dense(8, 16)
        self.block = MsBlock()
        self.head = msnn.Dense(16, 4)
        self.recompute = recompute
        self.context_fn = (functools.partial(selective.create_selective_checkpoint_contexts,
                                             [selective.ops.aten.addmm.default])
                           if form == "selective" else selective.noop_context_fn)

    def construct(self, x):
        h = msops.relu(self.fc(x))
        if self.recompute:
            h = ms_compat.checkpoint(self.block, h, use_reentrant=False, context_fn=self.context_fn)
        else:
            h = self.block(h)
        return self.head(h)


register(Pair(
    name="selective_mlp",
    checkpointed=("block",),
    description="Linear-ReLU, then a block Linear-ReLU-Dropout(0.25)-Linear (all biased) checkpointed with the save "
                "list [aten.addmm.default], then a Linear head: torch checkpoint(block, h, use_reentrant=False, "
                "context_fn=partial(create_selective_checkpoint_contexts, [torch.ops.aten.addmm.default])); "
                "MindSpore the same call through compat.checkpoint with compat.selective's contexts, where each Dense "
                "runs MatMul then BiasAdd (one addmm to the policy). The checkpoint and compat forms recompute the "
                "block whole.",
    torch_factory=TorchMlp, mindspore_factory=MsMlp,
    inputs=lambda rng: [randn(rng, 6, 8)],
    torch_forms=("selective", "checkpoint"), mindspore_forms=("selective", "compat"),
    graph_forms=("selective", "compat"),
    cross_training=False,
    selective={"torch": ("selective", "checkpoint"), "mindspore": ("selective", "compat")},
    notes=("Dropout in training mode: torch restores the RNG (preserve_rng_state), compat.checkpoint replays the "
           "forward's masks under the policy's contexts, so recompute on and off give equal gradients on each side; "
           "the frameworks draw different masks, so the cross check runs in eval mode.",),
))
