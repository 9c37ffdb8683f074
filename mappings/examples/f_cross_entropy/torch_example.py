"""F.cross_entropy of logits against int64 class indices (one ignored), with class weights, label smoothing and
each reduction, and against class probabilities."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 5)

    def forward(self, x):
        logits = self.layer(x) * 3.0
        target = torch.tensor([0, 4, 2, 1, 3, 4])
        ignored = torch.tensor([0, 4, -100, 1, 3, 4])
        w = torch.linspace(0.5, 1.5, 5)
        probs = torch.softmax(torch.arange(30.0).reshape(6, 5) / 10.0, dim=1)
        return (F.cross_entropy(logits, target), F.cross_entropy(logits, ignored, weight=w, reduction="sum"),
                F.cross_entropy(logits, target, label_smoothing=0.1, reduction="none"),
                F.cross_entropy(logits, probs))


INPUTS = [np.linspace(-1.0, 1.0, 6 * 4, dtype=np.float32).reshape(6, 4)]
