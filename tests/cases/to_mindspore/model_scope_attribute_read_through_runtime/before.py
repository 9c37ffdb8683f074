import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, *features):
        if any(f.requires_grad for f in features):
            return checkpoint(self.fc, torch.cat(features, 1), use_reentrant=False)
        return self.fc(torch.cat(features, 1)) * float(torch.tanh(features[0]).requires_grad)
