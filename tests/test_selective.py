"""Selective activation checkpointing on MindSpore (recompat.compat.selective) and its op data (selective.yaml)."""
from __future__ import annotations

import functools
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import mindspore
import torch
from mindspore import mint, nn, ops as msops

from recompat import mappings
from recompat.compat import selective
from recompat.compat.checkpoint_on_mindspore import checkpoint
from recompat.compat.dispatch_log import OpsRun
from recompat.compat.memory import SavedTensors
from recompat.compat.selective import CheckpointPolicy, Op, create_selective_checkpoint_contexts, ops

pytestmark = pytest.mark.runtime

DATA = mappings.default().selective
PROBES = [pytest.param(entry, probe, id=f"{entry.torch}-{i}")
          for entry in DATA.ops for i, probe in enumerate(entry.probes)]


def _arrays():
    rng = np.random.default_rng(0)
    shapes = {"x": (2, 3, 8), "x2": (3, 8), "w": (4, 8), "wt": (8, 4), "b": (4,), "q": (2, 2, 3, 4)}
    return {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}


def _seen_by_policy(run) -> list[Op]:
    """The ops a policy is shown while `run()` runs under the forward context."""
    seen = []

    def policy(ctx, op, *args, **kwargs):
        seen.append(op)
        return CheckpointPolicy.PREFER_RECOMPUTE
    forward, _ = create_selective_checkpoint_contexts(policy)
    with forward:
        run()
    return seen


@pytest.mark.parametrize("entry,probe", PROBES)
def test_probe_runs_the_torch_op_on_torch_and_shows_it_on_mindspore(entry, probe):
    arrays = _arrays()
    with OpsRun("torch") as ran:
        eval(probe["torch"], {"torch": torch}, {k: torch.tensor(v) for k, v in arrays.items()})
    assert entry.torch in ran.names, f"{probe['torch']} ran {ran.names} on torch, not {entry.torch}"
    scope = {"mindspore": mindspore, "nn": nn, "ops": msops, "mint": mint,
             **{k: mindspore.Tensor(v) for k, v in arrays.items()}}
    seen = _seen_by_policy(lambda: eval(probe["mindspore"], scope))
    assert Op(entry.torch) in seen, f"{probe['mindspore']} showed a policy {seen}, not {entry.torch}"


CUDA_OPS = Path(__file__).parent / "data" / "cuda_ops"      # record.py's probes and what a GPU machine recorded
CUDA_RECORDED = json.loads((CUDA_OPS / "recorded.json").read_text(encoding="utf-8"))


def test_the_cuda_recording_covers_the_probes_of_the_data():
    probes = json.loads((CUDA_OPS / "probes.json").read_text(encoding="utf-8"))
    of_data = [(f"{e.torch}-{i}", p["torch"], e.torch) for e in DATA.ops for i, p in enumerate(e.probes)]
    assert [(p["id"], p["torch"], p["expect"]) for p in probes if not p["id"].endswith("-cuda")] == of_data, \
        "selective.yaml's probes changed: update probes.json and record again on a GPU (tests/data/cuda_ops/record.py)"
    cuda_only = {p["expect"] for p in probes if p["id"].endswith("-cuda")}
    assert cuda_only <= {e.torch for e in DATA.ops if e.unprobed}, "a CUDA probe for an op the CPU probes cover"
    assert [p["id"] for p in CUDA_RECORDED["probes"]] == [p["id"] for p in probes]
    assert CUDA_RECORDED["cuda"] and "cpu" not in CUDA_RECORDED["device"].lower()


@pytest.mark.parametrize("probe", CUDA_RECORDED["probes"], ids=lambda p: p["id"])
def test_on_cuda_each_probe_dispatches_its_torch_op_and_no_composite(probe):
    """Recorded on a GPU machine (torch with CUDA there; see recorded.json for its versions)."""
    assert "error" not in probe, probe.get("error")
    assert probe["expect"] in probe["forward"], f"{probe['torch']} ran {probe['forward']} on CUDA"
    ran = set(probe["forward"]) | set(probe["backward"])
    assert not ran & set(DATA.composite), f"a composite reached CUDA dispatch: {ran & set(DATA.composite)}"
    for composite, runs_as in DATA.composite.items():
        if composite.split(".")[1] + "(" in probe["torch"]:             # the probe calls it: linear(, matmul(
            assert ran & set(runs_as), f"{composite} ran as {sorted(ran)}, none of {runs_as}"


def test_every_mindspore_op_the_data_names_is_a_mindspore_primitive():
    """A misspelt name would match no op, silently: the unprobed entries (Ascend kernels, collectives) included."""
    import importlib

    modules = (msops, msops.operations, importlib.import_module("mindspore.ops.auto_generate"))
    named = {w.op for e in DATA.ops for w in e.mindspore} | {w.then for e in DATA.ops for w in e.mindspore if w.then}
    named |= set(DATA.ignored)
    assert named and not [n for n in sorted(named) if not any(hasattr(m, n) for m in modules)]


@pytest.mark.parametrize("name", sorted(DATA.composite))
def test_composite_torch_ops_never_reach_dispatch(name):
    x, w, b = torch.randn(2, 3, 8), torch.randn(4, 8), torch.randn(4)
    with OpsRun("torch") as ran:
        torch.nn.functional.linear(x, w, b)
        torch.nn.functional.linear(x, w)
        torch.matmul(x, x.transpose(1, 2))
        torch.nn.functional.scaled_dot_product_attention(x, x, x)
    assert name not in ran.names
    assert set(DATA.composite[name]) & set(ran.names), f"none of {DATA.composite[name]} in {ran.names}"


class _Mlp(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Dense(8, 16), nn.Dense(16, 8)

    def construct(self, x):
        return self.fc2(msops.relu(self.fc1(x)))


class _Net(nn.Cell):
    def __init__(self, block, context_fn=None, shim=False):
        super().__init__()
        self.block, self.context_fn, self.shim = block, context_fn, shim

    def construct(self, x):
        if self.context_fn is None:
            return self.block(x)
        if self.shim:
            return checkpoint(self.block, x, use_reentrant=False, context_fn=self.context_fn)
        return mindspore.recompute(self.block, x, use_reentrant=False, context_fn=self.context_fn, early_stop=False)


def _grads_and_ops(context_fn, shim=False):
    mindspore.set_seed(0)
    net = _Net(_Mlp(), context_fn, shim)
    x = mindspore.Tensor(np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32))
    grad = mindspore.value_and_grad(lambda x: net(x).sum(), grad_position=0, weights=net.trainable_params())
    with OpsRun("mindspore") as ran:
        _, grads = grad(x)
    flat = [grads[0], *grads[1]]
    return [g.asnumpy() for g in flat], ran.counts


def _contexts(policy):
    return functools.partial(create_selective_checkpoint_contexts, policy)


@pytest.mark.parametrize("shim", [False, True], ids=["mindspore.recompute", "compat.checkpoint"])
def test_saved_pair_is_not_run_again_and_gradients_equal_no_checkpointing(shim):
    plain, plain_ran = _grads_and_ops(None)
    saved, saved_ran = _grads_and_ops(_contexts([ops.aten.addmm.default]), shim)
    whole, whole_ran = _grads_and_ops(_contexts([]), shim)
    for a, b in zip(plain, saved):
        np.testing.assert_array_equal(a, b)
    # MatMul then BiasAdd is torch's addmm: saved whole, neither runs again; ReLU is recomputed
    assert saved_ran["MatMul"] == plain_ran["MatMul"] and saved_ran["BiasAdd"] == plain_ran["BiasAdd"]
    assert saved_ran["ReLU"] == plain_ran["ReLU"] + 1
    assert whole_ran["MatMul"] == plain_ran["MatMul"] + 2 and whole_ran["BiasAdd"] == plain_ran["BiasAdd"] + 2


def test_policy_sees_torch_ops_and_bools_and_offload_mean_what_they_mean_in_torch():
    seen = []

    def policy(ctx, op, *args, **kwargs):
        seen.append((op, ctx.is_recompute, ctx.op_output is not None))
        if op == ops.aten.relu.default:
            return True                                   # a bool: MUST_SAVE
        return CheckpointPolicy.MUST_CPU_OFFLOAD          # not a save: recomputed, as in torch's eager mode
    plain, plain_ran = _grads_and_ops(None)
    grads, ran = _grads_and_ops(_contexts(policy))
    for a, b in zip(plain, grads):
        np.testing.assert_array_equal(a, b)
    assert [op for op, _, _ in seen] == [ops.aten.addmm.default, ops.aten.relu.default, ops.aten.addmm.default]
    assert all(not recompute and has_output for _, recompute, has_output in seen)
    assert ran["ReLU"] == plain_ran["ReLU"] and ran["MatMul"] == plain_ran["MatMul"] + 2


def test_bad_policies_raise_torchs_errors():
    with pytest.raises(ValueError, match=r"OpOverload.*ops\.aten\.mm\.default"):
        create_selective_checkpoint_contexts([ops.aten.mm])
    with pytest.raises(ValueError, match="Expected op in `op_list` to be an OpOverload but got: MatMul"):
        create_selective_checkpoint_contexts(["MatMul"])
    with pytest.raises(TypeError, match="policy_fn_or_list must be either a function or a list of ops"):
        create_selective_checkpoint_contexts(ops.aten.mm.default)
    with pytest.raises(ValueError, match="use_reentrant=False"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            checkpoint(_Mlp(), mindspore.Tensor(np.ones((1, 8), np.float32)), use_reentrant=True,
                       context_fn=_contexts([]))


def test_recomputation_that_runs_another_op_is_an_error_naming_it():
    forward, recompute = create_selective_checkpoint_contexts([])
    x = mindspore.Tensor(np.ones((2, 2), np.float32))
    with forward:
        msops.relu(x)
    with pytest.raises(RuntimeError, match="MindSpore op Sigmoid encountered during backward but not found"):
        with recompute:
            msops.sigmoid(x)


def test_ops_are_torch_names_equal_hashed_and_unmapped_mindspore_ops_equal_none():
    assert ops.aten.mm.default is Op("aten.mm.default") and ops.aten.mm.default in {Op("aten.mm.default")}
    assert repr(ops.aten.mm.default) == "aten.mm.default" and ops.aten.mm.default.name() == "aten::mm"
    assert ops.aten.mm.default != ops.aten.bmm.default and ops.aten.mm.default != "aten.mm.default"
    seen = _seen_by_policy(lambda: msops.erf(mindspore.Tensor(np.ones(2, np.float32))))
    assert [repr(op) for op in seen] == ["mindspore.Erf"]
    assert not any(op == Op(e.torch) for op in seen for e in DATA.ops)


def test_the_store_counts_as_kept_and_torchs_store_is_counted_too():
    forward, _ = create_selective_checkpoint_contexts([ops.aten.relu.default])
    x = mindspore.Tensor(np.ones((4, 8), np.float32))
    with SavedTensors("mindspore") as kept, forward:
        msops.relu(x)
        msops.sigmoid(x)
    assert kept.bytes == selective.kept_bytes((forward, None)) == 4 * 8 * 4
    assert kept.decisions == {("aten.relu.default", True): 1, ("mindspore.Sigmoid", False): 1}
    # torch's own store, read through torch 2.13's _CachingTorchDispatchMode (memory._watch_torch_stores)
    from torch.utils.checkpoint import checkpoint as torch_checkpoint
    from torch.utils.checkpoint import create_selective_checkpoint_contexts as torch_contexts
    t = torch.ones(4, 8, requires_grad=True)
    context_fn = functools.partial(torch_contexts, [torch.ops.aten.relu.default])
    with SavedTensors("torch") as kept:
        y = torch_checkpoint(lambda a: torch.sigmoid(torch.relu(a)), t, use_reentrant=False, context_fn=context_fn)
    y.sum().backward()
    assert kept.decisions == {("aten.relu.default", True): 1, ("aten.sigmoid.default", False): 1}
    assert kept.bytes >= 4 * 8 * 4


def test_mindspore_in_place_ops_do_not_advance_the_version_counter():
    """Why allow_cache_entry_mutation=False checks nothing here (compat.selective's docstring): if this fails,
    MindSpore counts versions now, and the check can be made as torch makes it."""
    t = mindspore.Tensor(np.ones(3, np.float32))
    before = t._version
    t.add_(1)
    assert t._version == before


def test_the_zoo_torch_twin_translated_keeps_torchs_policy_on_mindspore(tmp_path):
    """torch → MindSpore on selective_block's torch twin (torchtitan's policy over torch.ops): the translated Cell
    saves the ops torch's policy saves, as often, and keeps the bytes torch keeps; gradients agree with torch's."""
    from test_zoo_translated import load, torch_twin, translated

    from recompat.compat import compare, zoo
    from recompat.compat.runs import run_mindspore, run_torch

    pair = zoo.get("selective_block")
    source, cls, keywords = torch_twin(pair)
    text, result = translated(source, "zoo/selective_block.py", "mindspore")
    assert "manual" not in {s.status for s in result.sites}
    codes = {d.code for s in result.sites for d in s.diagnostics}
    assert "RC145" in codes and "RC147" not in codes     # torch.ops itself is passed to the policy: renamed whole
    assert "torch.ops" not in text and "create_selective_checkpoint_contexts(titan_policy(recompat" in text
    module = load(text, tmp_path, "selective_block")
    mindspore.set_seed(0)
    cell = getattr(module, cls)(True, "selective", **keywords)
    model = pair.build_torch(recompute=True, form="selective")
    arrays = pair.make_inputs(0)
    report = compare(model, cell, arrays, seed=0)
    assert report.passed, str(report)
    kept = {}
    for side, run, m in (("torch", run_torch, model), ("mindspore", run_mindspore, cell)):
        with SavedTensors(side) as counter:
            run(m, arrays, seed=0)
        kept[side] = counter
    saved = {side: {op: n for (op, was_saved), n in c.decisions.items() if was_saved} for side, c in kept.items()}
    assert saved["mindspore"] == saved["torch"] == {"aten.mm.default": 6, "aten.bmm.default": 4}
    assert abs(kept["mindspore"].bytes - kept["torch"].bytes) <= 0.1 * kept["torch"].bytes
