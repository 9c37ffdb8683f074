import torch.nn as nn
import mindspore


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 24)
        self.fc2 = nn.Linear(24, 48)  # the checkpointed layer
        self.fc2.recompute()
        self.head = nn.Linear(48, 2)

    def forward(self, x):
        x = self.fc1(x)
        x = self.fc2(x)
        if self.training:
            x = mindspore.recompute(self.head, x)
        else:
            x = self.head(x)
        return x
