"""Benchmark: how much of real model code `recompat translate --scope model` converts (issue 5).

Not a test: it prints figures. The conversion rate is counted by call occurrences (sites): converted / all sites;
partial (rewritten, with a warning) and manual (left as it is) are counted separately. Corpora:

  examples     the repository's examples/ (the demo project), --to mindspore
  torch-nn     the installed torch package's torch/nn/modules/*.py (found without importing torch), --to mindspore
  monai        the installed MONAI package's monai/networks (nets, blocks, layers: real model code nobody here
               wrote; a test dependency, `pip install -e '.[test]'`), --to mindspore
  monai-all    the whole installed MONAI package (networks, transforms, metrics, losses, apps), --to mindspore
  seeds        the model code blocks of the seed documents (../shared/seeds/, read by recompat.compat.seeds),
               each framework's blocks to the other one: MindSpore's --to torch, torch's --to mindspore

  --package DIR  any package folder (a model library downloaded from the package registry, unpacked), --to
               mindspore; also translated into a temporary folder and imported there under MindSpore (a
               subprocess, the folders of --path first on its path: stand-ins for what the library imports that
               this machine cannot load), which says whether the translated package imports, or where it stops

For each: files (scanned / containing the source framework's name / with sites, and with no manual site), sites
by status with rates,
the most frequent manual APIs (with the diagnostic code that kept them: RC301 no mapping, RC302 mapping not yet
proven by its paired example, RC303/RC309 a call or argument the mapping cannot carry) -- what to add to
mappings/ next -- and the time the engine took (the best of three runs; mappings loaded before, not counted).

    python bench/convert_bench.py [--corpus examples|torch-nn|monai|monai-all|seeds ...] [--top 15] [-j 1] [--seeds DIR]
                                  [--package DIR ...] [--path DIR ...]
"""
from __future__ import annotations

import argparse
import ast
import collections
import gc
import importlib.util
import io
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPORA = ("examples", "torch-nn", "monai", "monai-all", "seeds")


def package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)   # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def run_engine(paths: list[str], to: str, jobs: int, repeat: int = 3):
    """The engine's --check run with --scope model, in this process; returns (seconds, report): the best time of
    `repeat` runs (the runs give the same report)."""
    from recompat.translator import engine

    opts = engine.Options(paths=paths, to=to, scope="model", check=True, quiet=True, jobs=jobs)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        report = engine.run(opts, stdout=io.StringIO(), stderr=io.StringIO())
        best = min(best, time.perf_counter() - t0)
    return best, report


def _starts(data: bytes) -> tuple[set, set]:
    """(calls, nodes): the (line, 1-based character column) where each call / each expression or definition
    starts in ``data``."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return set(), set()
    lines = data.splitlines()
    calls, nodes = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.expr, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            line = lines[node.lineno - 1] if node.lineno <= len(lines) else b""
            at = (node.lineno, len(line[:node.col_offset].decode("utf-8", "replace")) + 1)
            nodes.add(at)
            if isinstance(node, ast.Call):
                calls.add(at)
    return calls, nodes


def call_sites(path: str, to: str, sites: list) -> list[bool]:
    """For each site of a file: is it a call occurrence? The others are references (a base class, an annotation,
    a class passed as a value, a renamed forward/construct definition).

    The model pass runs on the checkpoint pass's output and (translator as of this writing) locates its sites in
    that text, not in the file: a file whose checkpoint sites were rewritten has its model sites shifted. So the
    checkpoint pass's sites (the first ones) are matched against the file, the others against whichever of the file
    and the checkpoint pass's output their positions fit (every site starts a node there)."""
    from recompat.translator.translate import translate_bytes

    try:
        data = Path(path).read_bytes()
        first = translate_bytes(data, path, to=to, scope="checkpoint")
    except Exception:          # the engine reported the file already; count its sites as references
        return [False] * len(sites)
    n = len(first.sites)
    calls, nodes = _starts(data)
    out = [(s.line, s.col) in calls for s in sites[:n]]
    rest = sites[n:]
    if first.new_data is not None and rest:
        mid_calls, mid_nodes = _starts(first.new_data)
        fits = lambda starts: sum((s.line, s.col) in starts for s in rest)
        if fits(mid_nodes) > fits(nodes):
            calls = mid_calls
    return out + [(s.line, s.col) in calls for s in rest]


def pct(n: int, total: int) -> str:
    return f"{100 * n / total:5.1f}%" if total else "    -"


def parse_seconds(folder: Path) -> tuple[float, float]:
    """One ast.parse pass over a tree's Python files (read first), the best of three: the baseline the engine's
    time is set against; as Python runs it, and with the cyclic garbage collector paused per file, as the engine
    translates (the stricter baseline: the collector costs a parse about 40%)."""
    texts = [p.read_bytes() for p in sorted(folder.rglob("*.py"))]
    times = []
    for paused in (False, True):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            for text in texts:
                if paused:
                    gc.disable()
                ast.parse(text)
                gc.enable()
            best = min(best, time.perf_counter() - t0)
        times.append(best)
    return times[0], times[1]


def show(title: str, runs: list[tuple[str, float, object]], top: int,
         baseline: tuple[float, float] | None = None) -> dict:
    """Print one corpus's figures; `runs`: (direction, seconds, report) -- one, or one per direction; `baseline`:
    seconds of one ast.parse pass over the same files (parse_seconds)."""
    files = sum(r.summary.files_scanned for _, _, r in runs)
    examined = sum(r.summary.files_examined for _, _, r in runs)
    lines = sum(r.summary.lines for _, _, r in runs)
    seconds = sum(t for _, t, _ in runs)
    results = [res for _, _, r in runs for res in r.results]
    with_sites = sum(1 for res in results if res.sites)
    no_manual = sum(1 for res in results if res.sites and all(site.status != "manual" for site in res.sites))
    failed = [res for res in results if res.error]
    counts = collections.Counter()
    calls = collections.Counter()
    manual: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for direction, _, r in runs:
        for res in r.results:
            for site, is_call in zip(res.sites, call_sites(res.path, direction, res.sites) if res.sites else []):
                if is_call:
                    calls[site.status] += 1
    for res in results:
        for site in res.sites:
            counts[site.status] += 1
            if site.status == "manual":
                codes = [d.code for d in site.diagnostics if d.status == "manual"] or ["?"]
                manual[site.api][codes[0]] += 1
    total = sum(counts.values())
    directions = ", ".join(sorted({d for d, _, _ in runs}))
    print(f"== {title}  (--to {directions})")
    print(f"files: {files:,} scanned, {examined:,} naming the source framework, {with_sites:,} with sites "
          f"({no_manual:,} with no manual site)" + (f", {len(failed)} could not be processed" if failed else ""))
    print(f"sites: {total:,}   converted {counts['converted']:,} ({pct(counts['converted'], total).strip()})   "
          f"partial {counts['partial']:,} ({pct(counts['partial'], total).strip()})   "
          f"manual {counts['manual']:,} ({pct(counts['manual'], total).strip()})")
    if total:
        print(f"conversion rate (converted / sites): {100 * counts['converted'] / total:.1f}%   "
              f"rewritten (converted + partial): {100 * (counts['converted'] + counts['partial']) / total:.1f}%")
        n = sum(calls.values())
        print(f"  of which calls: {n:,}   converted {calls['converted']:,} ({pct(calls['converted'], n).strip()})   "
              f"partial {calls['partial']:,}   manual {calls['manual']:,}; the other {total - n:,} sites are names "
              f"used as values (base classes, annotations, forward/construct definitions)")
    verdicts = collections.Counter(v.verdict for _, _, r in runs for v in r.classes)
    if verdicts:   # translator/verdicts.py, as `recompat translate` reports them
        print(f"model classes: {sum(verdicts.values()):,}   will run {verdicts['runs']:,}   "
              f"may not run {verdicts['may not run']:,}   will not run {verdicts['will not run']:,}")
    print(f"time: {seconds:.2f} s for {lines:,} lines ({lines / seconds:,.0f} lines/s)" if seconds > 0 else
          "time: -")
    if baseline:
        plain, paused = baseline
        print(f"  one ast.parse pass of the same files: {plain:.2f} s ({paused:.2f} s with the garbage collector "
              f"paused per file, as the engine runs); the translation takes {seconds / plain:.1f}x that "
              f"({seconds / paused:.1f}x the paused pass)")
    for res in failed:
        print(f"  failed: {res.error}")
    ranked = sorted(manual.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    if ranked and top > 0:
        shown = ranked[:top]
        print(f"top {len(shown)} manual APIs of {len(ranked)} (occurrences, the code that kept them):")
        width = max(len(api) for api, _ in shown)
        for api, codes in shown:
            why = ", ".join(f"{c} x{n}" if len(codes) > 1 else c for c, n in codes.most_common())
            print(f"  {sum(codes.values()):5d}  {api:<{width}}  {why}")
    print()
    return {"sites": total, **counts}


_IMPORT_PROBE = """\
import traceback
try:
    import PACKAGE
    print("imports")
except Exception as exc:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(ROOT)]
    where = f" ({frames[-1].filename[len(ROOT) + 1:]}:{frames[-1].lineno})" if frames else ""
    print(f"stops: {type(exc).__name__}: {exc}{where}")
"""


def imports_translated(package: Path, paths: list[Path]) -> str:
    """Translate a package folder into a temporary one and import it there under MindSpore, in a subprocess:
    'imports', or where the import stops (the error and the last frame of the translated package)."""
    from recompat.translator import engine

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / package.name
        engine.run(engine.Options(paths=[str(package)], to="mindspore", scope="model", output=str(out), quiet=True),
                   stdout=io.StringIO(), stderr=io.StringIO())
        probe = _IMPORT_PROBE.replace("PACKAGE", package.name).replace("ROOT", repr(tmp))
        env = {**os.environ, "GLOG_v": "3",
               "PYTHONPATH": os.pathsep.join([tmp, *map(str, paths), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run([sys.executable, "-c", probe], cwd=tmp, env=env, capture_output=True, text=True,
                              timeout=600)
        return (done.stdout.strip().splitlines() or [f"stops: {done.stderr.strip().splitlines()[-1:]}"])[-1]


def seed_files(folder: Path, out: Path) -> dict[str, list[str]]:
    """Write each seed code block to out/ as a .py file; returns {framework: [paths]}."""
    from recompat.compat.seeds import code_blocks

    by_framework: dict[str, list[str]] = collections.defaultdict(list)
    for path in sorted(folder.iterdir()):
        if not path.is_file():
            continue
        for block in code_blocks(path.read_text(encoding="utf-8", errors="replace"), path.name):
            stem = block.name.replace(".txt", "").replace(":", "_line")
            target = out / f"{stem}_{block.framework}.py"
            target.write_text(block.source, encoding="utf-8")
            by_framework[block.framework].append(str(target))
    return by_framework


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", action="append", choices=CORPORA,
                    help="corpus to measure, repeatable (default: all)")
    ap.add_argument("--top", type=int, default=15, help="manual APIs listed per corpus (default: %(default)s)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="engine worker processes (default: %(default)s)")
    ap.add_argument("--seeds", type=Path, default=REPO.parent / "shared" / "seeds",
                    help="the seed documents' folder (default: %(default)s)")
    ap.add_argument("--package", action="append", type=Path, default=[],
                    help="a package folder to measure and import translated, repeatable (only these when given "
                         "without --corpus)")
    ap.add_argument("--path", action="append", type=Path, default=[],
                    help="a folder put first on the translated package's import path, repeatable")
    args = ap.parse_args(argv)
    corpora = args.corpus or ([] if args.package else list(CORPORA))

    from recompat import mappings

    m = mappings.default()                                       # loaded once, before any timing
    proven = sum(1 for e in m.entries if e.proven)
    print("recompat translate --scope model: conversion rate (sites = call occurrences)")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"mapping entries: {len(m.entries)}, {proven} proven by their paired example; -j {args.jobs}")
    print()
    run_engine([str(REPO / "examples")], "mindspore", 1, 1)       # warm-up (page cache, lazy imports)

    totals = {}
    if "examples" in corpora:
        t, report = run_engine([str(REPO / "examples")], "mindspore", args.jobs)
        totals["examples"] = show(f"examples/ ({REPO / 'examples'})", [("mindspore", t, report)], args.top)
    if "torch-nn" in corpora:
        torch_dir = package_dir("torch")
        if torch_dir is None:
            print("== torch/nn/modules: torch is not installed here -- skipped\n")
        else:
            files = sorted(str(p) for p in (torch_dir / "nn" / "modules").glob("*.py"))
            t, report = run_engine(files, "mindspore", args.jobs)
            totals["torch-nn"] = show(f"torch/nn/modules/*.py ({torch_dir / 'nn' / 'modules'})",
                                      [("mindspore", t, report)], args.top)
    monai_dir = package_dir("monai")
    for corpus, sub in (("monai", "networks"), ("monai-all", "")):
        if corpus not in corpora:
            continue
        if monai_dir is None:
            print(f"== {corpus}: MONAI is not installed here (pip install -e '.[test]') -- skipped\n")
            continue
        tree = monai_dir / sub if sub else monai_dir
        t, report = run_engine([str(tree)], "mindspore", args.jobs)
        totals[corpus] = show(f"monai{'/' + sub if sub else ''} ({tree})", [("mindspore", t, report)], args.top,
                              parse_seconds(tree))
    for package in args.package:
        if not (package / "__init__.py").is_file():
            print(f"== {package}: not a package folder (no __init__.py) -- skipped\n")
            continue
        t, report = run_engine([str(package)], "mindspore", args.jobs)
        totals[package.name] = show(f"{package.name} ({package})", [("mindspore", t, report)], args.top,
                                    parse_seconds(package))
        print(f"the translated package: {imports_translated(package, args.path)}\n")
    if "seeds" in corpora:
        if not args.seeds.is_dir():
            print(f"== seeds: no folder {args.seeds} -- skipped\n")
        else:
            with tempfile.TemporaryDirectory() as tmp:
                blocks = seed_files(args.seeds, Path(tmp))
                print(f"seeds: {args.seeds}: model code blocks: "
                      + (", ".join(f"{len(v)} {k}" for k, v in sorted(blocks.items())) or "none"))
                for framework, files in sorted(blocks.items()):
                    to = "torch" if framework == "mindspore" else "mindspore"
                    t, report = run_engine(files, to, args.jobs)
                    totals[f"seeds-{framework}"] = show(f"seeds: {framework} code blocks", [(to, t, report)],
                                                        args.top)
    if len(totals) > 1:
        print("| corpus | sites | converted | partial | manual | conversion rate |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, c in totals.items():
            n = c["sites"]
            print(f"| {name} | {n:,} | {c.get('converted', 0):,} | {c.get('partial', 0):,} | {c.get('manual', 0):,} "
                  f"| {pct(c.get('converted', 0), n).strip()} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
