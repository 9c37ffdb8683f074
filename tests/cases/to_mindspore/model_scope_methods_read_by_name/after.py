import functools

from mindspore import nn


class Base(nn.Cell):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        forward = cls.construct

        @functools.wraps(forward)
        def wrapped(self, *args, **kwargs):
            return forward(self, *args, **kwargs) * 2

        cls.construct = wrapped


class Layer(Base):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x):
        return self.fc(x)


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = Layer()

    def construct(self, x):
        f = getattr(self.layer, "construct")
        g = type(self.layer).construct
        h = self.layer.construct(x)
        return h + f(x) + g(self.layer, x) + Layer.construct(self.layer, x) + functools.partial(Layer.construct, self.layer)(x)
