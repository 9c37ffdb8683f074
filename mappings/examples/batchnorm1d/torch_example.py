"""nn.BatchNorm1d on (N, C) and (N, C, L) input in train mode: the running statistics show the momentum convention
(MindSpore's = 1 - torch's)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.BatchNorm1d(4)
        self.sequence = nn.BatchNorm1d(3, eps=1e-3, momentum=0.3)

    def forward(self, x, y):
        return self.features(x), self.sequence(y)


INPUTS = [
    np.linspace(-1.0, 2.0, 6 * 4, dtype=np.float32).reshape(6, 4),
    np.sin(np.arange(2 * 3 * 5, dtype=np.float32)).reshape(2, 3, 5),
]
TRAINING = True
