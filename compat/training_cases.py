"""Training pairs for compare_training's proof: correct ports that must pass and planted port bugs that must fail.

Each case builds fresh models and pieces, so it can run any number of times: ``case.build()`` gives
(torch model, MindSpore model, batches, compare_training's keyword arguments). tests/test_training.py runs them for a
few dozen steps; bench/training_bench.py for 100 and prints the false alarms and the catch rate. The planted bugs
are the mistakes a port of a training loop makes: an optimizer that decays otherwise, an eps in another place, a
BatchNorm momentum not turned around, a loss setting dropped, a schedule off by a step, a recompute that keeps a
tensor of every step alive.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

IN, HIDDEN, CLASSES, BATCH = 8, 32, 4, 16


@dataclass(frozen=True)
class TrainingCase:
    name: str
    build: Callable[[], tuple]      # () -> (torch_model, ms_model, batches, kwargs)
    planted: bool                   # a bug that must be caught


def _models(norm: bool = False, ms_momentum: float = 0.9, early_stop: bool | None = None):
    """A small classifier (Linear, [BatchNorm1d], Tanh, Linear) on both sides; ms_momentum is MindSpore's. With
    ``early_stop`` (True or False), two checkpointed Linear-Tanh blocks come first: torch's non-reentrant
    checkpoint, MindSpore's non-reentrant recompute with that early_stop."""
    import torch
    from mindspore import nn

    torch.manual_seed(0)
    layers = [torch.nn.Linear(IN, HIDDEN)] + ([torch.nn.BatchNorm1d(HIDDEN)] if norm else []) + \
        [torch.nn.Tanh(), torch.nn.Linear(HIDDEN, CLASSES)]
    cells = [nn.Dense(IN, HIDDEN)] + ([nn.BatchNorm1d(HIDDEN, momentum=ms_momentum)] if norm else []) + \
        [nn.Tanh(), nn.Dense(HIDDEN, CLASSES)]
    if early_stop is not None:
        layers[:0] = [_checkpointed(torch.nn.Sequential(torch.nn.Linear(IN, IN), torch.nn.Tanh())) for _ in range(2)]
        cells[:0] = [_recomputed(nn.SequentialCell([nn.Dense(IN, IN), nn.Tanh()]), early_stop) for _ in range(2)]
    return torch.nn.Sequential(*layers), nn.SequentialCell(cells)


def _checkpointed(block):
    import torch
    from torch.utils.checkpoint import checkpoint

    class Checkpointed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = block

        def forward(self, x):
            return checkpoint(self.block, x, use_reentrant=False)
    return Checkpointed()


def _recomputed(block, early_stop: bool):
    import mindspore

    class Recomputed(mindspore.nn.Cell):
        def __init__(self):
            super().__init__()
            self.block = block

        def construct(self, x):
            return mindspore.recompute(self.block, x, use_reentrant=False, early_stop=early_stop)
    return Recomputed()


def _batches(target: str = "class", n: int = 10, seed: int = 0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        x = rng.standard_normal((BATCH, IN)).astype(np.float32)
        y = rng.integers(0, CLASSES, BATCH) if target == "class" else \
            rng.standard_normal((BATCH, CLASSES)).astype(np.float32)
        out.append((x, y))
    return out


def _case(name: str, planted: bool = False, *, norm: bool = False, ms_momentum: float = 0.9, target: str = "class",
          loss: Callable = None, optimizer: Callable, schedule: Callable | None = None,
          ms_pieces: Callable | None = None, early_stop: bool | None = None, **extra) -> TrainingCase:
    """optimizer(params) / schedule(optimizer) / loss(): torch's pieces; ms_pieces(ms_model) -> the port's own."""
    def build():
        import torch

        tm, mm = _models(norm, ms_momentum, early_stop)
        opt = optimizer(tm.parameters())
        kwargs = {"loss": (loss or torch.nn.CrossEntropyLoss)(), "optimizer": opt, **extra}
        if schedule is not None:
            kwargs["schedule"] = schedule(opt)
        if ms_pieces is not None:
            kwargs.update(ms_pieces(mm))
        return tm, mm, _batches(target), kwargs
    return TrainingCase(name, build, planted)


def cases() -> list[TrainingCase]:
    import mindspore.experimental.optim as eo
    import torch
    from mindspore import nn, ops

    T = torch.optim
    S = T.lr_scheduler
    sgd = lambda p: T.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=1e-3)   # noqa: E731
    adamw = lambda p: T.AdamW(p, lr=1e-2, weight_decay=0.05)   # noqa: E731
    adam = lambda p: T.Adam(p, lr=1e-2)   # noqa: E731
    return [
        # correct ports: every piece built from mappings/training.yaml, or the port's own correct one
        _case("sgd+batchnorm", norm=True, optimizer=sgd),
        _case("sgd nesterov", optimizer=lambda p: T.SGD(p, lr=0.1, momentum=0.9, nesterov=True)),
        _case("adamw", optimizer=adamw),
        _case("adam", optimizer=adam),
        _case("adamw amsgrad", optimizer=lambda p: T.AdamW(p, lr=1e-2, amsgrad=True)),
        _case("cross-entropy smoothing", optimizer=sgd,
              loss=lambda: torch.nn.CrossEntropyLoss(label_smoothing=0.1)),
        _case("mse", target="real", optimizer=sgd, loss=torch.nn.MSELoss),
        _case("l1 sum", target="real", optimizer=lambda p: T.SGD(p, lr=1e-3),
              loss=lambda: torch.nn.L1Loss(reduction="sum")),
        _case("steplr", optimizer=sgd, schedule=lambda o: S.StepLR(o, step_size=7, gamma=0.5)),
        _case("cosine", optimizer=adamw, schedule=lambda o: S.CosineAnnealingLR(o, T_max=30, eta_min=1e-4)),
        _case("linear warm-up", optimizer=adamw, schedule=lambda o: S.LinearLR(o, start_factor=0.25, total_iters=20)),
        _case("clipping", optimizer=sgd, clip_grad_norm=0.5),
        _case("the port's own clipping", optimizer=sgd, clip_grad_norm=0.5,
              mindspore_clip_grad_norm=lambda grads: ops.clip_by_norm(grads, max_norm=0.5)),
        _case("the port's own rate list (nn.SGD)", optimizer=lambda p: T.SGD(p, lr=0.1),
              schedule=lambda o: S.StepLR(o, step_size=7, gamma=0.5),
              ms_pieces=lambda m: {"mindspore_optimizer": nn.SGD(m.trainable_params(), learning_rate=[
                  0.1 * 0.5 ** (k // 7) for k in range(100)])}),
        _case("the port's own sgd", optimizer=sgd, ms_pieces=lambda m: {
            "mindspore_optimizer": eo.SGD(m.trainable_params(), lr=0.1, momentum=0.9, dampening=0.1,
                                          weight_decay=1e-3)}),
        _case("checkpointed blocks recomputed (early_stop=False)", optimizer=sgd, early_stop=False),
        # planted port bugs
        _case("adamw ported as adam with weight_decay (L2, not decoupled)", True, optimizer=adamw,
              ms_pieces=lambda m: {"mindspore_optimizer": eo.Adam(m.trainable_params(), lr=1e-2, weight_decay=0.05)}),
        _case("adam ported as MindSpore's adam (eps before the bias correction)", True, optimizer=adam,
              ms_pieces=lambda m: {"mindspore_optimizer": eo.Adam(m.trainable_params(), lr=1e-2)}),
        _case("adamw ported as nn.AdamWeightDecay (no bias correction)", True, optimizer=adamw,
              ms_pieces=lambda m: {"mindspore_optimizer": nn.AdamWeightDecay(m.trainable_params(), learning_rate=1e-2,
                                                                             eps=1e-8, weight_decay=0.05)}),
        _case("clipping forgotten", True, optimizer=sgd, clip_grad_norm=0.5, mindspore_clip_grad_norm=None),
        _case("sgd's dampening dropped", True, optimizer=sgd, ms_pieces=lambda m: {
            "mindspore_optimizer": eo.SGD(m.trainable_params(), lr=0.1, momentum=0.9, weight_decay=1e-3)}),
        _case("batchnorm momentum without 1 - m (running statistics only)", True, norm=True, ms_momentum=0.1,
              optimizer=sgd, strict=False),
        _case("label smoothing dropped", True, optimizer=sgd,
              loss=lambda: torch.nn.CrossEntropyLoss(label_smoothing=0.1),
              ms_pieces=lambda m: {"mindspore_loss": nn.CrossEntropyLoss()}),
        _case("reduction sum ported as mean", True, target="real", optimizer=lambda p: T.SGD(p, lr=1e-3),
              loss=lambda: torch.nn.MSELoss(reduction="sum"), ms_pieces=lambda m: {"mindspore_loss": nn.MSELoss()}),
        _case("steplr off by one step", True, optimizer=sgd, schedule=lambda o: S.StepLR(o, step_size=7, gamma=0.5),
              ms_pieces=lambda m: _with_schedule(m, lambda o: eo.lr_scheduler.StepLR(o, step_size=8, gamma=0.5))),
        _case("cosine T_max off by one", True, optimizer=sgd,
              schedule=lambda o: S.CosineAnnealingLR(o, T_max=30, eta_min=1e-4),
              ms_pieces=lambda m: _with_schedule(m, lambda o: eo.lr_scheduler.CosineAnnealingLR(o, T_max=31,
                                                                                                eta_min=1e-4))),
        _case("recompute keeping a tensor of every step (early_stop=True)", True, optimizer=sgd, early_stop=True),
    ]


def _with_schedule(ms_model, schedule):
    """The port's own SGD (as the mapping builds it) with its own, wrong, schedule."""
    import mindspore.experimental.optim as eo

    opt = eo.SGD(ms_model.trainable_params(), lr=0.1, momentum=0.9, dampening=0.1, weight_decay=1e-3)
    return {"mindspore_optimizer": opt, "mindspore_schedule": schedule(opt)}
