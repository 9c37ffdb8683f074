"""compare_results on hand-made runs; run_torch / run_mindspore / compare() on tiny twins; planted bugs.

MindSpore's context is process-global and tests run under pytest-xdist: every test that touches
MindSpore sets PYNATIVE (or GRAPH) mode itself, and run_mindspore restores the mode it found.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from recompat.compat.compare import (
    CompareReport,
    compare_results,
    default_tolerance,
    resolve_tolerance,
)
from recompat.compat.compare import ROUNDOFF_FACTOR
from recompat.compat.runs import RunResult, flatten_outputs
from recompat.constants import CROSS_ATOL, CROSS_RTOL

# Cross-framework float32 tolerance for the twins below: recompat's default (recompat.constants). torch.testing's
# float32 default (rtol 1.3e-6) is a same-framework tolerance; different CPU kernels disagree by a few ulp
# more than that on gradients. The measured errors are in the module docstring of compare.py
# and in the report; the default leaves room without hiding any planted bug below.
XRTOL, XATOL = CROSS_RTOL, CROSS_ATOL


def run(framework="a", **tensors) -> RunResult:
    r = RunResult(framework=framework)
    for name, value in tensors.items():
        kind = "output"
        if isinstance(value, tuple):
            value, kind = value
        r.add(name.replace("__", "."), kind, np.asarray(value))
    return r


# ----- compare_results on hand-made runs ----------------------------------------------------
def test_within_tolerance_passes_with_row_statistics():
    e = np.array([1.0, -2.0, 3.0, 0.0], np.float32)
    a = e + np.float32(2e-6)
    report = compare_results(run("torch", y=e), run("mindspore", y=a))
    assert report.passed, str(report)
    row = report.row("y")
    assert (row.rtol, row.atol) == (1.3e-6, 1e-5)  # torch.testing's float32 defaults
    assert row.kind == "output" and row.expected_shape == row.actual_shape == (4,)
    assert row.expected_dtype == row.actual_dtype == "float32"
    assert row.max_abs_err == pytest.approx(2e-6, rel=5e-2)
    assert row.max_rel_err == pytest.approx(2e-6, rel=5e-2)  # |e| == 1 is the smallest nonzero
    assert row.cosine == pytest.approx(1.0)
    assert row.within == 1.0 and row.message == ""


def test_outside_tolerance_fails_and_says_where():
    e = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    a = e.copy()
    a[2] += 1e-3
    report = compare_results(run("torch", y=e), run("mindspore", y=a))
    assert not report.passed
    row = report.row("y")
    assert row.within == 0.75
    assert "1 of 4 elements" in row.message and "(2,)" in row.message
    assert row.max_abs_err == pytest.approx(1e-3, rel=1e-3)


def test_tolerance_overrides_number_and_mapping():
    e = np.array([1.0, 2.0], np.float32)
    a = e * (1 + 5e-5)
    assert not compare_results(run(y=e), run(y=a)).passed
    assert compare_results(run(y=e), run(y=a), rtol=1e-4).passed
    # a mapping: by name, then kind, then dtype; others keep the dtype default
    assert compare_results(run(y=e), run(y=a), rtol={"y": 1e-4}).passed
    assert compare_results(run(y=e), run(y=a), rtol={"output": 1e-4}).passed
    assert compare_results(run(y=e), run(y=a), rtol={"float32": 1e-4}).passed
    assert not compare_results(run(y=e), run(y=a), rtol={"param-grad": 1e-4}).passed
    assert resolve_tolerance("y", "output", "float32", rtol=1e-4) == (1e-4, 1e-5)


def test_default_tolerances_are_torch_testing_defaults():
    torch = pytest.importorskip("torch")
    from torch.testing._comparison import default_tolerances

    for name in ("float16", "bfloat16", "float32", "float64"):
        assert default_tolerance(name) == default_tolerances(getattr(torch, name))
    assert default_tolerance("int64") == (0.0, 0.0) and default_tolerance("bool") == (0.0, 0.0)


def test_integers_are_exact_even_with_a_loose_override():
    e = np.array([1, 2, 3], np.int64)
    assert compare_results(run(ids=e), run(ids=e.copy())).passed
    report = compare_results(run(ids=e), run(ids=e + np.array([0, 1, 0])), rtol=1.0, atol=10.0)
    assert not report.passed
    assert report.row("ids").rtol == 0.0 and "1 of 3 elements differ" in report.row("ids").message


@pytest.mark.parametrize("equal_nan", [False, True])
def test_nan_in_the_same_places_passes_only_with_equal_nan(equal_nan):
    e = np.array([1.0, np.nan, 3.0], np.float32)
    report = compare_results(run(y=e), run(y=e.copy()), equal_nan=equal_nan)
    assert report.passed is equal_nan
    if not equal_nan:
        assert "equal_nan=True" in report.row("y").message
    row = report.row("y")
    assert row.max_abs_err == 0.0  # statistics over the finite places


def test_nan_in_different_places_never_passes():
    e = np.array([1.0, np.nan, 3.0], np.float32)
    a = np.array([1.0, 2.0, np.nan], np.float32)
    for equal_nan in (False, True):
        report = compare_results(run(y=e), run(y=a), equal_nan=equal_nan)
        assert not report.passed
        assert "not matched" in report.row("y").message
    # NaN on one side only
    assert not compare_results(run(y=e), run(y=np.nan_to_num(e)), equal_nan=True).passed


def test_inf():
    e = np.array([np.inf, -np.inf, 1.0], np.float32)
    assert not compare_results(run(y=e), run(y=e.copy())).passed
    assert compare_results(run(y=e), run(y=e.copy()), equal_nan=True).passed
    flipped = np.array([-np.inf, -np.inf, 1.0], np.float32)
    assert not compare_results(run(y=e), run(y=flipped), equal_nan=True).passed
    finite = np.array([3e38, -np.inf, 1.0], np.float32)
    assert not compare_results(run(y=e), run(y=finite), equal_nan=True).passed
    # a huge tolerance does not let Inf through either
    assert not compare_results(run(y=e), run(y=finite), rtol=1e9, atol=1e40, equal_nan=True).passed


def test_shape_mismatch_names_the_tensor():
    report = compare_results(run("torch", fc1__weight__grad=(np.zeros((3, 4), np.float32), "param-grad")),
                             run("mindspore", fc1__weight__grad=(np.zeros((4, 3), np.float32), "param-grad")))
    assert not report.passed
    row = report.row("fc1.weight.grad")
    assert row.kind == "param-grad"
    assert "shape mismatch for fc1.weight.grad" in row.message and "(3, 4)" in row.message
    assert "fc1.weight.grad" in str(report)


def test_dtype_mismatch_names_the_tensor():
    report = compare_results(run("torch", y=np.ones(3, np.float32)), run("mindspore", y=np.ones(3, np.float64)))
    assert not report.passed
    msg = report.row("y").message
    assert "dtype mismatch for y" in msg and "float32" in msg and "float64" in msg


def test_a_tensor_on_one_side_only_is_a_named_failing_row():
    e = run("torch", y=np.ones(2, np.float32), bn__running_mean=(np.zeros(2, np.float32), "buffer"))
    a = run("mindspore", y=np.ones(2, np.float32), bn__moving_mean=(np.zeros(2, np.float32), "buffer"))
    report = compare_results(e, a)
    assert not report.passed
    assert [r.name for r in report.rows] == ["y", "bn.running_mean", "bn.moving_mean"]
    assert report.row("y").passed
    assert "missing in mindspore" in report.row("bn.running_mean").message
    assert "missing in torch" in report.row("bn.moving_mean").message
    assert report.row("bn.moving_mean").kind == "buffer"


def test_cosine_of_zero_vectors_is_defined():
    z = np.zeros(5, np.float32)
    report = compare_results(run(g=z), run(g=z.copy()))
    assert report.passed and report.row("g").cosine == 1.0
    report = compare_results(run(g=z), run(g=np.full(5, 1e-7, np.float32)))
    assert report.passed and report.row("g").cosine == 0.0  # within atol, but orthogonal in direction


def test_empty_comparison_does_not_pass():
    assert not compare_results(RunResult("torch"), RunResult("mindspore")).passed


def test_report_json_dict_and_text():
    e = run("torch", a=np.ones(3, np.float32), b=np.ones(2, np.float32))
    a = run("mindspore", a=np.ones(3, np.float32), b=np.array([1.0, np.inf], np.float32))
    report = compare_results(e, a)
    doc = json.loads(report.to_json())
    assert doc == json.loads(json.dumps(report.to_dict()))
    assert doc["passed"] is False and [r["name"] for r in doc["rows"]] == ["a", "b"]
    assert set(doc["rows"][0]) >= {
        "name", "kind", "expected_shape", "actual_shape", "expected_dtype", "actual_dtype", "max_abs_err",
        "max_rel_err", "cosine", "within", "rtol", "atol", "passed", "message",
    }
    assert doc["counts"] == {"output": {"passed": 1, "total": 2}}
    text = str(report).splitlines()
    assert text[0].startswith("tensor") and text[1].startswith("b ")  # failing rows only, first
    assert "FAILED, 1/2 tensors" in text[-1]
    assert isinstance(report, CompareReport) and not report


def test_run_result_npz_round_trip_is_lossless(tmp_path):
    r = RunResult("torch", meta={"seed": 3, "device": "cpu"})
    r.add("output[0]", "output", np.arange(6, dtype=np.float16).reshape(2, 3))
    r.add("output[1].ids", "output", np.array([1, 2], np.int64))
    r.add("input[0].grad", "input-grad", np.random.default_rng(0).standard_normal(4))
    r.add("fc.weight.grad", "param-grad", np.ones((2, 2), np.float32), dtype="bfloat16")
    r.add("bn.running_mean", "buffer", np.zeros(2, np.float32))
    r.add("mask", "output", np.array([True, False]))
    path = r.to_npz(tmp_path / "run")
    assert path.suffix == ".npz" and path.with_suffix(".json").exists()
    back = RunResult.from_npz(path)
    assert back.framework == "torch" and back.meta == r.meta
    assert list(back.tensors) == list(r.tensors) and back.kinds == r.kinds and back.dtypes == r.dtypes
    for name, value in r.tensors.items():
        assert back.tensors[name].dtype == value.dtype
        np.testing.assert_array_equal(back.tensors[name], value)
    assert compare_results(r, back).passed


def test_flatten_names_nested_outputs():
    out = {"logits": 1, "aux": (2, [3, {"k": 4}], None, "text")}
    names = [n for n, _p, _t in flatten_outputs(out, lambda o: isinstance(o, int))]
    assert names == ["output.logits", "output.aux[0]", "output.aux[1][0]", "output.aux[1][1].k"]
    assert [n for n, _p, _t in flatten_outputs((5, (6,)), lambda o: isinstance(o, int))] == [
        "output[0]", "output[1][0]"]
    assert [n for n, _p, _t in flatten_outputs(7, lambda o: isinstance(o, int))] == ["output"]


# ----- the round-off rule: judged against a float64 reference run -----------------------------
def _roundoff_runs(actual_scale: float, expected_scale: float = 1.0, offset: float = 0.0):
    """A float64 reference, an expected float32 run off it by round-off-sized noise (times expected_scale), and
    an actual run off it by actual_scale times that noise, plus a constant offset."""
    rng = np.random.default_rng(0)
    truth = rng.standard_normal(4096) * 3.0
    noise = lambda: rng.standard_normal(4096) * 3.0 * 2e-7   # noqa: E731
    ref = run("torch64", y=truth)
    expected = run("torch", y=(truth + expected_scale * noise()).astype(np.float32))
    actual = run("mindspore", y=(truth + actual_scale * noise() + offset).astype(np.float32))
    return expected, actual, ref


def test_the_roundoff_rule_passes_a_side_a_few_times_as_far_as_the_reference_sides_own_float32():
    expected, actual, ref = _roundoff_runs(actual_scale=12.0)
    assert not compare_results(expected, actual).passed        # torch.testing's float32 default: a false alarm
    report = compare_results(expected, actual, reference=ref)
    row = report.row("y")
    assert report.passed and row.message == ""
    assert row.ref_err_expected < row.ref_err_actual < ROUNDOFF_FACTOR * row.ref_err_expected
    assert report.meta["reference"]["roundoff_factor"] == ROUNDOFF_FACTOR


@pytest.mark.parametrize("actual_scale, offset", [(ROUNDOFF_FACTOR * 4, 0.0), (1.0, 3.0 * 1e-5)],
                         ids=["scattered", "a small constant offset"])
def test_the_roundoff_rule_fails_what_sits_beyond_roundoff(actual_scale, offset):
    """Planted: errors far beyond the reference side's own round-off, spread at random or as a constant offset of
    30 ulps on every element (the norm-wise check), fail and name the side and the factor."""
    expected, actual, ref = _roundoff_runs(actual_scale=actual_scale, offset=offset)
    report = compare_results(expected, actual, reference=ref)
    assert not report.passed
    message = report.row("y").message
    assert "mindspore is" in message and f"{ROUNDOFF_FACTOR:g}x torch's" in message, message


def test_the_roundoff_rule_says_when_the_reference_sides_float32_is_the_one_far_off():
    expected, actual, ref = _roundoff_runs(actual_scale=1.0, expected_scale=1000.0)
    report = compare_results(expected, actual, reference=ref)
    assert report.passed
    assert "torch's float32 is the side far from the float64 reference" in report.row("y").message


def test_the_roundoff_rule_leaves_integers_and_unpaired_tensors_to_the_usual_rules():
    ref = run("torch64", y=np.arange(3.0), n=np.array([1, 2]))
    expected, actual = run("torch", y=np.arange(3.0, dtype=np.float32), n=np.array([1, 2])), \
        run("mindspore", y=np.arange(3.0, dtype=np.float32), n=np.array([1, 3]))
    report = compare_results(expected, actual, reference=ref)
    assert report.row("y").passed and not report.row("n").passed and report.row("n").ref_err_actual is None


# ----- twins through run_torch / run_mindspore / compare() ------------------------------------
torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")
from mindspore import nn as mnn  # noqa: E402
from mindspore import ops  # noqa: E402

from recompat.compat.compare import ModelRunError, compare  # noqa: E402
from recompat.compat.runs import MindSporeGraphError, run_mindspore, run_torch  # noqa: E402

runtime = pytest.mark.runtime


@pytest.fixture(autouse=True)
def _mindspore_pynative():
    # process-global: set what this test needs, whatever ran before in this worker
    ms.set_context(mode=ms.PYNATIVE_MODE)
    torch.manual_seed(0)
    yield


def _x(*shape, scale=1.0, seed=1):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


class TorchMLP(torch.nn.Module):
    def __init__(self, d_in=6, d_hidden=8, d_out=4):
        super().__init__()
        self.fc1 = torch.nn.Linear(d_in, d_hidden)
        self.relu = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class MsMLP(mnn.Cell):
    def __init__(self, d_in=6, d_hidden=8, d_out=4):
        super().__init__()
        self.fc1 = mnn.Dense(d_in, d_hidden)
        self.relu = mnn.ReLU()
        self.fc2 = mnn.Dense(d_hidden, d_out)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class TorchTupleDict(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 5)
        self.head = torch.nn.Linear(5, 3)

    def forward(self, x, y):
        h = torch.tanh(self.fc(x)) * y
        logits = self.head(h)
        return logits, {"hidden": h, "probs": torch.softmax(logits, dim=-1)}


class MsTupleDict(mnn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = mnn.Dense(6, 5)
        self.head = mnn.Dense(5, 3)

    def construct(self, x, y):
        h = ops.tanh(self.fc(x)) * y
        logits = self.head(h)
        return logits, {"hidden": h, "probs": ops.softmax(logits, -1)}


class TorchTokens(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(11, 6)
        self.proj = torch.nn.Linear(6, 4)

    def forward(self, ids, scale):
        return self.proj(self.emb(ids)) * scale


class MsTokens(mnn.Cell):
    def __init__(self):
        super().__init__()
        self.emb = mnn.Embedding(11, 6)
        self.proj = mnn.Dense(6, 4)

    def construct(self, ids, scale):
        return self.proj(self.emb(ids)) * scale


def _tokens():
    ids = np.random.default_rng(2).integers(0, 11, size=(3, 5)).astype(np.int64)
    return ids, _x(3, 5, 4, seed=3)


def _mlp_pair():
    t, m = TorchMLP(), MsMLP()
    t.train()
    m.set_train(True)
    return t, m


@runtime
@pytest.mark.parametrize("weights", ["torch", "mindspore"])
def test_mlp_twin_passes_both_weight_directions(weights):
    t, m = _mlp_pair()
    report = compare(t, m, [_x(5, 6)], weights=weights, rtol=XRTOL, atol=XATOL)
    assert report.passed, str(report)
    assert [r.name for r in report.rows] == [
        "output", "input[0].grad", "fc1.weight.grad", "fc1.bias.grad", "fc2.weight.grad", "fc2.bias.grad"]
    assert [r.kind for r in report.rows][:2] == ["output", "input-grad"]
    # the weights really were copied: both sides now hold the source side's values
    np.testing.assert_array_equal(t.fc1.weight.detach().numpy(), m.fc1.weight.asnumpy())
    assert report.meta["weights"]["run_with"] == weights and report.meta["transfer"]["name_map"]


@runtime
@pytest.mark.parametrize("ms_mode", ["pynative", "graph"])
def test_tuple_and_dict_outputs_are_compared_by_stable_names(ms_mode):
    t, m = TorchTupleDict(), MsTupleDict()
    t.train()
    m.set_train(True)
    report = compare(t, m, [_x(4, 6), _x(4, 5, seed=4)], ms_mode=ms_mode, rtol=XRTOL, atol=XATOL)
    assert report.passed, str(report)
    outputs = [r.name for r in report.rows if r.kind == "output"]
    assert outputs == ["output[0]", "output[1].hidden", "output[1].probs"]
    assert [r.name for r in report.rows if r.kind == "input-grad"] == ["input[0].grad", "input[1].grad"]


@runtime
@pytest.mark.parametrize("weights", ["torch", "mindspore"])
def test_integer_token_input_gets_no_gradient(weights):
    ids, scale = _tokens()
    t, m = TorchTokens(), MsTokens()
    report = compare(t, m, [ids, scale], weights=weights, rtol=XRTOL, atol=XATOL)
    assert report.passed, str(report)
    names = [r.name for r in report.rows]
    assert "input[1].grad" in names and "input[0].grad" not in names
    assert "emb.weight.grad" in names  # MindSpore's emb.embedding_table, named in torch's terms


@runtime
@pytest.mark.parametrize("ms_mode", ["pynative", "graph"])
def test_keyword_inputs(ms_mode):
    ids, scale = _tokens()
    report = compare(TorchTokens(), MsTokens(), {"ids": ids, "scale": scale}, ms_mode=ms_mode, rtol=XRTOL, atol=XATOL)
    assert report.passed, str(report)
    assert "input.scale.grad" in [r.name for r in report.rows]


@runtime
def test_graph_mode_twin_passes_and_the_mode_is_restored():
    t, m = _mlp_pair()
    report = compare(t, m, [_x(5, 6)], ms_mode="graph", rtol=XRTOL, atol=XATOL)
    assert report.passed, str(report)
    assert report.meta["actual"]["mode"] == "graph"
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


@runtime
def test_cotangent_is_random_so_softmax_still_has_input_gradients():
    t = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Softmax(dim=-1))
    m = mnn.SequentialCell([mnn.Dense(6, 5), mnn.Softmax(-1)])
    x = _x(4, 6)
    # with a cotangent of ones (loss = out.sum()) the gradient of a softmax vanishes
    xt = torch.tensor(x, requires_grad=True)
    t(xt).sum().backward()
    assert float(xt.grad.abs().max()) < 1e-6
    report = compare(t, m, [x], rtol=XRTOL, atol=XATOL)
    assert report.passed, str(report)
    grad = run_torch(t, [x]).tensors["input[0].grad"]
    assert float(np.abs(grad).max()) > 1e-2


@runtime
def test_cotangent_is_the_same_on_both_sides_and_follows_the_seed():
    t, m = _mlp_pair()
    x = _x(5, 6)
    a0, a1 = run_torch(t, [x], seed=0), run_torch(t, [x], seed=1)
    assert not np.allclose(a0.tensors["input[0].grad"], a1.tensors["input[0].grad"])
    assert compare(t, m, [x], seed=1, rtol=XRTOL, atol=XATOL).passed


@runtime
def test_unused_parameter_gets_zero_gradient_on_both_sides():
    class T(TorchMLP):
        def __init__(self):
            super().__init__()
            self.spare = torch.nn.Linear(2, 2)

    class M(MsMLP):
        def __init__(self):
            super().__init__()
            self.spare = mnn.Dense(2, 2)

    t, m = T(), M()
    report = compare(t, m, [_x(5, 6)], rtol=XRTOL, atol=XATOL)
    assert report.passed, str(report)
    assert report.row("spare.weight.grad").max_abs_err == 0.0
    assert "spare.weight.grad" in report.meta["expected"]["zero_filled_grads"]


# ----- planted bugs: compare() must fail (not raise) and point at the right rows --------------
class TorchGeluMLP(torch.nn.Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 16)
        self.act = torch.nn.GELU(approximate=approximate)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class MsGeluMLP(mnn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = mnn.Dense(6, 16)
        self.act = mnn.GELU(approximate=False)  # exact erf form
        self.fc2 = mnn.Dense(16, 4)

    def construct(self, x):
        return self.fc2(self.act(self.fc1(x)))


@runtime
@pytest.mark.parametrize("planted", [False, True])
def test_planted_gelu_approximation(planted):
    t = TorchGeluMLP(approximate="tanh" if planted else "none")
    report = compare(t, MsGeluMLP(), [_x(8, 6, scale=3.0)], rtol=XRTOL, atol=XATOL)
    assert report.passed is not planted, str(report)
    if planted:
        assert not report.row("output").passed


class TorchLN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(16)  # eps 1e-5
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(self.ln(x))


class MsLN(mnn.Cell):
    def __init__(self, epsilon):
        super().__init__()
        self.ln = mnn.LayerNorm((16,), epsilon=epsilon)
        self.fc = mnn.Dense(16, 4)

    def construct(self, x):
        return self.fc(self.ln(x))


@runtime
@pytest.mark.parametrize("planted", [False, True])
def test_planted_layernorm_epsilon(planted):
    # eps sits next to the variance: y = (x - mean) / sqrt(var + eps), a relative effect of about
    # (1e-5 - 1e-7) / (2 var). Rows of small variance (inputs scaled by 1e-2, var ~1e-4) make
    # the difference show (~5%); rows of large variance hide it (var ~1: ~5e-6, inside float32
    # noise), which is why the default difference goes unnoticed on ordinary data.
    t, m = TorchLN(), MsLN(epsilon=1e-7 if planted else 1e-5)
    report = compare(t, m, [_x(4, 16, scale=1e-2)], rtol=XRTOL, atol=XATOL)
    assert report.passed is not planted, str(report)
    if planted:
        assert not report.row("output").passed
        assert not report.row("input[0].grad").passed
    # with ordinary (variance ~1) rows the same planted difference stays inside tolerance: only the setting row
    # (strict, the default) fails it
    if planted:
        ordinary = compare(t, m, [_x(4, 16)], rtol=XRTOL, atol=XATOL)
        assert [(r.name, r.kind) for r in ordinary.failures] == [("ln.eps", "setting")], str(ordinary)
        assert "construct it with epsilon=1e-05" in ordinary.failures[0].message
        assert compare(t, m, [_x(4, 16)], rtol=XRTOL, atol=XATOL, strict=False).passed


class TorchBN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 8)
        self.bn = torch.nn.BatchNorm1d(8, momentum=0.1)

    def forward(self, x):
        return torch.relu(self.bn(self.fc(x)))


class MsBN(mnn.Cell):
    def __init__(self, momentum):
        super().__init__()
        self.fc = mnn.Dense(6, 8)
        self.bn = mnn.BatchNorm1d(8, momentum=momentum)

    def construct(self, x):
        return ops.relu(self.bn(self.fc(x)))


@runtime
@pytest.mark.parametrize("planted", [False, True])
def test_planted_batchnorm_momentum_not_converted(planted):
    t, m = TorchBN(), MsBN(momentum=0.1 if planted else 0.9)  # right: ms = 1 - torch
    t.train()
    m.set_train(True)
    report = compare(t, m, [_x(16, 6, scale=2.0)], rtol=XRTOL, atol=XATOL)
    assert report.passed is not planted, str(report)
    buffers = {r.name for r in report.rows if r.kind == "buffer"}
    assert buffers == {"bn.running_mean", "bn.running_var"}
    if planted:
        # training-mode outputs and gradients use batch statistics: only the buffers and the setting catch it
        assert {r.name for r in report.failures} == buffers | {"bn.momentum"}
        # in evaluation mode only the setting does: the numbers agree (torch's weights copied in again: the run
        # above moved the two sides' statistics apart, and held as they are they would fail as weights)
        t.eval()
        m.set_train(False)
        evaluated = compare(t, m, [_x(16, 6, scale=2.0)], weights="torch")
        assert [r.name for r in evaluated.failures] == ["bn.momentum"], str(evaluated)
        assert str(evaluated).count("momentum") == 1 + str(evaluated.failures[0].message).count("momentum")
        assert "transfer warning" not in str(evaluated)       # judged as a row, so said once
        lenient = compare(t, m, [_x(16, 6, scale=2.0)], strict=False, weights="torch")
        assert lenient.passed and "transfer warning: " in str(lenient)    # not judged: still said


class TorchChain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 8)
        self.fc2 = torch.nn.Linear(8, 8)
        self.fc3 = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


class MsChain(mnn.Cell):
    def __init__(self, swapped):
        super().__init__()
        self.fc1 = mnn.Dense(6, 8)
        self.fc2 = mnn.Dense(8, 8)
        self.fc3 = mnn.Dense(8, 8)
        self.swapped = swapped

    def construct(self, x):
        h = ops.relu(self.fc1(x))
        if self.swapped:
            return self.fc2(ops.relu(self.fc3(h)))
        return self.fc3(ops.relu(self.fc2(h)))


@runtime
@pytest.mark.parametrize("planted", [False, True])
def test_planted_swapped_layers(planted):
    report = compare(TorchChain(), MsChain(swapped=planted), [_x(5, 6)], rtol=XRTOL, atol=XATOL)
    assert report.passed is not planted, str(report)
    if planted:
        failing = {r.name for r in report.failures}
        assert {"output", "fc2.weight.grad", "fc3.weight.grad"} <= failing


@runtime
def test_a_planted_bug_in_graph_mode_fails_too():
    report = compare(TorchChain(), MsChain(swapped=True), [_x(5, 6)], ms_mode="graph", rtol=XRTOL, atol=XATOL)
    assert not report.passed


class Unsupported(mnn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = mnn.Dense(6, 4)

    def construct(self, x):
        y = self.fc(x)
        try:  # runs in PyNative; GRAPH mode cannot compile a try statement
            y = y * 2
        except ValueError:
            pass
        return y


@runtime
def test_graph_mode_compile_error_is_clear(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MindSpore writes rank_0/om/analyze_fail.ir into the cwd
    assert run_mindspore(Unsupported(), [_x(5, 6)], mode="pynative").tensors
    with pytest.raises(MindSporeGraphError, match="GRAPH mode could not compile or run Unsupported"):
        run_mindspore(Unsupported(), [_x(5, 6)], mode="graph")
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


# ----- record / replay and naming through runs ------------------------------------------------
@runtime
def test_recorded_torch_run_replays_against_mindspore(tmp_path):
    t, m = _mlp_pair()
    x = _x(5, 6)
    transfer_report = compare(t, m, [x], rtol=XRTOL, atol=XATOL)  # copies torch's weights over
    assert transfer_report.passed
    # record a fresh torch run, replay it (as if on another machine) against MindSpore in GRAPH mode
    path = run_torch(t, [x]).to_npz(tmp_path / "torch_cpu")
    recorded = RunResult.from_npz(path)
    assert recorded.meta["framework_version"] == torch.__version__ and recorded.meta["seed"] == 0
    live = run_mindspore(m, [x], mode="graph", name_map=transfer_report.meta["transfer"]["name_map"])
    assert compare_results(recorded, live, rtol=XRTOL, atol=XATOL).passed


@runtime
def test_mindspore_names_without_a_map_entry_stay_and_fail_as_one_sided_rows():
    t, m = _mlp_pair()
    x = _x(5, 6)
    name_map = dict(compare(t, m, [x]).meta["transfer"]["name_map"])
    name_map.pop("fc2.weight")
    actual = run_mindspore(m, [x], name_map=name_map)
    assert actual.meta["unmapped_names"] == ["fc2.weight"]
    assert "fc2.weight.grad" in actual.tensors  # kept its own name (here the same as torch's)
    name_map["fc2.weight"] = "fc2.weight"
    name_map["renamed.weight"] = name_map.pop("fc1.weight")
    report = compare_results(run_torch(t, [x]), run_mindspore(m, [x], name_map=name_map), rtol=XRTOL, atol=XATOL)
    assert {r.name for r in report.failures} == {"fc1.weight.grad", "renamed.weight.grad"}
    assert "missing in mindspore" in report.row("fc1.weight.grad").message
    assert "missing in torch" in report.row("renamed.weight.grad").message


@runtime
def test_run_torch_leaves_the_callers_rng_alone_and_frozen_parameters_are_buffers():
    t = TorchMLP()
    t.fc1.bias.requires_grad_(False)
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    r = run_torch(t, [_x(5, 6)], seed=7)
    assert torch.equal(torch.rand(3), expected_next)
    assert r.kinds["fc1.bias"] == "buffer" and "fc1.bias.grad" not in r.tensors
    assert r.meta["training"] is True and r.meta["seed"] == 7


class _TorchResidualMLP(torch.nn.Module):
    def __init__(self, width=256, depth=8):
        super().__init__()
        self.blocks = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.LayerNorm(width),
                                                               torch.nn.Linear(width, width), torch.nn.GELU())
                                           for _ in range(depth)])
        self.head = torch.nn.Linear(width, 10)

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return self.head(x)


class _MsResidualMLP(mnn.Cell):
    def __init__(self, width=256, depth=8, approximate=False):
        super().__init__()
        self.blocks = mnn.CellList([mnn.SequentialCell([mnn.LayerNorm((width,), epsilon=1e-5),
                                                        mnn.Dense(width, width), mnn.GELU(approximate=approximate)])
                                    for _ in range(depth)])
        self.head = mnn.Dense(width, 10)

    def construct(self, x):
        for block in self.blocks:
            x = x + block(x)
        return self.head(x)


@runtime
def test_reference_float64_passes_a_correct_deep_twin_and_fails_a_planted_gelu():
    """A correct 8x256 residual MLP (batch 64) is judged by its round-off, and a GELU left at its tanh
    approximation is still caught; the rows say how far each side is from the float64 reference."""
    x = [_x(64, 256)]
    report = compare(_TorchResidualMLP(), _MsResidualMLP(), x, reference="float64")
    assert report.passed, str(report)
    assert all(r.ref_err_expected is not None and r.ref_err_actual is not None for r in report.rows)
    torch.manual_seed(0)
    buggy = compare(_TorchResidualMLP(), _MsResidualMLP(approximate=True), x, reference="float64")
    assert not buggy.passed and "from the float64 reference" in str(buggy)


@runtime
def test_reference_must_be_float64():
    with pytest.raises(ValueError, match="reference must be 'auto', 'float64' or None"):
        compare(_TorchResidualMLP(depth=1), _MsResidualMLP(depth=1), [_x(2, 256)], reference="float16")


@runtime
def test_the_default_verdict_is_the_roundoff_rule_and_given_tolerances_judge_instead():
    """compare() without tolerances judges a correct 8x256 twin by the float64 reference; reference=None judges
    by torch.testing's float32 defaults (whether they false-alarm on this twin depends on the CPU's kernels: 1.9e-5
    at most on one machine, beyond them on another; bench/verdict_bench.py counts false alarms over seeds); with
    rtol/atol given, those judge, as asked, and no reference is run."""
    x = [_x(64, 256)]
    report = compare(_TorchResidualMLP(), _MsResidualMLP(), x)
    assert report.passed, str(report)
    assert report.meta["reference"]["roundoff_factor"] == ROUNDOFF_FACTOR
    torch.manual_seed(0)
    plain = compare(_TorchResidualMLP(), _MsResidualMLP(), x, reference=None)
    assert "reference" not in plain.meta
    assert {(r.rtol, r.atol) for r in plain.rows if r.expected_dtype == "float32"} == {default_tolerance("float32")}
    torch.manual_seed(0)
    given = compare(_TorchResidualMLP(), _MsResidualMLP(), x, rtol=1e-3, atol=1e-3)
    assert "reference" not in given.meta and all(r.ref_err_expected is None for r in given.rows)


class _TorchFloat32Only(torch.nn.Module):
    """Makes a float32 tensor in forward, so the float64 copy raises in matmul."""
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x) @ torch.eye(4, dtype=torch.float32)


class _TorchPlainTensor(torch.nn.Module):
    """Holds a plain float32 tensor attribute, not a buffer (MONAI's AffineHead.grid): .double() leaves it."""
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.mix = torch.eye(4)

    def forward(self, x):
        return self.fc(x) @ self.mix


class _MsFloat32Only(mnn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = mnn.Dense(4, 4)
        self.mix = ms.Tensor(np.eye(4, dtype=np.float32))

    def construct(self, x):
        return ops.matmul(self.fc(x), self.mix)


@runtime
def test_a_model_that_cannot_run_in_float64_is_judged_by_tolerances_and_the_report_says_why():
    report = compare(_TorchFloat32Only(), _MsFloat32Only(), [_x(3, 4)])
    assert report.passed, str(report)
    why = report.meta["reference"]["skipped"]
    assert "did not run in float64" in why and "RuntimeError" in why
    assert "judged by rtol/atol, not by the float64 reference" in str(report)
    with pytest.raises(ModelRunError, match=r"torch \(float64 reference\)"):
        compare(_TorchFloat32Only(), _MsFloat32Only(), [_x(3, 4)], reference="float64")


@runtime
def test_a_plain_tensor_attribute_joins_the_float64_reference():
    report = compare(_TorchPlainTensor(), _MsFloat32Only(), [_x(3, 4)])
    assert report.passed and "skipped" not in report.meta["reference"], str(report)
    assert "judged by rtol/atol" not in str(report)


class _TorchPositions(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.register_buffer("position_ids", torch.arange(4.0), persistent=False)

    def forward(self, x):
        return self.fc(x + self.position_ids)


class _MsPositions(mnn.Cell):
    def __init__(self, offset=0.0):
        super().__init__()
        self.fc = mnn.Dense(4, 4)
        self.position_ids = ms.Tensor(np.arange(4.0, dtype=np.float32) + offset)

    def construct(self, x):
        return self.fc(x + self.position_ids)


@runtime
def test_a_non_persistent_buffer_against_a_constant_is_reported_not_failed():
    report = compare(_TorchPositions(), _MsPositions(), [_x(3, 4)])
    assert report.passed, str(report)
    row = report.row("position_ids")
    assert row.passed and "not compared: torch only" in row.message and "non-persistent" in row.message
    # planted: a wrong constant in the port still fails where it is used
    torch.manual_seed(0)
    assert not compare(_TorchPositions(), _MsPositions(offset=1e-3), [_x(3, 4)]).passed


def test_the_mean_signed_error_shows_a_constant_offset_the_largest_error_hides():
    """x / (norm + 1e-6): an offset of 1e-6 on every element, no larger than scattered round-off at its largest."""
    rng = np.random.default_rng(0)
    truth = rng.standard_normal(4096).astype(np.float32)
    noise = rng.standard_normal(4096) * 1e-6
    scattered = compare_results(run("torch", y=truth), run("mindspore", y=(truth + noise).astype(np.float32))).row("y")
    offset = compare_results(run("torch", y=truth), run("mindspore", y=truth + np.float32(1e-6))).row("y")
    assert offset.max_abs_err <= scattered.max_abs_err
    assert abs(offset.mean_err - 1e-6) < 1e-7 and abs(scattered.mean_err) < 1e-7
    assert "mean" in compare_results(run("torch", y=truth), run("mindspore", y=truth + 1.0)).table()


def _convert_by_hand(t, m, skip=(), transpose=()):
    """A user's own weight conversion, torch -> MindSpore, by name (BatchNorm: gamma/beta/moving_*)."""
    renames = {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean", "running_var": "moving_variance"}
    ms_params = dict(m.parameters_and_names())
    for name, value in {**dict(t.named_parameters()), **dict(t.named_buffers())}.items():
        if name in skip or name.endswith("num_batches_tracked"):
            continue
        layer, _, leaf = name.rpartition(".")
        target = name if name in ms_params else f"{layer}.{renames[leaf]}"
        array = value.detach().numpy()
        ms_params[target].set_data(ms.Tensor(array.T.copy() if name in transpose else array))


@runtime
def test_weights_as_is_judges_the_users_own_conversion():
    t, m = TorchBN(), MsBN(momentum=0.9)
    t.eval()
    with torch.no_grad():
        t.bn.running_var.uniform_(0.5, 2.0)
        t.bn.running_mean.uniform_(-1.0, 1.0)
    x = [_x(16, 6, scale=2.0)]
    _convert_by_hand(t, m)
    report = compare(t, m, x, weights="as-is")
    assert report.passed, str(report)
    assert {r.name for r in report.rows if r.kind == "weight"} == {
        "fc.weight", "fc.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}
    # planted: a running_var the conversion forgot (MindSpore's is left at ones) fails by name, before the run
    m = MsBN(momentum=0.9)
    _convert_by_hand(t, m, skip={"bn.running_var"})
    forgot = compare(t, m, x, weights="as-is")
    assert not forgot.row("bn.running_var").passed and "before the run" in forgot.row("bn.running_var").message
    assert forgot.row("fc.weight").passed
    # compared at the defaults, the model holding torch's values is judged as held: the mistake shows there too;
    # copying torch's weights in hides it
    assert not compare(t, m, x).row("bn.running_var").passed
    assert compare(t, m, x, weights="torch").passed


@runtime
def test_weights_as_is_catches_a_transposed_square_weight():
    t, m = TorchMLP(d_in=8, d_hidden=8), MsMLP(d_in=8, d_hidden=8)
    _convert_by_hand(t, m, transpose={"fc1.weight"})
    report = compare(t, m, [_x(3, 8)], weights="as-is")
    assert [r.name for r in report.failures if r.kind == "weight"] == ["fc1.weight"]
    assert not report.row("output").passed
    with pytest.raises(ValueError, match="weights must be 'auto', 'torch', 'mindspore' or 'as-is' or the path"):
        compare(t, m, [_x(3, 8)], weights="asis")


def test_settings_that_differ_fail_unless_recorded_as_deliberate_and_a_stale_record_fails():
    from types import SimpleNamespace

    from recompat.compat.compare import transfer_rows
    from recompat.compat.weights import Setting

    transfer = SimpleNamespace(settings=[Setting("conv.padding", "Conv2d 'conv': torch padding=(0, 0) ...")])
    (row,) = transfer_rows(transfer)
    assert row.kind == "setting" and not row.passed and "strict=False keeps it a warning" in row.message
    assert transfer_rows(transfer, strict=False) == []
    (row,) = transfer_rows(transfer, deliberate={"conv.padding": "padded explicitly"})
    assert row.passed and "differs on purpose: padded explicitly" in row.message
    stale = transfer_rows(SimpleNamespace(settings=[]), deliberate={"conv.padding": "padded explicitly"})
    assert [(r.name, r.passed) for r in stale] == [("conv.padding", False)] and "no longer differs" in stale[0].message


@runtime
def test_memory_fails_a_port_whose_recompute_mark_was_lost():
    """compare(memory=True) on the zoo's seed_fc: torch checkpoints a block; the MindSpore port with the block
    marked keeps what torch keeps, the port that lost the mark keeps 2.6x as much and fails on the memory rows alone
    (the bytes, and the region MindSpore no longer recomputes)."""
    from recompat.compat import zoo
    from recompat.compat.compare import MEMORY_SLACK

    pair = zoo.get("seed_fc")
    x = pair.make_inputs(0)
    marked = compare(pair.build_torch(True, "checkpoint", 0), pair.build_mindspore(True, "function", 0), x,
                     memory=True)
    assert marked.passed, str(marked)
    row = marked.row("bytes kept for backward")
    assert row.kind == "memory" and "MindSpore" in row.message
    kept = marked.meta["memory"]
    assert 0 < kept["mindspore"] <= MEMORY_SLACK * kept["torch"]
    lost = compare(pair.build_torch(True, "checkpoint", 0), pair.build_mindspore(False, "function", 0), x,
                   memory=True)
    assert [r.name for r in lost.failures] == ["bytes kept for backward", "regions recomputed"], str(lost)
    assert all("recompute mark lost" in r.message for r in lost.failures)
    assert lost.meta["memory"]["mindspore"] > 2 * lost.meta["memory"]["torch"]
    # at the defaults too (torch checkpoints, so the bytes are judged); memory=False judges the numbers only
    at_defaults = compare(pair.build_torch(True, "checkpoint", 0), pair.build_mindspore(False, "function", 0), x)
    assert {r.kind for r in at_defaults.failures} == {"memory"}, str(at_defaults)
    assert compare(pair.build_torch(True, "checkpoint", 0), pair.build_mindspore(False, "function", 0), x,
                   memory=False).passed
    with pytest.raises(ValueError, match="PyNative mode only"):
        compare(pair.build_torch(True, "checkpoint", 0), pair.build_mindspore(True, "function", 0), x,
                memory=True, ms_mode="graph")


class _TorchDrop(torch.nn.Module):
    """Dropout as a layer and as a function, optionally inside a checkpointed block."""
    def __init__(self, checkpointed=False):
        super().__init__()
        self.fc1, self.drop, self.fc2 = torch.nn.Linear(32, 64), torch.nn.Dropout(0.3), torch.nn.Linear(64, 8)
        self.checkpointed = checkpointed

    def block(self, x):
        return self.drop(torch.relu(self.fc1(x)))

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint
        h = checkpoint(self.block, x, use_reentrant=False) if self.checkpointed else self.block(x)
        return self.fc2(torch.nn.functional.dropout(h, 0.1, self.training))


class _MsDrop(mnn.Cell):
    def __init__(self, p=0.3, recompute=None, functional=True):
        super().__init__()
        self.fc1, self.drop, self.fc2 = mnn.Dense(32, 64), mnn.Dropout(p=p), mnn.Dense(64, 8)
        self.recompute_form, self.functional = recompute, functional
        if recompute == "cell":
            self.fc1.recompute()
            self.drop.recompute()

    def block(self, x):
        return self.drop(ops.relu(self.fc1(x)))

    def construct(self, x):
        h = ms.recompute(self.block, x, use_reentrant=False) if self.recompute_form == "function" else self.block(x)
        if self.functional:
            h = ops.dropout(h, 0.1, self.training)
        return self.fc2(h)


def _trained(t, m):
    t.train()
    m.set_train(True)
    return t, m


@runtime
@pytest.mark.parametrize("torch_checkpointed, ms_recompute", [(False, None), (True, "cell")],
                         ids=["plain", "recompute-cell"])
def test_active_dropout_is_judged_with_torchs_masks_replayed(torch_checkpointed, ms_recompute):
    """A training-mode pair with an nn.Dropout and a functional dropout: MindSpore and the float64 reference take
    the masks torch drew (Cell.recompute()'s recomputation keeps nn.Dropout's mask, as torch's does), so the
    correct port passes; each side drawing its own masks fails however right the port is."""
    x = [_x(16, 32)]
    # memory=False: the masks are the subject; Cell.recompute() keeps each cell's output in PyNative, which at one
    # layer is more than MEMORY_SLACK times what torch's checkpoint keeps (tests/test_memory_default.py judges it)
    report = compare(*_trained(_TorchDrop(torch_checkpointed), _MsDrop(recompute=ms_recompute)), x, memory=False)
    assert report.passed, str(report)
    row = report.row("dropout masks")
    assert row.passed and "torch drew 2 dropout masks (p 0.1, 0.3); MindSpore's forward took 2" in row.message
    torch.manual_seed(0)
    assert not compare(*_trained(_TorchDrop(), _MsDrop()), x, dropout="own").passed


@runtime
def test_replay_never_hides_a_recomputation_that_draws_a_new_mask():
    """mindspore.recompute(block) draws a new nn.Dropout mask when backward recomputes the block (torch's
    checkpoint recomputes with the forward's): the replay lets MindSpore's recomputation run with what it really
    draws, so the gradients differ and the dropout row says why."""
    report = compare(*_trained(_TorchDrop(checkpointed=True), _MsDrop(recompute="function")), [_x(16, 32)])
    assert not report.passed
    assert report.row("output").passed and not report.row("fc1.weight.grad").passed
    row = report.row("dropout masks")
    assert not row.passed and "MindSpore's recomputation drew 1 new mask" in row.message


class _TorchChainDrop(torch.nn.Module):
    """Two dropouts in sequence inside one checkpointed block (Hugging Face's BertLayer: attention probabilities,
    then the hidden states): the second one's input depends on the first one's mask."""
    def __init__(self):
        super().__init__()
        self.fc1, self.d1, self.fc2, self.d2 = (torch.nn.Linear(32, 32), torch.nn.Dropout(0.3),
                                                torch.nn.Linear(32, 8), torch.nn.Dropout(0.3))

    def block(self, x):
        return self.d2(self.fc2(self.d1(torch.relu(self.fc1(x)))))

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint
        return checkpoint(self.block, x, use_reentrant=False)


class _MsChainDrop(mnn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1, self.d1, self.fc2, self.d2 = mnn.Dense(32, 32), mnn.Dropout(p=0.3), mnn.Dense(32, 8), \
            mnn.Dropout(p=0.3)

    def block(self, x):
        return self.d2(self.fc2(self.d1(ops.relu(self.fc1(x)))))

    def construct(self, x):
        return ms.recompute(self.block, x, use_reentrant=False, early_stop=False)


@runtime
def test_a_new_mask_in_recompute_is_followed_by_the_dropouts_after_it_and_judged():
    """MindSpore's recomputation draws a new first mask, so the second dropout's recomputed input is none its
    forward saw: that follows from the first (the replay follows the side) and the verdict names the new masks,
    where it was an exception that hid it."""
    report = compare(*_trained(_TorchChainDrop(), _MsChainDrop()), [_x(16, 32)])
    assert not report.passed and report.row("output").passed and not report.row("fc1.weight.grad").passed
    row = report.row("dropout masks")
    assert not row.passed and "MindSpore's recomputation drew 2 new masks" in row.message, row.message


@runtime
def test_planted_dropout_bugs_fail_with_replayed_masks():
    x = [_x(16, 32)]
    keep_prob = compare(*_trained(_TorchDrop(), _MsDrop(p=0.7)), x)      # p read as keep_prob: the scale differs
    assert not keep_prob.row("output").passed and not keep_prob.row("drop.p").passed
    torch.manual_seed(0)
    lost = compare(*_trained(_TorchDrop(), _MsDrop(functional=False)), x)  # the functional dropout left out
    assert not lost.row("output").passed
    assert not lost.row("dropout masks").passed and "MindSpore's forward took 1" in lost.row("dropout masks").message
    with pytest.raises(ValueError, match="dropout must be 'replay' or 'own'"):
        compare(*_trained(_TorchDrop(), _MsDrop()), x, dropout="yes")
    # a dropout the torch model does not have: an error naming the side, not a verdict on different numbers
    with pytest.raises(ModelRunError, match="MindSpore's forward calls dropout more often than torch's, which "
                                            "called it 1 time"):
        compare(*_trained(_TorchDropOnce(), _MsDrop()), x)


class _TorchNoDrop(_TorchDrop):
    """Dropout with p=0 in training (Hugging Face's attention: `dropout(w, p=0.0 if not training else p)`)."""
    def __init__(self):
        super().__init__()
        self.drop = torch.nn.Dropout(0.0)

    def forward(self, x):
        return self.fc2(torch.nn.functional.dropout(self.block(x), 0.0, self.training))


class _MsNoDrop(_MsDrop):
    def __init__(self, p=0.0):
        super().__init__(p=0.0)
        self.functional_p = p

    def construct(self, x):
        return self.fc2(ops.dropout(self.block(x), self.functional_p, self.training))


@runtime
def test_a_dropout_of_p_zero_is_no_draw_on_either_side():
    """torch draws no mask for p=0; MindSpore's Dropout op still runs (keep_prob 1): the replay passes it through
    rather than asking torch's tape for a mask it never drew. A p that is not 0 on one side still fails."""
    report = compare(*_trained(_TorchNoDrop(), _MsNoDrop()), [_x(16, 32)])
    assert report.passed, str(report)
    with pytest.raises(ModelRunError, match="calls dropout more often than torch's, which called it 0 times"):
        compare(*_trained(_TorchNoDrop(), _MsNoDrop(p=0.3)), [_x(16, 32)])


class _TorchDropOnce(_TorchDrop):
    def forward(self, x):
        return self.fc2(self.block(x))


def test_the_memory_row_judges_the_share_saved_where_both_plain_figures_are_known():
    """The demo's convmixer, translated: MindSpore's ops keep more (1.36x torch's bytes with recompute) yet its
    recompute saves as large a share (79% vs 74%); the bytes rule alone would fail it, the share rule passes it, and
    a lost mark (MindSpore keeping what it keeps without recompute) fails either way."""
    from recompat.compat.compare import memory_row

    assert not memory_row(180_096, 245_768).passed
    row = memory_row(180_096, 245_768, 691_200, 1_150_904)
    assert row.passed and "recompute saves 74% on torch, 79% on MindSpore" in row.message
    assert "MindSpore keeps 1.36x torch's bytes, 0.82x its share (at most 1.2x by either)" in row.message
    lost = memory_row(180_096, 1_150_904, 691_200, 1_150_904)
    assert not lost.passed and "recompute mark lost" in lost.message


class _TorchTwoDrops(torch.nn.Module):
    """Two dropouts of one tensor inside a checkpointed block: their recomputations share an input."""
    def __init__(self):
        super().__init__()
        self.fc1, self.d1, self.d2, self.fc2 = (torch.nn.Linear(32, 64), torch.nn.Dropout(0.3), torch.nn.Dropout(0.3),
                                                torch.nn.Linear(64, 8))

    def block(self, x):
        h = torch.relu(self.fc1(x))
        return self.d1(h) * 2 + self.d2(h)

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint
        return self.fc2(checkpoint(self.block, x, use_reentrant=False))


class _MsTwoDrops(mnn.Cell):
    def __init__(self, detached=False):
        super().__init__()
        self.fc1, self.d1, self.d2, self.fc2 = mnn.Dense(32, 64), mnn.Dropout(p=0.3), mnn.Dropout(p=0.3), \
            mnn.Dense(64, 8)
        self.detached = detached
        for cell in (self.fc1, self.d1, self.d2):
            cell.recompute()

    def construct(self, x):
        h = ops.relu(self.fc1(x))
        first = self.d1(ops.stop_gradient(h) if self.detached else h)
        return self.fc2(first * 2 + self.d2(h))


@runtime
def test_two_dropouts_of_one_input_replay_in_their_order_and_a_wrong_port_still_fails():
    """Recomputations matched by input hand equal inputs their masks in forward order: the correct port passes
    (no redraw reported), and a port that cuts d1's gradient fails (the float64 reference stays the same model)."""
    x = [_x(16, 32)]
    report = compare(*_trained(_TorchTwoDrops(), _MsTwoDrops()), x, memory=False)    # the masks only, as above
    assert report.passed, str(report)
    torch.manual_seed(0)
    wrong = compare(*_trained(_TorchTwoDrops(), _MsTwoDrops(detached=True)), x)
    assert not wrong.row("fc1.weight.grad").passed and "reference" in wrong.meta and \
        "skipped" not in wrong.meta["reference"]


class _TorchChannelDrop(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.drop = torch.nn.Conv2d(3, 4, 3), torch.nn.Dropout2d(0.5)

    def forward(self, x):
        return self.drop(self.conv(x))


class _MsChannelDrop(mnn.Cell):
    def __init__(self):
        super().__init__()
        self.conv, self.drop = mnn.Conv2d(3, 4, 3, pad_mode="valid", has_bias=True), mnn.Dropout2d(p=0.5)

    def construct(self, x):
        return self.drop(self.conv(x))


class _MsElementDrop(_MsChannelDrop):
    """Planted: the port drops elements where torch drops whole channels."""
    def __init__(self):
        super().__init__()
        self.drop = mnn.Dropout(p=0.5)


@runtime
def test_channel_dropout_is_replayed_and_the_other_kind_is_refused():
    report = compare(*_trained(_TorchChannelDrop(), _MsChannelDrop()), [_x(2, 3, 8, 8)])
    assert report.passed and report.row("dropout masks").passed, str(report)
    with pytest.raises(ModelRunError, match="draws per element .* drew per channel"):
        compare(*_trained(_TorchChannelDrop(), _MsElementDrop()), [_x(2, 3, 8, 8)])


class _TorchAlphaDrop(_TorchChannelDrop):
    def __init__(self):
        super().__init__()
        self.drop = torch.nn.AlphaDropout(0.5)


class _MsKeepAll(_MsChannelDrop):
    def __init__(self):
        super().__init__()
        self.drop = mnn.Identity()


@runtime
def test_a_dropout_the_replay_cannot_follow_is_named_in_the_failing_row():
    report = compare(*_trained(_TorchAlphaDrop(), _MsKeepAll()), [_x(2, 3, 8, 8)])
    row = report.row("dropout masks")
    assert not row.passed and "not replayed: torch.nn.functional.alpha_dropout" in row.message


def test_a_reference_that_does_not_compute_what_the_run_computed_is_not_used():
    """Planted: a float64 copy whose output is off by far more than round-off (randomness drawn differently):
    its distance would otherwise make the allowance so wide that a wrong MindSpore output passes."""
    truth = np.random.default_rng(0).standard_normal(256)
    expected, ref = run("torch", y=truth.astype(np.float32)), run("torch64", y=truth + 0.5)
    wrong = run("mindspore", y=(truth + 0.3).astype(np.float32))
    report = compare_results(expected, wrong, reference=ref)
    assert not report.passed and "the copy does not compute what the run computed" in report.meta["reference"]["skipped"]
    assert report.row("y").ref_err_expected is None
