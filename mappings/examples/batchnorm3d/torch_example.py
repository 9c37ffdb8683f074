"""nn.BatchNorm3d in train mode, at the default momentum and at momentum=0.3: the running statistics show the
momentum convention (MindSpore's = 1 - torch's); MindSpore keeps them in a child bn2d."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.BatchNorm3d(3)
        self.second = nn.BatchNorm3d(3, eps=1e-3, momentum=0.3)

    def forward(self, x):
        return self.second(self.first(x) * 2.0 + 1.0)


INPUTS = [np.sin(np.arange(2 * 3 * 3 * 4 * 5, dtype=np.float32) * 0.7).reshape(2, 3, 3, 4, 5)]
TRAINING = True
