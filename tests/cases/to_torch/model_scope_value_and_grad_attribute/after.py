"""A Cell that trains itself: the gradient function is an attribute, the loss alone is differentiated."""
from torch import nn


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.loss_fn = nn.CrossEntropyLoss()

    def forward(self, x, y):
        return self.loss_fn(self.model(x), y)

    def step(self, x, y):
        self.optimizer.zero_grad()
        loss = self.forward(x, y)
        loss.backward()
        self.optimizer.step()
        return loss.item()
