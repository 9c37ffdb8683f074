"""A layer's attributes other than its tensors, read where its class is known: renamed where MindSpore's keeps
them under another name, left by hand where it keeps none."""
import math
from torch import nn


def init_weights(m):
    if isinstance(m, nn.Conv2d):
        fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
        fan_out //= m.groups
        nn.init.normal_(m.weight, 0, math.sqrt(2.0 / fan_out))
    elif isinstance(m, nn.Linear):
        fan_out = m.out_features
    elif isinstance(m, nn.BatchNorm2d):
        print(m.affine)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.norm = nn.LayerNorm(2)

    def forward(self, x):
        return self.fc(x) * self.fc.in_features + self.norm.eps
