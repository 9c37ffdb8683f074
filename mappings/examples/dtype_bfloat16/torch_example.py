"""torch.bfloat16: a tensor made in it adds to a float32 one as float32 on both sides (MindSpore 2.10 has no
bfloat16 kernel for ops.full on CPU: ones and tensor are used)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        return self.layer(x) + torch.tensor([0.5, 1.0, 2.0], dtype=torch.bfloat16) * torch.ones(3, dtype=torch.bfloat16)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
