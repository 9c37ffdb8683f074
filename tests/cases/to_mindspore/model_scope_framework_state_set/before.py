import torch
from torch import nn
from torch.backends import cudnn


def configure(fast):
    cudnn.benchmark = fast
    torch.backends.cuda.matmul.allow_tf32 = fast


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)
