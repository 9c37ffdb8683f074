"""torch.optim.SGD with momentum, dampening, Nesterov off and L2 weight decay, a BatchNorm's running statistics trained too: mindspore.experimental.optim.SGD."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(8, 32)
        self.norm = nn.BatchNorm1d(32)
        self.out = nn.Linear(32, 4)

    def forward(self, x):
        return self.out(torch.relu(self.norm(self.hidden(x))))


_rng = np.random.default_rng(0)
BATCHES = [(_rng.standard_normal((16, 8)).astype(np.float32), _rng.integers(0, 4, 16)) for _ in range(10)]


def training(model):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, dampening=0.1, weight_decay=1e-3)
    return {"loss": nn.CrossEntropyLoss(), "optimizer": optimizer}
