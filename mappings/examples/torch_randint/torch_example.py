"""torch.randint in its two forms: randint(high, size) and randint(low, high, size=...): 4096 integers from
{0, ..., 9} and {-3, ..., 4}, int64."""
import torch


def draw():
    return torch.cat([torch.randint(10, (32, 64)).flatten(), torch.randint(-3, 5, size=(32, 64)).flatten() + 20])
