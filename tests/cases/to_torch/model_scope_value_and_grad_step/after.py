"""A MindSpore training script: the step is a differentiated function, the optimizer called with the gradients."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(self.body(x))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5)
loss_fn = nn.MSELoss()


def forward_fn(x, target):
    out = model(x)
    return loss_fn(out, target), out


def train_step(x, target):
    optimizer.zero_grad()
    (loss, _) = forward_fn(x, target)  # the value, then the gradients
    loss.backward()
    nn.utils.clip_grad_norm_([p for group in optimizer.param_groups for p in group["params"]], max_norm=1.0)
    optimizer.step()
    return loss


model.train()
for step in range(20):
    x = torch.randn(16, 8)
    target = x.sum(dim=1, keepdim=True).sin()
    loss = train_step(x, target)
    scheduler.step()
    print(f"step {step} loss {loss.item():.4f}")
model.train(False)
