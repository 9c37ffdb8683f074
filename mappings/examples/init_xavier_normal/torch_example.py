"""nn.init.xavier_normal_ on a Linear weight's shape with a gain."""
from torch import nn

SHAPE = (96, 160)


def init(tensor):
    return nn.init.xavier_normal_(tensor, gain=2.0)
