"""nn.Upsample: by an integer scale_factor (bilinear, align_corners) and to a size (nearest), between convolutions."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
        self.resize = nn.Upsample(size=(6, 11))
        self.out = nn.Conv2d(3, 2, 3)

    def forward(self, x):
        return self.out(self.resize(self.up(self.conv(x))))


INPUTS = [np.cos(np.arange(2 * 2 * 4 * 5, dtype=np.float32)).reshape(2, 2, 4, 5)]
