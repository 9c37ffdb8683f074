import deepspeed
from megatron.core import tensor_parallel
# recompat: RC161 torch names still imported: transformer_engine.pytorch.checkpoint
from transformer_engine.pytorch import checkpoint as te_checkpoint
import mindspore


def forward(layer, hidden, fp8):
    if fp8:
        # recompat: RC160 transformer_engine.pytorch.checkpoint left as it is: Transformer Engine's checkpoint(function, *args, **kwargs)
        return te_checkpoint(layer, hidden, distribute_saved_activations=False)
    hidden = mindspore.recompute(layer, hidden, use_reentrant=False, early_stop=False)
    # recompat: RC160 deepspeed.checkpointing left as it is: a name of DeepSpeed's activation checkpointing
    deepspeed.checkpointing.configure(None, partition_activations=True)
    # recompat: RC160 megatron.core.tensor_parallel.CheckpointWithoutOutput left as it is: Megatron's checkpoint that also drops the function's output (discard_output_and_register_recompute)
    saver = tensor_parallel.CheckpointWithoutOutput()
    out = saver.checkpoint(layer, hidden)
    return mindspore.recompute(layer, out, use_reentrant=False, early_stop=False)
