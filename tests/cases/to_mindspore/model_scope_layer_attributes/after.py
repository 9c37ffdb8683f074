"""A layer's attributes other than its tensors, read where its class is known: renamed where MindSpore's keeps
them under another name, left by hand where it keeps none."""
import math
import mindspore
from mindspore import nn
from recompat.runtime import initialized


def init_weights(m):
    if isinstance(m, nn.Conv2d):
        fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
        fan_out //= m.group
        initialized(m.weight, mindspore.common.initializer.Normal(mean=0, sigma=math.sqrt(2.0 / fan_out)))
    elif isinstance(m, nn.Dense):
        fan_out = m.out_channels
    elif isinstance(m, nn.BatchNorm2d):
        # recompat: RC303 m.affine: m is nn.BatchNorm2d here, whose MindSpore counterpart has no affine (MindSpore's BatchNorm does not keep it): the call is left as it is; port it by hand
        print(m.affine)


class Head(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 2)
        self.norm = nn.LayerNorm((2,), epsilon=1e-05)

    def construct(self, x):
        return self.fc(x) * self.fc.in_channels + self.norm.epsilon
