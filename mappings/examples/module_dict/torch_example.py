"""nn.ModuleDict built from a dict, holding a Sequential (a container, as MONAI's SegResNetDS stores its blocks),
grown by item assignment and read by key and by items() in forward."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.level = nn.ModuleDict({"proj": nn.Linear(4, 4)})
        self.level["blocks"] = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2))

    def forward(self, x):
        x = torch.tanh(self.level["proj"](x))
        for name, layer in self.level.items():
            if name == "blocks":
                x = layer(x)
        return x


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
