"""torch.Tensor in annotations, and a call on int data: float32 in torch, so MindSpore needs
dtype=mindspore.float32."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = torch.Tensor([1, 2, 4])
        h: torch.Tensor = self.layer(x)
        return h * scale.mean()


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
