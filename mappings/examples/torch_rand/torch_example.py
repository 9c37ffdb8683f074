"""torch.rand with the sizes as one tuple and dtype float64: 4096 values from U[0, 1)."""
import torch


def draw():
    return torch.rand((64, 64), dtype=torch.float64)
