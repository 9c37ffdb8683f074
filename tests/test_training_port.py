"""compare_training judges the port's own training pieces, never the harness's: the port's clipping (or its lack),
a MindSpore optimizer carrying its own rates; the rate row judges a difference by what it does to the step, so a
faithful schedule whose rate vanishes passes; a setup the API cannot take is a TrainingError that says how."""
from __future__ import annotations

import pytest
import torch
from mindspore import nn, ops

from recompat.compat import training_cases
from recompat.compat.kink_replay import MINDSPORE, TORCH
from recompat.compat.training import TrainingError, compare_training, lr_row

pytestmark = pytest.mark.runtime


def _pair(lr=0.1, momentum=0.0):
    tm, mm = training_cases._models()
    opt = torch.optim.SGD(tm.parameters(), lr=lr, momentum=momentum)
    return tm, mm, training_cases._batches(), {"loss": torch.nn.CrossEntropyLoss(), "optimizer": opt}


def test_a_faithful_cosine_schedule_to_zero_passes_over_100_steps():
    tm, mm, batches, kw = _pair()
    kw["optimizer"] = torch.optim.AdamW(tm.parameters(), lr=1e-2, weight_decay=0.05)
    kw["schedule"] = torch.optim.lr_scheduler.CosineAnnealingLR(kw["optimizer"], T_max=100, eta_min=0.0)
    report = compare_training(tm, mm, batches, steps=100, **kw)
    assert report.passed, str(report)
    assert report.steps[-1].lr[TORCH] < 1e-3 * report.steps[0].lr[TORCH]
    # judged by the ulps of the rate itself, as before, the vanishing end would fail though the weights agree
    assert any(not lr_row(s.step, s.lr[TORCH], s.lr[MINDSPORE]).passed for s in report.steps)


def test_a_port_that_forgot_its_clipping_fails_and_its_own_clipping_passes():
    tm, mm, batches, kw = _pair()
    forgot = compare_training(tm, mm, batches, steps=6, clip_grad_norm=0.05, mindspore_clip_grad_norm=None, **kw)
    assert not forgot.passed
    assert forgot.first_failure.step <= 2
    assert forgot.pieces["clip"] == ("torch.nn.utils.clip_grad_norm_(max_norm=0.05) -> none (given: "
                                     "mindspore_clip_grad_norm=None)")

    tm, mm, batches, kw = _pair()
    own = compare_training(tm, mm, batches, steps=6, clip_grad_norm=0.05,
                           mindspore_clip_grad_norm=lambda grads: ops.clip_by_norm(grads, max_norm=0.05), **kw)
    assert own.passed, str(own)
    assert own.pieces["clip"].endswith("(given)")

    tm, mm, batches, kw = _pair()   # the port clips where torch does not: caught too
    extra = compare_training(tm, mm, batches, steps=6, mindspore_clip_grad_norm=0.05, **kw)
    assert not extra.passed and extra.pieces["clip"].startswith("none -> mindspore.ops")


def _rates(steps, drop_every, lr=0.1, gamma=0.5):
    return [lr * gamma ** (k // drop_every) for k in range(steps)]


def test_a_mindspore_optimizer_with_its_own_rate_list_is_the_ports_schedule():
    tm, mm, batches, kw = _pair()
    kw["schedule"] = torch.optim.lr_scheduler.StepLR(kw["optimizer"], step_size=3, gamma=0.5)
    port = nn.SGD(mm.trainable_params(), learning_rate=_rates(9, 3))
    report = compare_training(tm, mm, batches, steps=9, mindspore_optimizer=port, **kw)
    assert report.passed, str(report)
    assert [s.lr[MINDSPORE] for s in report.steps] == pytest.approx(_rates(9, 3))
    assert "the rates mindspore.nn.optim.sgd.SGD carries: a list of 9 rates, one per step (given)" \
        in report.pieces["schedule"]

    tm, mm, batches, kw = _pair()       # planted: the list drops the rate a step late
    kw["schedule"] = torch.optim.lr_scheduler.StepLR(kw["optimizer"], step_size=3, gamma=0.5)
    late = compare_training(tm, mm, batches, steps=9, mindspore_optimizer=nn.SGD(
        mm.trainable_params(), learning_rate=_rates(9, 4)), **kw)
    assert not late.passed and late.first_failure.step == 4
    assert not next(r for r in late.first_failure.rows if r.name == "lr").passed


def test_setups_the_api_cannot_take_say_how_to_give_them():
    tm, mm, batches, kw = _pair()
    with pytest.raises(TrainingError, match="a list of 5 learning rates, one per step, and the run takes 9 steps"):
        compare_training(tm, mm, batches, steps=9, mindspore_optimizer=nn.SGD(mm.trainable_params(),
                                                                               learning_rate=_rates(5, 3)), **kw)
    tm, mm, batches, kw = _pair()
    kw["schedule"] = torch.optim.lr_scheduler.StepLR(kw["optimizer"], step_size=3, gamma=0.5)
    with pytest.raises(TrainingError, match=r"StepLR: its MindSpore counterpart cannot set the rate of "
                                            r"mindspore.nn.optim.sgd.SGD .*learning_rate=\[one rate per step\]"):
        compare_training(tm, mm, batches, steps=3, mindspore_optimizer=nn.SGD(mm.trainable_params(),
                                                                               learning_rate=0.1), **kw)
    tm, mm, batches, kw = _pair()
    with pytest.raises(TrainingError, match="give the port's clipping as a function of the gradients"):
        compare_training(tm, mm, batches, steps=3, clip_grad_norm=1.0, mindspore_clip_grad_norm="1.0", **kw)


def test_nn_momentum_with_its_own_rate_list_is_taken_as_the_ports_schedule():
    # the form the issue found refused with a raw TypeError: torch's SGD with momentum and StepLR, against the
    # port's nn.Momentum carrying the rates of its steps
    tm, mm, batches, kw = _pair(momentum=0.9)
    kw["schedule"] = torch.optim.lr_scheduler.StepLR(kw["optimizer"], step_size=3, gamma=0.5)
    port = nn.Momentum(mm.trainable_params(), learning_rate=_rates(12, 3), momentum=0.9)
    report = compare_training(tm, mm, batches, steps=12, mindspore_optimizer=port, **kw)
    assert report.passed, str(report)
    assert [s.lr[MINDSPORE] for s in report.steps] == pytest.approx(_rates(12, 3))


def test_training_starts_from_the_users_converted_weights_and_judges_them_first(tmp_path):
    import mindspore as ms

    def converted(tm, mm, skip=()):
        params = mm.parameters_dict()
        for name, value in tm.named_parameters():
            if name not in skip:
                params[name].set_data(ms.Tensor(value.detach().numpy()))

    tm, mm, batches, kw = _pair()
    converted(tm, mm)
    faithful = compare_training(tm, mm, batches, steps=3, **kw)
    assert faithful.passed, str(faithful)
    assert faithful.meta["weights"]["run_with"] == "as-is" and "weights judged: the MindSpore model's own" \
        in str(faithful)

    tm, mm, batches, kw = _pair()
    converted(tm, mm, skip={"0.bias"})          # planted: the conversion forgot a bias
    forgot = compare_training(tm, mm, batches, steps=3, **kw)
    assert not forgot.passed
    assert [r.name for r in forgot.setup if not r.passed] == ["0.bias"]
    assert "setup: 0.bias: the two models hold different values before the run" in str(forgot)

    tm, mm, batches, kw = _pair()
    path = tmp_path / "model.pt"
    torch.save(tm.state_dict(), path)
    from_file = compare_training(tm, mm, batches, steps=3, weights=path, **kw)
    assert from_file.passed, str(from_file)
    assert from_file.meta["weights"]["file"] == str(path)
    with pytest.raises(ValueError, match="weights='mindspore' is compare\\(\\)'s only"):
        compare_training(tm, mm, batches, steps=3, weights="mindspore", **kw)
