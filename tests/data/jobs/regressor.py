"""A regressor trained by SGD with momentum on generated data; two blocks checkpointed (torch)."""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(2)])
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return self.out(x)


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loss_fn = nn.MSELoss()
for step in range(20):
    x = torch.randn(16, 8)
    target = x.sum(dim=1, keepdim=True).sin()
    optimizer.zero_grad()
    loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
