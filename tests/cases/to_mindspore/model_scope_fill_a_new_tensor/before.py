"""A new tensor filled in place and used at once (vit-pytorch's CaiT: LayerScale): MindSpore fills the value the call
gives, as nothing else holds it; a view stays by hand (MindSpore would fill a copy)."""
import torch
from torch import nn


class LayerScale(nn.Module):
    def __init__(self, dim, init_eps=1e-6):
        super().__init__()
        self.scale = nn.Parameter(torch.zeros(1, 1, dim).fill_(init_eps))
        w = torch.zeros(3, dim)
        w[0].fill_(1.0)
        self.w = nn.Parameter(w)

    def forward(self, x):
        return x * self.scale
