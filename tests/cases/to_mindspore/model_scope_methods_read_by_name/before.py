import functools

from torch import nn


class Base(nn.Module):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        forward = cls.forward

        @functools.wraps(forward)
        def wrapped(self, *args, **kwargs):
            return forward(self, *args, **kwargs) * 2

        cls.forward = wrapped


class Layer(Base):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = Layer()

    def forward(self, x):
        f = getattr(self.layer, "forward")
        g = type(self.layer).forward
        h = self.layer.forward(x)
        return h + f(x) + g(self.layer, x) + Layer.forward(self.layer, x) + functools.partial(Layer.forward, self.layer)(x)
