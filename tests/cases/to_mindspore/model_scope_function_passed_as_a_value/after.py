import functools

import mindspore
from mindspore import nn, ops
from recompat.runtime import softmax, torch_signature

ACT2FN = {"gelu": ops.gelu, "silu": torch_signature(ops.silu, 'torch.nn.functional.silu'), "softmax": torch_signature(softmax, 'torch.nn.functional.softmax')}


class GELUTanh(nn.Cell):
    def __init__(self, python=False):
        super().__init__()
        self.act = self._python if python else functools.partial(ops.gelu, approximate="tanh")

    def _python(self, x):
        return 0.5 * x * (1.0 + ops.tanh(0.7978845608028654 * (x + 0.044715 * mindspore.mint.pow(x, 3.0))))

    def construct(self, x):
        return self.act(x)


class Head(nn.Cell):
    def __init__(self, act="gelu"):
        super().__init__()
        self.fc = nn.Dense(8, 8)
        self.act = ACT2FN[act]
        self.norm = functools.partial(torch_signature(softmax, 'torch.nn.functional.softmax'), dim=-1)

    def construct(self, x):
        return self.norm(self.act(self.fc(x)))
