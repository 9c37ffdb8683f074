"""What the zoo's pairs share: MindSpore layers built with torch's defaults, random inputs, the BatchNorm note."""
from __future__ import annotations

import numpy as np

from mindspore import nn as msnn


def ms_conv(cin, cout, k, padding=0, bias=True):
    return msnn.Conv2d(cin, cout, k, pad_mode="pad" if padding else "valid", padding=padding, has_bias=bias)


def ms_bn(n, torch_momentum=0.1):
    return msnn.BatchNorm2d(n, eps=1e-5, momentum=1.0 - torch_momentum)


def ms_ln(n):
    return msnn.LayerNorm((n,), epsilon=1e-5)


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


BN_NOTE = ("BatchNorm running statistics are updated twice in one step inside a recomputed region, in both "
           "frameworks (torch num_batches_tracked == 2; drift x(2 - momentum) = 1.9x a plain step): outputs and "
           "gradients are equal with recompute on and off, the statistics are not; torch and MindSpore agree "
           "with each other when both recompute the same blocks.")
