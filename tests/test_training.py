"""compare_training: N training steps on both sides, judged after each (recompat.compat.training).

The correct ports of compat/training_cases.py must pass and every planted port bug must fail, at the step where
it shows; the MindSpore pieces are built from mappings/training.yaml; a setting that does not carry over, a piece
with no pair, a torch optimizer that has stepped are refused before anything trains.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from recompat import mappings
from recompat.compat import training_cases
from recompat.compat.compare import FLOOR_ULPS
from recompat.compat.training import (LR_ULPS_PER_STEP, TrainingError, compare_training, counterpart_loss,
                                      counterpart_optimizer, lr_row, settings)

pytestmark = pytest.mark.runtime

STEPS = 20      # the bench runs 100; every planted bug here shows by step 8
CASES = training_cases.cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_correct_ports_pass_and_planted_bugs_fail(case):
    tm, mm, batches, kwargs = case.build()
    report = compare_training(tm, mm, batches, steps=STEPS, **kwargs)
    assert len(report.steps) == STEPS
    if case.planted:
        assert not report.passed, f"planted bug not caught: {case.name}\n{report}"
        if report.first_failure is None:        # nothing of any step differs: what the run keeps does
            assert [r.name for r in report.run if not r.passed] == ["live tensors per step"], str(report)
        else:
            assert report.first_failure.step <= 8 and "first left the tolerance at step" in str(report)
    else:
        assert report.passed, str(report)
        assert report.meta["verdict"] == "the round-off rule against a float64 run, step by step"


def _simple(**kw):
    import torch

    tm, mm = training_cases._models()
    opt = kw.pop("optimizer", None) or torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    return tm, mm, training_cases._batches(), {"loss": torch.nn.CrossEntropyLoss(), "optimizer": opt, **kw}


def test_the_report_gives_losses_rates_divergence_and_json():
    import torch

    tm, mm, batches, kwargs = _simple()
    kwargs["schedule"] = torch.optim.lr_scheduler.StepLR(kwargs["optimizer"], step_size=3, gamma=0.5)
    report = compare_training(tm, mm, batches, steps=7, **kwargs)
    assert report.passed, str(report)
    curves = report.loss_curves()
    assert set(curves) == {"torch", "MindSpore", "torch (float64 reference)"} and len(curves["torch"]) == 7
    assert [s.lr["MindSpore"] for s in report.steps] == pytest.approx([0.1] * 3 + [0.05] * 3 + [0.025])
    assert all(s.divergence < 1e-5 for s in report.steps)
    assert "mindspore.experimental.optim.sgd.SGD (mappings/training.yaml)" in report.pieces["optimizer"]
    data = json.loads(json.dumps(report.to_dict()))
    assert data["passed"] and data["steps_run"] == 7 and data["first_failure"] is None
    # the parameters and buffers are judged by torch's names, every step
    names = {r.name for r in report.steps[0].rows}
    assert {"loss", "lr", "0.weight", "0.bias", "2.weight", "2.bias"} <= names


def test_the_floor_grows_with_the_steps(monkeypatch):
    from recompat.compat import training

    floors, real = [], training.compare_results

    def spy(*args, **kwargs):
        floors.append(kwargs["floor_ulps"])
        return real(*args, **kwargs)
    monkeypatch.setattr(training, "compare_results", spy)
    tm, mm, batches, kwargs = _simple()
    report = compare_training(tm, mm, batches, steps=3, **kwargs)
    assert report.passed and floors == [FLOOR_ULPS, 2 * FLOOR_ULPS, 3 * FLOOR_ULPS]


def test_the_rate_may_drift_by_float32_roundings_per_step_not_by_a_factor():
    assert lr_row(1, 0.1, 0.1).passed
    drift = 0.1 * 2.0 ** -23 * LR_ULPS_PER_STEP * 10
    assert lr_row(10, 0.1, 0.1 + drift * 0.9).passed
    assert not lr_row(1, 0.1, 0.1 + drift * 0.9).passed
    assert not lr_row(10, 0.1, 0.05).passed and "learning rate" in lr_row(10, 0.1, 0.05).message


def test_counterparts_are_read_from_the_torch_pieces():
    import mindspore.experimental.optim as eo
    import torch
    from mindspore import nn

    tm, mm = training_cases._models()
    loss = counterpart_loss(torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 3.0, 4.0]), ignore_index=2,
                                                      label_smoothing=0.2))
    assert isinstance(loss, nn.CrossEntropyLoss)
    opt = torch.optim.Adam([{"params": list(tm.parameters())[:2], "lr": 0.5}, {"params": list(tm.parameters())[2:]}],
                           lr=0.01, betas=(0.8, 0.95), eps=1e-6)
    by_id = {id(t): m for t, m in zip(tm.parameters(), mm.trainable_params())}
    built = counterpart_optimizer(opt, lambda ps: [by_id[id(p)] for p in ps])
    assert isinstance(built, eo.AdamW)      # torch's Adam is MindSpore's AdamW with weight_decay 0
    assert [(g["lr"], g["betas"], g["eps"], g["weight_decay"]) for g in built.param_groups] == \
        [(0.5, (0.8, 0.95), 1e-6, 0.0), (0.01, (0.8, 0.95), 1e-6, 0.0)]


def test_a_setting_that_does_not_carry_over_is_refused_with_the_reason():
    import torch

    tm, mm, batches, kwargs = _simple(optimizer=None)
    kwargs["optimizer"] = torch.optim.Adam(tm.parameters(), lr=1e-3, weight_decay=0.01)
    with pytest.raises(TrainingError, match=r"weight_decay=0.01 has no counterpart.*L2.*mindspore_optimizer="):
        compare_training(tm, mm, batches, **kwargs)
    entry = mappings.default().entry("clip_grad_norm")
    with pytest.raises(TrainingError, match="norm_type=1.0 has no counterpart.*without abs"):   # measured
        settings(entry, {"max_norm": 1.0, "norm_type": 1.0}.get)


def test_bad_setups_are_refused_before_anything_trains():
    import torch

    tm, mm, batches, kwargs = _simple()
    before = [p.detach().clone() for p in tm.parameters()]
    with pytest.raises(TrainingError, match="RMSprop: no optimizer pair.*mindspore_optimizer="):
        compare_training(tm, mm, batches, **{**kwargs, "optimizer": torch.optim.RMSprop(tm.parameters())})
    with pytest.raises(TrainingError, match="batches is empty"):
        compare_training(tm, mm, [], **kwargs)
    with pytest.raises(TrainingError, match=r"a batch must be \(inputs, target\)"):
        compare_training(tm, mm, [batches[0][0]], **kwargs)
    with pytest.raises(TrainingError, match="clip_grad_norm.*max_norm"):
        compare_training(tm, mm, batches, clip_grad_norm={"norm": 1.0}, **kwargs)
    assert all(torch.equal(a, b) for a, b in zip(before, tm.parameters()))
    kwargs["optimizer"].zero_grad()
    tm(torch.zeros(2, training_cases.IN)).sum().backward()
    kwargs["optimizer"].step()
    with pytest.raises(TrainingError, match="already stepped"):
        compare_training(tm, mm, batches, **kwargs)


def test_given_tolerances_judge_every_step_and_say_so():
    tm, mm, batches, kwargs = _simple()
    report = compare_training(tm, mm, batches, steps=2, rtol=1e-4, atol=1e-5, **kwargs)
    assert report.passed, str(report)
    assert report.meta["verdict"].startswith("rtol/atol") and "torch (float64 reference)" not in report.steps[0].loss


def test_every_training_pair_has_a_proven_example():
    maps = mappings.default()
    assert len(maps.training) >= 12
    unproven = [e.id for e in maps.training if not e.proven]
    assert not unproven, f"training pairs with no output.txt: {unproven} — run `recompat prove`"


def test_an_example_runs_and_records_what_output_txt_holds():
    from recompat.compat.examples import run_training_example
    from recompat.compat.prove import examples_root

    folder = examples_root() / "lr_step"
    text = run_training_example(folder / "torch_example.py", folder / "mindspore_example.py")
    assert text == (folder / "output.txt").read_text(encoding="utf-8")
    assert np.isfinite(float(text.splitlines()[0].rsplit(" ", 1)[1]))


def test_a_ports_own_schedule_needs_torchs_and_the_optimizer_that_trains():
    import mindspore.experimental.optim as eo
    import torch

    tm, mm, batches, kwargs = _simple()
    own = eo.SGD(mm.trainable_params(), lr=0.1, momentum=0.9)
    with pytest.raises(TrainingError, match="schedule= is not"):
        compare_training(tm, mm, batches, mindspore_schedule=eo.lr_scheduler.StepLR(own, 3), **kwargs)
    kwargs["schedule"] = torch.optim.lr_scheduler.StepLR(kwargs["optimizer"], 3)
    with pytest.raises(TrainingError, match="another optimizer than the one that trains"):
        compare_training(tm, mm, batches, mindspore_schedule=eo.lr_scheduler.StepLR(own, 3), **kwargs)


@pytest.mark.parametrize("planted", [False, True])
def test_a_schedule_left_attached_but_not_passed_trains_the_reference_at_torchs_rate(planted):
    """torch's LinearLR sets the rate to 0.025 when it is made and keeps 0.1 as initial_lr; not passed, it never
    steps here, so both sides and the float64 run train at 0.025 (a reference at 0.1 once let a wrong momentum
    pass)."""
    import mindspore.experimental.optim as eo
    import torch

    tm, mm, batches, kwargs = _simple()
    torch.optim.lr_scheduler.LinearLR(kwargs["optimizer"], start_factor=0.25)
    if planted:
        kwargs["mindspore_optimizer"] = eo.SGD(mm.trainable_params(), lr=0.025, momentum=0.5)
    report = compare_training(tm, mm, batches, steps=6, **kwargs)
    assert report.passed is not planted, str(report)
    assert report.steps[0].lr["torch (float64 reference)"] == report.steps[0].lr["torch"] == 0.025
    assert report.meta["verdict"] == "the round-off rule against a float64 run, step by step"


@pytest.mark.parametrize("clip", [{"max_norm": 0.1}, {"max_norm": 1e-5}, {"max_norm": 0.5, "error_if_nonfinite": True}])
def test_clipping_covers_the_optimizers_parameters_as_torch_scales_them(clip):
    """An optimizer over the head only: both sides clip the gradients it steps; a tiny max_norm clips the same on
    both sides (torch divides by norm + 1e-6, as ops.clip_by_norm does)."""
    import torch

    tm, mm, batches, kwargs = _simple()
    kwargs["optimizer"] = torch.optim.SGD(tm[2].parameters(), lr=0.1, momentum=0.9)
    report = compare_training(tm, mm, batches, steps=4, clip_grad_norm=clip, **kwargs)
    assert report.passed, str(report)
    assert "mindspore.ops" in report.pieces["clip"] and "clip_by_norm" in report.pieces["clip"]


def test_a_loss_that_does_not_reduce_or_a_clip_of_zero_is_refused():
    import torch

    tm, mm, batches, kwargs = _simple()
    with pytest.raises(TrainingError, match="max_norm as a number above 0"):
        compare_training(tm, mm, batches, clip_grad_norm=0, **kwargs)
    kwargs["loss"] = torch.nn.CrossEntropyLoss(reduction="none")
    with pytest.raises(TrainingError, match=r"the loss gives shape \(16,\), not one number"):
        compare_training(tm, mm, batches, **kwargs)
