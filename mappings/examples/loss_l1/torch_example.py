"""torch.nn.L1Loss with reduction='sum': mindspore.nn.L1Loss."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(8, 32)
        self.out = nn.Linear(32, 4)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))


_rng = np.random.default_rng(0)
BATCHES = [(_rng.standard_normal((16, 8)).astype(np.float32), _rng.standard_normal((16, 4)).astype(np.float32)) for _ in range(10)]


def training(model):
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    return {"loss": nn.L1Loss(reduction="sum"), "optimizer": optimizer}
