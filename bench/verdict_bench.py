"""Benchmark: does compare()'s verdict hold at scale? False alarms on correct twins, catches of planted bugs.

Not a test: it prints figures. Each case is a torch model and a MindSpore twin at a realistic size; a "correct"
twin computes the same function (only float32 round-off differs), a "bug" twin carries one migration mistake.
One set of runs per case (compat.compare.run_pair, with the float64 reference run of the torch model) is judged
four ways:
  (a) defaults:  compare_results' per-dtype tolerances (torch.testing's float32 rtol 1.3e-6, atol 1e-5);
  (b) cross:     recompat.constants.CROSS_RTOL / CROSS_ATOL for every tensor;
  (c) reference: the round-off rule with torch float32's own distance from the float64 run as the only measure of
                 round-off (compat.compare.judge_by_reference; each side against the float64 run along its own
                 branches at kinks, compat.kink_replay);
  (d) probed:    the round-off rule as compare() applies it: round-off is the larger of torch's distance and the
                 round-off probe's (compat.roundoff: the float64 run again with its backward perturbed);
  (e) compare:   compare()'s default verdict: (d), and a failing row for each paired layer whose setting differs
                 (strict; compat.compare.transfer_rows).
Goal: (d) and (e) raise 0 false alarms and catch every bug; where a bug sits below float32 round-off it is listed
as the frontier, not tuned away.

    python bench/verdict_bench.py [--only NAME ...]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter

os.environ.setdefault("GLOG_v", "3")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from mindspore import nn as msnn  # noqa: E402
from mindspore import ops  # noqa: E402
from torch import nn as tnn  # noqa: E402

from recompat.compat.compare import (FLOOR_ULPS, ROUNDOFF_FACTOR, compare_results, kink_row, run_pair,  # noqa: E402
                                     transfer_rows)
from recompat.compat.roundoff_cases import GATE_INPUT, ms_gate, torch_gate  # noqa: E402
from recompat.compat.zoo.layers import ms_bn, ms_conv  # noqa: E402
from recompat.compat.zoo.transformer import MsTransformer, TorchTransformer  # noqa: E402
from recompat.constants import CROSS_ATOL, CROSS_RTOL  # noqa: E402


# -- a deep residual MLP (GELU, LayerNorm) -------------------------------------------------------------------
class TorchMLP(tnn.Module):
    def __init__(self, width=512, depth=12):
        super().__init__()
        self.blocks = tnn.ModuleList([tnn.Sequential(tnn.LayerNorm(width), tnn.Linear(width, width), tnn.GELU())
                                      for _ in range(depth)])
        self.head = tnn.Linear(width, 10)

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return self.head(x)


class DenseBug(msnn.Dense):
    """A Dense with one migration bug: its square weight used untransposed, or its bias left out."""

    def __init__(self, *args, bug=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.bug = bug

    def construct(self, x):
        weight = self.weight if self.bug == "transposed" else self.weight.T
        y = ops.matmul(x, weight)
        return y if self.bug == "no_bias" else y + self.bias


class MsMLP(msnn.Cell):
    def __init__(self, width=512, depth=12, eps=1e-5, approximate=False, bug_at=None, bug=None):
        super().__init__()
        self.blocks = msnn.CellList([msnn.SequentialCell([
            msnn.LayerNorm((width,), epsilon=eps),
            DenseBug(width, width, bug=bug if i == bug_at else None),
            msnn.GELU(approximate=approximate)]) for i in range(depth)])
        self.head = msnn.Dense(width, 10)

    def construct(self, x):
        for block in self.blocks:
            x = x + block(x)
        return self.head(x)


# -- a Conv + BatchNorm + ReLU stack, in training mode --------------------------------------------------------
class TorchConvBN(tnn.Module):
    def __init__(self, channels=16, depth=6):
        super().__init__()
        layers, c = [], 3
        for _ in range(depth):
            layers += [tnn.Conv2d(c, channels, 3, padding=1), tnn.BatchNorm2d(channels), tnn.ReLU()]
            c = channels
        self.body = tnn.Sequential(*layers)
        self.head = tnn.Linear(channels, 10)

    def forward(self, x):
        return self.head(self.body(x).mean((2, 3)))


class MsConvBN(msnn.Cell):
    def __init__(self, channels=16, depth=6, bn_eps=1e-5, momentum_converted=True):
        super().__init__()
        layers, c = [], 3
        for _ in range(depth):
            bn = ms_bn(channels) if momentum_converted else msnn.BatchNorm2d(channels, eps=1e-5, momentum=0.1)
            if bn_eps != 1e-5:
                bn = msnn.BatchNorm2d(channels, eps=bn_eps, momentum=0.9)
            layers += [ms_conv(c, channels, 3, padding=1), bn, msnn.ReLU()]
            c = channels
        self.body = msnn.SequentialCell(layers)
        self.head = msnn.Dense(channels, 10)

    def construct(self, x):
        return self.head(self.body(x).mean((2, 3)))


# -- a transformer (the zoo's pair at scale) ------------------------------------------------------------------
TRANSFORMER = dict(vocab=16, dim=256, heads=4, hidden=1024, layers=4)


class MsTransformerScaleBug(MsTransformer):
    """The attention scores' 1/sqrt(head_dim) scale written as 1/head_dim."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for layer in self.layers:
            layer.attn.scale = layer.attn.heads / TRANSFORMER["dim"]


def _inputs(name, rng):
    if name == "mlp":
        return [rng.standard_normal((64, 512)).astype(np.float32)]
    if name == "convbn":
        return [rng.standard_normal((8, 3, 64, 64)).astype(np.float32)]
    if name == "gate":
        return [rng.standard_normal(GATE_INPUT).astype(np.float32)]
    ids = rng.integers(0, 16, size=(32, 32)).astype(np.int64)
    mask = np.ones((32, 32), np.float32)
    mask[::3, 24:] = 0.0
    return [ids, mask]


# (case, model, correct?, torch factory, MindSpore factory)
CASES = [
    ("mlp", "mlp", True, TorchMLP, MsMLP),
    ("convbn-train", "convbn", True, TorchConvBN, MsConvBN),
    ("gate-train (AttentionUnet's)", "gate", True, torch_gate, ms_gate),
    ("transformer", "transformer", True, lambda: TorchTransformer(recompute=False, **TRANSFORMER),
     lambda: MsTransformer(recompute=False, **TRANSFORMER)),
    ("mlp: GELU tanh approximation", "mlp", False, TorchMLP, lambda: MsMLP(approximate=True)),
    ("mlp: LayerNorm eps 1e-3", "mlp", False, TorchMLP, lambda: MsMLP(eps=1e-3)),
    ("mlp: LayerNorm eps 1e-7 (for 1e-5)", "mlp", False, TorchMLP, lambda: MsMLP(eps=1e-7)),
    ("mlp: a square weight transposed", "mlp", False, TorchMLP, lambda: MsMLP(bug_at=5, bug="transposed")),
    ("mlp: a bias dropped", "mlp", False, TorchMLP, lambda: MsMLP(bug_at=7, bug="no_bias")),
    ("convbn: BatchNorm momentum not converted", "convbn", False, TorchConvBN,
     lambda: MsConvBN(momentum_converted=False)),
    ("convbn: BatchNorm eps 1e-3", "convbn", False, TorchConvBN, lambda: MsConvBN(bn_eps=1e-3)),
    ("gate: the gate's BatchNorm eps 1e-3", "gate", False, torch_gate, lambda: ms_gate(bn_eps=1e-3)),
    ("transformer: attention scale 1/d", "transformer", False, lambda: TorchTransformer(recompute=False, **TRANSFORMER),
     lambda: MsTransformerScaleBug(recompute=False, **TRANSFORMER)),
]


def judge(runs, how: str):
    if how == "defaults":
        return compare_results(runs.expected, runs.actual)
    if how == "cross":
        return compare_results(runs.expected, runs.actual, rtol=CROSS_RTOL, atol=CROSS_ATOL)
    report = compare_results(runs.expected, runs.actual, reference=runs.reference,
                             actual_reference=runs.actual_reference, probes=runs.probes if how != "reference" else ())
    if how == "compare":
        report.rows[:0] = transfer_rows(runs.transfer)
        report.rows += kink_row(runs.tapes.branches)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="run only the cases whose name contains one of these")
    parser.add_argument("--seeds", type=int, default=1, help="runs per case, each with its own weights and inputs")
    args = parser.parse_args()
    ways = ("defaults", "cross", "reference", "probed", "compare")
    print(f"torch {torch.__version__}, float32 on CPU; cross = rtol {CROSS_RTOL:g}, atol {CROSS_ATOL:g}")
    print(f"each case over {args.seeds} seed(s); a cell counts the runs that failed\n")
    print("| case | kind | tensors | " + " | ".join(f"{w}: runs failed" for w in ways) + " | ratio* min-max | s |")
    print("|---|---|---:|" + "---:|" * len(ways) + "---|---:|")
    verdicts = {w: {"alarms": 0, "correct": 0, "caught": 0, "bugs": 0} for w in ways}
    missed = []
    for name, model, correct, torch_factory, ms_factory in CASES:
        if args.only and not any(o in name for o in args.only):
            continue
        start = time.perf_counter()
        failed, ratios = dict.fromkeys(ways, 0), []
        for seed in range(args.seeds):
            torch.manual_seed(seed)
            tm, mm = torch_factory(), ms_factory()
            mm.set_train(tm.training)   # both in training mode: BatchNorm normalises by the batch's statistics
            runs = run_pair(tm, mm, _inputs(model, np.random.default_rng(seed)), reference="float64", seed=seed)
            for w in ways:
                report = judge(runs, w)
                failed[w] += not report.passed
                v = verdicts[w]
                v["correct" if correct else "bugs"] += 1
                v["alarms" if correct else "caught"] += not report.passed
                if w == "compare" and report.passed and not correct:
                    missed.append(name)
            ref = judge(runs, "probed")
            ratios.append(max(r.ref_err_actual / max(r.ref_err_expected, r.ref_err_probe or 0.0, 1e-30)
                              for r in ref.rows if r.ref_err_expected is not None))
        print(f"| {name} | {'correct' if correct else 'bug'} | {len(ref.rows)} | "
              + " | ".join(f"{failed[w]}/{args.seeds}" for w in ways)
              + f" | {min(ratios):.3g}-{max(ratios):.3g} | {time.perf_counter() - start:.1f} |")
    print(f"\n* ratio: the largest (MindSpore's distance from the float64 reference) / (the round-off measured: torch "
          f"float32's own distance or the probe's, the larger) over a run's tensors; the probed verdict allows "
          f"{ROUNDOFF_FACTOR:g}x (plus {FLOOR_ULPS:g} ulps).\n")
    for w in ways:
        v = verdicts[w]
        print(f"{w:>9}: false alarms {v['alarms']}/{v['correct']} runs of correct twins, "
              f"bugs caught {v['caught']}/{v['bugs']} runs")
    if missed:
        print("\nbelow float32 round-off and not a layer setting (the frontier; compare() passes them): "
              + "; ".join(f"{name} ({n} of {args.seeds} runs)" for name, n in Counter(missed).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
