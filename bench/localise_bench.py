"""Benchmark: what localisation costs, and whether it names the right module on models nobody here wrote.

Not a test: it prints figures.
  (1) cost: a 50-block residual MLP (Linear, LayerNorm, GELU; width 256, batch 32) whose MindSpore twin carries a
      wrong LayerNorm eps in block 37: compare() without localisation (localise=False, the baseline, same run)
      against compare()'s default, which reruns the failing pair watched; also a correct twin, where the default
      must cost what the baseline does.
  (2) real models: vit-pytorch's models (the test dependency), translated with `recompat translate --scope model`;
      in each, one parameter of a module is scaled by 1.01 on the MindSpore side after the weights are copied
      (compare(weights="as-is") then judges the values as held), for modules spread over the model; a planted
      module counts as named when localisation's first forward divergence is that module, or a module inside it
      (a parameter used by a child), and as "elsewhere" otherwise.

    python bench/localise_bench.py [--depth 50] [--plants 6] [--skip-real]
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from mindspore import nn as msnn  # noqa: E402
from torch import nn as tnn  # noqa: E402

from recompat.compat.compare import compare  # noqa: E402
from recompat.compat.weights import transfer_weights  # noqa: E402

WIDTH, BATCH = 256, 32


class TorchMLP(tnn.Module):
    def __init__(self, depth):
        super().__init__()
        self.blocks = tnn.ModuleList([tnn.Sequential(tnn.Linear(WIDTH, WIDTH), tnn.LayerNorm(WIDTH), tnn.GELU())
                                      for _ in range(depth)])

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return x


class MsMLP(msnn.Cell):
    def __init__(self, depth, bad_block=None):
        super().__init__()
        self.blocks = msnn.CellList([msnn.SequentialCell([
            msnn.Dense(WIDTH, WIDTH), msnn.LayerNorm((WIDTH,), epsilon=1e-1 if i == bad_block else 1e-5),
            msnn.GELU(approximate=False)]) for i in range(depth)])

    def construct(self, x):
        for block in self.blocks:
            x = x + block(x)
        return x


def timed(fn, repeat=3):
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def cost(depth: int) -> None:
    x = [np.random.default_rng(0).standard_normal((BATCH, WIDTH)).astype(np.float32)]
    bad = depth * 3 // 4
    print(f"(1) cost on a {depth}-block residual MLP (width {WIDTH}, batch {BATCH}), median of 3")
    for label, ms_model in (("failing (eps in block %d)" % bad, MsMLP(depth, bad)), ("correct", MsMLP(depth))):
        torch.manual_seed(0)
        model = TorchMLP(depth)
        base, plain = timed(lambda: compare(model, ms_model, x, strict=False, localise=False))
        default, report = timed(lambda: compare(model, ms_model, x, strict=False))
        found = (report.meta.get("localisation") or {}).get("forward")
        named = found["torch_path"] if found else "-"
        print(f"    {label:28s} localise=False {base:6.2f} s   default {default:6.2f} s   "
              f"ratio {default / base:4.2f}x   verdict {'PASS' if report.passed else 'FAIL'}   named {named}")


# ----- (2) vit-pytorch, translated ------------------------------------------------------------------------------
MODELS = {   # as tests/test_vit_pytorch.py builds them
    "ViT": ("vit", dict(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, heads=4, mlp_dim=128)),
    "SimpleViT": ("simple_vit", dict(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, heads=4,
                                     mlp_dim=128)),
    "DeepViT": ("deepvit", dict(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, heads=4, mlp_dim=128)),
    "CaiT": ("cait", dict(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, cls_depth=1, heads=4,
                          mlp_dim=128)),
    "CrossViT": ("cross_vit", dict(image_size=32, num_classes=10, depth=1, sm_dim=32, sm_patch_size=8,
                                   sm_enc_depth=1, sm_enc_heads=2, sm_enc_mlp_dim=64, lg_dim=64, lg_patch_size=16,
                                   lg_enc_depth=1, lg_enc_heads=2, lg_enc_mlp_dim=64, cross_attn_depth=1,
                                   cross_attn_heads=2)),
}


def _module(folder: Path, name: str):
    for key in [k for k in sys.modules if k == "vit_pytorch" or k.startswith("vit_pytorch.")]:
        del sys.modules[key]
    package = types.ModuleType("vit_pytorch")
    package.__path__ = [str(folder / "vit_pytorch")]
    sys.modules["vit_pytorch"] = package
    return importlib.import_module(f"vit_pytorch.{name}")


def plants(torch_model, name_map: dict, count: int) -> list[tuple[str, str]]:
    """(torch module path, MindSpore parameter name) for up to ``count`` modules spread over the model, each with
    a floating parameter of more than one element."""
    owners = {}
    for torch_name, ms_name in name_map.items():
        owner = torch_name.rsplit(".", 1)[0] if "." in torch_name else ""
        owners.setdefault(owner, ms_name)
    chosen = sorted(owners)
    step = max(1, len(chosen) // count)
    return [(path, owners[path]) for path in chosen[::step][:count]]


def translated_vit(root: Path) -> Path | None:
    """vit-pytorch's installed package (its folder), translated into root/out/vit_pytorch with
    `recompat translate --scope model`; None where it is not installed."""
    from recompat.cli import main

    spec = importlib.util.find_spec("vit_pytorch")
    if spec is None:
        print("skipped: vit-pytorch is not installed (make install)")
        return None
    installed = Path(list(spec.submodule_search_locations)[0])
    shutil.copytree(installed, root / "source" / "vit_pytorch", ignore=shutil.ignore_patterns("__pycache__"))
    main(["translate", str(root / "source" / "vit_pytorch"), "--scope", "model", "-o", str(root / "out" / "vit_pytorch"),
          "-q"])
    return installed


def real(count: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="localise-bench-"))
    try:
        installed = translated_vit(root)
        if installed is None:
            return
        x = [np.linspace(-1.0, 1.0, 2 * 3 * 32 * 32, dtype=np.float32).reshape(2, 3, 32, 32)]
        print(f"\n(2) vit-pytorch, translated: one parameter scaled by 1.01 on the MindSpore side, {count} modules "
              "per model")
        totals = {"named": 0, "inside": 0, "elsewhere": 0, "passed": 0}
        never_called = []     # a translation calls every layer torch calls: a module named so is a false finding
        for model_name, (module, config) in MODELS.items():
            torch.manual_seed(0)
            original = getattr(_module(installed.parent, module), model_name)(**config).eval()
            twin = getattr(_module(root / "out", module), model_name)(**config)
            twin.set_train(False)
            transfer = transfer_weights(original, twin)
            params = {p.name: p for p in twin.get_parameters()}
            structural = dict(twin.parameters_and_names())
            line = []
            for path, ms_name in plants(original, dict(transfer.name_map), count):
                transfer_weights(original, twin)
                p = structural[ms_name] if ms_name in structural else params[ms_name]
                held = p.asnumpy().copy()
                p.set_data(_scaled(p, held))
                report = compare(original, twin, x, weights="as-is")
                p.set_data(_scaled(p, held, 1.0))
                never_called += (report.meta.get("localisation") or {}).get("uncalled") or []
                found = (report.meta.get("localisation") or {}).get("forward")
                named = found["torch_path"] if found else None
                if report.passed:
                    verdict = "passed"
                elif named == path:
                    verdict = "named"
                elif named is not None and (path == "" or named.startswith(path + ".")):
                    verdict = "inside"
                else:
                    verdict = "elsewhere"
                totals[verdict] += 1
                line.append(f"{path or '<model>'} -> {named or '-'} ({verdict})")
            print(f"    {model_name:10s} " + "; ".join(line))
        n = sum(totals.values())
        print(f"    total: {totals['named']}/{n} named exactly, {totals['inside']} at a module inside the planted "
              f"one, {totals['elsewhere']} elsewhere, {totals['passed']} not failing at all")
        print(f"    modules named never called by MindSpore: {len(never_called)}"
              + (f" ({', '.join(sorted(set(never_called)))})" if never_called else ""))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _scaled(p, held, factor=1.01):
    from mindspore import Tensor

    return Tensor(held * factor).astype(p.dtype)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--depth", type=int, default=50, help="blocks of the cost model (default 50)")
    parser.add_argument("--plants", type=int, default=6, help="modules planted per real model (default 6)")
    parser.add_argument("--skip-real", action="store_true", help="only the cost figures")
    args = parser.parse_args(argv)
    cost(args.depth)
    if not args.skip_real:
        real(args.plants)
    return 0


if __name__ == "__main__":
    sys.exit(main())
