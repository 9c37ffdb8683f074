import torch
from torch.utils.checkpoint import checkpoint


def load(path):
    checkpoint = torch.load(path)
    return checkpoint["model"]


def run(layer, x):
    return checkpoint(layer.forward, x)
