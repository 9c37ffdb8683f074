"""torch.where with two tensors, a broadcast condition, a number for other (a large negative, as a mask) and for
input, and by keyword."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        return (torch.where(x > 0, h, x), torch.where(x[0] > 0, h, -1e9), torch.where(h < 0, 0.0, h),
                torch.where(condition=x < h, input=x, other=h))


INPUTS = [np.array([[-1.0, -0.25, 0.1, 0.5], [0.75, -0.6, 0.3, 2.0]], dtype=np.float32)]
