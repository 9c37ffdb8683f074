"""Benchmark: ReLU, ReLU6 and LeakyReLU kinks. False alarms on correct twins and catches of planted bugs, compare()
with kink replay (the default) against kinks=False (one float64 run, the verdict before compat.kink_replay), in the
same run.

Not a test: it prints figures. Correct twins: (a) BatchNorm2d (training mode) -> ReLU -> Conv2d with one input
element placed at its channel's batch mean and walked across it ulp by ulp, so one framework's float32 rounds its
normalised value to the other side of 0 (the reproducer of a false alarm found on torchvision's resnet18 against
mindcv's), with a ReLU, a ReLU6 (torch's F.hardtanh(x, 0, 6), MindSpore's ReLU6 primitive) and a LeakyReLU; (b)
bench/verdict_bench.py's 6-layer Conv+BatchNorm+ReLU stack in training mode over several seeds.
Bugs: a ReLU that cuts at 0.01 (through the ReLU primitive, and spelled without it), BatchNorm eps 1e-3, a conv
weight off by 1e-3 after the transfer.

    python bench/kink_bench.py [--walk 6] [--seeds 8]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

os.environ.setdefault("GLOG_v", "3")
warnings.simplefilter("ignore")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from mindspore import nn as msnn  # noqa: E402
from mindspore import ops  # noqa: E402
from torch import nn as tnn  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verdict_bench import MsConvBN, TorchConvBN  # noqa: E402

from recompat.compat.compare import compare  # noqa: E402
from recompat.compat.kink_cases import edge_input  # noqa: E402
from recompat.compat.weights import transfer_weights  # noqa: E402


class ShiftedReLU(msnn.Cell):
    """A ReLU that cuts at 0.01, run through the ReLU primitive (its decisions are recorded)."""

    def construct(self, x):
        return ops.relu(x - 0.01) + 0.01 * (x > 0.01).astype(x.dtype)


class MaskedReLU(msnn.Cell):
    """The same cut spelled without the ReLU primitive (nothing is recorded: the decisions are not replayed)."""

    def construct(self, x):
        return x * (x > 0.01).astype(x.dtype)


# the activation between the BatchNorm and the conv: (torch's, MindSpore's)
ACTIVATIONS = {"ReLU": (tnn.ReLU, msnn.ReLU), "ReLU6": (tnn.ReLU6, msnn.ReLU6),
               "LeakyReLU": (tnn.LeakyReLU, lambda: msnn.LeakyReLU(alpha=0.01))}


def edge_twins(bug: str | None, activation: str = "ReLU"):
    torch.manual_seed(0)
    torch_act, ms_act = ACTIVATIONS[activation]
    t = tnn.Sequential(tnn.BatchNorm2d(4), torch_act(), tnn.Conv2d(4, 4, 3, padding=1)).train()
    relu = {"relu cut at 0.01": ShiftedReLU(), "relu cut at 0.01, no primitive": MaskedReLU()}.get(bug, ms_act())
    m = msnn.SequentialCell(msnn.BatchNorm2d(4, eps=1e-3 if bug == "BatchNorm eps 1e-3" else 1e-5), relu,
                            msnn.Conv2d(4, 4, 3, pad_mode="pad", padding=1, has_bias=True))
    m.set_train(True)
    return t, m


def weight_off():
    """The conv weight off by 1e-3 after the transfer (compare copies torch's weights in first)."""
    real = transfer_weights

    def transfer(a, b, **kwargs):
        out = real(a, b, **kwargs)
        p = b.trainable_params()[-2]
        p.set_data(p + 1e-3)
        return out
    return transfer


def judge(t, m, x, kinks: bool, bug: str | None) -> bool:
    import recompat.compat.weights as weights

    real = weights.transfer_weights
    if bug == "conv weight off by 1e-3":
        weights.transfer_weights = weight_off()
    try:
        return compare(t, m, [x], strict=False, kinks=kinks).passed
    finally:
        weights.transfer_weights = real


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--walk", type=int, default=6, help="ulps either side of the batch mean")
    parser.add_argument("--seeds", type=int, default=8, help="seeds of the 6-layer Conv+BatchNorm+ReLU stack")
    args = parser.parse_args()
    walk = range(-args.walk, args.walk + 1)
    print(f"torch {torch.__version__}, float32 on CPU; a cell counts the runs that failed\n")
    print("| case | kind | runs | kinks replayed: failed | kinks=False: failed | s |")
    print("|---|---|---:|---:|---:|---:|")
    totals = {True: {"alarms": 0, "correct": 0, "caught": 0, "bugs": 0},
              False: {"alarms": 0, "correct": 0, "caught": 0, "bugs": 0}}

    def row(name, correct, runs):
        start = time.perf_counter()
        failed = {True: 0, False: 0}
        for make in runs:
            for kinks in (True, False):
                failed[kinks] += not make(kinks)
        for kinks in (True, False):
            v = totals[kinks]
            v["correct" if correct else "bugs"] += len(runs)
            v["alarms" if correct else "caught"] += failed[kinks]
        print(f"| {name} | {'correct' if correct else 'bug'} | {len(runs)} | {failed[True]} | {failed[False]} | "
              f"{time.perf_counter() - start:.1f} |", flush=True)

    for bug in (None, "relu cut at 0.01", "relu cut at 0.01, no primitive", "BatchNorm eps 1e-3",
                "conv weight off by 1e-3"):
        row(f"BatchNorm-ReLU-Conv, one value walked {-args.walk}..+{args.walk} ulps across 0"
            + (f": {bug}" if bug else ""), bug is None,
            [lambda kinks, k=k, bug=bug: judge(*edge_twins(bug), edge_input(k), kinks, bug) for k in walk])
    for activation in ("ReLU6", "LeakyReLU"):
        row(f"BatchNorm-{activation}-Conv, one value walked {-args.walk}..+{args.walk} ulps across 0", True,
            [lambda kinks, k=k, a=activation: judge(*edge_twins(None, a), edge_input(k), kinks, None) for k in walk])

    def stack(seed, kinks):
        torch.manual_seed(seed)
        t, m = TorchConvBN(), MsConvBN()
        m.set_train(True)
        x = np.random.default_rng(seed).standard_normal((8, 3, 64, 64)).astype(np.float32)
        return compare(t, m, [x], kinks=kinks).passed
    row("6-layer Conv+BatchNorm+ReLU, training mode, 8x3x64x64", True,
        [lambda kinks, s=s: stack(s, kinks) for s in range(args.seeds)])

    print()
    for kinks in (True, False):
        v = totals[kinks]
        print(f"{'kinks replayed' if kinks else 'kinks=False':>14}: false alarms {v['alarms']}/{v['correct']} runs "
              f"of correct twins, bugs caught {v['caught']}/{v['bugs']} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
