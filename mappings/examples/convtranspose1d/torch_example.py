"""nn.ConvTranspose1d: stride 2 with padding 1, padding=(1,) with groups, dilation and no bias, and padding left out:
MindSpore's Conv1dTranspose with pad_mode and an int padding and has_bias written out; its weight has an extra axis
of 1."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose1d(2, 4, 3, stride=2, padding=1)
        self.mix = nn.ConvTranspose1d(4, 4, 3, padding=(1,), groups=2, dilation=2, bias=False)
        self.out = nn.ConvTranspose1d(4, 2, 2, stride=2)

    def forward(self, x):
        return self.out(self.mix(self.up(x)))


INPUTS = [np.sin(np.arange(2 * 2 * 7, dtype=np.float32)).reshape(2, 2, 7)]
