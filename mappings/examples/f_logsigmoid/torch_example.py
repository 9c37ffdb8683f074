"""F.logsigmoid on a layer's output and on inputs from -60 to 12, and far out (-100, 30)."""
import numpy as np
import torch.nn.functional as F
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return F.logsigmoid(self.fc(x)), F.logsigmoid(x * 10.0), F.logsigmoid(x * 100.0 / 6.0)


INPUTS = [np.array([[-6.0, -0.25, 0.0, 0.5], [0.75, -2.5, 1.2, 1.0]], dtype=np.float32)]
