"""Values that more than one part of recompat spells, each written once, here.

A leaf: it imports nothing, so the translator, the harness, the reports, the command line and the pytest plugin
all read these names without an import cycle, and `recompat --help` stays free of torch, MindSpore and the
mappings loader. The framework versions the mappings record are not here: they are reports.docs.VERSIONS, which
tests/test_drift.py holds against the installed frameworks (the install pins are pyproject.toml's and the
Makefile's).
"""

# --- translation (recompat.translator.translate checks them; `recompat translate` offers them)
DIRECTIONS = ("mindspore", "torch")   # --to: the framework translated into
OTHER = {"mindspore": "torch", "torch": "mindspore"}   # each framework's other one (translated into -> from)
STYLES = ("function", "cell")        # how a torch checkpoint site is written in MindSpore
# the cell mark where it holds: GRAPH mode drops the function form's mark on blocks that run layers in a loop
DEFAULT_STYLE = "cell"
SCOPES = ("checkpoint", "model")     # checkpoint sites only, or whole model files (the core API set too)

# --- the differential harness (compat.suite, compat.runs, compat.compare, the pytest plugin, `recompat test`)
DEVICES = ("cpu", "gpu", "ascend")
MS_MODES = ("pynative", "graph")                                # MindSpore's execution modes, as recompat names them
MS_TARGETS = {"cpu": "CPU", "gpu": "GPU", "ascend": "Ascend"}   # each device's MindSpore device_target
TORCH_DEVICES = {"cpu": "cpu", "gpu": "cuda"}                   # none for ascend: torch needs torch_npu there
# the suite's checks (compat.suite runs them; the HTML report groups its figures by them)
SUITE_CHECKS = ("torch-recompute", "mindspore-recompute", "cross", "memory", "selective", "graph-recompute")

# --- cross-framework tolerances (torch as expected, MindSpore as actual, float32)
# Every cross-framework verdict of recompat is the round-off rule (compat/compare.py): these are for judging by
# rtol/atol instead. compare_results' own defaults (DEFAULT_TOLERANCES) are torch.testing's same-framework ones;
# torch and MindSpore sum in different orders and use different kernels, so comparing across the two needs a
# looser rtol (compare.py's docstring has the measurements). For one layer or a small block (bench/verdict_bench.py
# shows where it stops holding):
CROSS_RTOL, CROSS_ATOL = 1e-4, 1e-5
# For the whole models of `recompat demo` where a model cannot run in float64, and the other half of a lone
# --rtol/--atol. atol 1e-4: their convolution weight gradients are sums over batch x height x width, where the two
# frameworks' summation orders differ by a few millionths of the largest term, which an elementwise rule at atol
# 1e-5 does not absorb on every machine (compare.py's Conv2d row: 6.1e-4 absolute error; "rtol=1e-4, atol=1e-4
# ... passes").
DEMO_RTOL, DEMO_ATOL = 1e-4, 1e-4

# What compare_training's report, the demo and the HTML reports say from the step where a ReLU input within float32
# round-off of 0 went across it on one side (compat/kink_replay.py; TrainingReport.parted_at)
TRAINING_PARTED = ("from step {step}, a float32 ReLU input within round-off of 0 went across it on one side: each "
                   "side trains along its own ReLU branches from there, judged against a float64 run that does "
                   "too, and the divergence between them is that chance, not the port")


def either(values) -> str:
    """'cpu, gpu or ascend': the values for a help text."""
    values = list(values)
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"
