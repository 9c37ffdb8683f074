from mindspore import nn
from .blocks import make_block


def build():
    block = make_block()
    block.recompute()
    return block
