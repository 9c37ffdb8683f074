import torch.nn as nn


class M(nn.Module):
    pass
