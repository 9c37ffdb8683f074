"""torch.optim.lr_scheduler.CosineAnnealingLR: mindspore.experimental.optim.lr_scheduler.CosineAnnealingLR."""
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
BATCHES = [(_rng.standard_normal((16, 8)).astype(np.float32), _rng.integers(0, 4, 16)) for _ in range(10)]


def training(model):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=30, eta_min=1e-4)
    return {"loss": nn.CrossEntropyLoss(), "optimizer": optimizer, "schedule": schedule}
