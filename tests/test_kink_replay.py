"""ReLU kinks (compat.kink_replay): an input within round-off of 0 that lands on the other side of 0 in one
framework's float32 run is judged along that side's branch, never a false alarm; a ReLU that really decides
otherwise still fails.

The twin: BatchNorm2d (training mode) -> ReLU -> Conv2d, one input element placed at its channel's batch mean, so
its normalised value is 0 in exact arithmetic and each float32 run rounds it to one side or the other. Walking that
element a few ulps either way makes torch or MindSpore take the other branch than float64 (measured: at -3..-1 ulps
MindSpore does, at 0 torch does); the gradients upstream then move by O(1) and the plain round-off rule fails.
"""
from __future__ import annotations

import numpy as np
import pytest

from recompat.compat.compare import compare
from recompat.compat.kink_cases import edge_input, twins
from recompat.compat.training import compare_training

pytestmark = pytest.mark.filterwarnings("ignore")

WALK = range(-3, 2)        # ulps from the batch mean: both sides take the other branch somewhere in it


def kink(report):
    rows = [r for r in report.rows if r.kind == "kink"]
    return rows[0] if rows else None


def test_a_flip_at_the_kink_is_judged_along_its_own_branch():
    flipped = {}
    for ulps in WALK:
        report = compare(*twins(), [edge_input(ulps)], strict=False)
        assert report.passed, (ulps, str(report))
        row = kink(report)
        if row is not None:
            assert row.passed and "within round-off" in row.message, row.message
            flipped[ulps] = row.message
    assert any("MindSpore's float32 took the other branch" in m for m in flipped.values()), flipped
    assert any("torch's float32 took the other branch" in m for m in flipped.values()), flipped


def test_without_the_replay_the_same_twins_false_alarm():
    """The check of the mechanism: kinks=False (one float64 run) fails the walk where a side flips."""
    failed = [ulps for ulps in WALK if not compare(*twins(), [edge_input(ulps)], strict=False, kinks=False).passed]
    assert failed, "no false alarm without kink replay: the walk no longer reaches the kink"


def test_a_relu_threshold_is_not_excused():
    """A ReLU that cuts at 0.01 (through the primitive, so its decisions are recorded) differs far from 0."""
    from mindspore import nn, ops

    class Shifted(nn.Cell):
        def construct(self, x):
            return ops.relu(x - 0.01) + 0.01 * (x > 0.01).astype(x.dtype)

    report = compare(*twins(Shifted()), [edge_input(1)], strict=False)
    assert not report.passed
    row = kink(report)
    assert row is not None and not row.passed
    assert "beyond round-off at ReLU call 1" in row.message and "threshold" in row.message


def test_a_relu_spelled_without_the_primitive_is_judged_plainly():
    """x * (x > 0) runs no ReLU primitive: nothing to replay, the row says so and does not fail by itself."""
    from mindspore import nn

    class Spelled(nn.Cell):
        def construct(self, x):
            return x * (x > 0).astype(x.dtype)

    report = compare(*twins(Spelled()), [edge_input(5)], strict=False)
    row = kink(report)
    assert row is not None and row.passed
    assert "ran the ReLU primitive 0 times, torch's ran ReLU 1 time" in row.message
    assert report.passed, str(report)       # away from the kink, the two spellings agree


def test_recomputation_takes_the_forwards_decision():
    """torch's checkpoint and MindSpore's Cell.recompute() run the ReLU again in backward: the float64 run's
    recomputation takes the decision its forward replayed (else the gradients mix two branches)."""
    for ulps in WALK:
        report = compare(*twins(checkpointed=True), [edge_input(ulps)], strict=False)
        assert report.passed, (ulps, str(report))


def test_inplace_relu_is_replayed():
    import torch.nn as tnn

    for ulps in WALK:
        report = compare(*twins(torch_relu=tnn.ReLU(inplace=True)), [edge_input(ulps)], strict=False)
        assert report.passed, (ulps, str(report))


def test_torch_is_left_as_it_was():
    import torch
    import torch.nn.functional as F

    before = (F.relu, F.relu_, torch.relu, torch.relu_)
    compare(*twins(), [edge_input(-2)], strict=False)
    assert (F.relu, F.relu_, torch.relu, torch.relu_) == before
    assert "relu" not in torch.Tensor.__dict__ and "relu_" not in torch.Tensor.__dict__


def _train(ulps, kinks=True):
    import torch

    t, m = twins()
    batches = [(edge_input(ulps), np.zeros((4, 4, 8, 8), np.float32))] * 3
    return compare_training(t, m, batches, loss=torch.nn.MSELoss(), kinks=kinks,
                            optimizer=torch.optim.SGD(t.parameters(), lr=0.1, momentum=0.9), strict=False)


def test_training_goes_on_along_mindspores_branch():
    """A flip at step 1 moves MindSpore's parameters along its own branch: a second float64 copy follows it."""
    reports = {ulps: _train(ulps) for ulps in (-2, 3)}
    flipped = reports[-2]
    assert flipped.passed, str(flipped)
    assert any(r.kind == "kink" and "MindSpore's float32 took the other branch" in r.message
               for r in flipped.steps[0].rows)
    assert flipped.parted_at == 1 and flipped.steps[0].flipped == {"MindSpore": 1}
    assert "from step 1, a float32 ReLU input within round-off of 0 went across it" in str(flipped)
    assert flipped.to_dict()["parted_at"] == 1
    assert reports[3].passed and not any(r.kind == "kink" for s in reports[3].steps for r in s.rows)
    assert reports[3].parted_at is None


def test_training_without_the_fork_false_alarms():
    assert not _train(-2, kinks=False).passed


# ----- max-pool picks: the same mechanism at a max (a near-tie in one window routes the gradient elsewhere)

def pool_twins(pad_mode="pad"):
    import mindspore
    import mindspore.nn as mnn
    import torch
    import torch.nn as tnn

    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    torch.manual_seed(0)
    t = tnn.Sequential(tnn.Conv2d(3, 4, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2), tnn.Conv2d(4, 2, 1)).train()
    pool = (mnn.MaxPool2d(2, 2, pad_mode="pad", padding=0) if pad_mode == "pad"
            else mnn.MaxPool2d(2, 2, pad_mode=pad_mode))
    m = mnn.SequentialCell(mnn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True), mnn.ReLU(), pool,
                           mnn.Conv2d(4, 2, 1, has_bias=True))
    m.set_train(True)
    return t, m


def test_both_sides_max_pool_picks_are_recorded_alike():
    from recompat.compat.compare import judge_pair, run_pair
    from recompat.compat.kink_replay import MAX_POOL

    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    runs = run_pair(*pool_twins(), [x])
    branches = runs.tapes.branches
    (x32, torch_picks), = branches.torch[MAX_POOL]
    mindspore_picks, = branches.mindspore[MAX_POOL]
    assert torch_picks.shape == mindspore_picks.shape == (2, 4, 4, 4)
    assert np.array_equal(torch_picks, mindspore_picks)          # no near-tie here: the same pick everywhere
    assert judge_pair(runs).passed


def test_a_max_pool_without_its_argmax_is_not_replayed():
    """pad_mode="valid" runs ops.MaxPool, which gives no argmax: nothing to replay, and the row says so only where
    something differed (here nothing did: the verdict stands as it is)."""
    from recompat.compat.compare import run_pair
    from recompat.compat.kink_replay import MAX_POOL

    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    runs = run_pair(*pool_twins("valid"), [x])
    why = runs.tapes.branches.unreplayed[f"MindSpore {MAX_POOL}"]
    assert "ran the max-pool primitive 0 times, torch's ran max-pool 1 time" in why
    assert "pad_mode 'same' or 'valid'" in why


def _replayed_pool(mindspore_picks):
    """A near-tie window (1 and 1 + 1e-12: float32 rounds them equal, float64 does not) and a clear one (0.5, 2):
    torch's float32 run records, then the float64 runs replay torch's picks and ``mindspore_picks``."""
    import torch
    import torch.nn.functional as F

    from recompat.compat.kink_replay import MAX_POOL, Branches, recording_torch, replaying_torch

    values = np.array([[[[1.0, 1.0 + 1e-12, 0.5, 2.0], [-1.0, -1.0, -1.0, -1.0]]]])
    branches = Branches()
    with recording_torch(branches) as phase, phase.during_forward():
        F.max_pool2d(torch.tensor(values, dtype=torch.float32), 2)
    branches.mindspore[MAX_POOL] = [np.array(mindspore_picks).reshape(1, 1, 1, 2)]
    branches.unreplayed["MindSpore max-pool"] = branches.mindspore_aligned(MAX_POOL)
    grads = {}
    for side in ("torch", "MindSpore"):
        x = torch.tensor(values, requires_grad=True)
        with replaying_torch(branches, side) as phase:
            with phase.during_forward():
                out = F.max_pool2d(x, 2)
            out.sum().backward()
        grads[side] = x.grad.numpy()[0, 0, 0]
    return branches, grads


def test_a_near_tie_at_a_max_pool_follows_each_sides_pick():
    branches, grads = _replayed_pool([0, 3])           # torch float32 picked 0 (a tie); so did MindSpore
    assert branches.flipped("torch") == 1               # float64 alone sees 1 + 1e-12 as the larger
    assert list(grads["torch"]) == [1.0, 0.0, 0.0, 1.0]
    branches, grads = _replayed_pool([1, 3])            # MindSpore picked float64's element: it differs from torch
    assert branches.edge == 1 and not branches.beyond
    assert list(grads["MindSpore"]) == [0.0, 1.0, 0.0, 1.0]


def test_a_pick_far_from_the_max_is_not_excused():
    branches, grads = _replayed_pool([0, 2])           # MindSpore picked 0.5 where the max is 2
    assert branches.beyond and "max-pool call 1" in branches.beyond[0] and "from its window's max" in branches.beyond[0]
    assert list(grads["MindSpore"]) == [1.0, 0.0, 0.0, 1.0]     # float64's own pick stays


# ----- what a review of the mechanism found (each failed before its fix)

def test_the_fork_keeps_its_own_optimizer_state():
    """Parting at step 2 with momentum: the copy along MindSpore's branches must not share the float64 run's
    momentum buffers (load_state_dict keeps same-dtype tensors as they are); shared, torch's own distance from
    float64 grew to 1e-2 from step 3 and every later allowance with it."""
    import torch

    t, m = twins()
    conv = list(t[2].parameters())        # BatchNorm not trained: step 2's input is still at the kink
    target = np.zeros((4, 4, 8, 8), np.float32)
    batches = [(edge_input(3), target), (edge_input(-2), target)] + [(edge_input(3), target)] * 3
    report = compare_training(t, m, batches, loss=torch.nn.MSELoss(), strict=False,
                              optimizer=torch.optim.SGD(conv, lr=0.1, momentum=0.9))
    assert report.passed, str(report)
    assert report.parted_at == 2
    worst = max(r.ref_err_expected for s in report.steps[2:] for r in s.rows if r.ref_err_expected is not None)
    assert worst < 1e-6, worst


def test_relus_run_in_another_order_are_not_replayed():
    import mindspore.nn as mnn
    import torch
    import torch.nn as tnn

    class Torch(tnn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = tnn.Linear(8, 16), tnn.Linear(8, 16)

        def forward(self, x):
            return torch.relu(self.a(x)) * 2 + torch.relu(self.b(x))

    class Port(mnn.Cell):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.relu = mnn.Dense(8, 16), mnn.Dense(8, 16), mnn.ReLU()

        def construct(self, x):
            rb = self.relu(self.b(x))
            return self.relu(self.a(x)) * 2 + rb

    torch.manual_seed(0)
    report = compare(Torch(), Port(), [np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)],
                     strict=False)
    assert report.passed, str(report)


def test_one_large_channel_does_not_widen_the_band_of_the_others():
    """The band is per channel: a feature near 1e4 beside small ones must not excuse a ReLU cut at 0.01."""
    import mindspore.nn as mnn
    import torch
    import torch.nn as tnn
    from mindspore import ops

    class Shifted(mnn.Cell):
        def construct(self, x):
            return ops.relu(x - 0.01) + 0.01 * (x > 0.01).astype(x.dtype)

    def pair(relu):
        torch.manual_seed(0)
        t = tnn.Sequential(tnn.Linear(4, 4), tnn.ReLU(), tnn.Linear(4, 1))
        with torch.no_grad():     # feature 0 (the large one) feeds output 0 only
            t[0].weight.copy_(torch.eye(4) + 0.01 * torch.randn(4, 4) * (1 - torch.eye(4)) * torch.tensor([0., 1, 1, 1]))
            t[0].bias.zero_()
        return t, mnn.SequentialCell(mnn.Dense(4, 4), relu, mnn.Dense(4, 1))

    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 4)).astype(np.float32)
    x[:, 0] = 1e4 + rng.standard_normal(512)
    assert compare(*pair(mnn.ReLU()), [x], strict=False).passed
    report = compare(*pair(Shifted()), [x], strict=False)
    assert not report.passed and not kink(report).passed


def test_a_kind_that_does_not_line_up_is_not_replayed_at_all():
    """MindSpore's one ReLU (its other spelled otherwise) must not be replayed onto torch's first, even when a
    max-pool near-tie makes the run along MindSpore's branches."""
    import torch
    import torch.nn.functional as F

    from recompat.compat.kink_replay import MAX_POOL, RELU, Branches, recording_torch, replaying_torch

    values = np.array([[[[1.0, 1.0 + 1e-12, 0.5, 2.0], [-1.0, -1.0, -1.0, -1.0]]]])
    r1, r2 = np.array([[0.3, -0.2, 0.7, -0.9]]), np.array([[-0.3, 0.2, -0.7, 0.9]])

    def forward(dtype):
        F.relu(torch.tensor(r1, dtype=dtype))
        F.relu(torch.tensor(r2, dtype=dtype))
        F.max_pool2d(torch.tensor(values, dtype=dtype), 2)

    branches = Branches()
    with recording_torch(branches) as phase, phase.during_forward():
        forward(torch.float32)
    branches.mindspore[RELU] = [r2 > 0]
    branches.mindspore[MAX_POOL] = [np.array([1, 3]).reshape(1, 1, 1, 2)]
    for kind in (RELU, MAX_POOL):
        branches.unreplayed[f"MindSpore {kind}"] = branches.mindspore_aligned(kind)
    for side in ("torch", "MindSpore"):
        with replaying_torch(branches, side) as phase, phase.during_forward():
            forward(torch.float64)
    assert not branches.beyond and branches.forgiven["MindSpore"][RELU] == 0


def test_recording_takes_what_torch_takes():
    """input= by keyword, bfloat16, a ReLU under torch.func.vmap, an unbatched max-pool: recorded, or left to
    torch as they are (never an error of recompat's)."""
    import torch
    import torch.nn.functional as F

    from recompat.compat.kink_replay import MAX_POOL, Branches, recording_torch

    x = torch.randn(1, 1, 4, 4)
    branches = Branches()
    with recording_torch(branches) as phase, phase.during_forward():
        F.relu(input=x)
        F.max_pool2d(input=x, kernel_size=2)
        torch.relu(torch.randn(4, dtype=torch.bfloat16))
        torch.func.vmap(F.relu)(torch.randn(3, 4))
        F.max_pool2d(torch.randn(3, 8, 8), 2)
    assert len(branches.torch["ReLU"]) == 2 and len(branches.torch[MAX_POOL]) == 1
    assert "not replayed" in branches.unreadable["ReLU"] and "3-d input" in branches.unreadable[MAX_POOL]


# ----- ReLU6: a clamp with two kinks (0 and 6)

@pytest.mark.parametrize("kind", ["ReLU6", "LeakyReLU"])
def test_a_clamps_flip_at_zero_is_judged_along_its_own_branch(kind):
    """The same walk through nn.ReLU6 (torch: F.hardtanh(x, 0, 6); MindSpore: the ReLU6 primitive) and nn.LeakyReLU
    (torch: F.leaky_relu; MindSpore: ops.leaky_relu, a maximum of alpha * x and x, the slope times x replayed below
    0)."""
    import mindspore.nn as mnn
    import torch.nn as tnn

    def pair():
        if kind == "ReLU6":
            return twins(mnn.ReLU6(), torch_relu=tnn.ReLU6())
        return twins(mnn.LeakyReLU(alpha=0.01), torch_relu=tnn.LeakyReLU())

    flipped = []
    for ulps in WALK:
        report = compare(*pair(), [edge_input(ulps)], strict=False)
        assert report.passed, (ulps, str(report))
        row = kink(report)
        if row is not None:
            assert row.passed and f"1 {kind} call" in row.message, row.message
            flipped.append(f"{kind} input across 0" in row.message)
    assert any(flipped), f"the walk crosses the {kind}'s kink at 0 on one side"
    failed = [u for u in WALK if not compare(*pair(), [edge_input(u)], strict=False, kinks=False).passed]
    assert failed, f"no false alarm without kink replay: the {kind} walk no longer reaches the kink"


def _replayed_relu6(mindspore_segments, *, inplace=False):
    """Inputs near 6 (6 - 1e-12: float32 rounds it to 6, float64 does not), near 0 and clear of both: torch's
    float32 run records through F.hardtanh(x, 0, 6), then the float64 runs replay torch's segments and
    ``mindspore_segments``. Gives the input gradient and output of each float64 run."""
    import torch
    import torch.nn.functional as F

    from recompat.compat.kink_replay import RELU6, Branches, recording_torch, replaying_torch

    values = np.array([[6.0 - 1e-12, 3.0, -2.0, 7.0]])
    branches = Branches()
    with recording_torch(branches) as phase, phase.during_forward():
        F.hardtanh(torch.tensor(values, dtype=torch.float32), 0.0, 6.0)
    branches.mindspore[RELU6] = [np.array([mindspore_segments], dtype=np.int8)]
    branches.unreplayed["MindSpore ReLU6"] = branches.mindspore_aligned(RELU6)
    runs = {}
    for side in ("torch", "MindSpore"):
        x = torch.tensor(values, requires_grad=True)
        with replaying_torch(branches, side) as phase:
            with phase.during_forward():
                out = F.relu6(x.clone(), inplace=True) if inplace else F.relu6(x)
            out.sum().backward()
        runs[side] = (x.grad.numpy()[0].tolist(), out.detach().numpy()[0].tolist())
    return branches, runs


def test_a_relu6_near_six_follows_each_sides_segment():
    from recompat.compat.kink_replay import RELU6, segments

    assert segments(np.array([0.0, 1e-30, 5.9, 6.0, 7.0]), RELU6).tolist() == [0, 1, 1, 2, 2]
    branches, runs = _replayed_relu6([2, 1, 0, 2])        # torch float32 saw 6.0 (clamped); so did MindSpore
    assert branches.flipped("torch") == 1 and branches.edge == 0
    assert runs["torch"] == ([0.0, 1.0, 0.0, 0.0], [6.0, 3.0, 0.0, 6.0])
    for inplace in (False, True):
        branches, runs = _replayed_relu6([1, 1, 0, 2], inplace=inplace)   # MindSpore passed it: float64's own
        assert branches.edge == 1 and not branches.beyond
        assert runs["MindSpore"][0] == [1.0, 1.0, 0.0, 0.0] and runs["MindSpore"][1][0] == 6.0 - 1e-12


def test_a_relu6_decision_far_from_its_kinks_is_not_excused():
    branches, runs = _replayed_relu6([2, 2, 0, 2])        # MindSpore clamped 3.0: a ReLU6 whose top is not 6
    assert branches.beyond and "ReLU6 call 1" in branches.beyond[0] and "from 0 or 6" in branches.beyond[0]
    assert runs["MindSpore"][0][1] == 1.0                 # float64's own segment stays


def test_another_hardtanh_is_not_a_relu6():
    import torch
    import torch.nn.functional as F

    from recompat.compat.kink_replay import RELU6, Branches, recording_torch

    x = torch.randn(2, 3)
    branches = Branches()
    with recording_torch(branches) as phase, phase.during_forward():
        F.hardtanh(x)                                     # -1 .. 1
        F.hardtanh(x, min_val=0.0, max_val=6.0)
        F.relu6(x)
        torch.nn.ReLU6(inplace=True)(x.clone())
    assert len(branches.torch[RELU6]) == 3
    assert F.hardtanh(torch.tensor([5.0])).item() == 1.0, "F.hardtanh restored"


def test_a_leaky_relu_with_another_slope_still_fails():
    """Planted: MindSpore's default alpha 0.2 for torch's 0.01 (the slope is a setting: strict=False leaves the
    numbers to judge) fails on the gradients, whatever the kinks do."""
    import mindspore.nn as mnn
    import torch.nn as tnn

    report = compare(*twins(mnn.LeakyReLU(alpha=0.2), torch_relu=tnn.LeakyReLU()), [edge_input(0)], strict=False)
    assert not report.passed and any(r.kind in ("param-grad", "input-grad") and not r.passed for r in report.rows)
