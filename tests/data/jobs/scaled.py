"""A loop with loss scaling, as float16 training scripts write one (here on CPU, in float32): GradScaler, an autocast
region, gradients unscaled before clipping, a step that overflows and is skipped."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16, growth_interval=3)
for step in range(12):
    x = torch.randn(16, 8)
    y = torch.randn(16, 2)
    with torch.autocast("cpu", enabled=False):
        loss = ((model(x) - y) ** 2).mean()
    if step == 4:                  # a batch whose scaled gradients overflow: the scaler skips this step
        loss = loss * 1e36
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
