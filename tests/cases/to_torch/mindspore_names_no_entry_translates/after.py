import mindspore
from mindspore import nn, ops
# recompat: RC261 MindSpore names still imported: mindspore.common.recompute._set_recompute_early_stop
from mindspore.common.recompute import _set_recompute_early_stop
# recompat: RC261 MindSpore names still imported: mindformers.modules.transformer.TransformerRecomputeConfig
from mindformers.modules.transformer import TransformerRecomputeConfig
from mindformers.modules.transformer import TransformerOpParallelConfig


def configure(layers):
    # recompat: RC260 mindformers.modules.transformer.TransformerRecomputeConfig left as it is: MindSpore Transformers' recompute settings of the layers of a model (recompute, select_recompute, mp_comm_recompute, parallel_optimizer_comm_recompute, recompute_slice_activation)
    config = TransformerRecomputeConfig(recompute=True, mp_comm_recompute=False)
    parallel = TransformerOpParallelConfig(data_parallel=1)
    return config, parallel


def forward(net, x):
    # recompat: RC260 mindspore.common.recompute._set_recompute_early_stop left as it is: MindSpore's private context manager that switches early stop of non-reentrant recompute
    with _set_recompute_early_stop(False):
        return net(x)


# recompat: RC260 mindspore.ops.recompute_block left as it is: an undocumented graph-mode operator of MindSpore's composite ops that marks a block for recompute
MARK = ops.recompute_block
