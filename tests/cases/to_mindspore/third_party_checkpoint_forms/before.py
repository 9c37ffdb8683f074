import deepspeed
from deepspeed.runtime.activation_checkpointing import checkpointing
from megatron.core import tensor_parallel


class Layer(torch.nn.Module):
    def forward(self, x, mask, inputs):
        x = checkpointing.checkpoint(self.block, x, mask)
        x = deepspeed.checkpointing.non_reentrant_checkpoint(self.custom(0, 2), x)
        y = tensor_parallel.checkpoint(custom_forward, self.config.distribute_saved_activations, x, mask)
        z = tensor_parallel.checkpoint(custom_forward, *inputs)
        return checkpointing.checkpoint(self.attn, x, attention_mask=mask)
