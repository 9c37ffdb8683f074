"""Benchmark: does compare() judge the user's own weight conversion, on models nobody here wrote?

Not a test: it prints figures. vit-pytorch's models (the test dependency), translated with
`recompat translate --scope model`; each torch model is "trained" (every parameter moved by noise, so no value is
its initial one) and saved as a .pt; the user's conversion is `recompat weights` (compat.weight_files) into a .ckpt.
  (1) fresh pairs: what compare(weights="auto") decides for two freshly built models (it must copy torch's), and
      the share of torch's values the MindSpore model already holds.
  (2) the faithful conversion, loaded into the MindSpore model: compare() at its defaults must pass (no false
      alarm), and compare(weights="model.ckpt") too.
  (3) planted conversion bugs, one per run, spread over the model: a tensor the conversion forgot (the MindSpore
      model keeps its own initial value), and a key written under another name (the value is never loaded). Each
      counts as caught when a failing row of kind "weight" names it; the baseline is weights="torch" (torch's
      copied in: what compare() did before), measured in the same run.

    python bench/user_weights_bench.py [--plants 4]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from localise_bench import MODELS, _module, translated_vit  # noqa: E402  (the same models, built the same way)
from recompat.compat.compare import compare  # noqa: E402
from recompat.compat.user_weights import choose_weights  # noqa: E402
from recompat.compat.weight_files import convert_file  # noqa: E402


def trained(model: torch.nn.Module) -> torch.nn.Module:
    """Every parameter moved by noise of its own size, as training moves it."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=g) * (p.std() if p.numel() > 1 else 0.1) * 0.5 + 0.01)
    return model


def spread(names: list[str], count: int) -> list[str]:
    step = max(1, len(names) // count)
    return names[::step][:count]


def run(count: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="user-weights-bench-"))
    x = [np.linspace(-1.0, 1.0, 2 * 3 * 32 * 32, dtype=np.float32).reshape(2, 3, 32, 32)]
    totals = {"fresh copied": 0, "fresh": 0, "faithful passed": 0, "faithful": 0,
              "caught": 0, "baseline caught": 0, "planted": 0}
    try:
        installed = translated_vit(root)
        if installed is None:
            return
        print(f"vit-pytorch, translated; {count} planted conversion bugs of each kind per model")
        for model_name, (module, config) in MODELS.items():
            torch.manual_seed(0)
            original = getattr(_module(installed.parent, module), model_name)(**config).eval()
            build = getattr(_module(root / "out", module), model_name)

            def fresh():
                twin = build(**config)
                twin.set_train(False)
                return twin
            choice = choose_weights(original, fresh())
            totals["fresh"] += 1
            totals["fresh copied"] += choice.run_with == "torch"
            held = choice.judged.split("values for ", 1)[1].split(" parameters")[0]

            trained(original)
            pt, ckpt = root / f"{model_name}.pt", root / f"{model_name}.ckpt"
            torch.save(original.state_dict(), pt)
            convert_file(pt, ckpt, model=fresh())
            user = fresh()
            ms.load_param_into_net(user, ms.load_checkpoint(str(ckpt)))
            faithful = [compare(original, user, x).passed, compare(original, fresh(), x, weights=ckpt).passed]
            totals["faithful"] += len(faithful)
            totals["faithful passed"] += sum(faithful)

            state = ms.load_checkpoint(str(ckpt))
            ms_to_torch = {m: t for t, m in compare(original, fresh(), x, weights="torch")
                           .meta["transfer"]["name_map"].items()}
            keys = [k for k in state if k in ms_to_torch]
            caught = baseline = planted = 0
            for kind in ("forgotten", "renamed"):
                for key in spread(keys, count):
                    bad = dict(state)
                    if kind == "forgotten":
                        bad.pop(key)            # the MindSpore model keeps its own initial value
                        expect = ms_to_torch[key]
                    else:
                        bad[key + "_renamed"] = bad.pop(key)
                        expect = f"{model_name}_bad.ckpt['{key}_renamed']"
                    path = root / f"{model_name}_bad.ckpt"
                    ms.save_checkpoint([{"name": k, "data": ms.Tensor(v.asnumpy())} for k, v in bad.items()],
                                       str(path))
                    report = compare(original, fresh(), x, weights=path)
                    named = {r.name for r in report.failures if r.kind == "weight"}
                    user = fresh()
                    ms.load_param_into_net(user, ms.load_checkpoint(str(path)))
                    copied = compare(original, user, x, weights="torch")
                    planted += 1
                    caught += expect in named
                    baseline += not copied.passed
            totals["planted"] += planted
            totals["caught"] += caught
            totals["baseline caught"] += baseline
            print(f"    {model_name:10s} fresh pair: {choice.run_with} (held {held}); faithful conversion: "
                  f"{'passed' if all(faithful) else 'FAILED'}; planted: {caught}/{planted} named by a weight row "
                  f"(weights='torch': {baseline}/{planted} fail)")
        print(f"    total: fresh pairs copied {totals['fresh copied']}/{totals['fresh']}; faithful conversions "
              f"passed {totals['faithful passed']}/{totals['faithful']}; planted bugs caught {totals['caught']}/"
              f"{totals['planted']} (weights='torch', the old default: {totals['baseline caught']}/"
              f"{totals['planted']})")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plants", type=int, default=4, help="planted bugs of each kind per model (default 4)")
    run(parser.parse_args(argv).plants)
    return 0


if __name__ == "__main__":
    sys.exit(main())
