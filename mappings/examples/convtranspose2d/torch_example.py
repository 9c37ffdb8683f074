"""nn.ConvTranspose2d: stride 2 with padding and output_padding, per-axis padding and output_padding with groups,
no bias, and padding left out."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1, output_padding=1)
        self.mix = nn.ConvTranspose2d(4, 4, (3, 2), stride=(2, 1), padding=(1, 0), output_padding=(1, 0), groups=2,
                                      bias=False)
        self.out = nn.ConvTranspose2d(4, 2, 2, stride=2)

    def forward(self, x):
        return self.out(self.mix(self.up(x)))


INPUTS = [np.sin(np.arange(2 * 2 * 3 * 3, dtype=np.float32)).reshape(2, 2, 3, 3)]
