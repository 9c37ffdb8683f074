"""recompat.grads: torch's accumulated gradients on MindSpore. The same training loop written with torch's calls and
with recompat.grads' (statement for statement, as the translation writes it) takes the same steps: parameters
judged after every step against torch's."""
from __future__ import annotations

import os

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest
import torch

import mindspore as ms
from mindspore import nn as msnn
from mindspore import ops
from mindspore.experimental import optim as msoptim

from recompat import grads
from recompat.compat.weights import transfer_weights

pytestmark = pytest.mark.runtime

RTOL, ATOL = 2e-5, 2e-6


def _pair():
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.LayerNorm(8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    m = msnn.SequentialCell([msnn.Dense(6, 8), msnn.LayerNorm((8,), epsilon=1e-5), msnn.Tanh(), msnn.Dense(8, 3)])
    transfer_weights(t, m)
    return t, m


def _batches(n):
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((5, 6)).astype(np.float32), rng.integers(0, 3, 5)) for _ in range(n)]


def _same(t, m, where):
    for name, a, b in transfer_weights(t, m, copy=False).values():
        np.testing.assert_allclose(b, a, rtol=RTOL, atol=ATOL, err_msg=f"{where}: {name}")


CASES = {
    "plain": dict(),
    "accumulate 3 micro-batches": dict(accumulate=3),
    "clip norm (active)": dict(clip_norm=0.05),
    "clip inf norm": dict(clip_norm=0.02, norm_type=float("inf")),
    "clip value": dict(clip_value=0.01),
    "zero_grad after step": dict(zero_after=True),
    "two optimizers": dict(two=True),
}


@pytest.mark.parametrize("case", CASES)
def test_a_loop_written_with_recompat_grads_takes_torchs_steps(case):
    o = CASES[case]
    t, m = _pair()
    tp, mp = list(t.parameters()), list(m.trainable_params())
    if o.get("two"):
        topts = [torch.optim.AdamW(tp[:2], lr=0.01, weight_decay=0.1), torch.optim.SGD(tp[2:], lr=0.1, momentum=0.9)]
        mopts = [msoptim.AdamW(mp[:2], lr=0.01, weight_decay=0.1), msoptim.SGD(mp[2:], lr=0.1, momentum=0.9)]
    else:
        topts, mopts = [torch.optim.AdamW(tp, lr=0.01, weight_decay=0.1)], [msoptim.AdamW(mp, lr=0.01, weight_decay=0.1)]
    weights = tuple(p for opt in mopts for p in opt.parameters)
    accumulate = o.get("accumulate", 1)
    tloss, mloss = torch.nn.CrossEntropyLoss(), msnn.CrossEntropyLoss()
    for i, (x, y) in enumerate(_batches(4 * accumulate), 1):
        if not o.get("zero_after") and (i - 1) % accumulate == 0:
            for opt in topts:
                opt.zero_grad()
            for opt in mopts:
                grads.zero_grad(opt)
        loss = tloss(t(torch.from_numpy(x)), torch.from_numpy(y)) / accumulate
        loss.backward()

        def forward_fn():
            loss = mloss(m(ms.Tensor(x)), ms.Tensor(y, ms.int32)) / accumulate
            return loss, loss

        _, mloss_value = grads.backward(forward_fn, weights)
        np.testing.assert_allclose(mloss_value.asnumpy(), loss.item(), rtol=RTOL, atol=ATOL)
        if i % accumulate:
            continue
        if "clip_norm" in o:
            tn = torch.nn.utils.clip_grad_norm_(tp, o["clip_norm"], norm_type=o.get("norm_type", 2.0))
            mn = grads.clip_grad_norm_(m.trainable_params(), o["clip_norm"], norm_type=o.get("norm_type", 2.0))
            np.testing.assert_allclose(mn.asnumpy(), tn.item(), rtol=RTOL)
            assert tn.item() > o["clip_norm"] * 2, "the clipping must act for the case to prove anything"
        if "clip_value" in o:
            torch.nn.utils.clip_grad_value_(tp, o["clip_value"])
            grads.clip_grad_value_(m.trainable_params(), o["clip_value"])
        for opt in topts:
            opt.step()
        for opt in mopts:
            grads.optimizer_step(opt)
        if o.get("zero_after"):
            for opt in topts:
                opt.zero_grad()
            for opt in mopts:
                grads.zero_grad(opt)
        _same(t, m, f"{case}, after batch {i}")


def test_the_accumulated_gradient_is_torchs_grad_and_zero_grad_clears_it():
    t, m = _pair()
    x, y = _batches(1)[0]
    for _ in range(2):
        torch.nn.functional.mse_loss(t(torch.from_numpy(x)), torch.zeros(5, 3)).backward()
        grads.backward(lambda: ops.mse_loss(m(ms.Tensor(x)), ops.zeros((5, 3))), m)
    np.testing.assert_allclose(grads.grad(m[0].weight).asnumpy(), t[0].weight.grad.numpy(), rtol=RTOL, atol=ATOL)
    grads.zero_grad(m, set_to_none=False)
    assert not grads.grad(m[0].weight).asnumpy().any()
    grads.zero_grad(m)
    assert grads.grad(m[0].weight) is None


def test_a_parameter_with_no_gradient_keeps_its_value_as_torchs_optimizer_leaves_it():
    t, m = _pair()
    mp = list(m.trainable_params())
    opt = msoptim.AdamW(mp, lr=0.1, weight_decay=0.5)
    before = mp[-1].asnumpy().copy()
    x, _ = _batches(1)[0]
    grads.zero_grad(opt)
    grads.backward(lambda: m[0](ms.Tensor(x)).sum(), mp[:2])       # only the first layer takes part
    grads.optimizer_step(opt)
    np.testing.assert_array_equal(mp[-1].asnumpy(), before)
    assert not np.array_equal(mp[0].asnumpy(), t[0].weight.detach().numpy())
    grads.zero_grad(opt)


def test_backward_refuses_what_torch_refuses():
    _, m = _pair()
    x, _ = _batches(1)[0]
    with pytest.raises(RuntimeError, match=r"only for scalar outputs.*shape \(5, 3\)"):
        grads.backward(lambda: m(ms.Tensor(x)), m)
    frozen = msnn.Dense(2, 2)
    for p in frozen.get_parameters():
        p.requires_grad = False
    with pytest.raises(RuntimeError, match="nothing given holds a parameter that requires a gradient"):
        grads.backward(lambda: frozen(ops.ones((1, 2))).sum(), frozen.get_parameters())


def test_a_loss_made_outside_the_function_is_warned_of():
    """Every gradient exactly zero: the loss came from a value computed before the function (torch would have
    differentiated through it): a RuntimeWarning, not a silent zero step."""
    _, m = _pair()
    x, _ = _batches(1)[0]
    out = m(ms.Tensor(x))
    with pytest.warns(RuntimeWarning, match="every gradient is exactly zero"):
        grads.backward(lambda: (out ** 2).mean(), m)
    grads.zero_grad(m)


# ------------------------------------------------------------------------------------------------ GradScaler

def _scaled_loop(blow_up: set[int], scaler_kwargs: dict, steps: int = 6, clip: float | None = 0.5):
    """torch.amp.GradScaler('cpu') and recompat.runtime's, statement for statement: scale, backward, unscale_,
    clip, step, update; on the steps in ``blow_up`` the loss is multiplied until its scaled gradients overflow."""
    t, m = _pair()
    topt = torch.optim.SGD(t.parameters(), lr=0.1, momentum=0.9)
    mopt = msoptim.SGD(m.trainable_params(), lr=0.1, momentum=0.9)
    tscaler = torch.amp.GradScaler("cpu", **scaler_kwargs)
    mscaler = grads.GradScaler("cpu", **scaler_kwargs)
    tloss, mloss = torch.nn.CrossEntropyLoss(), msnn.CrossEntropyLoss()
    scales = []
    for i, (x, y) in enumerate(_batches(steps)):
        factor = 1e38 if i in blow_up else 1.0
        topt.zero_grad()
        tscaler.scale(tloss(t(torch.from_numpy(x)), torch.from_numpy(y)) * factor).backward()
        grads.zero_grad(mopt)
        grads.backward(lambda: mscaler.scale(mloss(m(ms.Tensor(x)), ms.Tensor(y, ms.int32)) * factor), m, mopt)
        if clip is not None:
            tscaler.unscale_(topt)
            torch.nn.utils.clip_grad_norm_(t.parameters(), clip)
            mscaler.unscale_(mopt)
            grads.clip_grad_norm_(m.trainable_params(), clip)
        tscaler.step(topt)
        mscaler.step(mopt)
        tscaler.update()
        mscaler.update()
        scales.append((tscaler.get_scale(), mscaler.get_scale()))
        _same(t, m, f"step {i + 1}")
    return scales, tscaler, mscaler


@pytest.mark.parametrize("blow_up, kwargs", [
    (set(), {"init_scale": 1024.0, "growth_interval": 2}),            # the scale doubles every 2 clean steps
    ({1, 2}, {"init_scale": 2.0 ** 16, "growth_interval": 3}),         # two skipped steps: halved twice
    ({0}, {"init_scale": 8.0, "backoff_factor": 0.25, "growth_factor": 4.0, "growth_interval": 1}),
    (set(), {"enabled": False}),                                       # disabled: plain steps, a scale of 1
], ids=["growth", "two skipped steps", "own factors", "disabled"])
def test_grad_scaler_scales_skips_and_updates_as_torchs_does(blow_up, kwargs):
    scales, tscaler, mscaler = _scaled_loop(blow_up, kwargs, clip=None if not kwargs.get("enabled", True) else 0.5)
    assert [a for a, _ in scales] == [b for _, b in scales]
    assert mscaler.state_dict() == tscaler.state_dict()
    if blow_up and kwargs.get("enabled", True):
        assert min(a for a, _ in scales) < kwargs["init_scale"]       # the planted infs were seen and skipped


def test_grad_scaler_refuses_what_torchs_refuses():
    scaler = grads.GradScaler("cpu")
    with pytest.raises(AssertionError, match="No inf checks were recorded"):
        scaler.update()
    m = msnn.Dense(2, 1)
    opt = msoptim.SGD(m.trainable_params(), lr=0.1)
    grads.backward(lambda: scaler.scale(m(ops.ones((1, 2))).sum()), m, opt)
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    with pytest.raises(ValueError, match="growth_factor must be > 1"):
        grads.GradScaler(growth_factor=1.0)
    grads.zero_grad(opt)
