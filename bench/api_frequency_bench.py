"""Benchmark: which torch APIs real model code uses most, and how `recompat translate --scope model` carries each.

Not a test: it prints figures. Coverage should follow what real code uses, not the next failure found by
running. This translates each package folder given (a model library downloaded from the package registry and
unpacked; by default the installed MONAI networks and vit-pytorch) with --scope model, pools the sites of all of
them, and prints the occurrence table: each source API with its occurrences, its share of all of them, how its
sites went (converted / partial / manual) and the diagnostic codes that kept the manual ones. Then the APIs above
the threshold share (default 0.05%) that are not converted everywhere: what to cover next, most used first. An
API used as a type in an annotation counts where it stands, as the translator reports it.

    python bench/api_frequency_bench.py [--package DIR ...] [--threshold 0.05] [--top 40]
"""
from __future__ import annotations

import argparse
import collections
import importlib.util
import io
import os
import sys
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")


def installed(package: str, *under: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).joinpath(*under)


def sites_of(folder: Path):
    """Each site of the folder's --scope model translation: (api, status, the first manual diagnostic's code)."""
    from recompat.translator import engine

    report = engine.run(engine.Options(paths=[str(folder)], to="mindspore", scope="model", check=True, quiet=True),
                        stdout=io.StringIO(), stderr=io.StringIO())
    for result in report.results:
        for site in result.sites:
            code = next((d.code for d in site.diagnostics if d.status == site.status), "")
            yield site.api, site.status, code


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--package", action="append", type=Path, default=[],
                    help="a package folder, repeatable (default: the installed MONAI networks and vit-pytorch)")
    ap.add_argument("--threshold", type=float, default=0.05, help="share in percent (default: %(default)s)")
    ap.add_argument("--top", type=int, default=40, help="rows of the occurrence table (default: %(default)s)")
    args = ap.parse_args(argv)
    folders = args.package or [f for f in (installed("monai", "networks"), installed("vit_pytorch")) if f]
    if not folders:
        print("no package folder given and neither MONAI nor vit-pytorch is installed: pass --package DIR")
        return 2
    for folder in folders:
        if not folder.is_dir():
            print(f"--package {folder}: no such folder")
            return 2

    by_api: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    kept: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    per_folder = {}
    for folder in folders:
        n = 0
        for api, status, code in sites_of(folder):
            by_api[api][status] += 1
            if status != "converted":
                kept[api][code] += 1
            n += 1
        per_folder[folder] = n
    total = sum(sum(c.values()) for c in by_api.values())
    print("recompat translate --scope model: torch API occurrences over " + ", ".join(
        f"{f.name} ({n:,})" for f, n in per_folder.items()) + f"; {total:,} in all, {len(by_api):,} APIs")
    if not total:
        return 0
    ranked = sorted(by_api.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    converted = sum(c["converted"] for c in by_api.values())
    print(f"converted: {converted:,} of {total:,} ({100 * converted / total:.1f}%)\n")

    def row(api: str, c: collections.Counter) -> str:
        n = sum(c.values())
        why = ", ".join(f"{code} x{k}" for code, k in kept[api].most_common()) if kept[api] else ""
        return (f"{n:7,}  {100 * n / total:6.2f}%  {c['converted']:6,} {c['partial']:6,} {c['manual']:6,}  "
                f"{api:<44} {why}")

    header = f"{'uses':>7}  {'share':>7}  {'conv':>6} {'part':>6} {'manual':>6}  {'API':<44} kept by"
    print(f"the {min(args.top, len(ranked))} most used:\n{header}")
    for api, c in ranked[:args.top]:
        print(row(api, c))
    left = [(api, c) for api, c in ranked if 100 * sum(c.values()) / total >= args.threshold and c["converted"] <
            sum(c.values())]
    print(f"\nabove {args.threshold}% of occurrences and not converted everywhere: {len(left)} APIs "
          f"({sum(sum(c.values()) - c['converted'] for _, c in left):,} sites)\n{header}")
    for api, c in left:
        print(row(api, c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
