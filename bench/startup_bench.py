"""Start-up time of `recompat translate` on one small file, next to Python's own start-up.

Prints the median wall time of N runs (each a fresh subprocess) of
  python -c pass
  python -c "import yaml"
  python -m recompat translate --to mindspore FILE -q     with a cold mappings cache (RECOMPAT_NO_CACHE=1: parse
                                                          and validate mappings/*.yaml) and with a warm one
and each one's ratio to `python -c pass`; then mappings.load() in this process, cold (parse + schema + cross-checks)
and warm (a cache hit). FILE is a small torch model with one checkpoint call (written to a temp folder).

The mappings cache goes to a temp folder, not ~/.cache. Compiled bytecode goes to a temp PYTHONPYCACHEPREFIX
(PYTHONDONTWRITEBYTECODE is lifted for the runs), so the figures are those of an installed package, whose modules
are compiled once; --as-is keeps the environment as it is. Nothing is written into the source tree. Prints
figures only: nothing here passes or fails on time.

    python bench/startup_bench.py [-n 11] [--as-is]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMALL_FILE = """\
import torch
from torch.utils.checkpoint import checkpoint


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = checkpoint(self.block, x)
        return y
"""


def _wall(argv: list[str], env: dict, runs: int) -> float:
    """Median wall seconds of `runs` runs of argv, after one run that is not counted (it warms the OS file cache,
    the bytecode and the mappings cache)."""
    times = []
    for k in range(runs + 1):
        start = time.perf_counter()
        proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr.decode(errors='replace')}")
        if k:
            times.append(elapsed)
    return statistics.median(times)


def _in_process(runs: int) -> tuple[float, float]:
    """Median seconds of mappings.load() cold (RECOMPAT_NO_CACHE=1) and warm (a hit), in this process."""
    from recompat import mappings

    def median(no_cache: bool) -> float:
        times = []
        for k in range(runs + 1):     # the first run is not counted: it imports PyYAML and jsonschema, or primes
            if no_cache:
                os.environ["RECOMPAT_NO_CACHE"] = "1"
            else:
                os.environ.pop("RECOMPAT_NO_CACHE", None)
            start = time.perf_counter()
            mappings.load()
            if k:
                times.append(time.perf_counter() - start)
        os.environ.pop("RECOMPAT_NO_CACHE", None)
        return statistics.median(times)

    return median(True), median(False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--runs", type=int, default=11, help="runs per figure (median; default: %(default)s)")
    ap.add_argument("--as-is", action="store_true",
                    help="keep the environment's bytecode settings (PYTHONDONTWRITEBYTECODE: compile every run)")
    args = ap.parse_args()

    temp = Path(tempfile.mkdtemp(prefix="recompat-startup-"))
    try:
        small = temp / "small.py"
        small.write_text(SMALL_FILE, encoding="utf-8")
        env = {**os.environ, "GLOG_v": "3", "RECOMPAT_CACHE_DIR": str(temp / "cache")}
        env.pop("RECOMPAT_NO_CACHE", None)
        if not args.as_is:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(temp / "pycache")
        os.environ.update(RECOMPAT_CACHE_DIR=env["RECOMPAT_CACHE_DIR"])   # for the in-process figures

        py = sys.executable
        translate = [py, "-m", "recompat", "translate", "--to", "mindspore", str(small), "-q"]
        rows = [("python -c pass", [py, "-c", "pass"], {}),
                ('python -c "import yaml"', [py, "-c", "import yaml"], {}),
                ("recompat translate, cold cache", translate, {"RECOMPAT_NO_CACHE": "1"}),
                ("recompat translate, warm cache", translate, {})]
        bytecode = ("as the environment has it (PYTHONDONTWRITEBYTECODE="
                    f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r})" if args.as_is
                    else "compiled once, into a temp PYTHONPYCACHEPREFIX")
        print(f"start-up, wall seconds, median of {args.runs} subprocess runs (bytecode {bytecode}):")
        base = None
        for label, argv, extra in rows:
            t = _wall(argv, {**env, **extra}, args.runs)
            base = base or t
            print(f"  {label:<34} {t:7.3f} s   {t / base:5.1f}x python -c pass")

        from recompat import mappings

        data = sum(p.stat().st_size for p in mappings.HERE.glob("*.yaml"))
        cold, warm = _in_process(args.runs)
        print(f"mappings.load() in this process, median of {args.runs} ({data / 1024:.0f} KiB of YAML, "
              f"{len(mappings.load().entries)} entries):")
        print(f"  cold (RECOMPAT_NO_CACHE=1: parse, schema, cross-checks) {cold * 1000:7.1f} ms")
        print(f"  warm (cache hit)                                        {warm * 1000:7.1f} ms")
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
