"""A new tensor filled in place and used at once (vit-pytorch's CaiT: LayerScale): MindSpore fills the value the call
gives, as nothing else holds it; a view stays by hand (MindSpore would fill a copy)."""
import mindspore
from mindspore import nn, ops
from recompat.runtime import initialized


class LayerScale(nn.Cell):
    def __init__(self, dim, init_eps=1e-6):
        super().__init__()
        self.scale = mindspore.Parameter(initialized(ops.zeros((1, 1, dim)), mindspore.common.initializer.Constant(value=init_eps)))
        w = ops.zeros((3, dim))
        # recompat: RC303 torch.Tensor.fill_: the tensor written in place, w[0], is a view or a result: MindSpore would write a copy; write the tensor it comes from: the call is left as it is; port it by hand
        w[0].fill_(1.0)
        self.w = mindspore.Parameter(w)

    def construct(self, x):
        return x * self.scale
