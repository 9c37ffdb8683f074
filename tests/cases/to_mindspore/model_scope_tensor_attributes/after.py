from mindspore import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x):
        batch, width = x.shape
        h = self.fc(x)
        # recompat: RC301 torch.Tensor.grad_fn is outside the core API set recompat translates: left as it is; port it by hand
        if h.grad_fn is not None and x.ndim == 2:
            h = h * 2
        return h.T


def describe(entries):
    return [e.name for e in entries]
