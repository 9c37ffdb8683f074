"""F.softmax on a 3-D tensor along dim 1 and the last dim, and over an attention mask: positions set to -inf, as
masked_fill writes them (rows that are all -inf are tried by the domain probes, mappings/domain.json)."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        mask = torch.arange(4) > torch.arange(3).unsqueeze(1)    # causal: row i sees columns 0..i
        return F.softmax(h, 1) * F.softmax(h, dim=-1), F.softmax(h.masked_fill(mask, float("-inf")), dim=-1)


INPUTS = [np.linspace(-2.0, 2.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
