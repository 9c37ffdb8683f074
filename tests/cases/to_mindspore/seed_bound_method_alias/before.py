from torch.utils.checkpoint import checkpoint as cp
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc2 = nn.Linear(24, 48)

    def forward(self, x):
        x = cp(self._checkpoint, x)
        return x

    def _checkpoint(self, x):
        return nn.functional.relu(self.fc2(x))
