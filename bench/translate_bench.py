"""Benchmark: `recompat translate --check` over a large real tree against one `ast.parse` pass.

Not a test: it prints figures and ratios. Corpus: the source framework's installed package (torch's
own sources for --to mindspore, MindSpore's for --to torch; found without importing either), or any
folder given with --corpus.

Measured alternately, --rounds times (the best round of each is reported, the others show
the spread):
  (a) ast.parse: read and parse every .py file once, one process;
  (b) recompat:  the engine's check run over the whole tree, in this process, -j 1
                 (what `recompat translate DIR --check -q` does);
  (c) recompat:  the same with -j 2.
Goal: (a)/(b) > 1, i.e. recompat checks the tree faster than Python merely parses it.

    python bench/translate_bench.py [--to mindspore|torch] [--rounds 3] [--corpus DIR]
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import io
import os
import platform
import sys
import time
import warnings
from pathlib import Path


SOURCE_PACKAGE = {"mindspore": "torch", "torch": "mindspore"}   # --to -> the package whose sources are read


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)   # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"bench: {name} is not installed here — install it, or point --corpus at a folder of Python files")
    return Path(list(spec.submodule_search_locations)[0])


def python_files(root: Path) -> list[str]:
    from recompat.translator.engine import iter_python_files

    return iter_python_files([str(root)])   # the same files the engine looks at


def count_lines(files: list[str]) -> int:
    n = 0
    for f in files:
        with open(f, "rb") as fh:
            data = fh.read()
        n += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return n


def parse_all(files: list[str]) -> tuple[float, int]:
    """(a): read and ast.parse every file; returns (seconds, files that did not parse)."""
    bad = 0
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # SyntaxWarnings of invalid escapes in old sources
        for f in files:
            with open(f, "rb") as fh:
                data = fh.read()
            try:
                ast.parse(data, filename=f)
            except (SyntaxError, ValueError):
                bad += 1
    return time.perf_counter() - t0, bad


def recompat_check(root: Path, jobs: int, to: str):
    """(b)/(c): the engine's --check run, in this process; returns (seconds, report)."""
    from recompat.translator import engine

    opts = engine.Options(paths=[str(root)], to=to, check=True, quiet=True, jobs=jobs)
    t0 = time.perf_counter()
    report = engine.run(opts, stdout=io.StringIO(), stderr=io.StringIO())
    return time.perf_counter() - t0, report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (default: %(default)s)")
    ap.add_argument("--to", choices=sorted(SOURCE_PACKAGE), default="mindspore",
                    help="direction (default: %(default)s)")
    ap.add_argument("--corpus", type=Path,
                    help="folder of Python files (default: the installed package of the source framework)")
    args = ap.parse_args(argv)
    root = args.corpus or package_dir(SOURCE_PACKAGE[args.to])
    if not root.is_dir():
        sys.exit(f"bench: {root}: not a folder")

    files = python_files(root)
    lines = count_lines(files)
    print(f"corpus: {root}  ({len(files):,} .py files, {lines:,} lines), --to {args.to}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")

    # Warm-up (page cache; the translator's mapping data), not counted.
    parse_all(files)
    recompat_check(root, 1, args.to)

    runs: dict[str, list[float]] = {"a": [], "b": [], "c": []}
    report = None
    unparsable = 0
    for r in range(args.rounds):
        t, unparsable = parse_all(files)
        runs["a"].append(t)
        t, report = recompat_check(root, 1, args.to)
        runs["b"].append(t)
        t, report2 = recompat_check(root, 2, args.to)
        runs["c"].append(t)
        print(f"round {r + 1}: ast.parse {runs['a'][-1]:.2f} s, recompat -j1 {runs['b'][-1]:.2f} s, "
              f"recompat -j2 {runs['c'][-1]:.2f} s", flush=True)
        assert report2.summary.to_dict()["sites"] == report.summary.to_dict()["sites"], "-j 2 differs from -j 1"

    s = report.summary
    best = {k: min(v) for k, v in runs.items()}
    names = {
        "a": "(a) `ast.parse` of every file, once",
        "b": f"(b) `recompat translate --to {args.to} --check -q`, -j 1",
        "c": f"(c) `recompat translate --to {args.to} --check -q`, -j 2",
    }
    print()
    print(f"| run | files | lines | seconds (best of {args.rounds}) | lines/s |")
    print("|---|---:|---:|---:|---:|")
    for k in "abc":
        print(f"| {names[k]} | {len(files):,} | {lines:,} | {best[k]:.2f} | {lines / best[k]:,.0f} |")
    print()
    print(f"ratio (a)/(b) = {best['a'] / best['b']:.1f}  (goal > 1: recompat -j 1 checks the tree faster than "
          f"one ast.parse pass)")
    print(f"ratio (a)/(c) = {best['a'] / best['c']:.1f}")
    print()
    print(f"files containing the trigger word (sent to the translator): {s.files_examined:,} of {s.files_scanned:,}; "
          f"would change: {s.files_changed}; could not be processed: {s.files_failed} "
          f"(ast.parse failed on {unparsable})")
    with_sites = sum(1 for r in report.results if r.sites)
    print(f"files with sites: {with_sites}; sites: {s.total_sites} — "
          + ", ".join(f"{s.sites[k]} {k}" for k in ("converted", "partial", "manual"))
          + (f"; conversion rate {100 * s.conversion_rate:.1f}%, rewritten {100 * s.rewritten_rate:.1f}%"
             if s.total_sites else ""))
    for r in report.results:
        if r.error:
            print(f"  failed: {r.error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
