"""The job proof's cost against the two plain runs it compares.

    python bench/job_bench.py [--steps 40]

Runs tests/data/jobs/classifier.py (a checkpointed classifier: AdamW, a schedule, clipping) and its translation
plainly, each in this process for the same steps (epochs x batches), then `prove_job` on the pair (its torch run,
its MindSpore run, its float64 run, the hooks and the live-tensor counts). Prints each time, the ratio of the job
proof to the two plain runs together (goal: at most 3x), and the verdict.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import runpy
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")
SCRIPT = Path(__file__).resolve().parent.parent / "tests" / "data" / "jobs" / "classifier.py"


def plain(script: Path, argv: list[str]) -> float:
    """One run of the script as `python script argv` would, in this process, in an empty folder."""
    saved = sys.argv, os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        sys.argv = [str(script), *argv]
        start = time.perf_counter()
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                runpy.run_path(str(script), run_name="__main__")
        finally:
            took = time.perf_counter() - start
            sys.argv = saved[0]
            os.chdir(saved[1])
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="optimizer steps per run (default 40, a multiple of 4)")
    args = parser.parse_args()
    import mindspore  # noqa: F401  (both frameworks loaded before anything is timed)
    import torch  # noqa: F401

    from recompat.compat.jobs import prove_job, translate_script

    argv = ["--epochs", str(max(1, args.steps // 4)), "--batches", "4"]
    with tempfile.TemporaryDirectory() as tmp:
        port = translate_script(SCRIPT, Path(tmp) / "port")
        plain(SCRIPT, argv), plain(port, argv)                   # warm: first calls compile and cache
        t_torch, t_ms = plain(SCRIPT, argv), plain(port, argv)
        start = time.perf_counter()
        report = prove_job(SCRIPT, port, steps=args.steps, argv=argv)
        t_job = time.perf_counter() - start
    both = t_torch + t_ms
    print(f"{args.steps} steps of {SCRIPT.name}")
    print(f"  plain torch run       {t_torch:7.2f} s")
    print(f"  plain MindSpore run   {t_ms:7.2f} s")
    print(f"  job proof             {t_job:7.2f} s   ({t_job / both:.2f}x the two plain runs; goal <= 3x)")
    for side, run in report.runs.items():
        print(f"    {side:<28} {run.seconds:7.2f} s")
    print(f"  verdict: {'passed' if report.passed else 'FAILED'} ({report.verdict})")
    return 0 if report.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
