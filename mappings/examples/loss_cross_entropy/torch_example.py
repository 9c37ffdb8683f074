"""torch.nn.CrossEntropyLoss with class weights, ignore_index and label smoothing: mindspore.nn.CrossEntropyLoss."""
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
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5, 1.5]), ignore_index=3, label_smoothing=0.1)
    return {"loss": loss, "optimizer": optimizer}
