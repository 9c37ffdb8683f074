"""The three-layer MLP from the MindSpore documentation's torch.utils.checkpoint comparison page.

The middle layer runs through a bound method under checkpoint, exactly as in that page's PyTorch example.
"""
import torch
from torch.utils.checkpoint import checkpoint as cp
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(12, 24)
        self.fc2 = nn.Linear(24, 48)
        self.fc3 = nn.Linear(48, 2)

    def forward(self, x):
        x = nn.functional.relu(self.fc1(x))
        x = cp(self._checkpoint, x)
        x = self.fc3(x)
        return x

    def _checkpoint(self, x):
        x = nn.functional.relu(self.fc2(x))
        return x


if __name__ == "__main__":
    x = torch.randn(2, 12)
    model = Net()
    output = model(x)
    output.sum().backward()
    print(model.fc1.weight.grad)
