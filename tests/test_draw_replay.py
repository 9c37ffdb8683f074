"""compare() on pairs whose forward draws random values (a VAE's sample, drop connect's mask): torch's draws are
handed to MindSpore and to the float64 reference (compat.draw_replay), so a right port passes and a wrong one
still fails, with a row of kind "draws" that counts them."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")
from mindspore import nn as mnn  # noqa: E402
from mindspore import ops  # noqa: E402

from recompat.compat.compare import ModelRunError, compare  # noqa: E402
from recompat.compat.draw_replay import drawing_functions  # noqa: E402

pytestmark = pytest.mark.runtime


@pytest.fixture(autouse=True)
def _mindspore_pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    torch.manual_seed(0)
    yield


def _x(*shape, seed=1):
    return (np.random.default_rng(seed).standard_normal(shape)).astype(np.float32)


class TorchSampler(torch.nn.Module):
    """A VAE's reparameterised sample, then drop connect: two draws in the forward, optionally checkpointed."""

    def __init__(self, checkpointed=False):
        super().__init__()
        self.enc, self.dec = torch.nn.Linear(16, 2 * 8), torch.nn.Linear(8, 4)
        self.checkpointed = checkpointed

    def sample(self, x):
        mu, log_var = self.enc(x).chunk(2, dim=1)
        return mu + torch.randn_like(mu) * torch.exp(0.5 * log_var)

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint

        z = checkpoint(self.sample, x, use_reentrant=False) if self.checkpointed else self.sample(x)
        keep = torch.floor(torch.rand(z.shape[0], 1, dtype=z.dtype) + 0.8)
        return self.dec(z / 0.8 * keep)


class MsSampler(mnn.Cell):
    def __init__(self, recompute=None, uniform_sample=False, sample_shape=None, draws=True):
        super().__init__()
        self.enc, self.dec = mnn.Dense(16, 2 * 8), mnn.Dense(8, 4)
        self.recompute_form, self.uniform_sample, self.sample_shape, self.draws = \
            recompute, uniform_sample, sample_shape, draws

    def sample(self, x):
        mu, log_var = ops.chunk(self.enc(x), 2, axis=1)
        if self.uniform_sample:            # planted: another distribution
            eps = ops.rand_like(mu)
        elif self.sample_shape:            # planted: another shape
            eps = ops.randn(*self.sample_shape)
        else:
            eps = ops.randn_like(mu)
        return mu + eps * ops.exp(0.5 * log_var)

    def construct(self, x):
        z = ms.recompute(self.sample, x, use_reentrant=False) if self.recompute_form == "function" else self.sample(x)
        keep = ops.floor(ops.rand(z.shape[0], 1, dtype=z.dtype) + 0.8) if self.draws else ops.ones((z.shape[0], 1))
        return self.dec(z / 0.8 * keep)


def _trained(t, m):
    t.train()
    m.set_train(True)
    return t, m


def test_the_drawing_functions_are_the_mappings_entries_that_draw():
    drawing = drawing_functions()
    assert drawing["torch"]["torch.randn_like"] == drawing["mindspore"]["mindspore.ops.randn"] == "N(0, 1)"
    assert drawing["torch"]["torch.rand"] == drawing["mindspore"]["mindspore.ops.rand_like"] == "U[0, 1)"


def test_a_forward_that_draws_is_judged_with_torchs_values_replayed():
    """The right port passes (its sample and mask are torch's); each side drawing its own fails however right."""
    x = [_x(32, 16)]
    report = compare(*_trained(TorchSampler(), MsSampler()), x)
    assert report.passed, str(report)
    row = report.row("random draws")
    assert row.passed and row.kind == "draws"
    assert "torch drew 2 times (torch.rand x1, torch.randn_like x1); MindSpore's forward took 2" in row.message
    torch.manual_seed(0)
    own = compare(*_trained(TorchSampler(), MsSampler()), x, dropout="own")
    assert not own.passed and not own.row("output").passed


def test_mindspores_recompute_draws_a_new_sample_where_torch_recomputes_with_the_forwards():
    """torch's checkpoint restores its generator, so its recomputation draws the forward's sample again (the float64
    twin follows it); MindSpore 2.10's recompute (the function form, as a Cell's recompute()) draws another: the
    output agrees, the gradients are of another sample, and the row says so (docs/behaviours.md)."""
    report = compare(*_trained(TorchSampler(checkpointed=True), MsSampler(recompute="function")), [_x(32, 16)])
    row = report.row("random draws")
    assert report.row("output").passed and not report.row("enc.weight.grad").passed, str(report)
    assert not row.passed and "MindSpore's recomputation drew 1 new value" in row.message
    torch.manual_seed(0)
    # the numbers only (memory=False: a port without recompute is a lost mark, which the memory row fails)
    plain = compare(*_trained(TorchSampler(checkpointed=True), MsSampler()), [_x(32, 16)], memory=False)
    assert plain.passed, str(plain)     # torch's recomputation replays as its forward: a port without recompute agrees


def test_planted_draw_bugs_fail():
    x = [_x(32, 16)]
    with pytest.raises(ModelRunError, match=r"draw 1 calls mindspore.ops.rand_like \(U\[0, 1\)\); torch's draw 1 "
                                            r"called torch.randn_like \(N\(0, 1\)\): another distribution"):
        compare(*_trained(TorchSampler(), MsSampler(uniform_sample=True)), x)
    with pytest.raises(ModelRunError, match=r"draw 1 \(mindspore.ops.randn\) has shape \(32, 4\); torch's "
                                            r"\(torch.randn_like\) had \(32, 8\)"):
        compare(*_trained(TorchSampler(), MsSampler(sample_shape=(32, 4))), x)
    torch.manual_seed(0)
    lost = compare(*_trained(TorchSampler(), MsSampler(draws=False)), x)     # the mask left out
    row = lost.row("random draws")
    assert not lost.passed and not row.passed and "MindSpore's forward took 1" in row.message


def test_a_pair_that_never_draws_has_no_row():
    class NoDraw(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(16, 4)

        def forward(self, x):
            return self.fc(x)

    class MsNoDraw(mnn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = mnn.Dense(16, 4)

        def construct(self, x):
            return self.fc(x)

    report = compare(NoDraw(), MsNoDraw(), [_x(4, 16)])
    assert report.passed and not [r for r in report.rows if r.kind == "draws"]
