from typing import Optional

import torch
from torch import nn


class Net(nn.Module):
    def forward(self, ids: Optional[torch.LongTensor] = None, mask: torch.BoolTensor = None) -> torch.FloatTensor:
        cache: torch.FloatTensor = ids
        if isinstance(ids, torch.LongTensor):
            return ids
        return torch.LongTensor([1, 2])
