"""F.binary_cross_entropy of sigmoid outputs, some saturated to exactly 0 or 1, with a weight and each reduction
(the labels made in forward: torch's gradient of a label is infinite where a probability is exactly 0 or 1)."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        p = torch.sigmoid(self.layer(x) * 40)    # large logits: float32's sigmoid gives exactly 0 and 1
        target = (torch.arange(12).reshape(3, 4) % 3 == 0).float()
        w = torch.linspace(0.5, 1.5, 4)
        return (F.binary_cross_entropy(p, target), F.binary_cross_entropy(p, target, w, reduction="sum"),
                F.binary_cross_entropy(p, target, reduction="none"))


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
