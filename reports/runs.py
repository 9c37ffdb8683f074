"""``--report FILE.html`` on ``recompat translate`` and ``recompat test``, and ``recompat report``: the JSON goes
beside the page (FILE.json), and the page is rendered from it."""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

from . import html
from ._io import ReportError, load_json, write_atomic


def paths(report: str) -> tuple[Path, Path]:
    """(page, JSON beside it) for ``--report FILE.html``."""
    page = Path(report)
    if page.suffix.lower() == ".json":
        raise ReportError(f"--report {report}: names the page, not its JSON — give FILE.html (the JSON goes beside "
                          "it, as FILE.json)")
    if page.is_dir():
        raise ReportError(f"--report {report}: is a folder — name the HTML file to write")
    return page, page.with_suffix(".json")


def _say(text: str) -> None:
    print(f"recompat: {text}", file=sys.stderr)


def _write(doc: dict, text: str, page: Path, beside: Path, also: str | None = None) -> int:
    """``text`` (the doc's JSON) into FILE.json beside the page and into ``also`` (a --json path; "-": stdout),
    then the page rendered from ``doc``. 0 done; 2, said, when one cannot be written."""
    try:
        if also == "-":
            sys.stdout.write(text)
        elif also:
            write_atomic(also, text)
        write_atomic(beside, text)
        html.write(doc, page, source=beside.name)
    except ReportError as exc:
        _say(f"error: {exc}")
        return 2
    _say(f"report written to {page} (its JSON: {beside})")
    return 0


# ----------------------------------------------------------------------------------------------- translate

class _Tee:
    """stdout for the engine: keeps each diff it writes, and shows it only when the user asked for --diff."""

    def __init__(self, real, show: bool):
        self.real, self.show, self.chunks = real, show, []

    def write(self, text: str) -> int:
        self.chunks.append(text)
        if self.show:
            self.real.write(text)
        return len(text)

    def flush(self) -> None:
        if self.show:
            self.real.flush()


class _Stderr:
    """stderr for the engine when --report, not the user, turned the diff on: its closing line says what the user's
    own mode says (the engine words it for --diff otherwise)."""

    FORCED = "nothing written (--diff only shows) — use --in-place to rewrite the files, or -o DIR to write a translated copy"
    PLAIN = "nothing written — use --in-place to rewrite the files, or -o DIR to write a translated copy; --diff shows the changes"

    def __init__(self, real):
        self.real = real

    def write(self, text: str) -> int:
        return self.real.write(text.replace(self.FORCED, self.PLAIN))

    def flush(self) -> None:
        self.real.flush()

    def isatty(self) -> bool:
        return self.real.isatty()


def translation_doc(opts, *, stdout=None, stderr=None) -> dict:
    """Run the translation as ``opts`` says and return the report's JSON: the run's JSON plus each changed file's
    diff (shown on ``stdout`` only when ``opts.diff`` asks). engine.UsageError propagates, before anything is done."""
    from recompat.translator import engine

    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    engine.validate(opts)
    before: dict[str, bytes] = {}
    if opts.in_place:   # the diff is against what the files held before they were rewritten
        for p in engine.iter_python_files(opts.paths, opts.exclude):
            try:
                before[p] = Path(p).read_bytes()
            except OSError:
                pass
    tee = _Tee(stdout, show=opts.diff)
    run_opts = dataclasses.replace(opts, diff=not opts.in_place, json_path=None)
    forced = run_opts.diff and not opts.diff
    result = engine.run(run_opts, stdout=tee, stderr=_Stderr(stderr) if forced else stderr)
    diffs: dict[str, str] = {}
    for chunk in tee.chunks:
        first = chunk.split("\n", 1)[0]
        if first.startswith("--- a/"):
            diffs[first[len("--- a/"):]] = chunk
    files = []
    for r in result.results:
        if not (r.sites or r.notes or r.error or r.changed):
            continue
        d = r.to_dict()
        key = r.path.replace(os.sep, "/")
        if opts.in_place and r.changed and r.error is None and r.path in before:
            try:
                d["diff"] = engine.unified_diff(r.path, before[r.path], Path(r.path).read_bytes()) or None
            except OSError:
                d["diff"] = None
        else:
            d["diff"] = diffs.get(key)
        files.append(d)
    return {"kind": "recompat-translate", **engine.json_doc(opts, result, files)}


def translate(opts, report: str) -> int:
    """Run the translation as ``opts`` says, then write FILE.json (the run's JSON plus each changed file's diff) and
    FILE.html. The exit status is the translation's, or 2 when the report cannot be written."""
    from recompat.translator import engine

    try:
        page, beside = paths(report)
    except ReportError as exc:
        _say(f"error: {exc}")
        return 2
    try:
        doc = translation_doc(opts)
    except engine.UsageError as exc:
        _say(f"error: {exc}")
        return 2
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return _write(doc, text, page, beside, also=opts.json_path) or doc["exit_code"]


# ---------------------------------------------------------------------------------------------------- test

def suite(results_json: Path, report: str, sweep: bool = True) -> int:
    """After ``recompat test``: add the depth sweep to the suite's JSON, write it beside the page, render the page.
    0 done, 2 when there are no results to show or a file cannot be written."""
    page, beside = paths(report)
    if not results_json.is_file():
        _say(f"error: no results were written to {results_json} (no case ran?) — {page} not written")
        return 2
    try:
        doc = load_json(results_json)
    except ReportError as exc:
        _say(f"error: {exc}")
        return 2
    if sweep:
        try:
            from .sweep import depth_sweep

            doc["depth_sweep"] = depth_sweep()
        except Exception as exc:   # the plot is a bonus: the report is still written without it
            doc["depth_sweep_error"] = f"{type(exc).__name__}: {exc}"
            _say(f"warning: the depth sweep for the plot failed ({type(exc).__name__}: {exc})")
    return _write(doc, json.dumps(doc, indent=1, default=str) + "\n", page, beside)


# ----------------------------------------------------------------------------------------------------- job

def job(doc: dict, report: str | None, json_path: str | None) -> int:
    """After ``recompat job``: its JSON to --json and, with --report FILE.html, beside the page, and the page.
    0 done (or nothing asked), 2 when a file cannot be written."""
    text = json.dumps(doc, indent=1, default=str) + "\n"
    try:
        if report:
            page, beside = paths(report)
            return _write(doc, text, page, beside, also=json_path)
        if json_path:
            write_atomic(json_path, text)
    except ReportError as exc:
        _say(f"error: {exc}")
        return 2
    return 0


# -------------------------------------------------------------------------------------------------- report

def report(json_path: str, output: str | None) -> int:
    """``recompat report JSON -o FILE.html``: 0 written, 2 bad input or an output that cannot be written."""
    src = Path(json_path)
    page = Path(output) if output else src.with_suffix(".html")
    if page.resolve() == src.resolve():
        _say(f"error: -o {page} is the JSON itself — name the HTML file to write")
        return 2
    try:
        doc = load_json(src)
        html.write(doc, page, source=src.name)
    except ReportError as exc:
        _say(f"error: {exc}")
        return 2
    _say(f"{html.kind_of(doc)} report written to {page}")
    return 0
