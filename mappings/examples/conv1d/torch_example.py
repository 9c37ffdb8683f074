"""nn.Conv1d with padding left at 0, padding=(1,) and padding="same": MindSpore needs pad_mode (its default is
"same"), an int padding (it refuses a tuple) and has_bias=True written out; its weight has an extra axis of 1."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.valid = nn.Conv1d(3, 4, 3)
        self.padded = nn.Conv1d(4, 4, 3, stride=2, padding=(1,), groups=2, bias=False)
        self.same = nn.Conv1d(4, 2, 4, padding="same", dilation=2)

    def forward(self, x):
        return self.same(self.padded(self.valid(x)))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 12, dtype=np.float32).reshape(2, 3, 12)]
