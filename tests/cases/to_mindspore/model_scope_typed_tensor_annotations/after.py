from typing import Optional

import torch
import mindspore
from mindspore import nn


class Net(nn.Cell):
    def construct(self, ids: Optional[mindspore.Tensor] = None, mask: mindspore.Tensor = None) -> mindspore.Tensor:
        cache: mindspore.Tensor = ids
        # recompat: RC301 torch.LongTensor is outside the core API set recompat translates: left as it is; port it by hand
        if isinstance(ids, torch.LongTensor):
            return ids
        # recompat: RC301 torch.LongTensor is outside the core API set recompat translates: left as it is; port it by hand
        return torch.LongTensor([1, 2])
