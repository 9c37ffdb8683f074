"""The compat shims: torch idioms on MindSpore (recompat.compat.checkpoint_on_mindspore) and MindSpore idioms on
torch (recompat.compat.recompute_on_torch).

Each shim: gradients equal to the plain run; recompute really happens (forward / construct call counts);
torch's checkpoint_sequential segmentation; argument handling as the imitated API does; and the documented RNG
behaviour pinned: compat.checkpoint_on_mindspore.checkpoint keeps nn.Dropout / ops.dropout masks over several
steps, in nested regions and closures (its mask tape), warns where it cannot (Dropout2D), and MindSpore's own
reentrant engine, which it does not use, is pinned breaking nested dropout regions.
"""
from __future__ import annotations

import copy
import os
import warnings

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest

import mindspore as ms
import torch
from mindspore import Tensor, nn, ops

from conftest import Block, DropBlock   # the shared MindSpore test cells
from recompat.compat import checkpoint_on_mindspore as msc
from recompat.compat import recompute_on_torch as tc
from recompat.compat.checkpoint_on_mindspore import RecomputeRNGWarning
from recompat.compat.recompute_on_torch import OutputRecomputeWarning

pytestmark = pytest.mark.runtime


@pytest.fixture
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def x_of(shape=(3, 4), seed=0):
    return Tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def grads(net, *inputs, positions=0):
    """(loss, input grads, parameter grads) as numpy, via mindspore.value_and_grad."""
    fn = ms.value_and_grad(net, grad_position=positions, weights=net.trainable_params())
    loss, (gx, gw) = fn(*inputs)
    gx = [g.asnumpy() for g in gx] if isinstance(gx, tuple) else [gx.asnumpy()]
    return loss.asnumpy(), gx, [g.asnumpy() for g in gw]


def assert_same(a, b):
    np.testing.assert_allclose(a[0], b[0], rtol=1e-6, atol=1e-7)
    assert len(a[1]) == len(b[1]) and len(a[2]) == len(b[2]) > 0
    for p, q in zip(a[1] + a[2], b[1] + b[2]):
        np.testing.assert_allclose(p, q, rtol=1e-6, atol=1e-6)


def differs(a, b):
    return any(not np.allclose(p, q, rtol=1e-5, atol=1e-6) for p, q in zip(a[1] + a[2], b[1] + b[2]))


def copy_params(dst, src):
    for (n1, p1), (n2, p2) in zip(dst.parameters_and_names(), src.parameters_and_names()):
        assert n1 == n2
        p1.set_data(p2.data.copy())


# ================================================================== compat.checkpoint_on_mindspore.checkpoint

class Parent(nn.Cell):
    """head(block(x)).sum(), the block called through compat checkpoint in one of several torch idioms."""

    def __init__(self, form=None, **kw):
        super().__init__()
        self.block = Block()
        self.head = nn.Dense(8, 4)
        self.form = form
        self.kw = kw

    def _checkpoint(self, x):
        return self.block(x)

    def construct(self, x):
        form, kw = self.form, self.kw
        if form is None:
            y = self.block(x)
        elif form == "cell":
            y = msc.checkpoint(self.block, x, **kw)
        elif form == "call":
            y = msc.checkpoint(self.block.__call__, x, **kw)
        elif form == "method":                                   # the seed: cp(self._checkpoint, x)
            y = msc.checkpoint(self._checkpoint, x, **kw)
        elif form == "lambda":
            y = msc.checkpoint(lambda t: self.block(t), x, **kw)
        else:
            raise AssertionError(form)
        return self.head(y).sum()


def make(form=None, ref=None, **kw):
    ms.set_seed(0)
    net = Parent(form, **kw)
    if ref is not None:
        copy_params(net, ref)
    return net


FORMS = [("cell", {"use_reentrant": True}), ("cell", {"use_reentrant": False}), ("call", {"use_reentrant": True}),
         ("method", {"use_reentrant": True}), ("method", {"use_reentrant": False}),
         ("lambda", {"use_reentrant": True}), ("lambda", {"use_reentrant": False})]


@pytest.mark.parametrize("form,kw", FORMS, ids=[f"{f}-{'reentrant' if k['use_reentrant'] else 'non_reentrant'}"
                                               for f, k in FORMS])
def test_ms_checkpoint_any_callable_matches_plain_and_recomputes(pynative, form, kw):
    x = x_of()
    ref = make()
    expected = grads(ref, x)
    net = make(form, ref, **kw)
    names_before = [p.name for p in net.trainable_params()]
    assert_same(grads(net, x), expected)
    assert (ref.block.calls, net.block.calls) == (1, 2)        # forward + recomputation in backward
    assert [p.name for p in net.trainable_params()] == names_before   # the region renames nothing


def test_ms_checkpoint_use_reentrant_none_warns_like_torch_and_keeps_reentrant_rules(pynative):
    x = x_of()
    ref = make()
    net = make("cell", ref)                                     # no use_reentrant
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        got = grads(net, x)
    assert_same(got, grads(ref, x))
    assert net.block.calls == 2
    with pytest.raises(ValueError, match="Unexpected keyword arguments: mask"):   # reentrant: torch's error
        with pytest.warns(UserWarning, match="use_reentrant"):
            msc.checkpoint(Block(), x, mask=x, use_reentrant=None)


def test_ms_checkpoint_argument_errors_follow_torch(pynative):
    block, x = Block(), x_of()
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        msc.checkpoint(block, x, foo=1, use_reentrant=True)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        msc.checkpoint(block, x, use_reentrant=True, context_fn=lambda: (None, None))
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        msc.checkpoint(block, x, use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match="determinism_check"):
        msc.checkpoint(block, x, use_reentrant=False, determinism_check="strict")
    # torch's own kwargs are accepted and not forwarded to the function
    out = msc.checkpoint(block, x, use_reentrant=False, early_stop=True, debug=True, determinism_check="none",
                         preserve_rng_state=True)
    assert out.shape == (3, 8)


def test_ms_checkpoint_without_grad_runs_once(pynative):
    block = Block()
    msc.checkpoint(block, x_of(), use_reentrant=True)
    msc.checkpoint(block, x_of(), use_reentrant=False)
    assert block.calls == 2                                     # no recomputation outside a gradient


class MaskParent(nn.Cell):
    def __init__(self, recompute):
        super().__init__()
        self.block = Block()
        self.head = nn.Dense(8, 4)
        self.recompute = recompute

    def construct(self, x, m):
        if self.recompute:
            y = msc.checkpoint(self.block, x, mask=m, use_reentrant=False)
        else:
            y = self.block(x, mask=m)
        return self.head(y).sum()


def test_ms_checkpoint_non_reentrant_passes_kwargs_to_the_function(pynative):
    x = x_of()
    m = Tensor(np.array([[1, 0, 1, 0, 1, 0, 1, 0]] * 3, np.float32))
    ms.set_seed(0)
    ref = MaskParent(False)
    ms.set_seed(0)
    net = MaskParent(True)
    copy_params(net, ref)
    got = grads(net, x, m, positions=(0, 1))
    assert_same(got, grads(ref, x, m, positions=(0, 1)))      # the mask's gradient too
    assert net.block.calls == 2


def test_ms_checkpoint_densenet_closure_splatted_inputs(pynative):
    ms.set_seed(0)
    dense, relu = nn.Dense(12, 4), nn.ReLU()

    def closure(*inputs):
        return relu(dense(ops.cat(inputs, 1)))

    xs = [x_of(seed=i) for i in range(3)]

    def run(fn):
        g = ms.value_and_grad(fn, grad_position=(0, 1, 2), weights=dense.trainable_params())
        loss, (gx, gw) = g(*xs)
        return loss.asnumpy(), [t.asnumpy() for t in gx], [t.asnumpy() for t in gw]

    plain = run(lambda *t: closure(*t).sum())
    for reentrant in (True, False):                             # any callable, both flags
        got = run(lambda *t: msc.checkpoint(closure, *t, use_reentrant=reentrant).sum())
        assert all(np.abs(g).sum() > 0 for g in got[1])
        assert_same(got, plain)


class TupleBlock(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fa = nn.Dense(4, 8)
        self.fb = nn.Dense(4, 8)

    def construct(self, xs):
        a, b = xs
        h = ops.tanh(self.fa(a) + self.fb(b))
        return h, h * h


class TupleParent(nn.Cell):
    def __init__(self, recompute):
        super().__init__()
        self.block = TupleBlock()
        self.recompute = recompute

    def construct(self, a, b):
        if self.recompute:
            h, g = msc.checkpoint(self.block, (a, b), use_reentrant=False)
        else:
            h, g = self.block((a, b))
        return (h * 2 + g).sum()


def test_ms_checkpoint_non_reentrant_tuple_input_and_output_get_gradients(pynative):
    a, b = x_of(seed=1), x_of(seed=2)
    ms.set_seed(0)
    ref = TupleParent(False)
    ms.set_seed(0)
    net = TupleParent(True)
    copy_params(net, ref)
    got = grads(net, a, b, positions=(0, 1))
    assert all(np.abs(g).sum() > 0 for g in got[1])
    assert_same(got, grads(ref, a, b, positions=(0, 1)))


class ConvNet(nn.Cell):
    def __init__(self, recompute, **kw):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, pad_mode="valid", has_bias=True)
        self.recompute = recompute
        self.kw = kw

    def construct(self, x):
        y = msc.checkpoint(self.conv, x, **self.kw) if self.recompute else self.conv(x)
        return (y * y).sum()


@pytest.mark.parametrize("kw", [{"use_reentrant": False}, {"use_reentrant": False, "early_stop": True}])
def test_ms_checkpoint_non_reentrant_block_ending_in_conv(pynative, kw):
    # mindspore.recompute(use_reentrant=False) with early_stop=True crashes here; the shim passes early_stop=False
    x = x_of((2, 2, 6, 6), seed=1)
    ms.set_seed(0)
    ref = ConvNet(False)
    net = ConvNet(True, **kw)
    copy_params(net, ref)
    assert_same(grads(net, x), grads(ref, x))


def test_ms_checkpoint_context_fn_contexts_are_entered(pynative):
    import contextlib
    entered = []

    @contextlib.contextmanager
    def note(what):
        entered.append(what)
        yield

    x = x_of()
    ref = make()
    net = make("cell", ref, use_reentrant=False, context_fn=lambda: (note("forward"), note("recompute")))
    assert_same(grads(net, x), grads(ref, x))
    assert entered == ["forward", "recompute"]


# --------------------------------------------------------------------------- RNG

class DropParent(nn.Cell):
    def __init__(self, form=None, functional=False, **kw):
        super().__init__()
        self.block = DropBlock(functional)
        self.head = nn.Dense(8, 4)
        self.form = form
        self.kw = kw

    def construct(self, x):
        if self.form == "cell":
            y = msc.checkpoint(self.block, x, **self.kw)
        elif self.form == "lambda":
            y = msc.checkpoint(lambda t: self.block(t), x, **self.kw)
        else:
            y = self.block(x)
        return self.head(y).sum()


def drop_steps(form=None, functional=False, steps=2, **kw):
    """A fresh net built after set_seed(0) (nn.Dropout's mask stream is fixed at construction), `steps` steps."""
    ms.set_seed(0)
    net = DropParent(form, functional, **kw)
    net.set_train(True)
    x = x_of((16, 4))
    return [grads(net, x) for _ in range(steps)]


RNG_EXACT = [
    ("cell", False, {"use_reentrant": True}),        # nn.Dropout: the mask is replayed
    ("cell", False, {"use_reentrant": None}),
    ("cell", False, {"use_reentrant": False}),
    ("lambda", False, {"use_reentrant": True}),      # a closure
    ("cell", True, {"use_reentrant": True}),         # ops.dropout (a new primitive at every call)
    ("lambda", True, {"use_reentrant": False}),
]


@pytest.mark.parametrize("form,functional,kw", RNG_EXACT,
                         ids=["nn-reentrant", "nn-default", "nn-non_reentrant", "nn-closure", "ops-reentrant",
                              "ops-closure"])
def test_ms_checkpoint_keeps_dropout_masks(pynative, form, functional, kw):
    plain = drop_steps(functional=functional, steps=3)
    assert differs(plain[0], plain[1])                       # masks change from step to step
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecomputeRNGWarning)
        warnings.filterwarnings("ignore", "recompat.compat.checkpoint_on_mindspore.checkpoint: the use_reentrant",
                                UserWarning)
        got = drop_steps(form, functional, steps=3, **kw)
    for a, b in zip(got, plain):                             # every step: the stream is not advanced either
        assert_same(a, b)


def test_ms_checkpoint_preserve_rng_state_false_draws_new_masks(pynative):
    plain = drop_steps()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecomputeRNGWarning)
        got = drop_steps("cell", use_reentrant=True, preserve_rng_state=False)
    np.testing.assert_array_equal(got[0][0], plain[0][0])    # the forward is the plain one ...
    assert differs(got[0], plain[0])                         # ... the recomputation draws a new mask
    assert not np.array_equal(got[1][0], plain[1][0])        # and the stream runs one draw ahead


class NestedDrop(nn.Cell):
    """Dropout blocks in nested regions: checkpoint(outer) where outer(x) = checkpoint(b2, b1(x))."""

    def __init__(self, form):
        super().__init__()
        self.b1 = DropBlock()
        self.b2 = DropBlock8()
        self.head = nn.Dense(8, 4)
        self.form = form

    def outer(self, x):
        h = self.b1(x)
        if self.form == "shim":
            return msc.checkpoint(self.b2, h, use_reentrant=True)
        return self.b2(h)

    def construct(self, x):
        if self.form == "shim":
            h = msc.checkpoint(self.outer, x, use_reentrant=True)
        else:
            h = self.outer(x)
        return self.head(h).sum()


class DropBlock8(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(8, 8)
        self.drop = nn.Dropout(p=0.5)

    def construct(self, x):
        return self.drop(ops.tanh(self.dense(x)))


class NativeOuter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.b1 = DropBlock()
        self.b2 = DropBlock8()

    def construct(self, x):
        return self.b2(self.b1(x))


class NativeNested(nn.Cell):
    def __init__(self, mark):
        super().__init__()
        self.outer = NativeOuter()
        self.head = nn.Dense(8, 4)
        if mark:
            self.outer.b2.recompute()
            self.outer.recompute()

    def construct(self, x):
        return self.head(self.outer(x)).sum()


def steps_of(make_net, steps=3):
    ms.set_seed(0)
    net = make_net()
    net.set_train(True)
    x = x_of((16, 4))
    return [grads(net, x) for _ in range(steps)]


def test_ms_checkpoint_nested_regions_keep_dropout_masks(pynative):
    plain = steps_of(lambda: NestedDrop(None))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecomputeRNGWarning)
        got = steps_of(lambda: NestedDrop("shim"))
    for a, b in zip(got, plain):
        assert_same(a, b)


def test_ms_native_nested_cell_recompute_breaks_dropout_from_the_second_step(pynative):
    # Why the shim does not use MindSpore's reentrant engine: its per-primitive random-output cache gives nested
    # Cell.recompute() regions wrong masks from the second step on (the forward itself changes).
    plain = steps_of(lambda: NativeNested(False))
    native = steps_of(lambda: NativeNested(True))
    assert_same(native[0], plain[0])
    assert not np.array_equal(native[1][0], plain[1][0])
    assert differs(native[1], plain[1])


class Drop2dParent(nn.Cell):
    def __init__(self, recompute, **kw):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.drop = nn.Dropout2d(p=0.5)
        self.recompute = recompute
        self.kw = kw

    def block(self, x):
        return self.drop(ops.tanh(self.conv(x)))

    def construct(self, x):
        y = msc.checkpoint(self.block, x, **self.kw) if self.recompute else self.block(x)
        return (y * y).sum()


def test_ms_checkpoint_warns_where_a_mask_cannot_be_replayed(pynative):
    # nn.Dropout2d's primitive (ops.Dropout2D) is not replayed. (It is built without seeds: its masks are not even
    # reproducible from run to run, so no gradient comparison is possible here.)
    x = x_of((4, 2, 5, 5))
    ms.set_seed(0)
    net = Drop2dParent(True, use_reentrant=False)
    net.set_train(True)
    with pytest.warns(RecomputeRNGWarning, match="Dropout2D") as caught:
        grads(net, x)
    assert {w.filename for w in caught} == {__file__}        # points at the checkpoint call: once per call site
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecomputeRNGWarning)  # the documented way to make it an error
        with pytest.raises(RecomputeRNGWarning):
            grads(net, x)
    quiet = Drop2dParent(True, use_reentrant=False, preserve_rng_state=False)
    quiet.set_train(True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecomputeRNGWarning)
        grads(quiet, x)                                      # different masks accepted: no warning


def test_ms_checkpoint_tape_restores_the_dropout_primitives(pynative):
    classes = (ops.Dropout, ops.Dropout2D, ops.Dropout3D)
    before = {cls: cls.__dict__.get("__call__") for cls in classes}
    drop_steps("cell", use_reentrant=False, steps=1)
    assert {cls: cls.__dict__.get("__call__") for cls in classes} == before
    from recompat.compat.checkpoint_on_mindspore import _Tape
    assert _Tape.stack == []


# ======================================================= compat.checkpoint_on_mindspore.checkpoint_sequential

class CountedLayer(nn.Cell):
    def __init__(self, conv=False):
        super().__init__()
        self.op = nn.Conv2d(2, 2, 3, pad_mode="pad", padding=1, has_bias=True) if conv else nn.Dense(4, 4)
        self.relu = nn.ReLU()
        self.conv = conv
        self.calls = 0

    def construct(self, x):
        self.calls += 1
        y = self.op(x)
        return y if self.conv else self.relu(y)


class SeqNet(nn.Cell):
    def __init__(self, n, segments, recompute, as_list=False, conv=False, **kw):
        super().__init__()
        self.seq = nn.SequentialCell([CountedLayer(conv) for _ in range(n)])
        self.segments = segments
        self.recompute = recompute
        self.as_list = as_list
        self.kw = kw

    def construct(self, x):
        if self.recompute:
            functions = list(self.seq.cells()) if self.as_list else self.seq
            y = msc.checkpoint_sequential(functions, self.segments, x, **self.kw)
        else:
            y = self.seq(x)
        return (y * y).sum()


@pytest.mark.parametrize("use_reentrant", [True, False], ids=["reentrant", "non_reentrant"])
@pytest.mark.parametrize("n,segments,twice", [(5, 2, 2), (6, 3, 4), (5, 3, 2), (5, 1, 0), (4, 4, 3)])
def test_ms_checkpoint_sequential_has_torch_segmentation(pynative, use_reentrant, n, segments, twice):
    x = x_of((2, 4), seed=3)
    ms.set_seed(0)
    ref = SeqNet(n, segments, False)
    expected = grads(ref, x)
    ms.set_seed(0)
    net = SeqNet(n, segments, True, as_list=n == 6, use_reentrant=use_reentrant)
    copy_params(net, ref)
    assert_same(grads(net, x), expected)
    # the first segments - 1 chunks of n // segments layers run twice, the last chunk and the remainder once
    assert [c.calls for c in net.seq.cells()] == [2] * twice + [1] * (n - twice)
    # torch's own counts (pre-hooks), for the same n and segments
    tseq = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(n)])
    counts = [0] * n
    for i, layer in enumerate(tseq):
        layer.register_forward_pre_hook(lambda mod, args, i=i: counts.__setitem__(i, counts[i] + 1))
    torch.utils.checkpoint.checkpoint_sequential(tseq, segments, torch.randn(2, 4, requires_grad=True),
                                                 use_reentrant=use_reentrant).sum().backward()
    assert counts == [c.calls for c in net.seq.cells()]


def test_ms_checkpoint_sequential_segment_ending_in_conv(pynative):
    # the translator's helper crashed here with early_stop=True (test_framework_facts, strict xfail)
    x = x_of((1, 2, 5, 5), seed=4)
    ms.set_seed(0)
    ref = SeqNet(4, 2, False, conv=True)
    net = SeqNet(4, 2, True, conv=True, use_reentrant=False)
    copy_params(net, ref)
    assert_same(grads(net, x), grads(ref, x))
    assert [c.calls for c in net.seq.cells()] == [2, 2, 1, 1]


def test_ms_checkpoint_sequential_arguments_follow_torch(pynative):
    seq = nn.SequentialCell([CountedLayer() for _ in range(3)])
    x = x_of((2, 4))
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        msc.checkpoint_sequential(seq, 2, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        msc.checkpoint_sequential(seq, 2, x, use_reentrant=False, foo=1)
    with pytest.raises(ValueError):                          # torch: range() step 0
        msc.checkpoint_sequential(seq, 5, x, use_reentrant=False)
    out = msc.checkpoint_sequential(seq, 3, x, use_reentrant=True, preserve_rng_state=False)
    assert out.shape == (2, 4)


# =========================================================================== GRAPH mode

@pytest.fixture
def graph(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)              # a failed compile writes rank_0/om/analyze_fail.ir into the cwd
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


class GraphNet(nn.Cell):
    def __init__(self, form):
        super().__init__()
        self.block = Block()
        self.seq = nn.SequentialCell([nn.Dense(8, 8), nn.ReLU(), nn.Dense(8, 8), nn.Tanh(), nn.Dense(8, 8)])
        self.form = form

    def construct(self, x):
        if self.form == "checkpoint":
            h = msc.checkpoint(self.block, x, use_reentrant=True)
            h = msc.checkpoint(self.seq, h, use_reentrant=False)
        elif self.form == "sequential":
            h = msc.checkpoint_sequential(self.seq, 2, self.block(x), use_reentrant=False)
        else:
            h = self.seq(self.block(x))
        return (h * h).sum()


@pytest.mark.parametrize("form", ["checkpoint", "sequential"])
def test_ms_shims_compile_in_graph_mode(graph, form):
    # compiled, both take MindSpore's graph-level recompute; every parameter keeps its gradient
    x = x_of()
    ms.set_seed(0)
    ref = GraphNet(None)
    net = GraphNet(form)
    copy_params(net, ref)
    got, expected = grads(net, x), grads(ref, x)
    assert all(np.abs(g).sum() > 0 for g in got[2])
    assert_same(got, expected)


# =========================================================================== compat.recompute_on_torch.recompute

class TBlock(torch.nn.Module):
    def __init__(self, dropout=0.0):
        super().__init__()
        self.dense = torch.nn.Linear(4, 8)
        self.drop = torch.nn.Dropout(dropout)
        self.calls = 0

    def forward(self, x, mask=None):
        self.calls += 1
        y = self.drop(torch.relu(self.dense(x)))
        return y * mask if mask is not None else y


def torch_grads(block, head, x, call, mask=None, seed=5):
    """(loss, x.grad, mask.grad, parameter grads) for head(call(block, x)).sum()."""
    for p in list(block.parameters()) + list(head.parameters()):
        p.grad = None
    torch.manual_seed(seed)
    out = head(call(block, x) if mask is None else call(block, x, mask)).sum()
    out.backward()
    params = list(block.parameters()) + list(head.parameters())
    return (out.detach(), None if x.grad is None else x.grad.clone(),
            None if mask is None or mask.grad is None else mask.grad.clone(),
            [None if p.grad is None else p.grad.clone() for p in params])


def assert_torch_same(a, b):
    assert torch.equal(a[0], b[0])
    for p, q in zip(a[1:3], b[1:3]):
        assert (p is None) == (q is None)
        if p is not None:
            torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-7)
    for p, q in zip(a[3], b[3]):
        assert p is not None and q is not None
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-7)


def torch_setup(dropout=0.0):
    torch.manual_seed(0)
    return TBlock(dropout), torch.nn.Linear(8, 4)


def fresh_x(requires_grad=True):
    torch.manual_seed(1)
    return torch.randn(16, 4, requires_grad=requires_grad)


@pytest.mark.parametrize("kw", [{}, {"use_reentrant": False}, {"use_reentrant": False, "early_stop": False}],
                         ids=["default_reentrant", "non_reentrant", "non_reentrant_no_early_stop"])
def test_torch_recompute_matches_plain_and_recomputes(kw):
    block, head = torch_setup()
    plain = torch_grads(block, head, fresh_x(), lambda b, t: b(t))
    block.calls = 0
    got = torch_grads(block, head, fresh_x(), lambda b, t: tc.recompute(b, t, **kw))
    assert_torch_same(got, plain)
    assert block.calls == 2


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_torch_recompute_passes_kwargs_in_both_forms(use_reentrant):
    # MindSpore forwards kwargs to the block in both forms; torch's reentrant form would refuse them
    block, head = torch_setup()
    mask = (torch.arange(8) % 2).float().expand(16, 8).clone().requires_grad_()
    plain = torch_grads(block, head, fresh_x(), lambda b, t, m: b(t, mask=m), mask=mask)
    mask.grad = None
    block.calls = 0
    got = torch_grads(block, head, fresh_x(), lambda b, t, m: tc.recompute(b, t, mask=m, use_reentrant=use_reentrant),
                      mask=mask)
    assert_torch_same(got, plain)
    assert got[2] is not None and block.calls == 2


def test_torch_recompute_input_without_grad_keeps_parameter_gradients():
    # torch's reentrant checkpoint would leave the block's parameters without gradients here (pinned below);
    # MindSpore's reentrant form computes them, and so does the shim.
    block, head = torch_setup()
    plain = torch_grads(block, head, fresh_x(False), lambda b, t: b(t))
    got = torch_grads(block, head, fresh_x(False), lambda b, t: tc.recompute(b, t))
    assert_torch_same(got, plain)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = torch_grads(block, head, fresh_x(False),
                          lambda b, t: torch.utils.checkpoint.checkpoint(b, t, use_reentrant=True))
    assert raw[3][0] is None                                  # torch's own reentrant form: no gradient


def test_torch_recompute_argument_handling():
    block, head = torch_setup()
    x = fresh_x()
    with pytest.raises(ValueError, match="context_fn is only supported when use_reentrant=False"):
        tc.recompute(block, x, context_fn=torch.utils.checkpoint.noop_context_fn)
    with pytest.warns(OutputRecomputeWarning, match="no torch counterpart"):
        got = torch_grads(block, head, fresh_x(), lambda b, t: tc.recompute(b, t, output_recompute=True))
    assert_torch_same(got, torch_grads(block, head, fresh_x(), lambda b, t: b(t)))
    entered = []
    import contextlib

    @contextlib.contextmanager
    def note(what):
        entered.append(what)
        yield

    tc.recompute(block, x, use_reentrant=False, context_fn=lambda: (note("forward"), note("recompute"))).sum().backward()
    assert entered == ["forward", "recompute"]
    with torch.no_grad():
        block.calls = 0
        tc.recompute(block, x)
        assert block.calls == 1


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_torch_recompute_save_rng_state(use_reentrant):
    block, head = torch_setup(dropout=0.5)
    plain = torch_grads(block, head, fresh_x(), lambda b, t: b(t))
    got = torch_grads(block, head, fresh_x(), lambda b, t: tc.recompute(b, t, use_reentrant=use_reentrant))
    assert_torch_same(got, plain)                            # save_rng_state=True (default): same masks
    other = torch_grads(block, head, fresh_x(),
                        lambda b, t: tc.recompute(b, t, use_reentrant=use_reentrant, save_rng_state=False))
    assert not torch.allclose(other[1], plain[1])


# =========================================================================== compat.recompute_on_torch.mark_recompute

class TNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = TBlock()
        self.bn = torch.nn.BatchNorm1d(8)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.bn(self.block(x)))


def tnet_run(net, x):
    for p in net.parameters():
        p.grad = None
    out = net(x).sum()
    out.backward()
    return out.detach(), [p.grad.clone() for p in net.parameters()]


@pytest.mark.parametrize("kw", [{}, {"use_reentrant": False}], ids=["reentrant", "non_reentrant"])
@pytest.mark.parametrize("requires_grad", [True, False], ids=["input_grad", "raw_input"])
def test_mark_recompute_gives_cell_recompute_behaviour(kw, requires_grad):
    torch.manual_seed(0)
    ref = TNet()
    net = copy.deepcopy(ref)
    keys = list(net.state_dict())
    assert tc.mark_recompute(net.block, **kw) is net.block and tc.is_marked(net.block)
    assert list(net.state_dict()) == keys                    # parameter names unchanged
    hooks = {"pre": 0, "post": 0}
    net.block.register_forward_pre_hook(lambda *a: hooks.__setitem__("pre", hooks["pre"] + 1))
    net.block.register_forward_hook(lambda *a: hooks.__setitem__("post", hooks["post"] + 1))
    ref.block.calls = net.block.calls = 0
    plain = tnet_run(ref, fresh_x(requires_grad))
    got = tnet_run(net, fresh_x(requires_grad))
    assert torch.equal(got[0], plain[0])
    for p, q in zip(got[1], plain[1]):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-7)
    assert (ref.block.calls, net.block.calls) == (1, 2)      # its inside runs twice in one backward
    assert hooks == {"pre": 1, "post": 1}                     # hooks fire once (as on MindSpore)
    assert net.bn.num_batches_tracked.item() == 1            # the output (and what follows) is not recomputed


def test_mark_recompute_batchnorm_inside_updates_twice():
    torch.manual_seed(0)
    seq = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
    tc.mark_recompute(seq)
    seq(fresh_x()).sum().backward()
    assert seq[1].num_batches_tracked.item() == 2            # as MindSpore's Cell.recompute(): statistics twice


def test_mark_recompute_options_and_undo():
    torch.manual_seed(0)
    block = TBlock()
    with pytest.raises(ValueError, match="keyword 'foo' is not recognized"):
        tc.mark_recompute(block, foo=1)
    with pytest.raises(TypeError):
        tc.mark_recompute(block, False)
    tc.mark_recompute(block, mp_comm_recompute=False, recompute_slice_activation=True)
    tc.mark_recompute(block, use_reentrant=False)            # marking again: the last mark wins
    assert block.forward.options["use_reentrant"] is False
    with pytest.warns(OutputRecomputeWarning):
        tc.mark_recompute(block, output_recompute=True)
        block(fresh_x()).sum().backward()
    tc.unmark_recompute(block)
    assert not tc.is_marked(block) and "forward" not in block.__dict__
    block.calls = 0
    block(fresh_x()).sum().backward()
    assert block.calls == 1


def test_mark_recompute_survives_deepcopy():
    torch.manual_seed(0)
    net = TNet()
    tc.mark_recompute(net.block)
    clone = copy.deepcopy(net)
    assert clone.block.forward.module is clone.block          # the copy's forward runs the copy
    clone.block.calls = net.block.calls = 0
    tnet_run(clone, fresh_x())
    assert (clone.block.calls, net.block.calls) == (2, 0)
