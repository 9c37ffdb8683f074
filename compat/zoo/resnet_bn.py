"""Pair ``resnet_bn``: residual blocks with BatchNorm, every block after the first recomputed."""
from __future__ import annotations

import mindspore
import torch.nn.functional as F
from mindspore import nn as msnn
from mindspore import ops as msops
from torch import nn as tnn
from torch.utils.checkpoint import checkpoint

from .. import checkpoint_on_mindspore as ms_compat
from .. import recompute_on_torch as torch_compat
from . import Pair, register
from .layers import BN_NOTE, ms_bn, ms_conv, randn


class TorchResidualBlock(tnn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = tnn.Conv2d(channels, channels, 3, padding=1)
        self.bn1 = tnn.BatchNorm2d(channels)
        self.conv2 = tnn.Conv2d(channels, channels, 3, padding=1)
        self.bn2 = tnn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


class TorchResNet(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint", blocks=3, channels=8):
        super().__init__()
        self.conv = tnn.Conv2d(3, channels, 3, padding=1)
        self.bn = tnn.BatchNorm2d(channels)
        self.recompute = recompute and form == "checkpoint"
        self.layer1 = self._make_layer(blocks, channels, mark=recompute and form == "compat")
        self.fc = tnn.Linear(channels, 4)

    def _make_layer(self, layer_num, channels, mark):
        layers = [TorchResidualBlock(channels)]
        for _ in range(1, layer_num):
            block = TorchResidualBlock(channels)
            if mark:
                torch_compat.mark_recompute(block)         # MindSpore's resnet_block.recompute(), on torch
            layers.append(block)
        return tnn.Sequential(*layers)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        for i, block in enumerate(self.layer1):
            if self.recompute and i > 0:
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self.fc(x.mean((2, 3)))


class MsResidualBlock(msnn.Cell):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = ms_conv(channels, channels, 3, padding=1)
        self.bn1 = ms_bn(channels)
        self.relu = msnn.ReLU()
        self.conv2 = ms_conv(channels, channels, 3, padding=1)
        self.bn2 = ms_bn(channels)

    def construct(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


class MsResNet(msnn.Cell):
    """The MindSpore recompute tutorial's ResNet: ``self.relu = ops.ReLU(); self.relu.recompute()`` on the stem's
    ReLU (an op-level mark, GRAPH mode only) and ``resnet_block.recompute()`` inside ``_make_layer``."""

    def __init__(self, recompute=True, form="cell", blocks=3, channels=8):
        super().__init__()
        self.conv = ms_conv(3, channels, 3, padding=1)
        self.bn = ms_bn(channels)
        self.relu = msops.ReLU()
        if recompute and form == "cell":
            self.relu.recompute()
        self.layer1 = self._make_layer(blocks, channels, mark=recompute and form == "cell")
        self.fc = msnn.Dense(channels, 4)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"

    def _make_layer(self, layer_num, channels, mark):
        layers = [MsResidualBlock(channels)]
        for _ in range(1, layer_num):
            resnet_block = MsResidualBlock(channels)
            if mark:
                resnet_block.recompute()
            layers.append(resnet_block)
        return msnn.SequentialCell(layers)

    def construct(self, x):
        x = self.relu(self.bn(self.conv(x)))
        i = 0
        for block in self.layer1:
            if self.function_form and i > 0:
                x = mindspore.recompute(block, x)
            elif self.compat_form and i > 0:
                x = ms_compat.checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
            i += 1
        return self.fc(x.mean(axis=(2, 3)))


register(Pair(
    name="resnet_bn",
    checkpointed=("layer1.1", "layer1.2"),
    description="Residual blocks (conv-BN-relu-conv-BN + identity) built in a _make_layer loop; every block after "
                "the first is recomputed: MindSpore resnet_block.recompute() in the loop and the stem's "
                "ops.ReLU().recompute() (the recompute tutorial's configuration, seed 004), "
                "mindspore.recompute(block, x) in construct, or compat.checkpoint; torch checkpoint(block, x, "
                "use_reentrant=False) for the same blocks, or compat.recompute_on_torch.mark_recompute(block) in the "
                "loop.",
    torch_factory=TorchResNet, mindspore_factory=MsResNet,
    inputs=lambda rng: [randn(rng, 2, 3, 6, 6)],
    torch_forms=("checkpoint", "compat"), mindspore_forms=("cell", "function", "compat"),
    graph_forms=("cell", "function", "compat"),
    updated_twice=("layer1.1.bn1", "layer1.1.bn2", "layer1.2.bn1", "layer1.2.bn2"),
    notes=(BN_NOTE, "The first block of the layer is not recomputed (as in the tutorial), on both sides, so the "
                     "statistics of the two frameworks agree with recompute on.",
           "The stem ReLU's op-level mark (cell form) acts in GRAPH mode only: there the compiled graph recomputes it "
           "(compat.graph_recompute); torch has no op-level mark, and the torch twin checkpoints the blocks only."),
))
