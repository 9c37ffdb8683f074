"""`recompat weights` on real model code nobody here wrote: MONAI's networks (a test dependency, the configurations
of tests/monai_networks.py), each saved by torch as a state dict file, converted to a MindSpore checkpoint with the
names of its translation, loaded strictly into a fresh translated network, and run against the torch original.

    python bench/weights_monai_bench.py [NETWORK ...]

Every weight and buffer is perturbed first (running statistics included), so a tensor that was not carried over
shows in the outputs. Printed per network: tensors written, renamed, dropped (num_batches_tracked), filled from the
model (what torch registers as None: InstanceNorm's affine=False weights), the largest output difference and the
output's scale; then how many load strictly and agree within 1e-4 relative to the output's scale.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def _translated_root(folder: Path) -> Path:
    import importlib.util

    from recompat.cli import main

    installed = Path(list(importlib.util.find_spec("monai").submodule_search_locations)[0])
    shutil.copytree(installed, folder / "monai", ignore=shutil.ignore_patterns("__pycache__"))
    networks = folder / "monai" / "networks"
    code = main(["translate", str(networks), "--scope", "model", "-o", str(folder / "out"), "-q"])
    assert code in (0, 1), code
    shutil.rmtree(networks)
    (folder / "out").rename(networks)
    return folder


def main() -> int:
    import numpy as np

    import monai_networks as mn

    with tempfile.TemporaryDirectory() as tmp:
        root = _translated_root(Path(tmp))
        ported, translated, original = mn._both(str(root))
        import mindspore as ms
        import torch

        from recompat.compat import weight_files

        agree = 0
        rows = list(mn._networks(tuple(sys.argv[1:])))
        print(f"{'network':<18} {'tensors':>7} {'renamed':>7} {'dropped':>7} {'filled':>6} {'max err':>9} "
              f"{'scale':>7} {'seconds':>7}  verdict")
        for name, build, x in rows:
            start = time.perf_counter()
            torch.manual_seed(0)
            t = build(original).eval()
            with torch.no_grad():
                for p in t.parameters():
                    p.add_(0.01 * torch.randn_like(p))
                for b in t.buffers():
                    if b.dtype.is_floating_point:
                        b.add_(0.5 * torch.rand_like(b))
            torch.save(t.state_dict(), Path(tmp) / f"{name}.pt")
            with mn._importing(translated):
                guide, fresh = build(ported), build(ported)
            report = weight_files.convert_file(Path(tmp) / f"{name}.pt", Path(tmp) / f"{name}.ckpt", guide)
            if not report.ok:
                print(f"{name:<18} problems: {report.problems[0]}")
                continue
            fresh.load_state_dict(ms.load_checkpoint(str(Path(tmp) / f"{name}.ckpt")), strict=True)
            fresh.set_train(False)
            with torch.no_grad():
                a = t(torch.from_numpy(x))
            b = fresh(ms.Tensor(x))
            pick = 1 if name == "AutoencoderKL" else 0         # its first output is a sample
            a, b = (v[pick] if isinstance(v, (tuple, list)) else v for v in (a, b))
            err, scale = float(np.abs(a.numpy() - b.asnumpy()).max()), float(np.abs(a.numpy()).max())
            ok = err <= 1e-4 * max(scale, 1.0)
            agree += ok
            print(f"{name:<18} {len(report.pairs):>7} {report.renamed:>7} {len(report.dropped):>7} "
                  f"{len(report.filled):>6} {err:>9.2e} {scale:>7.3f} {time.perf_counter() - start:>7.2f}  "
                  f"{'agree' if ok else 'DIFFER'}")
        print(f"\n{agree} of {len(rows)} networks: the torch file converted, loaded strictly into the translation, "
              f"outputs agree")
    return 0 if agree == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
