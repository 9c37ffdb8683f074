"""ops.layer_norm with a LayerNorm's gamma and beta and eps 1e-3 (MindSpore 2.10 runs it on Ascend only)."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm((4,))

    def construct(self, x):
        return ops.layer_norm(x, (4,), self.norm.gamma, self.norm.beta, 1e-3)


INPUTS = [np.linspace(-2.0, 3.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
