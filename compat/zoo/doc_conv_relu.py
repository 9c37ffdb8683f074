"""Pair ``doc_conv_relu``: the ``mindspore.recompute`` doc example, a conv recomputed, then ReLU."""
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


class TorchDocConv(tnn.Module):
    """MindSpore's doc example on torch: conv (2->2, k2, 'same', no bias) checkpointed, then relu."""

    def __init__(self, recompute=True, form="checkpoint"):
        super().__init__()
        self.conv = tnn.Conv2d(2, 2, 2, bias=False)
        self.recompute = recompute and form == "checkpoint"
        if recompute and form == "compat":
            torch_compat.mark_recompute(self.conv)

    def forward(self, x):
        x = F.pad(x, (0, 1, 0, 1))          # MindSpore's pad_mode='same' for k=2: nothing before, 1 after
        y = checkpoint(self.conv, x, use_reentrant=False) if self.recompute else self.conv(x)
        return F.relu(y)


class MsDocConv(msnn.Cell):
    """MindSpore's doc example (mindspore.recompute): ``y = recompute(self.conv, x); return self.relu(y)``."""

    def __init__(self, recompute=True, form="function"):
        super().__init__(auto_prefix=False)
        self.conv = msnn.Conv2d(2, 2, 2, has_bias=False)      # as in the doc: pad_mode 'same' (the default)
        self.relu = ops.ReLU()
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            self.conv.recompute()

    def construct(self, x):
        if self.function_form:
            y = mindspore.recompute(self.conv, x)
        elif self.compat_form:
            y = ms_compat.checkpoint(self.conv, x, use_reentrant=False)
        else:
            y = self.conv(x)
        return self.relu(y)


register(Pair(
    name="doc_conv_relu",
    checkpointed=("conv",),
    graph_unrecomputed=dict.fromkeys(
        ("function", "cell", "compat"),
        "the checkpointed region is one Conv2d, whose output MindSpore's compiled graph keeps (a region's own "
        "output is never recomputed), and the ReLU after it needs only its own output: nothing is left to "
        "recompute (measured with compat.graph_recompute)"),
    description="The mindspore.recompute doc example: MyCell(auto_prefix=False) with recompute(self.conv, x) "
                "then ReLU; conv 2->2, kernel 2, pad_mode 'same' (the doc's default), no bias. torch: an explicit "
                "(0, 1, 0, 1) pad (what 'same' does for an even kernel) and checkpoint(self.conv, x, "
                "use_reentrant=False).",
    torch_factory=TorchDocConv, mindspore_factory=MsDocConv,
    inputs=lambda rng: [randn(rng, 2, 2, 5, 5)],
    torch_forms=("checkpoint", "compat"), mindspore_forms=("function", "cell", "compat"),
    graph_forms=("function", "cell", "compat"),
    settings_differ={"conv.padding": "the torch twin pads (0, 1, 0, 1) explicitly before its padding=0 conv: "
                                     "what MindSpore's pad_mode='same' does inside the conv for an even kernel"},
    notes=("The block ends in a conv: MindSpore's non-reentrant recompute with early_stop=True would crash in "
           "backward; compat.checkpoint(use_reentrant=False) passes early_stop=False.",
           "The doc's weight_init='ones' is left out so that gradients are not symmetric."),
))
