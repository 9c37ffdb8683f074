"""model.eval() inside a training-mode model: BatchNorm uses its running statistics (in training, the batch's),
and eval() returns the model."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        self.train()
        batch = self.bn(self.fc(x))               # training: the batch's statistics
        running = self.eval().bn(self.fc(x))      # evaluation: the running ones
        return running * 2.0 + batch


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
