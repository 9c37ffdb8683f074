"""nn.init.trunc_normal_ with asymmetric bounds that cut the normal inside one standard deviation."""
from torch import nn

SHAPE = (128, 128)


def init(tensor):
    return nn.init.trunc_normal_(tensor, std=0.5, a=-0.4, b=0.8)
