"""Benchmark: compare()'s verdict beside the checks the peer tools document, on recompat's twins and planted bugs.

Not a test: it prints figures. Each case is a torch model and a MindSpore twin: a correct twin computes the same
function (float32 round-off differs), a planted bug carries one porting mistake: a value bug (bench/verdict_bench's
cases: a GELU approximation, an eps, a transposed weight, a dropped bias, a BatchNorm momentum, an attention
scale), a recompute mark lost on every block of a checkpointed transformer, or a weight conversion of the user's
own that drops a bias (the MindSpore model holds the user's weights). Each case is judged
  recompat:   compare() at its defaults, called as a user calls it;
and, on one run of the pair with the same weights compare() judges (run_pair; torch's copied in, or the user's
held), by each peer's documented pass rule (PEERS below; the sources are in the README's comparison):
  outputs:    the model's outputs by np.allclose at TroubleShooter's defaults (NetDifferenceFinder.compare:
              rtol=atol=1e-4);
  +grads:     the outputs and every parameter gradient by the same rule (TroubleShooter's compare_grads_dir has
              the same defaults);
  ascend:     every output and parameter gradient by the Ascend accuracy comparison's documented rule (CANN 7.0.0
              PyTorch migration guide, "Accuracy Reached or Not"; msProbe's predecessor): a tensor fails when its
              cosine similarity is under 0.99 and its max absolute error over 0.001, or its cosine is under 0.9,
              or its max absolute error is over 1.
The rules are applied by this bench to recompat's runs; the tools themselves are not run, and what they do beyond
their pass rule (their weight conversion, their dumps, NetDifferenceFinder putting both models in eval mode) is not
modelled. A bug counts as caught where the rule fails it; where the same rule also fails the bug's correct twin
(the last correct case of the same model before it), the catch says nothing, and the tally says how many catches
remain without those.

    python bench/peers_bench.py [--only NAME ...]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")
sys.path.insert(0, str(Path(__file__).parent))

import mindspore  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from recompat.compat.compare import compare, run_pair  # noqa: E402
from recompat.compat.weights import transfer_weights  # noqa: E402
from recompat.compat.zoo.transformer import MsTransformer, TorchTransformer  # noqa: E402
from verdict_bench import CASES, TRANSFORMER, MsMLP, TorchMLP, _inputs  # noqa: E402  (the same twins and bugs)

# the peers' documented pass rules (the module docstring and the README's comparison give the sources)
ALLCLOSE_RTOL, ALLCLOSE_ATOL = 1e-4, 1e-4     # TroubleShooter: NetDifferenceFinder.compare, compare_grads_dir
ASCEND_COSINE, ASCEND_ABS = 0.99, 1e-3        # fails when cosine < 0.99 and max abs error > 0.001, or ...
ASCEND_COSINE_FLOOR, ASCEND_ABS_CEILING = 0.9, 1.0   # ... cosine < 0.9, or max abs error > 1


def _allclose(runs, kinds) -> str:
    """The first tensor np.allclose fails, with its error ("" when none does)."""
    e, a = runs.expected, runs.actual
    for kind in kinds:
        for name in e.names(kind):
            x, y = e.tensors[name], a.tensors.get(name)
            if y is None or y.shape != x.shape:
                return f"{name}: missing or of another shape"
            if not np.allclose(y, x, rtol=ALLCLOSE_RTOL, atol=ALLCLOSE_ATOL):
                return f"{name}: max abs error {np.max(np.abs(y - x)):.3g}, largest value {np.max(np.abs(x)):.3g}"
    return ""


def _ascend(runs) -> str:
    """The first output or parameter gradient the Ascend rule fails, with its cosine and error ("" when none)."""
    e, a = runs.expected, runs.actual
    for kind in ("output", "param-grad"):
        for name in e.names(kind):
            x, y = e.tensors[name].astype(np.float64).ravel(), a.tensors.get(name)
            if y is None or y.size != x.size:
                return f"{name}: missing or of another size"
            y = y.astype(np.float64).ravel()
            norm = np.linalg.norm(x) * np.linalg.norm(y)
            cosine = float(x @ y / norm) if norm > 0 else float(np.array_equal(x, y))
            max_abs = float(np.max(np.abs(y - x))) if x.size else 0.0
            if ((cosine < ASCEND_COSINE and max_abs > ASCEND_ABS) or cosine < ASCEND_COSINE_FLOOR
                    or max_abs > ASCEND_ABS_CEILING):
                return f"{name}: cosine {cosine:.3g}, max abs error {max_abs:.3g}, largest value {np.max(np.abs(x)):.3g}"
    return ""


def _user_dropped_bias(tm, at: int = 7):
    """MsMLP holding the user's converted weights, the bias of block ``at`` left at zero."""
    mm = MsMLP()
    transfer_weights(tm, mm)
    bias = mm.blocks[at][1].bias
    bias.set_data(mindspore.ops.zeros_like(bias))
    return mm


# (case, input kind, correct?, torch factory, MindSpore factory from the torch model)
EXTRA = [
    ("transformer, recomputed on both sides", "transformer", True,
     lambda: TorchTransformer(recompute=True, **TRANSFORMER), lambda tm: MsTransformer(recompute=True, **TRANSFORMER)),
    ("transformer: the recompute marks lost", "transformer", False,
     lambda: TorchTransformer(recompute=True, **TRANSFORMER), lambda tm: MsTransformer(recompute=False, **TRANSFORMER)),
    ("mlp: the user's weight conversion drops a bias", "mlp", False, TorchMLP, _user_dropped_bias),
]
WAYS = ("recompat", "outputs", "+grads", "ascend")


def _cases():
    for name, kind, correct, tf, mf in CASES:
        yield name, kind, correct, tf, (lambda tm, mf=mf: mf())
    yield from EXTRA


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="run only the cases whose name contains one of these")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, float32 on CPU; allclose rtol {ALLCLOSE_RTOL:g} atol {ALLCLOSE_ATOL:g}; "
          f"ascend: cosine < {ASCEND_COSINE:g} and max abs error > {ASCEND_ABS:g}, or cosine < {ASCEND_COSINE_FLOOR:g}, "
          f"or max abs error > {ASCEND_ABS_CEILING:g} fails\n")
    print("| case | kind | " + " | ".join(WAYS) + " | recompat's first failing row | s |")
    print("|---|---|" + "---|" * len(WAYS) + "---|---:|")
    tally = {w: {"alarms": 0, "correct": 0, "caught": 0, "bugs": 0, "clean": 0} for w in WAYS}
    alarms, twin = [], {}     # twin: input kind -> the verdicts on the last correct twin of that kind
    for name, kind, correct, torch_factory, ms_factory in _cases():
        if args.only and not any(o in name for o in args.only):
            continue
        start = time.perf_counter()
        inputs = _inputs(kind, np.random.default_rng(0))
        torch.manual_seed(0)
        tm = torch_factory()
        mm = ms_factory(tm)
        mm.set_train(tm.training)
        report = compare(tm, mm, inputs)
        held = report.meta["weights"]["run_with"] != "torch"
        torch.manual_seed(0)
        tm = torch_factory()
        mm = ms_factory(tm)
        mm.set_train(tm.training)
        runs = run_pair(tm, mm, inputs, weights="as-is" if held else "torch", reference=None, memory=False,
                        exact_weights=False)
        first = next((r for r in report.rows if not r.passed), None)
        failed = {"recompat": f"{first.name} ({first.kind})" if first else "",
                  "outputs": _allclose(runs, ("output",)), "+grads": _allclose(runs, ("output", "param-grad")),
                  "ascend": _ascend(runs)}
        passed = {way: not why for way, why in failed.items()}
        if correct:
            alarms += [f"{way} on {name}: {why}" for way, why in failed.items() if why]
            twin[kind] = passed
        for way, ok in passed.items():
            t = tally[way]
            t["correct" if correct else "bugs"] += 1
            t["alarms" if correct else "caught"] += not ok
            t["clean"] += not correct and not ok and twin.get(kind, {}).get(way, False)
        print(f"| {name} | {'correct' if correct else 'bug'} | "
              + " | ".join("pass" if passed[w] else "FAIL" for w in WAYS)
              + f" | {failed['recompat'] or '-'} | {time.perf_counter() - start:.1f} |")
    print("\nwhat failed each false alarm (a correct twin failed):" if alarms else "\nno false alarm")
    for line in alarms:
        print(f"  {line}")
    print()
    for way in WAYS:
        t = tally[way]
        print(f"{way:>9}: false alarms {t['alarms']}/{t['correct']} correct twins, bugs caught {t['caught']}/{t['bugs']} "
              f"({t['clean']} of them where the same rule passes the bug's correct twin)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
