"""Framework facts: these pin the framework behaviour the translator's decisions rest on.

Each test runs real torch 2.13 / MindSpore 2.10 code on tiny models (CPU) and asserts one
behaviour the translator relies on or must work around. If a framework upgrade changes one
of them, the matching test fails and the translator's decision must be revisited.

The MindSpore execution mode is process-global and tests may share a process (pytest-xdist),
so every MindSpore test sets the mode it needs through the `pynative` or `graph` fixture.
Seeds are fixed in every test.
"""
from __future__ import annotations

import inspect
import os
import warnings

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest

import mindspore as ms
import torch
from mindspore import Tensor, nn, ops
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

from conftest import Block, DropBlock   # the shared MindSpore test cells
from recompat import mappings

pytestmark = pytest.mark.runtime


# --------------------------------------------------------------------------- helpers

@pytest.fixture
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


@pytest.fixture
def graph(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)          # a failed compile writes rank_0/om/analyze_fail.ir into the cwd
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def x_of(shape=(3, 4), seed=0):
    return Tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def copy_params(dst, src):
    """Give dst the parameter values of src (same structure, same names)."""
    pairs = list(zip(dst.parameters_and_names(), src.parameters_and_names()))
    assert len(pairs) == len(list(src.parameters_and_names())) > 0
    for (n1, p1), (n2, p2) in pairs:
        assert n1 == n2, (n1, n2)
        p1.set_data(p2.data.copy())


def grads(net, *inputs, positions=0):
    """(loss, input grads, parameter grads) as numpy, via mindspore.value_and_grad."""
    fn = ms.value_and_grad(net, grad_position=positions, weights=net.trainable_params())
    loss, (gx, gw) = fn(*inputs)
    gx = [g.asnumpy() for g in gx] if isinstance(gx, tuple) else [gx.asnumpy()]
    return loss.asnumpy(), gx, [g.asnumpy() for g in gw]


def assert_same(a, b):
    la, xa, wa = a
    lb, xb, wb = b
    np.testing.assert_array_equal(la, lb)
    assert len(xa) == len(xb) and len(wa) == len(wb) > 0
    for p, q in zip(xa + wa, xb + wb):
        np.testing.assert_allclose(p, q, rtol=1e-6, atol=1e-7)


def differs(a, b):
    return any(not np.allclose(p, q, rtol=1e-5, atol=1e-6) for p, q in zip(a[1] + a[2], b[1] + b[2]))


class Parent(nn.Cell):
    """head(block(x)).sum(), the block called plainly or through mindspore.recompute in one of several forms."""

    def __init__(self, form=None, **rc_kwargs):
        super().__init__()
        self.block = Block()
        self.head = nn.Dense(8, 4)
        self.form = form
        self.rc_kwargs = rc_kwargs

    def body(self, x):
        return self.block(x)

    def construct(self, x):
        form, kw = self.form, self.rc_kwargs
        if form is None:
            y = self.block(x)
        elif form == "cell":
            y = ms.recompute(self.block, x, **kw)
        elif form == "function":
            block = self.block

            def f(t):
                return block(t)
            y = ms.recompute(f, x, **kw)
        elif form == "lambda":
            y = ms.recompute(lambda t: self.block(t), x, **kw)
        elif form == "method":
            y = ms.recompute(self.body, x, **kw)
        else:
            raise AssertionError(form)
        return self.head(y).sum()


def make(form=None, ref=None, seed=0, **rc_kwargs):
    ms.set_seed(seed)
    net = Parent(form, **rc_kwargs)
    if ref is not None:
        copy_params(net, ref)
    return net


# --------------------------------------------------------------------------- signatures

def test_signatures_of_both_apis():
    ms_rc = inspect.signature(ms.recompute).parameters
    assert list(ms_rc) == ["block", "args", "use_reentrant", "output_recompute", "early_stop", "context_fn", "kwargs"]
    assert ms_rc["use_reentrant"].default is True
    assert ms_rc["early_stop"].default is True
    assert "save_rng_state" not in ms_rc                    # hidden: taken out of **kwargs
    cell_rc = inspect.signature(nn.Cell.recompute).parameters
    assert all(p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD) for n, p in cell_rc.items() if n != "self")
    assert cell_rc["use_reentrant"].default is True
    pt = inspect.signature(checkpoint).parameters
    assert "preserve_rng_state" not in pt                  # taken out of **kwargs
    assert pt["use_reentrant"].default is None
    assert list(inspect.signature(checkpoint_sequential).parameters) == [
        "functions", "segments", "input", "use_reentrant", "kwargs"]


# --------------------------------------------------------------------------- a. Cell, both forms

@pytest.mark.parametrize("rc_kwargs", [{}, {"use_reentrant": True}, {"use_reentrant": False}],
                         ids=["default", "reentrant", "non_reentrant"])
def test_a_recompute_cell_matches_plain(pynative, rc_kwargs):
    x = x_of()
    ref = make()
    expected = grads(ref, x)
    assert ref.block.calls == 1
    net = make("cell", ref, **rc_kwargs)
    assert_same(grads(net, x), expected)
    assert net.block.calls == 2                            # forward + recompute in backward


# --------------------------------------------------------------------------- b. non-Cell blocks

@pytest.mark.parametrize("form", ["function", "lambda", "method"])
@pytest.mark.parametrize("rc_kwargs", [{}, {"use_reentrant": True}], ids=["default", "reentrant"])
def test_b_reentrant_rejects_non_cell(pynative, form, rc_kwargs):
    net = make(form, **rc_kwargs)
    with pytest.raises(TypeError, match="only support block which inherited from Cell when use_reentrant=True"):
        net(x_of())


@pytest.mark.parametrize("form", ["function", "lambda", "method"])
def test_b_non_reentrant_accepts_non_cell(pynative, form):
    x = x_of()
    ref = make()
    net = make(form, ref, use_reentrant=False)
    assert_same(grads(net, x), grads(ref, x))
    assert net.block.calls == 2


# --------------------------------------------------------------------------- c. RNG flags

def test_c_reentrant_save_rng_state_false_crashes_in_backward(pynative):
    x = x_of()
    net = make("cell", save_rng_state=False)
    net(x)                                                  # forward is fine
    with pytest.raises(RuntimeError, match="Invalid tensor input"):
        grads(net, x)


def test_c_reentrant_any_save_rng_state_kwarg_breaks_backward(pynative):
    # Even the default value, passed explicitly, breaks reentrant backward: the kwarg is popped
    # in forward and the custom bprop then returns one gradient too few.
    x = x_of()
    net = make("cell", save_rng_state=True)
    net(x)
    with pytest.raises(RuntimeError, match="Fn gradient size should larger than next edges size"):
        grads(net, x)


@pytest.mark.parametrize("form", ["cell", "function"])
def test_c_non_reentrant_accepts_save_rng_state_false(pynative, form):
    x = x_of()
    ref = make()
    net = make(form, ref, use_reentrant=False, save_rng_state=False)
    assert_same(grads(net, x), grads(ref, x))


@pytest.mark.parametrize("form,rc_kwargs", [("cell", {}), ("cell", {"use_reentrant": False}),
                                            ("function", {"use_reentrant": False})])
def test_c_preserve_rng_state_is_forwarded_to_the_block(pynative, form, rc_kwargs):
    net = make(form, preserve_rng_state=True, **rc_kwargs)
    with pytest.raises(TypeError, match="unexpected keyword argument 'preserve_rng_state'"):
        net(x_of())


# --------------------------------------------------------------------------- d. densenet closure

def test_d_densenet_closure_splatted_inputs(pynative):
    ms.set_seed(0)
    dense, relu = nn.Dense(12, 4), nn.ReLU()

    def f(*inputs):
        return relu(dense(ops.cat(inputs, 1)))

    xs = [x_of(seed=i) for i in range(3)]

    def run(fn):
        g = ms.value_and_grad(fn, grad_position=(0, 1, 2), weights=dense.trainable_params())
        loss, (gx, gw) = g(*xs)
        return loss.asnumpy(), [t.asnumpy() for t in gx], [t.asnumpy() for t in gw]

    plain = run(lambda *t: f(*t).sum())
    recomputed = run(lambda *t: ms.recompute(f, *t, use_reentrant=False).sum())
    assert len(recomputed[1]) == 3 and all(np.abs(g).sum() > 0 for g in recomputed[1])
    assert_same(recomputed, plain)
    with pytest.raises(TypeError):
        ms.recompute(f, *xs)


# --------------------------------------------------------------------------- e. keyword arguments

class MaskParent(nn.Cell):
    def __init__(self, recompute, **rc_kwargs):
        super().__init__()
        self.block = Block()
        self.head = nn.Dense(8, 4)
        self.use_recompute = recompute
        self.rc_kwargs = rc_kwargs

    def construct(self, x, m):
        if self.use_recompute:
            y = ms.recompute(self.block, x, mask=m, **self.rc_kwargs)
        else:
            y = self.block(x, mask=m)
        return self.head(y).sum()


@pytest.mark.parametrize("rc_kwargs", [{}, {"use_reentrant": False}], ids=["reentrant", "non_reentrant"])
def test_e_kwargs_are_forwarded_to_construct(pynative, rc_kwargs):
    x = x_of()
    m = Tensor(np.array([[1, 0, 1, 0, 1, 0, 1, 0]] * 3, np.float32))
    ms.set_seed(0)
    ref = MaskParent(False)
    expected = grads(ref, x, m, positions=(0, 1))
    ms.set_seed(0)
    net = MaskParent(True, **rc_kwargs)
    copy_params(net, ref)
    got = grads(net, x, m, positions=(0, 1))
    assert_same(got, expected)                              # includes the gradient for the mask
    no_mask = grads(ref, x, Tensor(np.ones((3, 8), np.float32)), positions=(0, 1))
    assert not np.allclose(got[0], no_mask[0])              # the mask really reached construct
    assert net.block.calls == 2


# --------------------------------------------------------------------------- f. dropout

class DropParent(nn.Cell):
    def __init__(self, form=None, functional=False, **rc_kwargs):
        super().__init__()
        self.block = DropBlock(functional)
        self.head = nn.Dense(8, 4)
        self.form = form
        self.rc_kwargs = rc_kwargs
        if form == "Cell.recompute":
            self.block.recompute(**rc_kwargs)

    def construct(self, x):
        if self.form == "recompute":
            y = ms.recompute(self.block, x, **self.rc_kwargs)
        else:
            y = self.block(x)
        return self.head(y).sum()


def drop_step(form=None, functional=False, steps=1, **rc_kwargs):
    """Fresh net built after set_seed(0); `steps` grad steps, each after set_seed(123)."""
    ms.set_seed(0)
    net = DropParent(form, functional, **rc_kwargs)
    net.set_train(True)
    x = x_of((16, 4))
    out = []
    for _ in range(steps):
        ms.set_seed(123)
        out.append(grads(net, x))
    return out


def test_f_nn_dropout_mask_stream_belongs_to_the_primitive(pynative):
    # nn.Dropout's seeds are fixed when it is built; set_seed before a call does not rewind it.
    ms.set_seed(0)
    net = DropParent()
    net.set_train(True)
    x = x_of((16, 4))
    ms.set_seed(123)
    first = net(x).asnumpy()
    ms.set_seed(123)
    second = net(x).asnumpy()
    assert not np.allclose(first, second)
    # A fresh net built after the same seed repeats the masks.
    ms.set_seed(0)
    again = DropParent()
    again.set_train(True)
    ms.set_seed(999)
    np.testing.assert_array_equal(again(x).asnumpy(), first)


@pytest.mark.parametrize("functional", [False, True], ids=["nn.Dropout", "ops.dropout"])
@pytest.mark.parametrize("form,rc_kwargs", [
    ("recompute", {}),
    ("recompute", {"use_reentrant": False, "early_stop": False}),
    ("Cell.recompute", {"use_reentrant": False, "early_stop": False}),
], ids=["recompute-reentrant", "recompute-nonreentrant", "Cell.recompute-nonreentrant"])
def test_f_dropout_under_mindspore_recompute_gets_a_new_mask(pynative, functional, form, rc_kwargs):
    # The recomputation draws a fresh mask: the loss (forward) equals the plain run, the gradients do not.
    plain = drop_step(functional=functional)[0]
    got = drop_step(form, functional, **rc_kwargs)[0]
    np.testing.assert_array_equal(got[0], plain[0])
    assert differs(got, plain)


def test_f_cell_recompute_reentrant_keeps_nn_dropout_mask(pynative):
    # Cell.recompute() (reentrant) is the one form whose gradients equal the plain run with nn.Dropout,
    # on every step of a short training run.
    plain = drop_step(steps=3)
    got = drop_step("Cell.recompute", steps=3)
    assert differs(plain[0], plain[1])                      # the masks do change from step to step
    for a, b in zip(got, plain):
        assert_same(a, b)


def test_f_cell_recompute_reentrant_does_not_keep_functional_dropout_mask(pynative):
    plain = drop_step(functional=True)[0]
    got = drop_step("Cell.recompute", functional=True)[0]
    np.testing.assert_array_equal(got[0], plain[0])
    assert differs(got, plain)


@pytest.mark.parametrize("form", ["recompute", "Cell.recompute"])
def test_f_dropout_non_reentrant_early_stop_crashes(pynative, form):
    with pytest.raises(RuntimeError, match="Stack input_args_info_stack_ is empty"):
        drop_step(form, use_reentrant=False)


# --------------------------------------------------------------------------- g. Cell.recompute

@pytest.mark.parametrize("rc_kwargs", [{}, {"use_reentrant": False}, {"output_recompute": True},
                                       {"mp_comm_recompute": False, "recompute_slice_activation": True}],
                         ids=["default", "non_reentrant", "output_recompute", "parallel_keys"])
def test_g_cell_recompute_matches_and_really_recomputes(pynative, rc_kwargs):
    x = x_of()
    ref = make()
    expected = grads(ref, x)
    net = make(ref=ref)
    hook_calls = []
    assert net.block.recompute(**rc_kwargs) is None
    net.block.register_forward_hook(lambda cell, args, out: hook_calls.append(1))
    assert_same(grads(net, x), expected)
    assert (ref.block.calls, net.block.calls) == (1, 2)    # construct runs twice in one grad step
    assert len(hook_calls) == 1                             # forward hooks see only the first run


def test_g_parent_cell_recompute_recomputes_children(pynative):
    x = x_of()
    ref = make()
    net = make(ref=ref)
    net.recompute()
    assert_same(grads(net, x), grads(ref, x))
    assert net.block.calls == 2


def test_g_cell_recompute_twice(pynative):
    net = make()
    net.block.recompute(use_reentrant=True)
    with pytest.raises(TypeError, match="_recompute_cell' already exists"):
        net.block.recompute(use_reentrant=False)
    # The other order, and the same flag twice, do not raise.
    for first, second in [(False, True), (True, True), (False, False)]:
        other = make()
        other.block.recompute(use_reentrant=first)
        other.block.recompute(use_reentrant=second)


# The arguments each method of frameworks.yaml's `returns_self` is probed with, per framework and object.
RETURNS_SELF_CALLS = {
    "torch": {"apply": (lambda m: None,), "to": (torch.float32,), "to_empty": {"device": "cpu"}, "type": (torch.float32,),
              "requires_grad_": (True,)},
    "mindspore": {"add_flags": (), "add_prim_attr": ("a", 1), "del_prim_attr": ("a",), "set_device": ("CPU",),
                  "set_grad": (), "set_prim_instance_name": ("a",), "set_stage": (0,), "set_train": (),
                  "shard": (((1, 1),),), "to_float": (ms.float16,)},
}


@pytest.mark.parametrize("framework, method", [
    (f, m) for f in ("torch", "mindspore") for m in sorted(mappings.default().frameworks[f].returns_self)])
def test_the_methods_that_return_their_object(framework, method):
    """The translator reads `P.TopK().shard(...)` as the operator and `nn.Linear(2, 2).to(x)` as the layer
    (project.made_by): each method of `returns_self` returns the layer or operator it is called on."""
    if framework == "torch":
        obj = torch.nn.Linear(2, 2)
        if method == "cuda" and not torch.cuda.is_available():
            pytest.skip("no CUDA device: Module.cuda cannot run here")
    else:
        obj = ops.TopK() if hasattr(ops.TopK(), method) else nn.Dense(2, 2)
    args = RETURNS_SELF_CALLS[framework].get(method, ())
    kwargs = args if isinstance(args, dict) else {}
    assert getattr(obj, method)(*(() if kwargs else args), **kwargs) is obj


def test_cell_recompute_returns_none_so_it_is_no_chained_method(pynative):
    assert nn.Dense(2, 2).recompute() is None
    assert "recompute" not in mappings.default().frameworks["mindspore"].returns_self


def test_g_cell_recompute_rejects_unknown_and_positional_arguments(pynative):
    net = make()
    with pytest.raises(ValueError, match="keyword 'foo' is not recognized"):
        net.block.recompute(foo=1)
    with pytest.raises(TypeError):
        make().block.recompute(False)


def test_g_cell_recompute_takes_exactly_the_parallel_keys_the_mappings_name(pynative):
    """mappings/recompute.yaml marks Cell.recompute's auto-parallel options `parallel: true`: the translator takes a
    call passing one for a Cell's, and compat.recompute_on_torch.mark_recompute accepts exactly these."""
    from recompat import mappings

    entry = mappings.default().entry("cell_recompute")
    parallel = [p.mindspore for p in entry.params if p.parallel]
    assert parallel
    for key in parallel:
        make().block.recompute(**{key: True})
    own = set(inspect.signature(nn.Cell.recompute).parameters) - {"self", "kwargs"}
    # the mark row is the parameter of the older spelling, Cell.recompute_(mode), which 2.10 does not have
    named = {p.mindspore for p in entry.params if not p.parallel and p.role != "mark" and p.mindspore
             and not p.mindspore.startswith("*")}
    assert named and named <= own


# --------------------------------------------------------------------------- h. early_stop crash

class ConvBlock(nn.Cell):
    def __init__(self, tail="none"):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, pad_mode="valid", has_bias=True)
        self.relu = nn.ReLU()
        self.w = ms.Parameter(Tensor(np.full((3, 2, 3, 3), 0.1, np.float32)), name="w")
        self.tail = tail

    def construct(self, x):
        y = ops.conv2d(x, self.w) if self.tail == "functional" else self.conv(x)
        if self.tail == "relu":
            y = self.relu(y)
        elif self.tail == "square":
            y = y * y
        return y


class ConvParent(nn.Cell):
    def __init__(self, tail, recompute, **rc_kwargs):
        super().__init__()
        self.block = ConvBlock(tail)
        self.use_recompute = recompute
        self.rc_kwargs = rc_kwargs

    def construct(self, x):
        y = ms.recompute(self.block, x, **self.rc_kwargs) if self.use_recompute else self.block(x)
        return (y * y).sum()


def conv_pair(tail, **rc_kwargs):
    ms.set_seed(0)
    ref = ConvParent(tail, False)
    ms.set_seed(0)
    net = ConvParent(tail, True, **rc_kwargs)
    copy_params(net, ref)
    return ref, net


@pytest.mark.parametrize("tail", ["none", "functional"])
@pytest.mark.parametrize("shape", [(1, 2, 5, 5), (2, 2, 8, 8)])
def test_h_non_reentrant_early_stop_crashes_when_block_ends_in_conv(pynative, tail, shape):
    _, net = conv_pair(tail, use_reentrant=False)
    for _ in range(2):                                      # deterministic, not a one-off
        with pytest.raises(RuntimeError, match="Stack input_args_info_stack_ is empty"):
            grads(net, x_of(shape, seed=1))


@pytest.mark.parametrize("tail,rc_kwargs", [
    ("none", {"use_reentrant": False, "early_stop": False}),
    ("none", {}),                                           # reentrant
    ("relu", {"use_reentrant": False}),                     # a tensor-saving op after the conv
    ("square", {"use_reentrant": False}),
], ids=["early_stop_false", "reentrant", "conv_relu", "conv_square"])
def test_h_conv_block_works_without_the_trigger(pynative, tail, rc_kwargs):
    x = x_of((2, 2, 6, 6), seed=1)
    ref, net = conv_pair(tail, **rc_kwargs)
    assert_same(grads(net, x), grads(ref, x))


# --------------------------------------------------------------------------- i. BatchNorm

class BNBlock(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, pad_mode="valid", has_bias=True)
        self.bn = nn.BatchNorm2d(3)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


class BNParent(nn.Cell):
    def __init__(self, form=None, **rc_kwargs):
        super().__init__()
        self.block = BNBlock()
        self.form = form
        self.rc_kwargs = rc_kwargs
        if form == "Cell.recompute":
            self.block.recompute(**rc_kwargs)

    def construct(self, x):
        y = ms.recompute(self.block, x, **self.rc_kwargs) if self.form == "recompute" else self.block(x)
        return (y * y).sum()


def bn_step(form=None, **rc_kwargs):
    ms.set_seed(0)
    net = BNParent(form, **rc_kwargs)
    net.set_train(True)
    bn = net.block.bn
    m0, v0 = bn.moving_mean.asnumpy().copy(), bn.moving_variance.asnumpy().copy()
    x = x_of((4, 2, 6, 6), seed=2) * 3 + 1
    g = grads(net, x)
    return bn.moving_mean.asnumpy() - m0, bn.moving_variance.asnumpy() - v0, g


@pytest.mark.parametrize("form,rc_kwargs", [
    ("recompute", {}), ("recompute", {"use_reentrant": False}),
    ("Cell.recompute", {}), ("Cell.recompute", {"use_reentrant": False}),
], ids=["recompute-reentrant", "recompute-nonreentrant", "Cell.recompute-reentrant", "Cell.recompute-nonreentrant"])
def test_i_batchnorm_statistics_updated_twice(pynative, form, rc_kwargs):
    dm_plain, dv_plain, g_plain = bn_step()
    dm, dv, g = bn_step(form, **rc_kwargs)
    assert np.all(np.abs(dm_plain) > 1e-3) and np.all(np.abs(dv_plain) > 1e-3)
    momentum = 0.9                                          # MindSpore's default: weight of the old value
    np.testing.assert_allclose(dm / dm_plain, 1 + momentum, rtol=1e-4)
    np.testing.assert_allclose(dv / dv_plain, 1 + momentum, rtol=1e-4)
    assert_same(g, g_plain)                                 # gradients still match


# --------------------------------------------------------------------------- j. SequentialCell

def test_j_sequential_cell_cells_len_slicing(pynative):
    ms.set_seed(0)
    layers = [nn.Dense(4, 4), nn.ReLU(), nn.Dense(4, 4), nn.Tanh(), nn.Dense(4, 2)]
    seq = nn.SequentialCell(layers)
    assert all(a is b for a, b in zip(seq.cells(), layers)) and len(list(seq.cells())) == 5
    assert len(seq) == 5
    part = seq[1:3]
    assert isinstance(part, nn.SequentialCell) and len(part) == 2 and part[0] is layers[1]
    assert seq[-1] is layers[4]
    from collections import OrderedDict
    named = nn.SequentialCell(OrderedDict([("a", nn.Dense(4, 4)), ("b", nn.ReLU())]))
    assert [type(c).__name__ for c in named.cells()] == ["Dense", "ReLU"]


# --------------------------------------------------------------------------- k. GRAPH mode

class GBlock(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 8)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.dense(x))


class GPlain(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = GBlock()
        self.head = nn.Dense(8, 4)

    def construct(self, x):
        return self.head(self.block(x)).sum()


class GRecomputeCell(GPlain):
    def construct(self, x):
        return self.head(ms.recompute(self.block, x)).sum()


class GRecomputeCellNonReentrant(GPlain):
    def construct(self, x):
        return self.head(ms.recompute(self.block, x, use_reentrant=False)).sum()


class GRecomputeMethod(GPlain):
    def body(self, x):
        return self.block(x)

    def construct(self, x):
        return self.head(ms.recompute(self.body, x)).sum()


def _graph_net(cls, ref):
    ms.set_seed(0)
    net = cls()
    copy_params(net, ref)
    return net


def test_k_graph_mode_cell_recompute(graph):
    x = x_of()
    ms.set_seed(0)
    ref = GPlain()
    expected = grads(ref, x)
    for kwargs in ({}, {"use_reentrant": False}):
        net = _graph_net(GPlain, ref)
        assert net.block.recompute(**kwargs) is None
        assert_same(grads(net, x), expected)


@pytest.mark.parametrize("cls", [GRecomputeCell, GRecomputeCellNonReentrant, GRecomputeMethod])
def test_k_graph_mode_recompute_inside_construct(graph, cls):
    # Under GRAPH mode the reentrancy check is skipped: even a bound method with the reentrant default works.
    x = x_of()
    ms.set_seed(0)
    ref = GPlain()
    assert_same(grads(_graph_net(cls, ref), x), grads(ref, x))


def test_k_tensor_transpose_of_two_axes_is_torchs_in_pynative_only(graph):
    # x.transpose(1, 2) swaps two axes in PyNative (torch's meaning); compiled, it is read as a permutation
    class Swap(nn.Cell):
        def construct(self, x):
            return x.transpose(1, 2)

    x = Tensor(np.zeros((2, 3, 4), np.float32))
    with pytest.raises(ValueError, match="the number of axes must be equal to the dimension"):
        Swap()(x)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    assert Swap()(x).shape == (2, 4, 3)


# --------------------------------------------------------------------------- l. torch side

def test_l_torch_checkpoint_without_use_reentrant_warns_and_is_reentrant():
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 4)
    x = torch.randn(3, 4, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = checkpoint(lin, x)
    relevant = [w for w in caught if "use_reentrant parameter should be passed explicitly" in str(w.message)]
    assert len(relevant) == 1 and relevant[0].category is UserWarning
    with pytest.raises(RuntimeError, match="When use_reentrant=True"):
        torch.autograd.grad(y.sum(), x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        no_grad_input = checkpoint(lin, torch.randn(3, 4))
        with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
            checkpoint(lin, x, foo=1)
    assert no_grad_input.requires_grad is False            # reentrant: no input requires grad -> no grad
    assert checkpoint(lin, torch.randn(3, 4), use_reentrant=False).requires_grad is True


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_l_torch_preserve_rng_state(use_reentrant):
    torch.manual_seed(0)
    lin, drop = torch.nn.Linear(4, 8), torch.nn.Dropout(0.5)

    def f(t):
        return drop(lin(t))

    def input_grad(ckpt, **kw):
        torch.manual_seed(1)
        x = torch.randn(16, 4, requires_grad=True)
        torch.manual_seed(5)
        out = checkpoint(f, x, use_reentrant=use_reentrant, **kw) if ckpt else f(x)
        out.sum().backward()
        return x.grad

    plain = input_grad(False)
    assert torch.equal(input_grad(True, preserve_rng_state=True), plain)
    assert torch.equal(input_grad(True), plain)             # default True
    assert not torch.allclose(input_grad(True, preserve_rng_state=False), plain)


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("n,segments,twice", [(5, 2, 2), (4, 2, 2), (6, 3, 4), (5, 3, 2)])
def test_l_torch_checkpoint_sequential_segments(use_reentrant, n, segments, twice):
    torch.manual_seed(0)
    seq = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()) for _ in range(n)])
    pre, post = [0] * n, [0] * n
    for i, layer in enumerate(seq):
        layer.register_forward_pre_hook(lambda mod, args, i=i: pre.__setitem__(i, pre[i] + 1))
        layer.register_forward_hook(lambda mod, args, out, i=i: post.__setitem__(i, post[i] + 1))
    out = checkpoint_sequential(seq, segments, torch.randn(2, 4, requires_grad=True), use_reentrant=use_reentrant)
    out.sum().backward()
    # the first segments - 1 chunks of n // segments layers run twice; the last chunk and the remainder once
    assert pre == [2] * twice + [1] * (n - twice)
    if use_reentrant:
        assert post == pre
    else:
        # early_stop ends the recomputation inside the last layer of each chunk: its forward hook never fires
        size = n // segments
        assert post == [1 if i < twice and (i + 1) % size == 0 else pre[i] for i in range(n)]


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_l_torch_batchnorm_inside_checkpoint_tracks_two_batches(use_reentrant):
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm1d(4)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), bn)
    checkpoint(model, torch.randn(8, 4, requires_grad=True), use_reentrant=use_reentrant).sum().backward()
    assert bn.num_batches_tracked.item() == 2
    plain = torch.nn.BatchNorm1d(4)
    plain(torch.randn(8, 4, requires_grad=True)).sum().backward()
    assert plain.num_batches_tracked.item() == 1


# --------------------------------------------------------------------------- recompat's recompute_sequential

def _recompute_sequential():
    from recompat import mappings
    code = mappings.default().entry("checkpoint_sequential").support_code.replace("{ms}", "mindspore")
    namespace = {"mindspore": ms}
    exec(compile(code, "<recompute_sequential>", "exec"), namespace)
    return namespace["recompute_sequential"]


class CountedLayer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 4)
        self.relu = nn.ReLU()
        self.calls = 0

    def construct(self, x):
        self.calls += 1
        return self.relu(self.dense(x))


class SeqNet(nn.Cell):
    def __init__(self, layers, segments, helper=None):
        super().__init__()
        self.seq = nn.SequentialCell(layers)
        self.segments = segments
        self.helper = helper

    def construct(self, x):
        y = self.helper(self.seq, self.segments, x) if self.helper else self.seq(x)
        return (y * y).sum()


@pytest.mark.parametrize("n,segments,twice", [(5, 2, 2), (6, 3, 4), (5, 3, 2), (5, 1, 0)])
def test_recompute_sequential_helper_matches_torch_segmentation(pynative, n, segments, twice):
    helper = _recompute_sequential()
    x = x_of((2, 4), seed=3)
    ms.set_seed(0)
    ref = SeqNet([CountedLayer() for _ in range(n)], segments)
    expected = grads(ref, x)
    ms.set_seed(0)
    net = SeqNet([CountedLayer() for _ in range(n)], segments, helper)
    copy_params(net, ref)
    assert_same(grads(net, x), expected)
    assert [c.calls for c in ref.seq.cells()] == [1] * n
    assert [c.calls for c in net.seq.cells()] == [2] * twice + [1] * (n - twice)


class ConvLayer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, pad_mode="same", has_bias=True)

    def construct(self, x):
        return self.conv(x)


def test_recompute_sequential_helper_segment_ending_in_conv(pynative):
    helper = _recompute_sequential()
    x = x_of((1, 2, 5, 5), seed=4)
    ms.set_seed(0)
    ref = SeqNet([ConvLayer(), ConvLayer(), nn.ReLU(), ConvLayer()], 2)
    ms.set_seed(0)
    net = SeqNet([ConvLayer(), ConvLayer(), nn.ReLU(), ConvLayer()], 2, helper)
    copy_params(net, ref)
    assert_same(grads(net, x), grads(ref, x))


# --------------------------------------------------------------------------- frameworks.yaml, against the frameworks

def fw_raw(side: str) -> dict:
    """frameworks.yaml's entry for `side`, as written (the maps keep only what the translator reads)."""
    import yaml

    from recompat import mappings

    return yaml.safe_load((mappings.HERE / "frameworks.yaml").read_text())["frameworks"][side]


@pytest.mark.parametrize("side", ["torch", "mindspore"])
def test_frameworks_yaml_names_what_the_frameworks_have(side):
    """Every fact of mappings/frameworks.yaml holds for the installed framework: the model bases are one class,
    containers and layers are model classes, each spelling's import binds its name to its prefix's module."""
    import importlib

    from recompat import mappings

    fw = mappings.default().frameworks[side]

    def resolve(qual):
        parts = qual.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for attr in parts[i:]:
                obj = getattr(obj, attr)
            return obj
        raise AssertionError(qual)

    base = resolve(fw.model_bases[0])
    assert all(resolve(b) is base for b in fw.model_bases)
    for name in fw.containers:
        assert issubclass(resolve(fw.layer_modules[0] + name), base), name
    for s in fw.spellings:
        bound = {}
        exec(s.statement, bound)
        assert bound[s.name] is resolve(s.prefix[:-1]), s
    for prefix in fw.operator_modules:
        assert resolve(prefix + "ReLU")().__class__.__name__ == "ReLU"
    # the Tensor class's public data attributes, all of them: a new release's show up here
    tensor = resolve(fw.tensor_class)
    data = {n for n in dir(tensor) if not n.startswith("_") and not callable(getattr(tensor, n, None))}
    assert set(fw.tensor_attributes) == data
    assert fw.generic_attributes <= fw.tensor_attributes
    # its Tensor's public methods, but those a built-in type has: a new release's show up here; one with no entry
    # is left by hand where the other's lacks it, reported as not proven where it has it
    m = mappings.default()
    other = resolve(m.frameworks["mindspore" if side == "torch" else "torch"].tensor_class)
    builtin = set().union(*(dir(t) for t in (dict, list, str, set, tuple, bytes, int, float, object)))

    def methods(cls):
        return {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n, None))
                and not isinstance(getattr(cls, n, None), type)}
    for name, dtype in fw_raw(side).get("tensor_types", {}).items():   # a tensor of one dtype each
        typed, other_dtype = resolve(name), "int8" if dtype != "int8" else "int16"
        assert isinstance(resolve(side).zeros(1, dtype=resolve(f"{side}.{dtype}")), typed), name
        assert not isinstance(resolve(side).zeros(1, dtype=resolve(f"{side}.{other_dtype}")), typed), name
    assert set(fw.tensor_methods) == methods(tensor) - builtin
    assert m.own_tensor_methods(side) == methods(tensor) - methods(other) - builtin
    assert m.shared_tensor_methods == (methods(tensor) & methods(other)) - builtin
    # a re-exported name is the same object as the public one, for every entry's name it could stand for
    for package, public in fw.reexports:
        found = 0
        for name in {n for e in mappings.default().entries for n in e.names(side)}:
            short = name.rsplit(".", 1)[-1]
            if name.startswith(public + ".") and name.count(".") == public.count(".") + 1 \
                    and hasattr(resolve(package), short):
                assert getattr(resolve(package), short) is resolve(name), name
                found += 1
        assert found, f"{package} re-exports none of {public}'s entries: is it still the package?"
    # the model base class's public methods, all of them
    assert set(fw.model_methods) == {n for n in dir(base) if not n.startswith("_") and callable(getattr(base, n))}


# --------------------------------------------------------------------------- tensor creation (mappings/tensors.yaml)

@pytest.mark.parametrize("fill,torch_dtype,ms_dtype,ms_values", [
    (2.7, torch.float32, ms.int64, [2, 2]),
    (float("-inf"), torch.float32, ms.int64, [-2 ** 63, -2 ** 63]),
    (True, torch.bool, ms.int64, [1, 1]),
    (3, torch.int64, ms.int64, [3, 3]),
])
def test_full_takes_its_dtype_from_the_fill_value_in_torch_only(pynative, fill, torch_dtype, ms_dtype, ms_values):
    """torch_full's fill_dtype: without dtype, MindSpore 2.10's ops.full makes int64 of any Python scalar; torch
    takes the dtype from the fill value's type. The translation writes the dtype out for a float or bool fill."""
    assert torch.full((2,), fill).dtype == torch_dtype
    made = ops.full((2,), fill)
    assert made.dtype == ms_dtype and made.asnumpy().tolist() == ms_values


@pytest.mark.parametrize("make", [
    lambda lib, dt: lib.arange(5), lambda lib, dt: lib.arange(0, 5, 0.5), lambda lib, dt: lib.zeros((2, 3)),
    lambda lib, dt: lib.linspace(0, 1, 5), lambda lib, dt: lib.full_like(lib.ones((2,), dtype=dt), 2.5),
])
def test_creation_functions_infer_the_same_dtypes(pynative, make):
    """tensors.yaml's creation entries carry no dtype where both sides infer the same one."""
    t, m = make(torch, torch.int64), make(ops, ms.int64)
    assert str(t.dtype).rsplit(".", 1)[1] == str(m.dtype).lower()
    np.testing.assert_array_equal(t.numpy(), m.asnumpy())


def test_tensor_from_data_infers_the_same_dtypes(pynative):
    for data in ([1.0, 2.0], [1, 2], [True], 3.5, np.zeros(2), np.zeros(2, np.int32)):
        assert str(torch.tensor(data).dtype).rsplit(".", 1)[1] == str(ms.tensor(data).dtype).lower(), data


# --------------------------------------------------------------------------- compiler markers (mappings/markers.yaml)

def _interface_probe(x: torch.Tensor) -> torch.Tensor:   # TorchScript compiles what a probe scripts from source
    return x * 3


class _InterfaceProbe(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pass


@pytest.mark.parametrize("marker", mappings.default().markers, ids=lambda m: m.api)
def test_a_marker_changes_nothing_in_eager_execution(marker):
    """Each marker is run eagerly and what the translation puts in its place gives the same: identity returns
    (or computes as) what it takes, false is False, subscript is an annotation only."""
    from recompat.reports.signatures import resolve

    m = resolve(marker.api)
    x = torch.tensor([2.0, -1.0])
    if marker.framework == "mindspore":   # compiled to a graph (from PyNative), it computes what it computes eagerly
        def probe(t):
            return ops.exp(t) * 3 - t

        t = Tensor(np.array([2.0, -1.0, 0.5], np.float32))
        assert marker.becomes == "identity"
        np.testing.assert_allclose(m(probe)(t).asnumpy(), probe(t).asnumpy(), rtol=1e-6)
    elif marker.becomes == "false":
        assert m() is False
    elif marker.becomes == "isinstance":
        assert m(x, torch.Tensor) is True and m(3, torch.Tensor) is False and m(x, (int, torch.Tensor)) is True
    elif marker.becomes == "subscript":
        namespace = {"m": m}
        exec("class A:\n    depth: m[int] = 3\n", namespace)
        assert namespace["A"].depth == 3
    elif marker.argument:
        assert m(list[int], [1, 2]) == [1, 2]
    elif marker.takes == "class":
        assert m(_InterfaceProbe) is _InterfaceProbe
    elif marker.takes == "module":
        torch.manual_seed(0)
        layer = torch.nn.Linear(2, 2)
        assert torch.equal(m(layer)(x), layer(x)) and torch.equal(m(_interface_probe)(x), _interface_probe(x))
    elif marker.takes == "name":   # torch.fx.wrap must be called at a module's top level
        namespace = {}
        exec(f"import torch\ndef g(x):\n    return x + 1\nr = {marker.api}('g')\n", namespace)
        assert namespace["r"] == "g" and namespace["g"](1) == 2
    else:
        assert torch.equal(m(_interface_probe)(x), _interface_probe(x))


def test_a_child_inserted_into_a_sequentialcell_is_never_run(pynative):
    """module_add_module's refused_in: torch's Sequential.add_module adds to the sequence forward runs; MindSpore's
    SequentialCell.insert_child_to_cell holds the child but construct skips it."""
    seq = torch.nn.Sequential()
    seq.add_module("twice", torch.nn.Linear(1, 1, bias=False))
    torch.nn.init.constant_(seq.twice.weight, 2.0)
    assert seq(torch.ones(1, 1)).item() == 2.0
    cell = nn.SequentialCell()
    twice = nn.Dense(1, 1, has_bias=False)
    twice.weight.set_data(Tensor(np.full((1, 1), 2.0, np.float32)))
    cell.insert_child_to_cell("twice", twice)
    assert len(cell) == 1 and cell(Tensor(np.ones((1, 1), np.float32))).asnumpy().item() == 1.0


@pytest.mark.parametrize("fill", ["fill_(1.5)", "zero_()", "normal_(0.0, 2.0)", "uniform_(-1.0, 1.0)"])
def test_in_place_fills_have_no_cpu_kernel_copy_does(pynative, fill):
    """recompat.runtime.initialized: MindSpore 2.10's in-place fills fail on CPU (no kernel), copy_ works; a
    Parameter's .data is another Tensor, and only the Parameter has set_data (what initialized uses)."""
    dense = nn.Dense(3, 2)
    with pytest.raises(RuntimeError, match="unregistered|kernelmod"):
        eval(f"dense.weight.data.{fill}")
        dense.weight.asnumpy()
    t = Tensor(np.zeros((2, 3), np.float32))
    t.copy_(Tensor(np.ones((2, 3), np.float32)))
    assert t.asnumpy().tolist() == [[1.0] * 3] * 2
    assert dense.weight.data is not dense.weight and not hasattr(dense.weight.data, "set_data")


@pytest.mark.parametrize("method", ["mul_(2.0)", "add_(1.0)", "sub_(0.5)", "div_(2.0)"])
def test_in_place_arithmetic_writes_nothing_on_cpu(pynative, method):
    """mappings/in_place.yaml (recompat.runtime.assign): MindSpore 2.10's mul_, add_, sub_, div_ run on CPU and
    return the new values, but the tensor keeps its own, a Parameter too: a silent no-op."""
    for t in (Tensor(np.ones((2, 3), np.float32)), ms.Parameter(Tensor(np.ones((2, 3), np.float32)), name="p")):
        returned = eval(f"t.{method}")
        assert np.all(t.asnumpy() == 1.0) and not np.all(returned.asnumpy() == 1.0)


@pytest.mark.parametrize("method", ["clamp_(-0.5, 0.5)", "erfinv_()"])
def test_some_in_place_methods_have_no_cpu_kernel(pynative, method):
    t = Tensor(np.full((2, 3), 0.3, np.float32))
    with pytest.raises(RuntimeError, match="unregistered|kernelmod"):
        eval(f"t.{method}")
        t.asnumpy()


def test_einsum_has_no_cpu_kernel(pynative):
    """mappings/math.yaml's torch_einsum entry: MindSpore 2.10's ops.einsum fails on CPU (so translated code calls
    recompat.runtime.einsum, built from matmul)."""
    a = x_of((2, 3))
    with pytest.raises(RuntimeError, match="Einsum"):
        ops.einsum("ij,jk->ik", a, a.T).asnumpy()


def test_batched_matmul_over_one_element_fails_in_backward(pynative):
    """recompat.runtime.einsum multiplies (..., L, 1) by (..., 1, R) elementwise: MindSpore 2.10's batched matmul
    computes that product but its gradient fails (2-D and longer inner dimensions work)."""
    x, y = x_of((1, 2, 1)), x_of((1, 1, 2))
    assert ops.matmul(x, y).shape == (1, 2, 2)
    with pytest.raises(RuntimeError, match="MatMul"):
        ms.grad(lambda a, b: ops.matmul(a, b).sum(), (0, 1))(x, y)
    assert ms.grad(lambda a, b: ops.matmul(a, b).sum(), (0, 1))(x_of((2, 1)), x_of((1, 2)))[0].shape == (2, 1)


def test_celldict_refuses_a_container_as_a_value(pynative):
    """mappings/nn_modules.yaml's module_dict entry: torch's ModuleDict takes a Sequential as a value, MindSpore
    2.10's CellDict raises TypeError for one (so translated code uses recompat.runtime.ModuleDict)."""
    cells = nn.CellDict({"fc": nn.Dense(2, 2)})
    with pytest.raises(TypeError, match="can not be CellDict, CellList or SequentialCell"):
        cells["blocks"] = nn.SequentialCell([nn.Dense(2, 2)])


def test_private_no_grad_keeps_what_runs_inside_out_of_gradients(pynative):
    """recompat.runtime.no_grad stands on mindspore._no_grad (private in 2.10): inside it, nothing is recorded for
    gradients, as under torch.no_grad; it decorates only once made (a bare @_no_grad fails at the call)."""
    x = Tensor(np.array([1.0, 2.0, 3.0], np.float32))

    def f(v):
        with ms._no_grad():
            y = v * 2
        return (y * v).sum()

    assert ms.grad(f)(x).asnumpy().tolist() == [2.0, 4.0, 6.0]      # torch: y is a constant, d/dv = y
    with pytest.raises(TypeError):
        ms._no_grad(lambda v: v)


def test_roll_has_no_cpu_kernel(pynative):
    """mappings/nn_functions.yaml's torch_roll entry: MindSpore 2.10's ops.roll fails on CPU (recompat.runtime.roll
    is made of slices)."""
    with pytest.raises(RuntimeError, match="Roll"):
        ops.roll(x_of((3, 4)), 1, 0).asnumpy()


def test_he_normal_draws_torchs_kaiming_normal(pynative):
    """mappings/init.yaml's kaiming_normal_ entry: the same fan (fan_out of a (32, 64, 3, 3) weight is 32 * 9) and
    gain, so the same standard deviation sqrt(2 / (1 + a^2) / fan)."""
    from mindspore.common.initializer import HeNormal, initializer

    ms_values = initializer(HeNormal(negative_slope=0.01, mode="fan_out"), (32, 64, 3, 3)).init_data().asnumpy()
    expected = np.sqrt(2.0 / (1 + 0.01 ** 2) / (32 * 9))
    assert abs(ms_values.std() / expected - 1) < 0.02


def test_interpolate_by_scale_factor_needs_recompute_and_floats(pynative):
    """mappings/resize.yaml's converter interpolate_scale: MindSpore 2.10 refuses scale_factor on 4-D input unless
    recompute_scale_factor=True, and an int factor; with both it gives torch's output where in x scale is whole, and
    another where it is not (0.5 of 5)."""
    from mindspore import ops

    x = np.random.default_rng(0).standard_normal((2, 3, 5, 6)).astype(np.float32)
    with pytest.raises(ValueError, match="scale_factor"):
        ops.interpolate(Tensor(x), scale_factor=2.0, mode="bilinear")
    with pytest.raises(TypeError, match="must be float"):
        ops.interpolate(Tensor(x), scale_factor=2, mode="bilinear", recompute_scale_factor=True)
    for factor, agrees in ((2.0, True), (0.5, False)):
        got = ops.interpolate(Tensor(x), scale_factor=factor, mode="bilinear", recompute_scale_factor=True).asnumpy()
        want = torch.nn.functional.interpolate(torch.from_numpy(x), scale_factor=factor, mode="bilinear").numpy()
        assert got.shape == want.shape and (np.abs(got - want).max() < 1e-5) == agrees


def test_leaky_relu_gradient_at_zero_is_a_tie_in_mindspore(pynative):
    """compat/kink_replay.py's TIE segment: MindSpore's leaky_relu is maximum(alpha * x, x), whose gradient at
    exactly 0 is (1 + alpha) / 2; torch's is the slope."""
    x = np.array([-1.0, 0.0, 1.0], np.float32)
    got = ms.grad(lambda t: ops.leaky_relu(t, 0.01).sum())(Tensor(x)).asnumpy()
    t = torch.tensor(x, requires_grad=True)
    torch.nn.functional.leaky_relu(t, 0.01).sum().backward()
    assert got.tolist() == pytest.approx([0.01, 0.505, 1.0]) and t.grad.tolist() == pytest.approx([0.01, 0.01, 1.0])


@pytest.mark.parametrize("layer, attribute", mappings.default().frameworks["mindspore"].one_operator_layers)
def test_the_layers_that_run_one_operator(layer, attribute):
    """`self.softmax.softmax.recompute()` is translated as a mark on the layer `self.softmax`: each layer of
    `one_operator_layers` holds one operator, in that attribute, and no child Cell, and its construct calls that
    operator and nothing else."""
    import ast
    import importlib
    import textwrap
    from mindspore.ops.primitive import Primitive

    module, _, name = layer.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    cell = cls()
    operators = [k for k, v in vars(cell).items() if isinstance(v, Primitive)]
    assert operators == [attribute] and not cell._cells
    construct = ast.parse(textwrap.dedent(inspect.getsource(cls.construct)))
    called = {ast.unparse(n.func) for n in ast.walk(construct) if isinstance(n, ast.Call)}
    assert called == {f"self.{attribute}"}, called


@pytest.mark.parametrize("framework, way, shape", [
    (f, way, shape) for f in ("torch", "mindspore") for way, shape in mappings.default().frameworks[f].children])
def test_how_a_layer_gives_its_child_layers(framework, way, shape):
    """`for name, cell in layer._cells.items(): cell.recompute()` marks a Cell when `layer` is one
    (project.Tree._child_of): each way of `children` gives layers only, in the shape the data says."""
    if framework == "torch":
        parent, base = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU()), torch.nn.Module
    else:
        parent, base = nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()]), nn.Cell
    attribute = way.removesuffix("()")
    given = getattr(parent, attribute)
    given = given() if way.endswith("()") else given
    if shape == "mapping":
        assert isinstance(given, dict)
        layers = list(given.values())
    elif shape == "pairs":
        pairs = list(given)
        assert all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in pairs)
        layers = [layer for _, layer in pairs]
    else:
        layers = list(given)
    assert len(layers) >= 2 and all(isinstance(layer, base) for layer in layers)


@pytest.mark.parametrize("container", sorted(mappings.default().frameworks["mindspore"].sequences))
def test_a_container_of_cells_takes_cells_only(container, pynative):
    """`self.layers.append(layer)` with `self.layers = nn.CellList()` shows that layer is a Cell
    (project.Tree._into_layers): MindSpore refuses anything else."""
    with pytest.raises(TypeError, match="Cell"):
        getattr(nn, container)().append(3)


# A value per parameter name for the probe below.
ALIAS_PROBE_VALUES = {"dim": (1, 2), "keepdim": True}


@pytest.mark.parametrize("entry, param", [
    (e, p) for e in mappings.default().entries for p in e.params if p.mindspore_aliases])
def test_mindspores_older_keyword_names_are_the_same_parameters(entry, param, pynative):
    """`x.mean(axis=(1, 2), keep_dims=True)` is read as `x.mean(dim=(1, 2), keepdim=True)` (Entry.keyword):
    MindSpore gives the same result under each older name of a parameter as under its name."""
    assert entry.rule == "tensor_method", f"{entry.id}: the probe calls tensor methods only"
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32))
    method = entry.mindspore["api"].rsplit(".", 1)[1]
    value = ALIAS_PROBE_VALUES[param.mindspore]
    want = getattr(x, method)(**{param.mindspore: value}).asnumpy()
    for alias in param.mindspore_aliases:
        np.testing.assert_array_equal(getattr(x, method)(**{alias: value}).asnumpy(), want)


def test_the_strings_an_initializer_takes_are_mindspores_own():
    """mappings/init.yaml `strings`: the names MindSpore's initializer() (and a layer's weight_init) takes for a
    class are exactly its alias table's for that class, and every alias of a class with an initializer entry is
    listed (a layer's weight_init='he_uniform' is translated, never passed over)."""
    from mindspore.common import initializer as msinit

    listed = {}
    for e in mappings.default().entries:
        if e.form == "initializer" and e.rule == "api_function":
            for text in e.mindspore.get("strings", ()):
                listed[text] = e.mindspore["api"].rsplit(".", 1)[1]
    aliases = {k: cls.__name__ for k, cls in msinit._INITIALIZER_ALIAS.items()}
    assert {k: aliases.get(k) for k in listed} == listed
    with_entry = set(listed.values())
    assert {k for k, c in aliases.items() if c in with_entry} == set(listed)
    assert all(k == k.lower() for k in aliases), "MindSpore looks the name up in lower case"


# Each layer pair with `attributes`, built on both sides from one torch call (the MindSpore one through
# recompat.runtime.torch_signature): the settings differ from one another where they can, so that a rename to
# the wrong attribute shows.
LAYER_PROBES = {
    "linear": "torch.nn.Linear(6, 4)",
    "conv1d": "torch.nn.Conv1d(4, 6, 3, stride=2, groups=2)",
    "conv2d": "torch.nn.Conv2d(4, 6, 3, stride=2, dilation=3, groups=2)",
    "conv3d": "torch.nn.Conv3d(4, 6, 3, stride=2, groups=2)",
    "convtranspose1d": "torch.nn.ConvTranspose1d(4, 6, 3, stride=2, groups=2)",
    "convtranspose2d": "torch.nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2)",
    "convtranspose3d": "torch.nn.ConvTranspose3d(4, 6, 3, stride=2, groups=2)",
    "batchnorm1d": "torch.nn.BatchNorm1d(6, eps=1e-3, momentum=0.2)",
    "batchnorm2d": "torch.nn.BatchNorm2d(6, eps=1e-3, momentum=0.2)",
    "batchnorm3d": "torch.nn.BatchNorm3d(6, eps=1e-3, momentum=0.2)",
    "layernorm": "torch.nn.LayerNorm(6, eps=1e-3)",
    "groupnorm": "torch.nn.GroupNorm(2, 6, eps=1e-3)",
    "instancenorm1d": "torch.nn.InstanceNorm1d(6, eps=1e-3, affine=True)",
    "instancenorm2d": "torch.nn.InstanceNorm2d(6, eps=1e-3, affine=True)",
    "instancenorm3d": "torch.nn.InstanceNorm3d(6, eps=1e-3, affine=True)",
    "embedding": "torch.nn.Embedding(10, 6)",
}


def _kept(value):
    return round(value, 6) if isinstance(value, float) else value   # BatchNorm's momentum: 1 - (1 - m)


@pytest.mark.parametrize("entry_id", sorted(LAYER_PROBES))
def test_every_attribute_torchs_layer_keeps_is_where_its_entry_says_on_mindspores(pynative, entry_id):
    """mappings/ `attributes`: renamed ones hold torch's value under the MindSpore name; one listed without a
    counterpart is not kept under torch's name with torch's value; every other attribute torch's layer keeps is
    kept under the same name with the same value (what translate --scope model relies on: it renames only these)."""
    import functools

    from recompat.runtime import torch_signature

    entry = mappings.default().layer_pair(entry_id)
    made = LAYER_PROBES[entry_id]
    t = eval(made, {"torch": torch})
    target = functools.reduce(getattr, entry.mindspore["api"].split(".")[1:], ms)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = eval(made.replace(entry.torch["api"], "adapted"), {"adapted": torch_signature(target, entry.torch["api"])})
    missing = object()
    for name, value in vars(t).items():
        if name.startswith("_") or name == "training" or callable(value):
            continue
        place = entry.mindspore_attribute(name)
        kept = functools.reduce(lambda o, a: getattr(o, a, missing), (place or name).split("."), m)
        if place is None:
            assert kept is missing or _kept(kept) != _kept(value), (name, value, kept)
        else:
            assert kept is not missing and _kept(kept) == _kept(value), (name, place, value, kept)


def test_the_probes_cover_every_layer_pair_with_attributes():
    listed = {e.id for e in mappings.default().layer_pairs if e.attributes}
    assert listed <= set(LAYER_PROBES), listed - set(LAYER_PROBES)


def test_a_one_element_tensor_takes_a_format_spec_in_torch_and_not_in_mindspore(pynative):
    """Why a translated f"{loss:.4f}" formats float(loss) (RC346): torch formats a one-element tensor as its
    number, MindSpore 2.10 raises; float() of either formats alike."""
    assert f"{torch.tensor(2.5):.3f}" == "2.500"
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{Tensor(2.5):.3f}"
    assert f"{float(Tensor(2.5)):.3f}" == f"{float(torch.tensor(2.5)):.3f}" == "2.500"


# --------------------------------------------------------------------------- MindSpore's step (translator/steps_to_torch.py)

def test_value_and_grad_of_several_outputs_without_has_aux_differentiates_their_sum(pynative):
    """Why steps_to_torch refuses `value_and_grad(f, None, w)` of an f returning (loss, out): MindSpore's gradients
    are those of loss + out.sum(), not of the loss torch's backward() would be called on; with has_aux=True they
    are the loss's alone."""
    dense = nn.Dense(3, 2)
    x = Tensor(np.array([[0.5, -1.0, 2.0]], np.float32))

    def loss_and_out(x):
        out = dense(x)
        return (out ** 2).sum(), out

    def loss_only(x):
        return (dense(x) ** 2).sum()

    def summed(x):
        loss, out = loss_and_out(x)
        return loss + out.sum()

    def grads(fn, **kwargs):
        return [g.asnumpy() for g in ms.value_and_grad(fn, None, dense.trainable_params(), **kwargs)(x)[1]]

    for got, want in zip(grads(loss_and_out), grads(summed)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    for got, want in zip(grads(loss_and_out, has_aux=True), grads(loss_only)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert not np.allclose(grads(loss_and_out)[1], grads(loss_only)[1])
