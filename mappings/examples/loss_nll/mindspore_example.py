"""torch.nn.NLLLoss over log-probabilities, with class weights: mindspore.nn.NLLLoss."""
from mindspore import nn


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Dense(8, 32)
        self.tanh = nn.Tanh()
        self.log_softmax = nn.LogSoftmax(axis=-1)
        self.out = nn.Dense(32, 4)

    def construct(self, x):
        return self.log_softmax(self.out(self.tanh(self.hidden(x))))
