from .utils import checkpoint
from project.ckpt import checkpoint as ckpt


def checkpoint_fn(x):
    return x


class M:
    def forward(self, x):
        x = checkpoint(self.block, x)
        return ckpt(self.block, x)


def load(path):
    checkpoint = torch.load(path)
    return checkpoint.checkpoint(path)
