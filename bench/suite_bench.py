"""Benchmark of the differential harness: what recompute saves on a deep chain, what it costs, and how long
the built-in suite takes.

    make bench                       # or: python bench/suite_bench.py [--depth 32 --width 512 --batch 256]

Deep chain: DEPTH x (Linear/Dense + ReLU), checkpoint_sequential over SEGMENTS segments (torch), and on
MindSpore the same through recompat.compat.checkpoint_on_mindspore.checkpoint_sequential and through
mindspore.recompute per segment (the translator's form). Baseline: the same chain without recompute, measured in
the same run.
Bytes kept for backward: recompat.compat.memory.SavedTensors (saved-tensor hooks, forward only). Time: median
of REPEATS forward+backward steps after a warm-up. Then `recompat test --device cpu -n JOBS` end to end.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("GLOG_v", "3")

import numpy as np


def _median_seconds(step, repeats: int) -> float:
    step()                                        # warm-up (kernel selection, caches)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def torch_chain(args) -> dict[str, tuple[int, float]]:
    import torch
    from torch.utils.checkpoint import checkpoint_sequential

    from recompat.compat.memory import SavedTensors

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    chain = torch.nn.Sequential(*[m for _ in range(args.depth)
                                  for m in (torch.nn.Linear(args.width, args.width), torch.nn.ReLU())])
    x = torch.randn(args.batch, args.width, requires_grad=True)
    out = {}
    for name, forward in (("plain", chain),
                          ("checkpoint_sequential",
                           lambda x: checkpoint_sequential(chain, args.segments, x, use_reentrant=False))):
        counter = SavedTensors("torch")
        with counter:
            y = forward(x)
        y.sum().backward()

        def step():
            forward(x).sum().backward()
        out[name] = (counter.bytes, _median_seconds(step, args.repeats))
    return out


def mindspore_chain(args) -> dict[str, tuple[int, float]]:
    import mindspore as ms
    from mindspore import nn

    from recompat.compat.memory import SavedTensors
    from recompat.compat.checkpoint_on_mindspore import checkpoint_sequential

    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    layers = [m for _ in range(args.depth) for m in (nn.Dense(args.width, args.width), nn.ReLU())]
    chain = nn.SequentialCell(layers)
    x = ms.Tensor(np.random.default_rng(0).standard_normal((args.batch, args.width)).astype(np.float32))
    size = len(layers) // args.segments

    def per_segment(x):                           # what the translator writes for checkpoint_sequential
        for start in range(0, size * (args.segments - 1), size):
            x = ms.recompute(nn.SequentialCell(layers[start:start + size]), x, use_reentrant=False,
                             early_stop=False)
        for layer in layers[size * (args.segments - 1):]:
            x = layer(x)
        return x

    out = {}
    for name, forward in (("plain", chain),
                          ("compat.checkpoint_sequential",
                           lambda x: checkpoint_sequential(chain, args.segments, x, use_reentrant=False)),
                          ("mindspore.recompute per segment", per_segment)):
        counter = SavedTensors("mindspore")
        active = [counter]

        def loss(x):
            if active:
                with active[0]:
                    return forward(x).sum()
            return forward(x).sum()

        grad = ms.value_and_grad(loss, grad_position=0, weights=chain.trainable_params())
        grad(x)
        active.clear()
        out[name] = (counter.bytes, _median_seconds(lambda: grad(x), args.repeats))
    return out


def print_table(framework: str, rows: dict[str, tuple[int, float]]) -> None:
    base_bytes, base_s = rows["plain"]
    print(f"\n{framework}: bytes kept for backward and step time (baseline: plain, same run)")
    print(f"  {'variant':34} {'bytes kept':>14} {'x less':>8} {'step ms':>9} {'time x':>7}")
    for name, (kept, seconds) in rows.items():
        print(f"  {name:34} {kept:14,d} {base_bytes / kept:8.2f} {seconds * 1e3:9.1f} {seconds / base_s:7.2f}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--depth", type=int, default=32)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--segments", type=int, default=4)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--jobs", type=int, default=2, help="processes for the suite run (default: 2)")
    p.add_argument("--no-suite", action="store_true", help="skip the end-to-end suite timing")
    args = p.parse_args(argv)
    print(f"deep chain: {args.depth} x (Linear {args.width}x{args.width} + ReLU), batch {args.batch}, "
          f"{args.segments} segments, median of {args.repeats} steps")
    print_table("torch", torch_chain(args))
    print_table("MindSpore (PyNative, CPU)", mindspore_chain(args))
    if args.no_suite:
        return 0
    command = [sys.executable, "-m", "recompat", "test", "--device", "cpu", "-q", "-n", str(args.jobs)]
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    summary = [line for line in proc.stdout.splitlines() if " cases)" in line or "planted bugs" in line]
    print(f"\nbuilt-in suite: `{' '.join(command[1:])}`: {wall:.1f} s wall, exit {proc.returncode}")
    for line in summary:
        print(f"  {line}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
