from mindspore import nn
import torch.utils.checkpoint


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.attn = nn.Dense(4, 4)

    def construct(self, x, mask):
        y = torch.utils.checkpoint.checkpoint(self.attn, x, use_reentrant=False)
        return torch.utils.checkpoint.checkpoint(self.attn,
            y,  # again
            mask=mask, use_reentrant=False,
        )
