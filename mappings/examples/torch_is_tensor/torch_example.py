"""torch.is_tensor deciding between a tensor and a Python number (a scale given either way), and on a
Parameter."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def scaled(self, h, scale):
        return h * scale.mean() if torch.is_tensor(scale) else h * scale

    def forward(self, x):
        h = self.fc(x)
        weight = self.fc.weight * 2.0 if torch.is_tensor(self.fc.weight) else self.fc.weight
        return self.scaled(h, 0.5), self.scaled(h, x), weight.sum() * h


INPUTS = [np.array([[-1.0, -0.25, 0.1, 0.5], [0.75, -0.6, 0.3, 2.0]], dtype=np.float32)]
