import torch
from torch import nn
import torch.nn.functional as F


class LayerNorm(nn.Module):
    """The file's own class of the runtime's name: the runtime's is called by its module path."""

    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim, elementwise_affine=False)

    def forward(self, x):
        return self.norm(x)


class LayerNorm2d(nn.LayerNorm):
    """A subclass reads torch's attributes: it derives from the fallback, which keeps them (RC333)."""

    def __init__(self, num_channels, eps=1e-6, affine=True):
        super().__init__(num_channels, eps=eps, elementwise_affine=affine)

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class Block(nn.Module):
    def __init__(self, dim, affine=True):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.norm2 = nn.LayerNorm(dim, elementwise_affine=affine, bias=False)
        self.norm3 = nn.LayerNorm((4, dim))
        self.own = LayerNorm(dim)
        self.channels = LayerNorm2d(4, affine=affine)

    def forward(self, x):
        return self.channels(self.own(self.norm3(self.norm2(self.norm1(x))))[:, :, None])
