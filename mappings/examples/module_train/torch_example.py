"""model.train() after eval(): BatchNorm uses the batch's statistics again (in evaluation, its running ones), and
train() returns the model; train(False) is evaluation."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        self.eval()
        running = self.bn(self.fc(x))             # evaluation: the running statistics (0 and 1 at first)
        batch = self.train().bn(self.fc(x))       # training again: the batch's
        self.train(False)
        return running * 2.0 + batch + self.bn(self.fc(x))


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
