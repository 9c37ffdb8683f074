import mindspore
from mindspore import nn, ops
from mindspore.common.recompute import _set_recompute_early_stop
from mindformers.modules.transformer import TransformerRecomputeConfig
from mindformers.modules.transformer import TransformerOpParallelConfig


def configure(layers):
    config = TransformerRecomputeConfig(recompute=True, mp_comm_recompute=False)
    parallel = TransformerOpParallelConfig(data_parallel=1)
    return config, parallel


def forward(net, x):
    with _set_recompute_early_stop(False):
        return net(x)


MARK = ops.recompute_block
