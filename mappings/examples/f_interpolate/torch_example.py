"""F.interpolate: trilinear by a float scale_factor on 5-D input, nearest to a size, linear by 0.5 on an even length."""
import numpy as np
from torch import nn
import torch.nn.functional as F


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(1, 2, 3, padding=1)

    def forward(self, x):
        h = F.interpolate(self.conv(x), scale_factor=2.0, mode="trilinear")
        h = F.interpolate(h, size=(4, 5, 7))
        flat = h.reshape(2, 2, -1)
        return F.interpolate(flat, scale_factor=0.5, mode="linear", align_corners=False)


INPUTS = [np.sin(np.arange(2 * 1 * 3 * 4 * 5, dtype=np.float32)).reshape(2, 1, 3, 4, 5)]
