"""The `recompat` command: argument parsing and wiring only; the work is in recompat.translator.engine.

Kept light on purpose: importing this module (and `recompat --help`) loads neither torch nor
MindSpore nor the translator; `translate` loads only what translating needs.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

import recompat
from recompat.constants import DEFAULT_STYLE, DEMO_ATOL, DEMO_RTOL, DEVICES, DIRECTIONS, MS_MODES, SCOPES, STYLES, either

EXIT_OK, EXIT_ERROR = 0, 2     # 1, "--check found changes", is the translator's and the docs' to return

_MAIN_EPILOG = """\
commands:
  translate   rewrite activation checkpointing between PyTorch and MindSpore, both ways;
              with --scope model, whole model files
  test        run the differential suite: paired torch / MindSpore models, recompute on and off
  prove       run each mapping entry's paired example; record output.txt where the pair agrees
  docs        generate the API-difference docs (English, Chinese; Markdown, HTML) from mappings/
  report      render a run's JSON as a single-file HTML report
  demo        translate the example project, run it against torch, write the report
  weights     convert a weight file: torch state dict (.pt, .pth, .bin, .safetensors) <-> MindSpore .ckpt
  job         run a training script and its port N steps on one data stream, and judge them

exit status: 0 done; 1 --check found changes; 2 a usage error, or a file that could
not be processed (named on stderr with the reason, after all other files were done).

examples:
  recompat translate src/                      # report the call sites, write nothing
  recompat translate src/ --diff               # show the rewrite as a unified diff
  recompat translate src/ -o out/ms            # write a translated copy of the tree
  recompat translate src/ --in-place           # rewrite the files where they are
  recompat translate src/ --check -q           # CI: exit 1 if anything would change
  recompat test -n 2                           # the differential suite on 2 processes
  recompat test --report suite.html            # ... and an HTML report (suite.json beside it)
  recompat prove --entry linear                # after editing mappings/examples/linear/
  recompat prove --check                       # CI: exit 1 if an example's files are missing or stale
  recompat docs --check                        # CI: exit 1 if docs/ is not what mappings/ generates
  recompat report sites.json -o sites.html     # render a --json file as HTML
  recompat demo
  recompat weights model.pt -o model.ckpt --model mynet_ms:Net(10)
  recompat job train.py --steps 20 -- --epochs 1  # train.py against its translation, 20 steps

`recompat COMMAND --help` tells more.
"""

_TRANSLATE_EPILOG = """\
modes (at most one; without one, recompat only reports the sites and writes nothing):
  -o DIR        mirror every file of the tree into DIR: Python files translated where
                there is something to change, every other file copied byte for byte
  --in-place    rewrite the changed files where they are (atomically; files with
                nothing to change are never touched)
  --diff        print a unified diff (a/ b/ paths, as git) to stdout; write nothing
  --check       write nothing; exit 1 if any file would change

what is looked at: PATH may be files or folders (walked recursively); only *.py files and
Jupyter notebooks (*.ipynb: their code cells, as one file; diagnostics as FILE:CELL:LINE:COL)
are translated. Folders named .git, __pycache__, .venv, venv, node_modules and .tox are skipped,
and so is anything matching an --exclude GLOB (matched against the path relative to the
PATH given and against the file or folder name). A file that does not mention
"checkpoint" (--to mindspore) or "recompute" (--to torch) -- with --scope model, the name of
the framework it is written for ("torch", "mindspore") -- is passed over unparsed.

output: one line per site on stderr, `file:line:col: CODE [status] message` (hidden by -q),
then a summary with the counts and the conversion rate; --json FILE writes all of it as JSON;
--report FILE.html writes a page of it all, with each changed file's diff, and FILE.json beside it.

examples:
  recompat translate model.py --diff
  recompat translate src/ -o build/mindspore --exclude 'tests/*' --exclude '*_pb2.py'
  recompat translate src/ --in-place --style cell -j 0
  recompat translate src/ --check -q --json recompat.json   # in CI
"""

_TEST_EPILOG = """\
what runs: every pair of the model zoo (recompat.compat.zoo) through four checks --
  torch-recompute       torch with checkpoint vs without: equal
  mindspore-recompute   MindSpore with recompute vs without, PYNATIVE and GRAPH, each form: equal
  cross                 torch vs MindSpore on the same weights, recompute off and on: within tolerance
  memory                bytes kept for backward with and without recompute, and the time overhead
-- on every device asked for (an unavailable one is a skip with its reason), then the planted
bugs the suite must catch (wrong GELU, LayerNorm eps, BatchNorm momentum, swapped layers, a lost
recompute mark, a weight not transferred), with the catch rate. A summary table closes the run.

record and replay: on a machine with the torch device, `--record DIR` saves the torch side of each
cross comparison; elsewhere `--against DIR` compares MindSpore with it instead of running torch.

exit status: pytest's (0 all passed, 1 some failed, 2-4 usage or internal errors).

examples:
  recompat test -n 2 --json suite.json
  recompat test --device gpu --record runs/          # on the GPU machine
  recompat test --device cpu --against runs/         # then here, MindSpore on CPU
  recompat test -k transformer --ms-mode pynative
"""

_PROVE_EPILOG = """\
what it does, for each mapping entry (or each --entry ID), in mappings/examples/ID/:
  core API set   the hand-written side (a model `Example` and its `INPUTS`) is translated with
                 `recompat translate --scope model` into the other side (written when it changed; never
                 edit it by hand), then the differential harness builds both, copies torch's weights
                 over, runs one forward and backward on each and compares outputs and gradients
  checkpoint     both hand-written scripts run and must print the same numbers
  training       (mappings/training.yaml) the torch side's pieces and its MindSpore counterparts, built
                 from the entry, train both hand-written models 100 steps (compare_training)
output.txt records the result when the pair agrees, and is removed when it no longer does: an entry
without one is unproven, and translate --scope model leaves its API as it is. Imports torch and
MindSpore. One line per entry on stderr (agrees, or fails with the reason), then a summary; the
files written or removed (--check: missing or stale) on stdout.

exit status: 0 every pair agrees (with --check: every file is current; unproven entries are listed,
not an error); 1 a pair does not agree (its output.txt removed), or --check found a file missing or
stale; 2 bad input (an unknown entry id, mappings that do not load, a file that cannot be written).

examples:
  recompat prove                         # every entry
  recompat prove --entry linear --entry conv2d
  recompat prove --check                 # in CI, beside `recompat docs --check`
  recompat prove --entry linear && recompat docs   # then its page shows the recorded output
"""

_DOCS_EPILOG = """\
what is written (into docs/ unless -o DIR): en/ID.md and zh/ID.md for every mapping entry (both signatures,
every parameter of both sides with its counterpart and the decision, the paired example and the output both
sides print), en/index.md and zh/index.md, index.md, an .html twin of each, and mappings.json (the same data
for programs). Files with nothing to change are not rewritten; generated files no entry produces any more
are removed; hand-written files (docs/behaviours.md) are never touched.

The docs only read the paired examples (mappings/examples/ID/) as they are on disk; `recompat prove`
is the step that writes their generated side and output.txt. --run-examples is kept as a shortcut for
`recompat prove` followed by `recompat docs`.

exit status: 0 done (or, with --check, up to date); 1 --check found differences (listed on stdout);
2 bad input, or (--run-examples) a paired example that did not pass (the docs are still written).

examples:
  recompat docs                      # regenerate docs/ after editing mappings/
  recompat docs --check              # in CI
  recompat prove --entry ID && recompat docs   # after editing mappings/examples/ID/
"""

_REPORT_EPILOG = """\
kinds, told apart by the JSON: a translation (recompat translate --json), a differential suite run
(recompat test --json), the mappings (docs/mappings.json, written by recompat docs) or a demo run
(out/demo/report.json, written by recompat demo).

exit status: 0 written; 2 the JSON is missing, damaged or not one recompat writes, or the page cannot be
written (nothing is half-written: the page goes to a temporary file beside it, then a rename).

examples:
  recompat report sites.json                  # writes sites.html
  recompat report suite.json -o suite.html
  recompat report docs/mappings.json -o mappings.html
"""

_DEMO_EPILOG = """\
what it does, on the example project of the source tree (examples/):
  1. translates it into DIR (default out/demo/), whole model files (--scope model);
  2. for each model of examples/train.py, builds the torch model with checkpointing on and its
     translation with the same builder, copies the torch weights over, runs one forward and one
     backward on the example's batch on both sides and compares outputs, input gradients,
     parameter gradients, buffers, settings and the memory recompute saves; then trains both 20
     steps (SGD, mean squared error) and judges every step (a model whose files keep manual sites
     is reported, not run);
  3. writes DIR/report.json and DIR/report.html, prints a table and where the report is.
Progress goes to stderr; the table and the report's location to stdout.

exit status: 0 the pipeline ran (also when some models are not yet translatable or disagree: the
table and the report say which and why); 2 bad input (no example project, an output folder that
cannot be written, an unknown --model).

examples:
  recompat demo                          # then open out/demo/report.html
  recompat demo --model mlp --diff       # one model, and the translation's diff on stdout
  recompat demo --no-run -o /tmp/demo    # translate and report only (no torch, no MindSpore)
"""


_WEIGHTS_EPILOG = """\
the model: the weights' keys do not say which layer holds each tensor (a LayerNorm's weight and
bias become gamma and beta on MindSpore, a Linear's and a module's own Parameters do not), so
recompat reads the names from the model the weights are for, on either side: the translated
model or the original. MODEL is module:Name or path/to/file.py:Name, where Name is a class (or
function) called with no arguments, a call with literal arguments, or a model object. It is built
on the CPU.

what is checked: every key of the file is used, or dropped for a reason the mappings give
(torch's num_batches_tracked); every tensor of the model is found (or filled from the model for
such a reason); shapes agree through the layer pair's layout. Values are kept bit for bit, in the
file's dtypes. Any problem: every one is listed and nothing is written.

a torch file may be a training checkpoint (a dict holding the model's state dict beside an
optimizer's, an epoch...): its one dict of tensors is taken, or the one --key names.

exit status: 0 written; 2 a problem (named, with what to do), nothing written.

examples:
  recompat weights resnet.pt -o resnet.ckpt --model out/ms/model.py:ResNet(num_classes=10)
  recompat weights model.ckpt -o model.safetensors --model mynet:Net
  recompat weights train_state.pt -o model.ckpt --key model --model mynet_ms:Net
"""


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n}: give 1 or more processes, or 0 for one per CPU")
    return n


def _translate_parser(sub) -> argparse.ArgumentParser:
    t = sub.add_parser(
        "translate", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_TRANSLATE_EPILOG,
        help="rewrite activation checkpointing between PyTorch and MindSpore (--scope model: whole model files)",
        description="Rewrite activation checkpointing between PyTorch and MindSpore, either way:\n"
                    "  --to mindspore (default)  torch.utils.checkpoint and friends -> MindSpore's recompute forms\n"
                    "  --to torch                mindspore.recompute and .recompute() marks -> torch's checkpoint\n"
                    "With --scope model, whole model files: the core nn API set too (Module/Cell, layers,\n"
                    "functions, tensor methods), and a manual diagnostic for every API outside it.")
    t.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to translate")
    mode = t.add_mutually_exclusive_group()
    mode.add_argument("-o", "--output", metavar="DIR",
                      help="mirror the tree into DIR, translated (unchanged and non-Python files copied)")
    mode.add_argument("--in-place", action="store_true", help="rewrite the changed files where they are")
    mode.add_argument("--diff", action="store_true", help="print a unified diff to stdout; write nothing")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change")
    t.add_argument("--to", choices=DIRECTIONS, default="mindspore",
                   help="the framework to translate into (default: %(default)s)")
    t.add_argument("--style", choices=STYLES, default=None,
                   help="cell: mark a submodule that is only ever called under checkpoint with block.recompute() "
                        "in __init__ and call it plainly (GRAPH mode keeps that mark; it drops the function form's "
                        "on blocks that run their layers in a loop), the function form elsewhere; function: "
                        f"mindspore.recompute(block, ...) at every call site (default: {DEFAULT_STYLE}; "
                        "--to mindspore only)")
    t.add_argument("--scope", choices=SCOPES, default="checkpoint",
                   help="checkpoint: rewrite the checkpoint/recompute sites only; model: whole model files, the core "
                        "nn API set too (Module/Cell, layers, functions, tensor methods; see docs/), with a "
                        "manual diagnostic for every API outside it (default: %(default)s)")
    t.add_argument("-j", "--jobs", type=_jobs, default=0, metavar="N",
                   help="translate in N processes; 0: one per CPU, where the tree is large enough to gain "
                        "(about 128 KB of source per process; a small tree stays in one) (default: 0)")
    t.add_argument("-q", "--quiet", action="store_true",
                   help="no per-site lines; errors and the summary are still printed")
    t.add_argument("--clear-outputs", action="store_true",
                   help="notebooks (.ipynb, translated cell by cell): clear the translated ones' outputs and "
                        "execution counts (default: kept as they are)")
    t.add_argument("--json", dest="json_path", metavar="FILE",
                   help="also write every site, diagnostic, error and the summary as JSON to FILE ('-': stdout)")
    t.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="skip files and folders matching GLOB (fnmatch, against the relative path and the "
                        "name; repeatable)")
    t.add_argument("--report", metavar="FILE.html",
                   help="also write an HTML report of the run (sites, diagnostics, diffs) to FILE.html, and its "
                        "JSON beside it (FILE.json)")
    return t


def _test_parser(sub) -> argparse.ArgumentParser:
    s = sub.add_parser(
        "test", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_TEST_EPILOG,
        help="run the differential suite (paired torch / MindSpore models) and print a summary table",
        description="Run recompat's built-in differential suite under pytest, with its plugin's options.")
    s.add_argument("--device", action="append", choices=DEVICES, metavar="DEVICE",
                   help=f"{either(DEVICES)} (repeatable; default: all, unavailable ones skip with the reason)")
    s.add_argument("--ms-mode", action="append", choices=MS_MODES, metavar="MODE",
                   help=f"MindSpore mode: {either(MS_MODES)} (repeatable; default: both)")
    s.add_argument("--json", dest="json_path", metavar="FILE", help="write every result as JSON to FILE")
    s.add_argument("--record", metavar="DIR", help="save the torch side of each cross comparison in DIR")
    s.add_argument("--against", metavar="DIR", help="compare MindSpore with the torch runs recorded in DIR")
    s.add_argument("-k", dest="keyword", metavar="EXPR", help="only the cases whose id matches EXPR (pytest -k)")
    s.add_argument("-n", "--jobs", type=_jobs, default=1, metavar="N",
                   help="run in N processes (pytest-xdist); 0: one per CPU (default: 1)")
    s.add_argument("-q", "--quiet", action="store_true", help="less pytest output; the summary table stays")
    s.add_argument("--report", metavar="FILE.html",
                   help="also write an HTML report (every case, failures expanded, memory, a plot of bytes kept vs "
                        "depth) to FILE.html, and its JSON beside it (FILE.json)")
    return s


def _prove_parser(sub) -> argparse.ArgumentParser:
    v = sub.add_parser(
        "prove", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_PROVE_EPILOG,
        help="run each mapping entry's paired example and record output.txt where the pair agrees",
        description="Prove the mapping entries: run each entry's paired example (mappings/examples/ID/) and record "
                    "output.txt where the pair agrees. translate --scope model applies a core API entry only once "
                    "it has an output.txt.")
    v.add_argument("--entry", action="append", metavar="ID",
                   help="prove only this entry (repeatable; default: every entry)")
    v.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if a generated side or an output.txt is missing or stale (for CI)")
    return v


_TABLE_EPILOG = """\
what it does, for each row of MindSpore's "PyTorch and MindSpore API Mapping Table"
(mappings/table/pytorch_api_mapping.csv) in the sections recompat probes:
  - reads the torch API's parameters and defaults from its signature (or its docstring's)
  - gives each parameter without a default what mappings/table/probes.yaml says for its name
    (a tensor from a fixed seed, or a value), and calls torch and the row's MindSpore API alike
  - compares the outputs (values, shapes, dtypes) and, where they are floating, the gradients
  - calls again with each non-default value probes.yaml has for a parameter with a default
verdicts: agrees, differs, no kernel (on this device), missing (not in the installed
framework), not probed (why), out of scope (why). PyNative, on the CPU.

examples:
  recompat verify-table                        every row; one line each, then the counts
  recompat verify-table --api torch.acos       one row (repeatable)
  recompat verify-table --json table.json      also the verdicts as JSON (recompat report renders it)
  recompat verify-table --check                exit 1 where a verdict differs from the recorded one
  recompat verify-table --record               record the verdicts (mappings/table/verdicts.json)

exit status: 0 done (whatever the verdicts; with --check: none changed), 1 --check found a
changed verdict, 2 bad input (an unknown --api, a table or probe file that cannot be read).
"""


def _table_parser(sub) -> argparse.ArgumentParser:
    t = sub.add_parser(
        "verify-table", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_TABLE_EPILOG,
        help="run every row of MindSpore's official PyTorch mapping table on both frameworks and give a verdict",
        description="Probe each row of MindSpore's PyTorch and MindSpore API Mapping Table on torch and MindSpore "
                    "with the same inputs, and give each a verdict with its evidence.")
    t.add_argument("--api", action="append", metavar="TORCH_API",
                   help="probe only this row, by its torch API (repeatable; default: every row)")
    t.add_argument("--json", metavar="FILE", help="also write the verdicts as JSON to FILE")
    t.add_argument("--table", metavar="CSV",
                   help="the table to run (default: mappings/table/pytorch_api_mapping.csv)")
    mode = t.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="compare each verdict with the recorded one (mappings/table/verdicts.json); exit 1 "
                           "where one changed (a new torch or MindSpore)")
    mode.add_argument("--record", action="store_true",
                      help="record the verdicts in mappings/table/verdicts.json (every row: not with --api)")
    t.add_argument("-q", "--quiet", action="store_true", help="print only the counts, not a line per row")
    return t


def _verify_table(args) -> int:
    os.environ.setdefault("GLOG_v", "3")          # MindSpore's C++ log: errors only
    from recompat.compat import table

    if args.record and args.api:
        print("recompat: error: --record records every row: leave out --api", file=sys.stderr)
        return EXIT_ERROR
    return table.run(Path(args.table) if args.table else None, args.api, Path(args.json) if args.json else None,
                     check=args.check, record=args.record, quiet=args.quiet)


def _docs_parser(sub) -> argparse.ArgumentParser:
    g = sub.add_parser(
        "docs", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_DOCS_EPILOG,
        help="generate the API-difference docs (English, Chinese; Markdown, HTML) from mappings/",
        description="Generate one page per mapping entry, the indexes and docs/mappings.json from mappings/.")
    g.add_argument("-o", "--output", metavar="DIR",
                   help="the docs folder to write (default: docs/ of the source checkout)")
    g.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if DIR differs from what mappings/ generates (for CI)")
    g.add_argument("--run-examples", action="store_true",
                   help="first run `recompat prove` (the step that runs each entry's paired example and records "
                        "output.txt where it agrees; imports torch and MindSpore), then write the docs")
    return g


def _report_parser(sub) -> argparse.ArgumentParser:
    r = sub.add_parser(
        "report", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_REPORT_EPILOG,
        help="render a run's JSON as a single-file HTML report",
        description="Render the JSON of `recompat translate --json`, `recompat test --json`, docs/mappings.json or "
                    "out/demo/report.json as one self-contained HTML page (filter and sort in the page; no network).")
    r.add_argument("json", metavar="JSON", help="the JSON a run wrote")
    r.add_argument("-o", "--output", metavar="FILE.html", help="the page to write (default: JSON with .html)")
    return r


def _steps(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of steps, 0 or more")
    return value


def _demo_parser(sub, light: bool = False) -> argparse.ArgumentParser:
    # The demo's defaults are its Settings' (recompat.demo imports only the standard library and
    # recompat.constants, so --help stays light). Importing it still costs every command some 10-20 ms, so
    # main() builds this parser `light`, without them, when another command runs (the parser parses nothing then).
    if light:
        defaults = argparse.Namespace(style=None, scope=None, jobs=None, rtol=None, atol=None, train_steps=None)
    else:
        from recompat.demo import Settings as defaults

    d = sub.add_parser(
        "demo", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_DEMO_EPILOG,
        help="translate the example project, run the translation against torch, and write the report",
        description="Translate the example project (examples/) into out/demo/, run each model against its torch "
                    "original, and write a report of both.")
    d.add_argument("-o", "--output", metavar="DIR",
                   help="where to write the translated copy and the report (default: <repo>/out/demo)")
    d.add_argument("--model", action="append", metavar="NAME",
                   help="run only this example model (repeatable; default: all of examples/train.py)")
    d.add_argument("--style", choices=STYLES, default=defaults.style,
                   help="how checkpoint sites are written, as for translate (default: %(default)s)")
    d.add_argument("--scope", choices=SCOPES, default=defaults.scope,
                   help="model: whole model files; checkpoint: the checkpoint sites only (default: %(default)s)")
    d.add_argument("-j", "--jobs", type=_jobs, default=defaults.jobs, metavar="N",
                   help="translate in N processes; 0: one per CPU (default: %(default)s)")
    d.add_argument("--rtol", type=float, default=defaults.rtol,
                   help="judge by this relative tolerance instead of the default verdict, the round-off rule "
                        f"against a float64 run of the torch model (with --atol alone: {DEMO_RTOL:g})")
    d.add_argument("--atol", type=float, default=defaults.atol,
                   help=f"judge by this absolute tolerance instead (with --rtol alone: {DEMO_ATOL:g})")
    d.add_argument("--train-steps", type=_steps, default=defaults.train_steps, metavar="N",
                   help="training steps each model then takes on both sides, judged after each; 0: none "
                        "(default: %(default)s)")
    d.add_argument("--diff", action="store_true", help="also print the translation's unified diff to stdout")
    d.add_argument("-v", "--verbose", action="store_true", help="also print every translated site on stderr")
    d.add_argument("--no-run", dest="run", action="store_false",
                   help="translate and write the report only: no torch, no MindSpore")
    return d


def _weights_parser(sub) -> argparse.ArgumentParser:
    w = sub.add_parser(
        "weights", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_WEIGHTS_EPILOG,
        help="convert a weight file: torch state dict (.pt, .pth, .bin, .safetensors) <-> MindSpore .ckpt",
        description="Convert a torch state dict file into a MindSpore checkpoint, or back, with the names and "
                    "layouts of the model the weights are for.")
    w.add_argument("source", metavar="SRC", help="the weight file to convert (.pt, .pth, .bin, .safetensors, .ckpt)")
    w.add_argument("-o", "--output", metavar="DST", required=True,
                   help="the file to write, in the other framework's format (by its extension)")
    w.add_argument("--model", metavar="MODEL", required=True,
                   help="the model the weights are for (module:Name, path/to/file.py:Name, Name(args...))")
    w.add_argument("--key", metavar="NAME",
                   help="the entry of a torch training checkpoint that holds the model's state dict")
    w.add_argument("-q", "--quiet", action="store_true", help="print only problems and the last line")
    return w


_JOB_EPILOG = """\
Both scripts run in this process, each in an empty folder of its own (--cwd DIR: where
their files are), as `python SCRIPT ARGS...` would; ARGS follow `--`. A step is an
optimizer step; each side stops after --steps of them. torch's random draws and dropout
masks are served to MindSpore's, and torch's initial weights are copied into MindSpore's
model at its first call unless the torch script loads its own. The losses of every step
and the final weights are judged by the round-off rule against a float64 run of the torch
script (fixed tolerances where none can be made), and MindSpore's live tensors must not
grow step after step where torch's do not.

exit status: 0 the port trains as torch does; 1 it does not (the rows say where);
2 the job could not start.

examples:
  recompat job train.py                              # against train.py translated
  recompat job train.py --port ms/train.py --steps 50 -- --lr 0.01
  recompat job train.py --port ms/train.py --cwd data/ --port-args "--load net.ckpt" -- --load net.pt
  recompat job train.py --report job.html            # the loss curves (job.json beside it)
  recompat job ms_train.py --to torch                # a MindSpore script against its torch translation
"""


def _job_parser(sub) -> argparse.ArgumentParser:
    j = sub.add_parser(
        "job", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_JOB_EPILOG,
        help="run a training script and its port N steps on one data stream, and judge them",
        description="Run a torch training script and its MindSpore port (or, with --to torch, a MindSpore script "
                    "and its torch port) for N optimizer steps each, on the same data from the same weights, and "
                    "judge the losses, the final weights and the memory.")
    j.add_argument("script", metavar="SCRIPT", help="the training script (torch's; MindSpore's with --to torch)")
    j.add_argument("--to", choices=DIRECTIONS, default="mindspore",
                   help="the port's framework: mindspore (default; SCRIPT is torch's) or torch (SCRIPT is MindSpore's)")
    j.add_argument("--port", metavar="PORT", help="the port, in the --to framework (default: SCRIPT's folder "
                                                  "translated with --scope model, in a temporary folder)")
    j.add_argument("--steps", type=int, default=10, metavar="N", help="optimizer steps per side (default 10)")
    j.add_argument("--cwd", metavar="DIR", help="run both scripts in DIR (default: an empty folder each)")
    j.add_argument("--port-args", metavar="ARGS", default=None,
                   help="the port's arguments, as one string (default: the torch script's)")
    j.add_argument("--no-reference", dest="reference", action="store_const", const=None, default="auto",
                   help="judge by fixed tolerances, without the float64 run")
    j.add_argument("--json", dest="json_path", metavar="FILE", help="write the verdict as JSON")
    j.add_argument("--report", metavar="FILE.html", help="write an HTML report (FILE.json beside it)")
    j.add_argument("-q", "--quiet", action="store_true", help="print only the verdict")
    j.add_argument("script_args", nargs="*", metavar="ARGS", help="the script's arguments, after --")
    return j


def _build(command: str | None = None) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The parser, and each command's own (main() parses a command's arguments again with it). `command`: the
    one about to run, when known; the demo's parser is whole only for demo (or None)."""
    parser = argparse.ArgumentParser(
        prog="recompat", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_MAIN_EPILOG,
        description="Move activation checkpointing between PyTorch and MindSpore, and prove the move.")
    parser.add_argument("--version", action="version", version=f"recompat {recompat.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    light = command not in (None, "demo")
    return parser, {name: add(sub, light) if add is _demo_parser else add(sub) for name, (add, _) in _COMMANDS.items()}


def _error(message: str) -> int:
    print(f"recompat: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def _run(opts) -> int:
    from recompat.translator import engine

    try:
        return engine.run(opts).exit_code
    except engine.UsageError as exc:
        return _error(str(exc))


def _translate(args) -> int:
    from recompat.translator.engine import Options

    opts = Options(paths=args.paths, to=args.to, style=args.style, scope=args.scope, output=args.output,
                   in_place=args.in_place, diff=args.diff, check=args.check, json_path=args.json_path,
                   jobs=args.jobs, exclude=args.exclude, quiet=args.quiet, clear_outputs=args.clear_outputs)
    if args.report:
        from recompat.reports import runs

        return runs.translate(opts, args.report)
    return _run(opts)


def _test(args) -> int:
    os.environ.setdefault("GLOG_v", "3")          # MindSpore's C++ log: errors only
    import pytest

    from recompat import builtin_tests

    argv = [builtin_tests.__file__, "-p", "no:cacheprovider", "-rfE"]
    json_path = args.json_path
    if args.report:
        from recompat.reports import ReportError, runs

        try:
            _, beside = runs.paths(args.report)
        except ReportError as exc:
            return _error(str(exc))
        json_path = json_path or str(beside)
    for device in args.device or ():
        argv += ["--recompat-device", device]
    for mode in args.ms_mode or ():
        argv += ["--recompat-ms-mode", mode]
    for flag, value in (("--recompat-json", json_path), ("--recompat-record", args.record),
                        ("--recompat-against", args.against), ("-k", args.keyword)):
        if value:
            argv += [flag, value]
    if args.jobs != 1:
        argv += ["-n", "auto" if args.jobs == 0 else str(args.jobs)]
    argv.append("-q" if args.quiet else "-v")
    code = int(pytest.main(argv))
    if args.report and code in (0, 1):      # 0 passed, 1 some failed: both are worth a report
        report_code = runs.suite(Path(json_path), args.report)
        return code or report_code
    return code


def _prove(args) -> int:
    os.environ.setdefault("GLOG_v", "3")          # MindSpore's C++ log: errors only
    from recompat.compat import prove

    return prove.run(args.entry, args.check)


def _docs(args) -> int:
    proved = EXIT_OK
    if args.run_examples:   # the old spelling of `recompat prove && recompat docs`; the docs are written either way
        os.environ.setdefault("GLOG_v", "3")
        from recompat.compat import prove

        proved = prove.run(None, False)
    from recompat.reports import docs

    return docs.run(args.output, args.check) or (EXIT_ERROR if proved else EXIT_OK)


def _report(args) -> int:
    from recompat.reports import runs

    return runs.report(args.json, args.output)


def examples_dir() -> Path:
    return Path(recompat.__file__).resolve().parent.parent / "examples"


def _demo(args) -> int:
    src = examples_dir()
    if not src.is_dir() or not any(src.rglob("*.py")):
        return _error(f"{src}: the example project is missing — the demo runs from a source checkout of recompat "
                      "(git clone, then `make demo`)")
    if args.model and not args.run:
        return _error("--model and --no-run cannot be combined: --model chooses the models to run")
    os.environ.setdefault("GLOG_v", "3")          # MindSpore's C++ log: errors only
    from recompat import demo

    dest = Path(args.output) if args.output else src.parent / "out" / "demo"
    return demo.run(demo.Settings(src=src, dest=dest, style=args.style, scope=args.scope, jobs=args.jobs,
                                  models=args.model, diff=args.diff, verbose=args.verbose, run=args.run,
                                  rtol=args.rtol, atol=args.atol, train_steps=args.train_steps))


def _weights(args) -> int:
    os.environ.setdefault("GLOG_v", "3")          # MindSpore's C++ log: errors only
    from recompat.compat import weight_files

    try:
        model = weight_files.build_model(args.model)
        report = weight_files.convert_file(args.source, args.output, model, key=args.key)
    except weight_files.WeightFileError as exc:
        return _error(str(exc))
    text = report.text()
    if args.quiet:
        lines = text.splitlines()
        text = "\n".join([lines[0], *[ln for ln in lines if ln.startswith("  problem:")], lines[-1]])
    print(text, file=sys.stdout if report.ok else sys.stderr)
    return EXIT_OK if report.ok else EXIT_ERROR


def _job(args) -> int:
    import shlex

    os.environ.setdefault("GLOG_v", "3")          # MindSpore's C++ log: errors only
    from recompat.compat import jobs
    from recompat.reports import ReportError, runs

    try:
        if args.report:
            runs.paths(args.report)               # a --report that names no page: refused before anything runs
        port_argv = None if args.port_args is None else shlex.split(args.port_args)
        report = jobs.prove_job(args.script, args.port, to=args.to, steps=args.steps, argv=args.script_args,
                                port_argv=port_argv, cwd=args.cwd, reference=args.reference,
                                progress=None if args.quiet else lambda text: print(f"recompat: {text}",
                                                                                     file=sys.stderr))
    except (jobs.JobError, ReportError, ValueError) as exc:
        return _error(str(exc))
    print(report if not args.quiet else str(report).splitlines()[0])
    return runs.job(report.to_dict(), args.report, args.json_path) or (EXIT_OK if report.passed else 1)


# Each command: the function that adds its parser and the one that runs it, in the order --help lists them.
_COMMANDS = {"translate": (_translate_parser, _translate), "test": (_test_parser, _test),
             "prove": (_prove_parser, _prove), "verify-table": (_table_parser, _verify_table),
             "docs": (_docs_parser, _docs), "report": (_report_parser, _report),
             "demo": (_demo_parser, _demo), "weights": (_weights_parser, _weights), "job": (_job_parser, _job)}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    # the command is the first word that is no option: the main parser's options take no value
    parser, commands = _build(next((a for a in argv if not a.startswith("-")), ""))
    args, rest = parser.parse_known_args(argv)
    if rest:
        if args.command not in commands:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        # Paths after options (`translate src -o out tests/`): parse the command's arguments again,
        # intermixed, which argparse cannot do across subcommands.
        own = argv[argv.index(args.command) + 1:]
        args = commands[args.command].parse_intermixed_args(own, argparse.Namespace(command=args.command))
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    _, command = _COMMANDS[args.command]
    received = _stop_on_sigterm()
    try:
        return command(args)
    except KeyboardInterrupt:
        print("recompat: interrupted; files already written are complete, the rest untouched", file=sys.stderr)
        return 128 + received.get("signal", signal.SIGINT)


def _stop_on_sigterm() -> dict:
    """SIGTERM (`kill`, a CI timeout) stops a command as Ctrl-C does, through the same clean-up: no temporary
    file left, no file half-written. The dict records the signal, for the exit status (143)."""
    received: dict = {}

    def stop(signum, _frame):
        received["signal"] = signum
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)
    return received


if __name__ == "__main__":
    sys.exit(main())
