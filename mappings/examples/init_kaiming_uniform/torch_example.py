"""nn.init.kaiming_uniform_ on a conv weight's shape for a ReLU."""
from torch import nn

SHAPE = (64, 32, 3, 3)


def init(tensor):
    return nn.init.kaiming_uniform_(tensor, nonlinearity="relu")
