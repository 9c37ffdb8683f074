"""Pair ``nested``: a checkpointed block whose forward checkpoints an inner block."""
from __future__ import annotations

import mindspore
import torch
import torch.nn.functional as F
from mindspore import nn as msnn
from mindspore import ops
from torch import nn as tnn
from torch.utils.checkpoint import checkpoint

from .. import checkpoint_on_mindspore as ms_compat
from . import Pair, register
from .layers import randn


class TorchInner(tnn.Module):
    def __init__(self):
        super().__init__()
        self.fc = tnn.Linear(8, 8)

    def forward(self, x):
        return torch.tanh(self.fc(x))


class TorchOuter(tnn.Module):
    def __init__(self, recompute):
        super().__init__()
        self.a = tnn.Linear(8, 8)
        self.inner = TorchInner()
        self.b = tnn.Linear(8, 8)
        self.recompute = recompute

    def forward(self, x):
        h = F.relu(self.a(x))
        h = checkpoint(self.inner, h, use_reentrant=False) if self.recompute else self.inner(h)
        return self.b(h) * h


class TorchNested(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint"):
        super().__init__()
        self.outer = TorchOuter(recompute)
        self.head = tnn.Linear(8, 4)
        self.recompute = recompute

    def forward(self, x):
        h = checkpoint(self.outer, x, use_reentrant=False) if self.recompute else self.outer(x)
        return self.head(h)


class MsInner(msnn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = msnn.Dense(8, 8)

    def construct(self, x):
        return ops.tanh(self.fc(x))


class MsOuter(msnn.Cell):
    def __init__(self, function_form, compat_form):
        super().__init__()
        self.a = msnn.Dense(8, 8)
        self.relu = msnn.ReLU()
        self.inner = MsInner()
        self.b = msnn.Dense(8, 8)
        self.function_form = function_form
        self.compat_form = compat_form

    def construct(self, x):
        h = self.relu(self.a(x))
        if self.function_form:
            h = mindspore.recompute(self.inner, h)
        elif self.compat_form:
            h = ms_compat.checkpoint(self.inner, h, use_reentrant=False)
        else:
            h = self.inner(h)
        return self.b(h) * h


class MsNested(msnn.Cell):
    def __init__(self, recompute=True, form="function"):
        super().__init__()
        self.outer = MsOuter(recompute and form == "function", recompute and form == "compat")
        self.head = msnn.Dense(8, 4)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            self.outer.inner.recompute()                   # the child first: a parent's mark skips marked children
            self.outer.recompute()

    def construct(self, x):
        if self.function_form:
            h = mindspore.recompute(self.outer, x)
        elif self.compat_form:
            h = ms_compat.checkpoint(self.outer, x, use_reentrant=False)
        else:
            h = self.outer(x)
        return self.head(h)


register(Pair(
    name="nested",
    checkpointed=("outer",),
    description="A checkpointed block whose forward checkpoints an inner block: torch checkpoint(outer, x, "
                "use_reentrant=False) around checkpoint(inner, h, use_reentrant=False); MindSpore nested "
                "mindspore.recompute (reentrant inside reentrant), inner.recompute() then outer.recompute(), or "
                "nested compat.checkpoint.",
    torch_factory=TorchNested, mindspore_factory=MsNested,
    inputs=lambda rng: [randn(rng, 4, 8)],
    mindspore_forms=("function", "cell", "compat"),
    graph_forms=("cell", "function", "compat"),
    notes=("Cell.recompute() on a parent also recomputes its children; a child already marked keeps its own mark "
           "(MindSpore logs that a parent's mark skips it).",),
))
