"""F.mse_loss with each reduction (default, 'sum' by keyword, 'none'), the target from another layer (so both
operands get gradients), and a broadcast target."""
import numpy as np
import torch.nn.functional as F
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.target = nn.Linear(4, 3)

    def forward(self, x):
        h, t = self.fc(x), self.target(x)
        return F.mse_loss(h, t), F.mse_loss(h, t, reduction="sum"), F.mse_loss(input=h, target=t, reduction="none"), \
            F.mse_loss(h, t[0], reduction="mean")


INPUTS = [np.array([[-1.0, -0.25, 0.1, 0.5], [0.75, -0.6, 0.3, 2.0]], dtype=np.float32)]
