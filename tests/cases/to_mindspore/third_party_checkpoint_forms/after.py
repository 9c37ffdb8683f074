import mindspore
from megatron.core import tensor_parallel


class Layer(torch.nn.Module):
    def forward(self, x, mask, inputs):
        x = mindspore.recompute(self.block, x, mask, use_reentrant=False, early_stop=False)
        x = mindspore.recompute(self.custom(0, 2), x, use_reentrant=False, early_stop=False)
        y = mindspore.recompute(custom_forward, x, mask, use_reentrant=False, early_stop=False)
        # recompat: RC190 megatron.core.tensor_parallel.checkpoint left as it is: its distribute_saved_activations argument cannot be told apart from the block's inputs
        z = tensor_parallel.checkpoint(custom_forward, *inputs)
        return mindspore.recompute(self.attn, x, attention_mask=mask, use_reentrant=False, early_stop=False)
