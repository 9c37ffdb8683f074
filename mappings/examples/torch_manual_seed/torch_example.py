"""torch.manual_seed before a model is built, as a training script seeds it; the weights are torch's on both sides,
so the seed changes no value compared (each framework's generator is its own)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1234)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
