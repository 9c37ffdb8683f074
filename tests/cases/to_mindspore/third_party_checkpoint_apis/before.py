import deepspeed
from megatron.core import tensor_parallel
from transformer_engine.pytorch import checkpoint as te_checkpoint


def forward(layer, hidden, fp8):
    if fp8:
        return te_checkpoint(layer, hidden, distribute_saved_activations=False)
    hidden = deepspeed.checkpointing.checkpoint(layer, hidden)
    deepspeed.checkpointing.configure(None, partition_activations=True)
    saver = tensor_parallel.CheckpointWithoutOutput()
    out = saver.checkpoint(layer, hidden)
    return tensor_parallel.checkpoint(layer, False, out)
