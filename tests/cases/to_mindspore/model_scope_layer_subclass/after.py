from mindspore import nn
from recompat.runtime import LayerNorm, layer_norm, torch_signature


class Conv2dSame(torch_signature(nn.Conv2d, 'torch.nn.Conv2d')):
    """A layer subclass: its __init__ passes torch's arguments on to the layer's."""

    def __init__(self, in_channels, out_channels, kernel_size, bias=True):
        super().__init__(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=bias)


class LayerNorm2d(LayerNorm):
    def construct(self, x):
        x = x.permute(0, 2, 3, 1)
        x = layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


def is_norm(m):
    return isinstance(m, nn.LayerNorm)
