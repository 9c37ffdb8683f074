"""torch.nn.utils.clip_grad_norm_: mindspore.ops.clip_by_global_norm on the gradients."""
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
    return {"loss": nn.CrossEntropyLoss(), "optimizer": optimizer, "clip_grad_norm": {"max_norm": 0.5}}
