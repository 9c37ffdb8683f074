from typing import Callable

import torch
# recompat: RC161 torch names still imported: torch.utils.checkpoint
import torch.utils.checkpoint


class Model(torch.nn.Module):
    # recompat: RC190 torch.utils.checkpoint.checkpoint left as it is: it is used as a value, not called
    def enable(self, gradient_checkpointing_func: Callable = torch.utils.checkpoint.checkpoint):
        self._gradient_checkpointing_func = gradient_checkpointing_func
