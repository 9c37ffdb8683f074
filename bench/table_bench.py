"""Benchmark: `recompat verify-table` over MindSpore's whole official mapping table, in this process.

Not a test: it prints figures. The rows out of scope and those that are no function of tensors are answered
without running anything; the others are probed on both frameworks (PyNative, CPU). Goal: the whole table in under
10 minutes on 2 cores.

    python bench/table_bench.py [--rounds 2]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

os.environ.setdefault("GLOG_v", "3")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="runs of the whole table (the first imports)")
    args = parser.parse_args()
    from recompat.compat import table

    rows, specs = table.read_rows(), table.read_probes()
    t0 = time.perf_counter()
    import mindspore  # noqa: F401 -- the imports, timed apart
    import torch  # noqa: F401
    imports = time.perf_counter() - t0
    times, verdicts = [], []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        verdicts = table.verify(rows, specs)
        times.append(time.perf_counter() - t0)
    counts = table.summary(verdicts)
    probed = len(rows) - counts["out of scope"] - counts["not probed"]
    best = min(times)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{sys.version.split()[0]}")
    print(f"importing torch and MindSpore: {imports:.1f} s")
    print("rounds: " + ", ".join(f"{t:.2f} s" for t in times))
    print(f"| rows | probed | whole table (best of {args.rounds}) | rows probed per second |")
    print("|---:|---:|---:|---:|")
    print(f"| {len(rows)} | {probed} | {best:.2f} s | {probed / best:.0f} |")
    print("verdicts: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n))
    print(f"goal: under 600 s for the whole table: {best + imports:.1f} s with the imports "
          f"({(best + imports) / 600:.1%} of it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
