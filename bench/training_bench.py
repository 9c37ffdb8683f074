"""compare_training's verdict over training steps: false alarms on correct ports, catches of planted port bugs.

    python bench/training_bench.py [--steps 100]

For each case of recompat.compat.training_cases: whether compare_training passed, the first step that left the
tolerance ("the run" where only a whole-run row failed: the live tensors), the final divergence (largest
norm-wise relative distance of a parameter, MindSpore vs torch) and the time; then the two rates. Correct ports must all pass, planted bugs must all fail.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("GLOG_v", "3")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="training steps per case (default 100)")
    args = parser.parse_args()

    from recompat.compat.training import compare_training
    from recompat.compat.training_cases import cases

    alarms, caught, correct, planted = 0, 0, 0, 0
    print(f"{'case':<64} {'verdict':>7} {'first out':>9} {'divergence':>10} {'seconds':>7}")
    for case in cases():
        tm, mm, batches, kwargs = case.build()
        start = time.perf_counter()
        report = compare_training(tm, mm, batches, steps=args.steps, **kwargs)
        took = time.perf_counter() - start
        first = report.first_failure
        where = first.step if first else "-" if report.passed else "the run"    # the run's rows: live tensors
        print(f"{('[bug] ' if case.planted else '') + case.name:<64} {'pass' if report.passed else 'FAIL':>7} "
              f"{where:>9} {report.steps[-1].divergence:>10.3g} {took:>7.1f}")
        if case.planted:
            planted += 1
            caught += not report.passed
        else:
            correct += 1
            alarms += not report.passed
    print(f"\n{args.steps} steps: false alarms {alarms}/{correct} correct ports; caught {caught}/{planted} planted bugs")
    return 0 if alarms == 0 and caught == planted else 1


if __name__ == "__main__":
    raise SystemExit(main())
