"""A classifier's training job, as ordinary torch scripts write one: a checkpointed body, AdamW, a schedule stepped
per epoch, gradient clipping and accumulation, cross entropy on generated data, weights saved and loaded.

    python classifier.py --epochs 2 --batches 4 --accumulate 2 --norm batch --load net.pt --save out.pt
"""
import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, width, norm):
        super().__init__()
        self.norm = nn.BatchNorm1d(width) if norm == "batch" else nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return x + self.fc(torch.tanh(self.norm(x)))


class Net(nn.Module):
    def __init__(self, features=16, width=32, classes=4, depth=3, norm="layer"):
        super().__init__()
        self.stem = nn.Linear(features, width)
        self.blocks = nn.ModuleList([Block(width, norm) for _ in range(depth)])
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return self.head(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--norm", default="layer")
    parser.add_argument("--load", default="")
    parser.add_argument("--save", default="")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Net(norm=args.norm)
    if args.load:
        model.load_state_dict(torch.load(args.load))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    model.train()
    for epoch in range(args.epochs):
        for batch in range(args.batches):
            optimizer.zero_grad()
            for micro in range(args.accumulate):
                x = torch.randn(8, 16)
                y = torch.randint(0, 4, (8,))
                loss = F.cross_entropy(model(x), y) / args.accumulate
                loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
        schedule.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")
    if args.save:
        torch.save(model.state_dict(), args.save)


if __name__ == "__main__":
    main()
