import mindspore
from mindspore import nn


class Scheduler:
    """A class of the project's own, with a method that happens to be called recompute."""

    def recompute(self, step):
        return step * 2

    def recompute_(self):
        return self.recompute(0)

    def step(self, step):
        return self.recompute(step) + self.recompute_()


class WarmupScheduler(Scheduler):
    def step(self, step):
        return self.recompute(step)


class Model(nn.Cell):
    """A Cell that defines its own recompute: self.recompute(...) is that method, not Cell.recompute."""

    def __init__(self, blocks):
        super().__init__()
        self.blocks = blocks
        self.sched = Scheduler()
        for block in self.blocks:
            self.recompute(block)

    def recompute(self, block):
        block.add_flags(output_no_recompute=True)

    def construct(self, x):
        self.sched.recompute(1)
        return x


def run():
    sched = WarmupScheduler()
    sched.recompute(3)
    return Scheduler().recompute(4)


SCHED = Scheduler()
SCHED.recompute(5)
