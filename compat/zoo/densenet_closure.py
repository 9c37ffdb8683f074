"""Pair ``densenet_closure``: torchvision-style dense layers that checkpoint a closure over the previous features."""
from __future__ import annotations

import mindspore
import torch
from mindspore import nn as msnn
from mindspore import ops
from torch import nn as tnn
from torch.utils.checkpoint import checkpoint

from .. import checkpoint_on_mindspore as ms_compat
from . import Pair, register
from .layers import BN_NOTE, ms_bn, ms_conv, randn


class TorchDenseLayer(tnn.Module):
    """torchvision's _DenseLayer: a closure over norm1/relu1/conv1, cp.checkpoint(closure, *prev_features)."""

    def __init__(self, cin, growth=4, bottleneck=8, recompute=True):
        super().__init__()
        self.norm1 = tnn.BatchNorm2d(cin)
        self.relu1 = tnn.ReLU()
        self.conv1 = tnn.Conv2d(cin, bottleneck, 1, bias=False)
        self.norm2 = tnn.BatchNorm2d(bottleneck)
        self.relu2 = tnn.ReLU()
        self.conv2 = tnn.Conv2d(bottleneck, growth, 3, padding=1, bias=False)
        self.memory_efficient = recompute

    def bn_function(self, inputs):
        concated = torch.cat(inputs, 1)
        return self.conv1(self.relu1(self.norm1(concated)))

    def call_checkpoint_bottleneck(self, inputs):
        def closure(*inputs):
            return self.bn_function(inputs)
        return checkpoint(closure, *inputs, use_reentrant=False)

    def forward(self, inputs):
        if self.memory_efficient:
            bottleneck_output = self.call_checkpoint_bottleneck(inputs)
        else:
            bottleneck_output = self.bn_function(inputs)
        return self.conv2(self.relu2(self.norm2(bottleneck_output)))


class TorchDenseBlock(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint", cin=4, growth=4):
        super().__init__()
        self.denselayer1 = TorchDenseLayer(cin, growth, recompute=recompute)
        self.denselayer2 = TorchDenseLayer(cin + growth, growth, recompute=recompute)

    def forward(self, x):
        features = [x]
        for layer in (self.denselayer1, self.denselayer2):
            features.append(layer(features))
        return torch.cat(features, 1)


class MsDenseLayer(msnn.Cell):
    def __init__(self, cin, growth=4, bottleneck=8, recompute=True, form="function"):
        super().__init__()
        self.norm1 = ms_bn(cin)
        self.relu1 = msnn.ReLU()
        self.conv1 = ms_conv(cin, bottleneck, 1, bias=False)
        self.norm2 = ms_bn(bottleneck)
        self.relu2 = msnn.ReLU()
        self.conv2 = ms_conv(bottleneck, growth, 3, padding=1, bias=False)
        self.memory_efficient = recompute
        self.compat_form = form == "compat"

    def bn_function(self, inputs):
        concated = ops.cat(inputs, 1)
        return self.conv1(self.relu1(self.norm1(concated)))

    def call_checkpoint_bottleneck(self, inputs):
        def closure(*inputs):
            return self.bn_function(inputs)
        if self.compat_form:
            return ms_compat.checkpoint(closure, *inputs, use_reentrant=False)
        # a closure ends in conv1: non-reentrant (closures are not Cells) with early_stop=False (a conv ending crashes)
        return mindspore.recompute(closure, *inputs, use_reentrant=False, early_stop=False)

    def construct(self, inputs):
        if self.memory_efficient:
            bottleneck_output = self.call_checkpoint_bottleneck(inputs)
        else:
            bottleneck_output = self.bn_function(inputs)
        return self.conv2(self.relu2(self.norm2(bottleneck_output)))


class MsDenseBlock(msnn.Cell):
    def __init__(self, recompute=True, form="function", cin=4, growth=4):
        super().__init__()
        self.denselayer1 = MsDenseLayer(cin, growth, recompute=recompute, form=form)
        self.denselayer2 = MsDenseLayer(cin + growth, growth, recompute=recompute, form=form)

    def construct(self, x):
        features = [x]
        for layer in (self.denselayer1, self.denselayer2):
            features.append(layer(features))
        return ops.cat(features, 1)


register(Pair(
    name="densenet_closure",
    description="Two torchvision-style dense layers: closure(*inputs) = conv1(relu1(norm1(cat(inputs)))) "
                "checkpointed with the previous features splatted, cp.checkpoint(closure, *prev_features, "
                "use_reentrant=False); MindSpore mindspore.recompute(closure, *prev, use_reentrant=False, "
                "early_stop=False) or the torch call through compat.checkpoint.",
    torch_factory=TorchDenseBlock, mindspore_factory=MsDenseBlock,
    inputs=lambda rng: [randn(rng, 2, 4, 5, 5)],
    mindspore_forms=("function", "compat"),
    graph_skip="No Cell form (the recomputed region is a closure), and mindspore.recompute(closure, *prev) "
               "compiled in GRAPH mode kills the process with SIGSEGV on CPU (MindSpore 2.10, every time; the "
               "plain twin compiles and runs): tests/test_zoo.py pins it in a subprocess.",
    updated_twice=("denselayer1.norm1", "denselayer2.norm1"),
    notes=(BN_NOTE + " Here norm1 is inside the closure (twice), norm2 outside (once).",
           "The closure ends in a conv: non-reentrant recompute needs early_stop=False in MindSpore 2.10."),
))
