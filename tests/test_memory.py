"""The memory measure: recompute really lowers what a forward keeps for backward, in both frameworks."""
import numpy as np
import pytest

from recompat.compat.memory import SavedTensors

pytestmark = pytest.mark.runtime
DEPTH, WIDTH, BATCH = 16, 64, 32


def torch_kept(segments):
    import torch
    from torch.utils.checkpoint import checkpoint_sequential

    torch.manual_seed(0)
    chain = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU())
                                  for _ in range(DEPTH)])
    x = torch.randn(BATCH, WIDTH, requires_grad=True)
    counter = SavedTensors("torch")
    with counter:
        out = checkpoint_sequential(chain, segments, x, use_reentrant=False) if segments else chain(x)
    out.sum().backward()
    return counter


def mindspore_kept(recompute):
    import mindspore as ms
    from mindspore import nn

    ms.set_context(mode=ms.PYNATIVE_MODE)
    layers = nn.CellList([nn.SequentialCell([nn.Dense(WIDTH, WIDTH), nn.ReLU()]) for _ in range(DEPTH)])
    x = ms.Tensor(np.random.default_rng(0).standard_normal((BATCH, WIDTH)).astype(np.float32))
    counter = SavedTensors("mindspore")

    def forward(x):
        with counter:
            for layer in layers:
                x = ms.recompute(layer, x) if recompute else layer(x)
            return x.sum()

    ms.value_and_grad(forward, grad_position=0, weights=layers.trainable_params())(x)
    return counter


def test_torch_checkpoint_sequential_keeps_less():
    plain, ckpt = torch_kept(0), torch_kept(4)
    activation = BATCH * WIDTH * 4
    # plain keeps each layer's input and ReLU output; 4 segments keep 3 segment inputs + the last 4 layers
    assert plain.bytes >= 2 * DEPTH * activation
    assert ckpt.bytes < plain.bytes / 2
    assert plain.tensors > ckpt.tensors


def test_mindspore_recompute_keeps_less():
    plain, recomputed = mindspore_kept(False), mindspore_kept(True)
    assert recomputed.bytes < plain.bytes / 2


def test_counting_stops_outside_the_context():
    import torch

    counter = SavedTensors("torch")
    with counter:
        pass
    x = torch.randn(4, 4, requires_grad=True)
    (x * x).sum().backward()
    assert counter.bytes == 0 and counter.tensors == 0


def test_unknown_framework_is_a_clear_error():
    with pytest.raises(ValueError, match="framework must be 'torch' or 'mindspore'"):
        SavedTensors("jax")
