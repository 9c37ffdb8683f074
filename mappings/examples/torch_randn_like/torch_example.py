"""torch.randn_like a float32 tensor (MONAI's diffusion noise): 4096 values from N(0, 1) in its shape and dtype."""
import torch


def draw():
    return torch.randn_like(torch.zeros(4, 32, 32))
