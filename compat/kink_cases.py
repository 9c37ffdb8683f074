"""The kink reproducer that tests/test_kink_replay.py, tests/test_roundoff.py and bench/kink_bench.py share (as
compat/training_cases.py is shared by the training test and bench)."""
from __future__ import annotations

import numpy as np


def edge_input(ulps: int) -> np.ndarray:
    """A 4x4x8x8 batch whose element (0, 0, 3, 3) sits ``ulps`` float32 ulps from its channel's batch mean: through
    a BatchNorm2d in training mode its normalised value is 0 in exact arithmetic, and each float32 run rounds it to
    one side or the other of a following ReLU."""
    x = np.random.default_rng(0).standard_normal((4, 4, 8, 8)).astype(np.float32)
    others = np.delete(x[:, 0].astype(np.float64).ravel(), 3 * 8 + 3)
    mean = np.float32(others.sum() / others.size)
    x[0, 0, 3, 3] = mean + ulps * np.spacing(mean)
    return x


def twins(relu=None, *, torch_relu=None, checkpointed=False):
    """torch BatchNorm2d -> ReLU -> Conv2d in training mode and its MindSpore twin (``relu``, ``torch_relu``: other
    activations; ``checkpointed``: the block checkpointed, the cell marked for recompute), for edge_input."""
    import mindspore
    import mindspore.nn as mnn
    import torch
    import torch.nn as tnn

    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    torch.manual_seed(0)
    block = tnn.Sequential(tnn.BatchNorm2d(4), torch_relu or tnn.ReLU(), tnn.Conv2d(4, 4, 3, padding=1))

    class Checkpointed(tnn.Module):
        def __init__(self):
            super().__init__()
            self.block = block

        def forward(self, x):
            from torch.utils.checkpoint import checkpoint
            return checkpoint(self.block, x, use_reentrant=False)

    cell = mnn.SequentialCell(mnn.BatchNorm2d(4), relu or mnn.ReLU(),
                              mnn.Conv2d(4, 4, 3, pad_mode="pad", padding=1, has_bias=True))
    if checkpointed:
        cell.recompute()
        outer = mnn.SequentialCell(cell)
        outer.set_train(True)
        return Checkpointed().train(), _named_block(outer)
    cell.set_train(True)
    return block.train(), cell


def _named_block(outer):
    """The MindSpore twin of Checkpointed: its cell under the name ``block`` (torch's attribute)."""
    import mindspore.nn as mnn

    class Outer(mnn.Cell):
        def __init__(self):
            super().__init__()
            self.block = outer[0]

        def construct(self, x):
            return self.block(x)
    cell = Outer()
    cell.set_train(True)
    return cell
