"""Bytes kept for backward vs depth, with and without recompute: the differential report's plot.

A chain of ``depth`` Linear/Dense + ReLU layers runs one forward and backward in each framework, plainly and
with ``checkpoint_sequential`` in round(sqrt(depth)) segments (torch's own; on MindSpore recompat's
``compat.checkpoint_on_mindspore.checkpoint_sequential``), and the bytes the forward keeps for backward are counted
with the harness's saved-tensor hooks (:mod:`recompat.compat.memory`). Plain grows with depth; with recompute it grows with
about sqrt(depth): the promise of activation checkpointing, measured. A few hundred milliseconds on a laptop CPU.
"""
from __future__ import annotations

import math

DEPTHS = (2, 4, 8, 16, 32)
WIDTH = 64
BATCH = 8


def segments(depth: int) -> int:
    return max(1, round(math.sqrt(depth)))


def depth_sweep(depths=DEPTHS, width: int = WIDTH, batch: int = BATCH, frameworks=("torch", "mindspore")) -> dict:
    """{"caption", "measure", "points": [{framework, depth, segments, plain_bytes, recompute_bytes}]}."""
    import numpy as np

    from recompat.compat.memory import MEASURE, SavedTensors
    from recompat.compat.runs import run_mindspore, run_torch

    x = np.random.default_rng(0).standard_normal((batch, width)).astype(np.float32)
    points = []
    for framework in frameworks:
        for depth in depths:
            kept = {}
            for recompute in (False, True):
                counter = SavedTensors(framework)
                model = _model(framework, depth, width, recompute)
                if framework == "torch":
                    run_torch(model, [x], seed=0, forward_context=lambda: counter)
                else:
                    run_mindspore(model, [x], seed=0, mode="pynative", forward_context=lambda: counter)
                kept[recompute] = counter.bytes
            points.append(dict(framework=framework, depth=depth, segments=segments(depth),
                               plain_bytes=kept[False], recompute_bytes=kept[True]))
    return dict(measure=MEASURE, width=width, batch=batch, points=points,
                caption=f"A chain of Linear/Dense({width}, {width}) + ReLU layers, batch {batch}; with recompute: "
                        "checkpoint_sequential in round(sqrt(depth)) segments (MindSpore: "
                        "recompat.compat.checkpoint_on_mindspore.checkpoint_sequential). Bytes: " + MEASURE + ".")


def _model(framework: str, depth: int, width: int, recompute: bool):
    if framework == "torch":
        import torch
        from torch.utils.checkpoint import checkpoint_sequential

        class Chain(torch.nn.Module):
            def __init__(self):
                super().__init__()
                layers = []
                for _ in range(depth):
                    layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
                self.seq = torch.nn.Sequential(*layers)

            def forward(self, x):
                if recompute:
                    return checkpoint_sequential(self.seq, segments(depth), x, use_reentrant=False)
                return self.seq(x)
        return Chain()

    from mindspore import nn

    from recompat.compat.checkpoint_on_mindspore import checkpoint_sequential as ms_checkpoint_sequential

    class MsChain(nn.Cell):
        def __init__(self):
            super().__init__()
            layers = []
            for _ in range(depth):
                layers += [nn.Dense(width, width), nn.ReLU()]
            self.seq = nn.SequentialCell(layers)

        def construct(self, x):
            if recompute:
                return ms_checkpoint_sequential(self.seq, segments(depth), x, use_reentrant=False)
            return self.seq(x)
    return MsChain()
