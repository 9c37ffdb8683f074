"""Benchmark: the cost of one GRAPH-mode recompute proof beside the plain GRAPH-mode compile of the same cell.

Not a test: it prints figures. For zoo pairs with a GRAPH form (CPU), the baseline is compiling the same gradient
cell recomputed_ops compiles, without saving graphs; the proof is recomputed_ops (compile with save_graphs=1 into a
temporary folder, read the final graphs, remove the folder). Medians of --repeats, ratio proof / baseline, both
measured in this run. A fresh cell per compile, so no compile cache is reused.

    python bench/graph_recompute_bench.py [--repeats 3] [--pairs resnet_bn transformer selective_block]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("GLOG_v", "3")

import mindspore  # noqa: E402
import numpy as np  # noqa: E402

from recompat.compat import zoo  # noqa: E402
from recompat.compat.graph_recompute import _gradient_cell_class, recomputed_ops  # noqa: E402


def _median_seconds(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pairs", nargs="+", default=["dropout", "resnet_bn", "transformer", "selective_block"])
    args = parser.parse_args()

    print(f"MindSpore {mindspore.__version__}, CPU; medians of {args.repeats}")
    print(f"{'pair':<16} {'form':<9} {'ops':>4} {'compile s':>10} {'proof s':>8} {'proof/compile':>14}")
    ratios = []
    for name in args.pairs:
        pair = zoo.get(name)
        form = pair.graph_forms[0]
        inputs = [mindspore.Tensor(a) if isinstance(a, np.ndarray) else a for a in pair.make_inputs(0)]

        def plain_compile():
            mindspore.set_context(mode=mindspore.GRAPH_MODE)
            try:
                _gradient_cell_class()(pair.build_mindspore(True, form), len(inputs), ()).compile(*inputs)
            finally:
                mindspore.set_context(mode=mindspore.PYNATIVE_MODE)

        def proof():
            return recomputed_ops(pair.build_mindspore(True, form), *inputs)

        found = proof()                       # warm-up: imports and first-compile costs out of both timings
        plain_compile()
        base = _median_seconds(plain_compile, args.repeats)
        proved = _median_seconds(proof, args.repeats)
        ratios.append(proved / base)
        print(f"{name:<16} {form:<9} {len(found):>4} {base:>10.2f} {proved:>8.2f} {proved / base:>13.2f}x")
    print(f"proof / plain compile: median {statistics.median(ratios):.2f}x over {len(ratios)} pairs")


if __name__ == "__main__":
    main()
