"""torch.dtype in an annotation and an isinstance check (MONAI's attention blocks take attention_dtype: torch.dtype)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self, attention_dtype: torch.dtype | None = None):
        super().__init__()
        self.layer = nn.Linear(4, 3)
        self.attention_dtype = attention_dtype

    def forward(self, x):
        h = self.layer(x)
        return h * 2.0 if isinstance(h.dtype, torch.dtype) else h


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
