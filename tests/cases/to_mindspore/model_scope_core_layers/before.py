import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8, momentum=0.2)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 4 * 4, 16, False)
        self.norm = nn.LayerNorm(16)
        self.drop = nn.Dropout()
        self.head = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv(x))))
        x = x.view(x.size(0), -1)
        x = self.drop(self.norm(self.fc(x)))
        return self.head(x)
