from typing import Callable

import torch
import torch.utils.checkpoint


class Model(torch.nn.Module):
    def enable(self, gradient_checkpointing_func: Callable = torch.utils.checkpoint.checkpoint):
        self._gradient_checkpointing_func = gradient_checkpointing_func
