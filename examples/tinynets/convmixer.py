"""A tiny ConvMixer whose blocks are wrapped with checkpoint_wrapper when activation checkpointing is enabled."""
import torch
import torch.nn as nn
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper


class Residual(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x) + x


class ConvMixerLayer(nn.Module):
    def __init__(self, dim, kernel_size):
        super().__init__()
        self.depthwise = Residual(
            nn.Sequential(
                nn.Conv2d(dim, dim, kernel_size, groups=dim, padding=kernel_size // 2),
                nn.GELU(),
                nn.BatchNorm2d(dim),
            )
        )
        self.pointwise = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=1),
            nn.GELU(),
            nn.BatchNorm2d(dim),
        )

    def forward(self, x):
        return self.pointwise(self.depthwise(x))


class TinyConvMixer(nn.Module):
    def __init__(self, dim=32, depth=3, kernel_size=3, patch_size=2, num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, dim, kernel_size=patch_size, stride=patch_size),
            nn.GELU(),
            nn.BatchNorm2d(dim),
        )
        self.blocks = nn.ModuleList([ConvMixerLayer(dim, kernel_size) for _ in range(depth)])
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.head = nn.Linear(dim, num_classes)

    def enable_activation_checkpointing(self):
        for i, blk in enumerate(self.blocks):
            self.blocks[i] = checkpoint_wrapper(blk)

    def forward(self, x):
        x = self.stem(x)
        for blk in self.blocks:
            x = blk(x)
        x = torch.flatten(self.pool(x), 1)
        return self.head(x)
