"""The round-off probe (compat.roundoff): a gradient whose terms cancel is judged by the round-off of those terms,
not by torch float32's lucky sample of it; a port error beyond that still fails; the probe leaves the forward exact
and takes the reference's branches at kinks."""
from __future__ import annotations

import numpy as np
import pytest

from recompat.compat.compare import ROUNDOFF_FACTOR, compare, compare_results, run_pair
from recompat.compat.kink_cases import edge_input, twins
from recompat.compat.roundoff import FLOAT32_EPS, PROBE_RUNS, PROBE_ULPS, gradient_probe, spread
from recompat.compat.roundoff_cases import gate_input, ms_gate, torch_gate
from recompat.compat.runs import RunResult, run_torch

pytestmark = pytest.mark.filterwarnings("ignore")


def grads(**values) -> dict:
    return {name: np.asarray(v) for name, v in values.items()}


def runs_of(framework: str, **values) -> RunResult:
    r = RunResult(framework)
    for name, v in values.items():
        r.add(name, "param-grad", np.asarray(v))
    return r


# a bias gradient that is 0 in exact arithmetic: float64 keeps 4e-16, torch's float32 happens to give exactly 0,
# MindSpore's one float32 ulp of the terms that cancelled (MONAI's AttentionUnet in training mode)
REF, TORCH32, ULP_OF_TERMS = 4.4e-16, 0.0, 9.5e-7


def cancelled(actual: float, probe: float | None):
    ref = runs_of("torch64", b=[REF])
    expected = runs_of("torch", b=np.float32([TORCH32]))
    got = runs_of("mindspore", b=np.float32([actual]))
    probes = [runs_of("torch64", b=[REF + probe])] if probe is not None else []
    return compare_results(expected, got, reference=ref, probes=probes).row("b")


def test_a_gradient_that_cancels_is_judged_by_the_probe():
    row = cancelled(ULP_OF_TERMS, probe=5e-7)
    assert row.passed, row.message
    assert row.message.startswith("passes by the round-off probe") and row.ref_err_probe == pytest.approx(5e-7)


def test_without_a_probe_the_same_gradient_false_alarms():
    """The check of the mechanism: torch's own distance alone (4e-16) allows nothing for the cancelled terms."""
    row = cancelled(ULP_OF_TERMS, probe=None)
    assert not row.passed and "torch's own float32 round-off" in row.message and row.ref_err_probe is None


def test_an_error_beyond_the_probe_still_fails():
    """Planted: 40 probe-widths off (a port error, not round-off) fails and names what measured round-off."""
    row = cancelled(ROUNDOFF_FACTOR * 1.25 * 5e-7, probe=5e-7)
    assert not row.passed and "the round-off probe's 5e-07" in row.message, row.message


def test_the_probe_scales_with_the_tensors_dtype():
    """The probe perturbs by float32 ulps; a float16 tensor's round-off is 2**13 times as coarse."""
    ref = runs_of("torch64", b=[REF])
    expected = RunResult("torch")
    expected.add("b", "param-grad", np.float16([0.0]))
    got = RunResult("mindspore")
    got.add("b", "param-grad", np.float16([ULP_OF_TERMS * 2 ** 13]))
    report = compare_results(expected, got, reference=ref, probes=[runs_of("torch64", b=[REF + 5e-7])])
    assert report.row("b").passed, report.row("b").message


def test_spread_is_the_largest_distance_of_any_probe():
    ref = np.array([0.0, 1.0])
    assert spread(ref, [np.array([1e-7, 1.0]), np.array([-3e-7, 1.0 + 1e-8])]).tolist() == pytest.approx([3e-7, 1e-8])
    assert spread(ref, [np.zeros(3)]) is None


# ----- the probe on real runs ------------------------------------------------------------------
torch = pytest.importorskip("torch")


def small_net():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.BatchNorm1d(32), torch.nn.ReLU(),
                              torch.nn.Linear(32, 1), torch.nn.BatchNorm1d(1)).double().train()
    state = {k: v.clone() for k, v in net.state_dict().items()}
    return net, state


def probed_run(net, state, x, seed):
    net.load_state_dict(state)
    return run_torch(net, [x], backward_context=gradient_probe(seed) if seed is not None else None)


def test_the_probe_leaves_the_forward_exact_and_perturbs_gradients_by_about_an_ulp():
    net, state = small_net()
    x = np.random.default_rng(0).standard_normal((8, 16))
    plain, probe, again, other = (probed_run(net, state, x, s) for s in (None, 1, 1, 2))
    for name in plain.names("output") + plain.names("buffer"):
        assert np.array_equal(plain.tensors[name], probe.tensors[name]), name
    moved = []
    for name in plain.names("param-grad") + plain.names("input-grad"):
        assert np.array_equal(probe.tensors[name], again.tensors[name]), name     # the same seed, the same probe
        d = np.abs(probe.tensors[name] - plain.tensors[name]).max()
        moved.append(d)
        scale = np.abs(plain.tensors[name]).max()
        assert d <= 64 * PROBE_ULPS * FLOAT32_EPS * max(scale, 1.0), (name, d, scale)
    assert max(moved) > 0 and any(not np.array_equal(probe.tensors[n], other.tensors[n])
                                  for n in plain.names("param-grad"))
    # the last BatchNorm has one channel: the bias of the Linear before it has a gradient 0 in exact arithmetic,
    # which the probe moves by round-off of the terms, not of the (vanishing) result
    bias = "3.bias.grad"
    assert abs(plain.tensors[bias]).max() < 1e-12 < np.abs(probe.tensors[bias] - plain.tensors[bias]).max()


def test_probes_take_the_references_branches_at_kinks():
    """A ReLU input at its channel's batch mean (compat.kink_cases): where a float32 side flips, the reference takes
    its branch, and so does every probe: outputs bit for bit, gradients within a few ulps."""
    for ulps in (-3, 0):
        runs = run_pair(*twins(), [edge_input(ulps)])
        assert len(runs.probes) == PROBE_RUNS
        for probe in runs.probes:
            for name in runs.reference.names("output"):
                assert np.array_equal(probe.tensors[name], runs.reference.tensors[name])
            for name in runs.reference.names("param-grad"):
                ref = runs.reference.tensors[name]
                assert np.abs(probe.tensors[name] - ref).max() <= 1e-5 * max(np.abs(ref).max(), 1.0), name


def test_an_attention_gate_in_training_mode_agrees_and_its_planted_eps_fails():
    """AttentionUnet's gate (compat.roundoff_cases) over seeds: no false alarm; the gate's BatchNorm eps 1e-3 for
    1e-5 fails on every seed."""
    for seed in range(4):
        torch.manual_seed(seed)
        report = compare(torch_gate(), ms_gate(), [gate_input(seed)], seed=seed)
        assert report.passed, (seed, str(report))
        torch.manual_seed(seed)
        assert not compare(torch_gate(), ms_gate(bn_eps=1e-3), [gate_input(seed)], seed=seed, strict=False).passed


def test_a_probe_that_cannot_run_leaves_the_rule_to_torchs_measure_and_says_why(monkeypatch):
    """Planted: every probe's backward raises. compare() still judges (reference="float64" included), and the
    report's meta says why no probe ran."""
    import sys

    compare_module = sys.modules["recompat.compat.compare"]    # the package exports a function of that name

    class Broken:
        def __enter__(self):
            raise RuntimeError("planted probe failure")

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(compare_module, "gradient_probe", lambda seed: Broken())
    torch.manual_seed(0)
    report = compare(torch_gate(), ms_gate(), [gate_input(0)], reference="float64")
    assert report.passed, str(report)
    assert "planted probe failure" in report.meta["reference"]["probe_skipped"]
