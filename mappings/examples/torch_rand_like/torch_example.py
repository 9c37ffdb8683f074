"""torch.rand_like a float32 tensor (EfficientNet's drop connect): 4096 values from U[0, 1) in its shape."""
import torch


def draw():
    return torch.rand_like(torch.ones(64, 64))
