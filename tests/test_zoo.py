"""The paired model zoo (recompat.compat.zoo): every pair builds, runs, and holds what it says.

For every pair:
  * each twin builds with recompute on and off, in every form it lists, and runs forward + backward;
  * within each framework, recompute on vs off gives equal outputs and gradients (1e-6) -- torch for each torch
    form, MindSpore in PYNATIVE mode for each form and in GRAPH mode for the forms measured to compile on CPU;
    where a pair records a known difference (dropout masks), the test pins that the loss is equal and the
    gradients are not; BatchNorm statistics of the layers a pair lists in ``updated_twice`` drift exactly
    (2 - momentum) times a plain step, every other buffer is equal;
  * torch and MindSpore twins with the same weights (copied by path here; the real transfer_weights lives in
    compat/weights.py) agree within the pair's tolerance (rtol 1e-4 / atol 1e-5): outputs, input gradients,
    parameter gradients, and buffers after the step -- with recompute off, and with recompute on.

The backward is seeded with a fixed random cotangent per output (not ones). Every test sets the MindSpore mode
it needs (the context is process-global; tests run under pytest-xdist).
"""
from __future__ import annotations

import collections
import contextlib
import functools
import os
import warnings

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest

import mindspore as ms
import torch
from mindspore import Tensor
from mindspore import nn as msnn

from recompat.compat import zoo
from recompat.compat.mindspore import RecomputeRNGWarning

pytestmark = pytest.mark.runtime

SEED = 0
EXACT = dict(rtol=1e-6, atol=1e-6)
REQUIRED = {"seed_fc", "doc_conv_relu", "resnet_bn", "transformer", "dropout", "deep_sequential",
            "densenet_closure", "nested", "kwargs_tuple", "frozen_input"}


@pytest.fixture
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


@pytest.fixture
def graph(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)              # a failed compile writes rank_0/om/analyze_fail.ir into the cwd
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


@pytest.fixture(autouse=True)
def rng_warnings_are_errors():
    # a pair whose forms warn about dropout masks would be a zoo bug
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecomputeRNGWarning)
        yield


# --------------------------------------------------------------------------- names and weights

_MS_TO_TORCH_LEAF = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean",
                     "moving_variance": "running_var", "embedding_table": "weight"}


def torch_name(ms_name: str) -> str:
    head, _, leaf = ms_name.rpartition(".")
    leaf = _MS_TO_TORCH_LEAF.get(leaf, leaf)
    return f"{head}.{leaf}" if head else leaf


def copy_torch_to_ms(tmodel, cell):
    """Local stand-in for transfer_weights: every MindSpore parameter from the torch tensor at the same path."""
    state = {k: v for k, v in tmodel.state_dict().items() if not k.endswith("num_batches_tracked")}
    used = set()
    for name, param in cell.parameters_and_names():
        key = torch_name(name)
        assert key in state, f"MindSpore {name} has no torch counterpart {key}"
        value = state[key].detach().cpu().numpy()
        assert tuple(param.shape) == value.shape, (name, param.shape, value.shape)
        param.set_data(Tensor(value.copy()))
        used.add(key)
    assert used == set(state), f"torch tensors not transferred: {sorted(set(state) - used)}"


def copy_ms_to_ms(dst, src):
    src_params = dict(src.parameters_and_names())
    dst_params = dict(dst.parameters_and_names())
    assert set(src_params) == set(dst_params)
    for name, param in dst_params.items():
        param.set_data(src_params[name].data.copy())


# --------------------------------------------------------------------------- runs

def flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@functools.lru_cache(maxsize=None)
def output_shapes(name):
    pair = zoo.get(name)
    model = pair.build_torch(recompute=False, seed=SEED)
    inputs = [torch.from_numpy(a) for a in pair.make_inputs(SEED)]
    with torch.no_grad():
        return tuple(tuple(o.shape) for o in flat(model(*inputs)))


def cotangents(name):
    rng = np.random.default_rng(1234)
    return [rng.standard_normal(s).astype(np.float32) for s in output_shapes(name)]


def run_torch(pair, model, arrays):
    grad_idx = pair.differentiable(arrays)
    inputs = [torch.tensor(a, requires_grad=i in grad_idx) for i, a in enumerate(arrays)]
    before = {k: v.detach().clone() for k, v in model.named_buffers()}
    torch.manual_seed(SEED + 7)
    outs = flat(model(*inputs))
    loss = sum((o * torch.from_numpy(c)).sum() for o, c in zip(outs, cotangents(pair.name)))
    loss.backward()
    return {
        "outputs": [o.detach().numpy() for o in outs],
        "input_grads": [inputs[i].grad.numpy() for i in grad_idx],
        "param_grads": {n: (p.grad.numpy() if p.grad is not None else np.zeros(tuple(p.shape), np.float32))
                        for n, p in model.named_parameters()},
        "buffers": {n: b.detach().numpy().copy() for n, b in model.named_buffers()},
        "buffers_before": {n: b.numpy() for n, b in before.items()},
    }


class _Loss(msnn.Cell):
    """(sum_i (out_i * cot_i).sum(), *outputs) -- compiles in GRAPH mode too."""

    def __init__(self, net, cots):
        super().__init__(auto_prefix=False)     # auto_prefix would rename the net's Parameters
        self.net = net
        self.cots = tuple(Tensor(c) for c in cots)
        self.single = len(cots) == 1
        self.n = len(cots)

    def construct(self, *inputs):
        out = self.net(*inputs)
        if self.single:
            return (out * self.cots[0]).sum(), out
        loss = (out[0] * self.cots[0]).sum()
        for i in range(1, self.n):
            loss = loss + (out[i] * self.cots[i]).sum()
        return (loss,) + tuple(out)


def run_mindspore(pair, cell, arrays):
    grad_idx = pair.differentiable(arrays)
    inputs = [Tensor(a) for a in arrays]
    names = {id(p): n for n, p in cell.parameters_and_names()}
    before = {n: p.asnumpy().copy() for n, p in cell.parameters_and_names() if not p.requires_grad}
    weights = cell.trainable_params()
    fn = ms.value_and_grad(_Loss(cell, cotangents(pair.name)), grad_position=tuple(grad_idx) or None,
                           weights=weights, has_aux=True)
    ms.set_seed(SEED + 7)
    values, grads = fn(*inputs)
    if grad_idx:
        input_grads, weight_grads = grads
        input_grads = input_grads if isinstance(input_grads, tuple) else (input_grads,)
    else:
        input_grads, weight_grads = (), grads
    return {
        "outputs": [v.asnumpy() for v in values[1:]],
        "input_grads": [g.asnumpy() for g in input_grads],
        "param_grads": {names[id(p)]: g.asnumpy() for p, g in zip(weights, weight_grads)},
        "buffers": {n: p.asnumpy().copy() for n, p in cell.parameters_and_names() if not p.requires_grad},
        "buffers_before": before,
    }


# --------------------------------------------------------------------------- checks

def assert_close(a, b, what, rtol, atol):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


def assert_same_run(a, b, rtol, atol, names=lambda n: n):
    assert len(a["outputs"]) == len(b["outputs"]) > 0
    for i, (x, y) in enumerate(zip(a["outputs"], b["outputs"])):
        assert_close(x, y, f"output[{i}]", rtol, atol)
    assert len(a["input_grads"]) == len(b["input_grads"])
    for i, (x, y) in enumerate(zip(a["input_grads"], b["input_grads"])):
        assert_close(x, y, f"input grad [{i}]", rtol, atol)
    b_grads = {names(n): g for n, g in b["param_grads"].items()}
    assert set(a["param_grads"]) == set(b_grads), (sorted(a["param_grads"]), sorted(b_grads))
    for n, g in a["param_grads"].items():
        assert_close(g, b_grads[n], f"grad of {n}", rtol, atol)


def grads_differ(a, b):
    pairs = list(zip(a["input_grads"], b["input_grads"])) + [(g, b["param_grads"][n]) for n, g in
                                                              a["param_grads"].items()]
    return any(not np.allclose(x, y, rtol=1e-5, atol=1e-6) for x, y in pairs)


def module_of(buffer_name):
    return buffer_name.rpartition(".")[0]


def check_buffers(pair, plain, recomputed, names=lambda n: n):
    """Buffers of the layers in pair.updated_twice drift (2 - momentum) x a plain step; every other is equal."""
    twice = set(pair.updated_twice)
    doubled = set()
    for name, after in recomputed["buffers"].items():
        tname = names(name)
        if tname.endswith("num_batches_tracked"):
            expected = 2 if module_of(tname) in twice else 1
            assert int(after) == expected, (tname, int(after))
            continue
        drift_on = after - recomputed["buffers_before"][name]
        drift_off = plain["buffers"][name] - plain["buffers_before"][name]
        if module_of(tname) in twice:
            assert np.all(np.abs(drift_off) > 1e-4), tname
            np.testing.assert_allclose(drift_on / drift_off, 1.9, rtol=1e-3, err_msg=tname)
            doubled.add(module_of(tname))
        else:
            np.testing.assert_allclose(after, plain["buffers"][name], **EXACT, err_msg=tname)
    assert doubled == twice, (sorted(doubled), sorted(twice))


# --------------------------------------------------------------------------- registry

def test_registry_holds_the_required_pairs():
    names = zoo.names()
    assert REQUIRED <= set(names), sorted(REQUIRED - set(names))
    assert len(set(names)) == len(names)
    for pair in zoo.pairs():
        assert pair.description and pair.mindspore_forms and pair.torch_forms
        assert set(pair.mindspore_forms) <= set(zoo.MINDSPORE_FORMS)
        assert set(pair.torch_forms) <= set(zoo.TORCH_FORMS)
        assert set(pair.graph_forms) <= set(pair.mindspore_forms)
        assert pair.graph_forms or pair.graph_skip, pair.name
        for key in pair.known_differences:
            side, _, form = key.partition(":")
            assert form in (pair.mindspore_forms if side == "mindspore" else pair.torch_forms), key
        arrays = pair.make_inputs(SEED)
        assert arrays and all(a.dtype in (np.float32, np.int64) for a in arrays), pair.name
        np.testing.assert_array_equal(arrays[0], pair.make_inputs(SEED)[0])
    assert zoo.get("dropout").cross_mode_training is False
    with pytest.raises(KeyError, match="no pair named"):
        zoo.get("nope")


def test_required_forms_are_present():
    assert "cell" in zoo.get("seed_fc").mindspore_forms
    assert "function" in zoo.get("doc_conv_relu").mindspore_forms
    assert "cell" in zoo.get("resnet_bn").mindspore_forms
    assert "compat" in zoo.get("deep_sequential").mindspore_forms
    tm = zoo.get("transformer").build_torch(recompute=True)
    assert tm.gradient_checkpointing is True
    assert zoo.get("transformer").build_torch(recompute=False).gradient_checkpointing is False


def test_twins_have_the_same_parameter_paths(pynative):
    for pair in zoo.pairs():
        tnames = set(pair.build_torch(recompute=True).state_dict())
        tnames = {n for n in tnames if not n.endswith("num_batches_tracked")}
        for form in pair.mindspore_forms:
            mnames = {torch_name(n) for n, _ in pair.build_mindspore(recompute=True, form=form).parameters_and_names()}
            assert mnames == tnames, (pair.name, form, sorted(mnames ^ tnames))


# --------------------------------------------------------------------------- within torch

TORCH_CASES = [(p.name, f) for p in zoo.pairs() for f in p.torch_forms]


@pytest.mark.parametrize("name,form", TORCH_CASES, ids=[f"{n}-{f}" for n, f in TORCH_CASES])
def test_torch_recompute_matches_plain(name, form):
    pair = zoo.get(name)
    arrays = pair.make_inputs(SEED)
    plain_model = pair.build_torch(recompute=False, seed=SEED)
    model = pair.build_torch(recompute=True, form=form, seed=SEED)
    model.load_state_dict(plain_model.state_dict())
    assert [n for n, _ in model.named_parameters()] == [n for n, _ in plain_model.named_parameters()]
    plain = run_torch(pair, plain_model, arrays)
    recomputed = run_torch(pair, model, arrays)
    if f"torch:{form}" in pair.known_differences:
        assert grads_differ(plain, recomputed)
        return
    assert_same_run(plain, recomputed, **EXACT)
    check_buffers(pair, plain, recomputed)


# --------------------------------------------------------------------------- within MindSpore

def ms_pair_runs(pair, form, arrays):
    ms.set_seed(SEED)
    plain_cell = pair.build_mindspore(recompute=False, form=form, seed=SEED)
    cell = pair.build_mindspore(recompute=True, form=form, seed=SEED)
    copy_ms_to_ms(cell, plain_cell)
    plain = run_mindspore(pair, plain_cell, arrays)
    ms_twin = run_mindspore(pair, cell, arrays)
    return plain, ms_twin


def check_ms_pair(pair, form, plain, recomputed, graph=False):
    reason = None if graph else pair.known_differences.get(f"mindspore:{form}")   # PyNative differences
    if reason is not None:
        # pinned: the forward (loss, outputs) is the plain run's, the gradients are not
        for x, y in zip(plain["outputs"], recomputed["outputs"]):
            np.testing.assert_allclose(x, y, **EXACT)
        assert grads_differ(plain, recomputed), f"{pair.name}/{form} now matches: {reason}"
        return
    assert_same_run(plain, recomputed, **EXACT)
    check_buffers(pair, plain, recomputed, names=torch_name)


MS_CASES = [(p.name, f) for p in zoo.pairs() for f in p.mindspore_forms]


@pytest.mark.parametrize("name,form", MS_CASES, ids=[f"{n}-{f}" for n, f in MS_CASES])
def test_mindspore_pynative_recompute_matches_plain(pynative, name, form):
    pair = zoo.get(name)
    arrays = pair.make_inputs(SEED)
    plain, recomputed = ms_pair_runs(pair, form, arrays)
    check_ms_pair(pair, form, plain, recomputed)


GRAPH_CASES = [(p.name, f, "") for p in zoo.pairs() for f in p.graph_forms] + \
              [(p.name, None, p.graph_skip) for p in zoo.pairs() if not p.graph_forms]


@pytest.mark.parametrize("name,form,skip", GRAPH_CASES, ids=[f"{n}-{f or 'none'}" for n, f, _ in GRAPH_CASES])
def test_mindspore_graph_recompute_matches_plain(graph, name, form, skip):
    if form is None:
        pytest.skip(f"{name}: {skip}")
    pair = zoo.get(name)
    arrays = pair.make_inputs(SEED)
    plain, recomputed = ms_pair_runs(pair, form, arrays)
    check_ms_pair(pair, form, plain, recomputed, graph=True)


_CLOSURE_IN_GRAPH = """
import mindspore as ms
from recompat.compat import zoo


class Loss(ms.nn.Cell):
    def __init__(self, net):
        super().__init__(auto_prefix=False)
        self.net = net

    def construct(self, x):
        return self.net(x).sum()


ms.set_context(mode=ms.GRAPH_MODE)
pair = zoo.get("densenet_closure")
cell = pair.build_mindspore(recompute=RECOMPUTE, form="function")
x = ms.Tensor(pair.make_inputs(0)[0])
ms.value_and_grad(Loss(cell), grad_position=0, weights=cell.trainable_params())(x)
print("ran", flush=True)
"""


@pytest.mark.parametrize("recompute", [False, True], ids=["plain", "recompute"])
def test_graph_mode_recompute_of_a_closure_kills_the_process(tmp_path, recompute):
    # densenet_closure's graph_skip: mindspore.recompute(closure, *prev) compiled in GRAPH mode -> SIGSEGV.
    import signal
    import subprocess
    import sys
    script = tmp_path / "closure_in_graph.py"        # GRAPH mode parses source: no `python -c`
    script.write_text(_CLOSURE_IN_GRAPH.replace("RECOMPUTE", str(recompute)))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env={**os.environ, "GLOG_v": "3"}, capture_output=True, text=True,
                          timeout=240)
    if recompute:
        assert proc.returncode == -signal.SIGSEGV and "ran" not in proc.stdout, (proc.returncode, proc.stderr[-2000:])
    else:
        assert proc.returncode == 0 and "ran" in proc.stdout, proc.stderr[-2000:]


# --------------------------------------------------------------------------- recompute really happens

@contextlib.contextmanager
def counting(classes, attr):
    """Count calls of `attr` (forward / construct) per instance, for every class given that defines it."""
    counts = collections.Counter()
    saved = []
    for cls in classes:
        original = cls.__dict__.get(attr)
        if original is None:
            continue

        @functools.wraps(original)
        def wrapper(self, *args, __original=original, **kwargs):
            counts[id(self)] += 1
            return __original(self, *args, **kwargs)

        saved.append((cls, original))
        setattr(cls, attr, wrapper)
    try:
        yield counts
    finally:
        for cls, original in saved:
            setattr(cls, attr, original)


def _classes(modules, base):
    return {k for m in modules for k in type(m).__mro__ if issubclass(k, base) and k is not base}


def check_counts(plain, recomputed):
    """Some module/cell runs its forward more often with recompute on (twice; three times inside nested regions),
    and the model as a whole runs more forwards. (checkpoint_sequential calls the Sequential's children directly,
    so the container itself runs fewer times; Cell.recompute() adds `_recompute_cell` children.)"""
    common = set(plain) & set(recomputed)
    more = sorted(p for p in common if recomputed[p] > plain[p])
    assert more, f"recompute on ran no forward twice: {recomputed}"
    assert all(recomputed[p] <= 3 * max(plain[p], 1) for p in common), recomputed
    assert sum(recomputed.values()) > sum(plain.values())
    return more


@pytest.mark.parametrize("name,form", TORCH_CASES, ids=[f"{n}-{f}" for n, f in TORCH_CASES])
def test_torch_recompute_really_runs_forward_twice(name, form):
    pair = zoo.get(name)
    arrays = pair.make_inputs(SEED)
    classes = _classes(pair.build_torch(recompute=True, form=form).modules(), torch.nn.Module)
    by_path = []
    for recompute in (False, True):
        with counting(classes, "forward") as counts:      # patched before building: marks capture the wrapper
            model = pair.build_torch(recompute=recompute, form=form, seed=SEED)
            run_torch(pair, model, arrays)
        by_path.append({p: counts[id(m)] for p, m in model.named_modules()})
    check_counts(*by_path)


@pytest.mark.parametrize("name,form", MS_CASES, ids=[f"{n}-{f}" for n, f in MS_CASES])
def test_mindspore_recompute_really_runs_construct_twice(pynative, name, form):
    pair = zoo.get(name)
    arrays = pair.make_inputs(SEED)
    classes = _classes([c for _, c in pair.build_mindspore(recompute=True, form=form).cells_and_names()], msnn.Cell)
    by_path = []
    for recompute in (False, True):
        with counting(classes, "construct") as counts:
            cell = pair.build_mindspore(recompute=recompute, form=form, seed=SEED)
            run_mindspore(pair, cell, arrays)
        by_path.append({p: counts[id(c)] for p, c in cell.cells_and_names()})
    check_counts(*by_path)


# --------------------------------------------------------------------------- torch vs MindSpore

CROSS_CASES = [(p.name, rc) for p in zoo.pairs() for rc in (False, True)]


@pytest.mark.parametrize("name,recompute", CROSS_CASES,
                         ids=[f"{n}-{'recompute' if rc else 'plain'}" for n, rc in CROSS_CASES])
def test_torch_and_mindspore_twins_agree(pynative, name, recompute):
    pair = zoo.get(name)
    rtol, atol = pair.tolerance
    arrays = pair.make_inputs(SEED)
    training = pair.cross_mode_training
    tmodel = pair.build_torch(recompute=recompute, seed=SEED, training=training)
    form = next((f for f in pair.mindspore_forms if f"mindspore:{f}" not in pair.known_differences))
    cell = pair.build_mindspore(recompute=recompute, form=form, seed=SEED, training=training)
    copy_torch_to_ms(tmodel, cell)
    t = run_torch(pair, tmodel, arrays)
    m = run_mindspore(pair, cell, arrays)
    assert_same_run(t, m, rtol, atol, names=torch_name)
    for name_ms, value in m["buffers"].items():
        assert_close(value, t["buffers"][torch_name(name_ms)], f"buffer {name_ms}", rtol, atol)
