"""torch.autocast as a with block (disabled; and a CUDA region, which torch disables on a machine without CUDA) and
as a decorator: the regions compute in float32 on both sides. A region torch really runs in float16 or bfloat16
differs by that precision (the entry's summary)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        with torch.autocast("cpu", enabled=False):
            h = self.layer(x)
        with torch.amp.autocast(device_type="cuda", dtype=torch.float16):
            h = torch.tanh(h)
        return self.run(h)

    @torch.autocast("cpu", enabled=False)
    def run(self, h):
        return self.head(h)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
