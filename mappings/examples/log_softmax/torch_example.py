"""nn.LogSoftmax over dim 1 (positional) and dim=-1 on 3-D input, after a linear layer: dim is MindSpore's axis
(whose default is -1)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.middle = nn.LogSoftmax(1)
        self.last = nn.LogSoftmax(dim=-1)

    def forward(self, x):
        y = self.fc(x)
        return self.middle(y), self.last(y)


INPUTS = [np.sin(np.arange(2 * 3 * 4, dtype=np.float32)).reshape(2, 3, 4) * 2.0]
