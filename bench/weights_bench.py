"""`recompat weights` on a large state dict: time and peak memory, against a hand-written conversion of the same
file measured in the same run.

    python bench/weights_bench.py [--mb 100]

A torch model of about MB megabytes of float32 parameters (Linear layers with LayerNorms and a BatchNorm between
them, so that names are renamed) is saved with torch.save and translated to MindSpore with recompat. Each run is a
process of its own, so that its peak resident memory (ru_maxrss) is its own:
  - imports: torch and MindSpore imported, the translated model built (what every run below pays first);
  - by hand: torch.load, then mindspore.save_checkpoint of every tensor under its torch name (no renaming, no check:
    the least a conversion does);
  - recompat: convert_file with the names of the translated model, checked, written atomically;
and torch -> MindSpore is followed by MindSpore -> torch (recompat only). Printed: seconds and peak RSS of each, the
memory over the imports' in units of the file's size, and recompat's ratios to the hand-written conversion.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")

MODEL = textwrap.dedent('''
    import torch
    from torch import nn


    class Big(nn.Module):
        def __init__(self, width=1024, depth=24):
            super().__init__()
            self.norm_in = nn.BatchNorm1d(width)
            self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
            self.norms = nn.ModuleList(nn.LayerNorm(width) for _ in range(depth))

        def forward(self, x):
            x = self.norm_in(x)
            for layer, norm in zip(self.layers, self.norms):
                x = norm(layer(x))
            return x
''')

RUN = textwrap.dedent('''
    import json, os, resource, sys, time
    os.environ.setdefault("GLOG_v", "3")
    folder, kind, depth = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.path.insert(0, folder)
    import numpy as np, torch, mindspore
    from recompat.compat import weight_files
    import big_ms
    model = big_ms.Big(depth=depth)
    start = time.perf_counter()
    if kind == "by hand":
        state = torch.load(os.path.join(folder, "big.pt"), map_location="cpu", weights_only=True)
        mindspore.save_checkpoint([{"name": k, "data": mindspore.Tensor(v.numpy())} for k, v in state.items()],
                                  os.path.join(folder, "hand.ckpt"))
    elif kind == "recompat":
        report = weight_files.convert_file(os.path.join(folder, "big.pt"), os.path.join(folder, "big.ckpt"), model)
        assert report.ok, report.text()
    elif kind == "recompat back":
        report = weight_files.convert_file(os.path.join(folder, "big.ckpt"), os.path.join(folder, "back.pt"), model)
        assert report.ok, report.text()
    took = time.perf_counter() - start
    print(json.dumps({"seconds": took, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
''')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100, help="the state dict's size in MB (default 100)")
    args = parser.parse_args()

    import torch

    from recompat.translator.translate import translate_bytes

    depth = max(1, round(args.mb * 1e6 / (4 * (1024 * 1024 + 3 * 1024))))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "big.py").write_text(MODEL)
        result = translate_bytes(MODEL.encode(), "big.py", scope="model")
        (folder / "big_ms.py").write_text(result.new_data.decode())
        sys.path.insert(0, tmp)
        import big

        torch.save(big.Big(depth=depth).state_dict(), folder / "big.pt")
        size = (folder / "big.pt").stat().st_size
        print(f"state dict: {size / 1e6:.0f} MB ({depth} Linear + LayerNorm layers, a BatchNorm), torch -> MindSpore")
        rows = {}
        for kind in ("imports", "by hand", "recompat", "recompat back"):
            wall = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", RUN, tmp, kind, str(depth)], capture_output=True, text=True)
            if out.returncode:
                print(out.stderr[-3000:], file=sys.stderr)
                return 1
            rows[kind] = json.loads(out.stdout.strip().splitlines()[-1])
            rows[kind]["wall"] = time.perf_counter() - wall
        base = rows["imports"]["rss"]
        print(f"{'run':<16} {'seconds':>8} {'peak RSS MB':>12} {'over imports':>13}")
        for kind, r in rows.items():
            over = (r["rss"] - base) / size
            print(f"{kind:<16} {r['seconds']:>8.2f} {r['rss'] / 1e6:>12.0f} {over:>12.2f}x")
        hand, ours = rows["by hand"], rows["recompat"]
        print(f"\nrecompat / by hand: {ours['seconds'] / hand['seconds']:.2f}x the time, "
              f"{(ours['rss'] - base) / max(hand['rss'] - base, 1):.2f}x the memory over the imports "
              f"(by hand renames nothing and checks nothing)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
