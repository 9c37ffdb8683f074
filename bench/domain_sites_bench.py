"""What the domain probes change on real code: per tree, the calls that now translate to a recompat.runtime function
the probes found right where MindSpore's own is wrong (recompat.runtime.DOMAIN_FIXES), and the calls still noted
RC327 (their MindSpore counterpart differs on part of the domain, mappings/domain.json), by API with the first
places. Not a test: it prints figures.

    python bench/domain_sites_bench.py NAME DIR [NAME DIR ...]

e.g. the installed MONAI's monai/networks, vit_pytorch, or a library downloaded from the package registry and
unpacked (kornia's wheel).
"""
from __future__ import annotations

import argparse
import collections
import os
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")


def main() -> None:
    from recompat import mappings, runtime
    from recompat.translator.translate import translate_bytes

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", metavar="NAME DIR", help="a name and a folder, repeated")
    args = parser.parse_args()
    if len(args.trees) % 2:
        parser.error("give a NAME and a DIR for each tree")
    maps = mappings.default()
    fixed = {name for e in maps.entries if e.mindspore["api"].removeprefix("recompat.runtime.") in runtime.DOMAIN_FIXES
             and e.translates_from("torch") for name in e.names("torch")}
    for name, folder in zip(args.trees[::2], args.trees[1::2]):
        routed, noted, where, sites, files = collections.Counter(), collections.Counter(), {}, 0, 0
        for path in sorted(Path(folder).rglob("*.py")):
            data = path.read_bytes()
            if b"torch" not in data:
                continue
            result = translate_bytes(data, str(path), to="mindspore", scope="model", mappings=maps)
            files += 1
            for site in result.sites:
                sites += 1
                if site.api in fixed:
                    routed[f"{site.api} [{site.status}]"] += 1
                if any(d.code == "RC327" for d in site.diagnostics):
                    noted[site.api] += 1
                    where.setdefault(site.api, []).append(f"{path.relative_to(folder)}:{site.line}")
        print(f"== {name}: {files} files, {sites} sites; to recompat.runtime's domain fixes: {sum(routed.values())}; "
              f"noted RC327: {sum(noted.values())} ({100 * sum(noted.values()) / max(sites, 1):.1f}% of sites)")
        for api, n in sorted(routed.items()):
            print(f"   fixed   {api}: {n}")
        for api, n in noted.most_common():
            print(f"   RC327   {api}: {n}  e.g. {', '.join(where[api][:2])}")


if __name__ == "__main__":
    main()
