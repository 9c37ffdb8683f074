"""torch.addmm: a bias row plus x @ W, as Hugging Face's Conv1D writes it, and with beta and alpha."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(-1.0, 1.0, 12).reshape(4, 3))
        self.bias = nn.Parameter(torch.linspace(0.0, 0.5, 3))

    def forward(self, x):
        h = torch.addmm(self.bias, x.view(-1, 4), self.weight)
        return h + torch.addmm(h, x.view(-1, 4), self.weight, beta=0.5, alpha=2.0)


INPUTS = [np.linspace(-2.0, 2.0, 8, dtype=np.float32).reshape(2, 4)]
