"""Pair ``seed_fc``: the seed documents' fc1/fc2/fc3 net, fc2 + relu recomputed."""
from __future__ import annotations

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


class TorchSeedNet(tnn.Module):
    """Seed 000/001: ``x = cp(self._checkpoint, x)`` around fc2 + relu."""

    def __init__(self, recompute=True, form="checkpoint"):
        super().__init__()
        self.fc1 = tnn.Linear(12, 24)
        self.fc2 = tnn.Linear(24, 32)
        self.fc3 = tnn.Linear(32, 2)
        self.recompute = recompute and form == "checkpoint"
        if recompute and form == "compat":
            torch_compat.mark_recompute(self.fc2)              # the MindSpore twin's fc2.recompute()

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = checkpoint(self._checkpoint, x, use_reentrant=True) if self.recompute else self._checkpoint(x)
        return self.fc3(x)

    def _checkpoint(self, x):
        return F.relu(self.fc2(x))


class MsSeedNet(msnn.Cell):
    """Seed 000/001 MindSpore side: ``fc2.recompute(); relu2.recompute()`` (cell form)."""

    def __init__(self, recompute=True, form="cell"):
        super().__init__()
        self.fc1 = msnn.Dense(12, 24)
        self.relu1 = ops.ReLU()
        self.fc2 = msnn.Dense(24, 32)
        self.relu2 = ops.ReLU()
        self.fc3 = msnn.Dense(32, 2)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            self.fc2.recompute()
            self.relu2.recompute()                              # a Primitive: takes effect in GRAPH mode only

    def _checkpoint(self, x):
        return self.relu2(self.fc2(x))

    def construct(self, x):
        x = self.relu1(self.fc1(x))
        if self.function_form:
            x = mindspore.recompute(self._checkpoint, x, use_reentrant=False, early_stop=False)
        elif self.compat_form:
            x = ms_compat.checkpoint(self._checkpoint, x, use_reentrant=True)
        else:
            x = self._checkpoint(x)
        return self.fc3(x)


register(Pair(
    name="seed_fc",
    checkpointed=("fc2",),
    graph_unrecomputed=dict.fromkeys(
        ("cell", "function", "compat"),
        "fc2 and the ReLU after it feed fc3, whose weight gradient is the first thing backward computes: recomputing "
        "them would save nothing, and MindSpore's compiled graph leaves them out (measured with "
        "compat.graph_recompute; a block one op further from the output is recomputed)"),
    description="The seeds' fc1/fc2/fc3 net: torch cp(self._checkpoint, x) around fc2+relu; MindSpore "
                "fc2.recompute() + relu2.recompute() (seed form), mindspore.recompute(self._checkpoint, x, "
                "use_reentrant=False) (a bound method: the reentrant form refuses it in PyNative), or the torch "
                "call through compat.checkpoint.",
    torch_factory=TorchSeedNet, mindspore_factory=MsSeedNet,
    inputs=lambda rng: [randn(rng, 2, 12)],
    torch_forms=("checkpoint", "compat"), mindspore_forms=("cell", "function", "compat"),
    graph_forms=("cell", "function", "compat"),
    notes=("relu2.recompute() marks a Primitive: it takes effect in GRAPH mode only.",
           "In PyNative, fc2.recompute() recomputes only the inside of Dense (its output is kept)."),
))
