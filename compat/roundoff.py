"""The round-off probe: how far float32 round-off may move a gradient, where torch's own float32 run says too little.

The round-off rule (compare.judge_by_reference) takes torch float32's distance from a float64 run as the measure of
round-off for each tensor. That is one sample, and a sample can be lucky: a gradient that cancels to 0 in exact
arithmetic (the bias of a conv that feeds a BatchNorm) comes out of torch's float32 exactly 0 on some shapes, while
MindSpore's holds one float32 ulp of the terms that cancelled (MONAI's AttentionUnet in training mode: torch 4e-16
from float64, MindSpore 9.5e-7); a sum whose terms cancel in part may land near float64 by chance in torch and not in
MindSpore. The rule's floor, ulps of the tensor's own largest value, does not see the terms that cancelled.

So the float64 twin runs again with round-off put back into its backward, by chance, the way Monte Carlo arithmetic
does: every result of every aten op the backward runs is scaled by (1 + d), d uniform in +-PROBE_ULPS float32 ulps,
drawn afresh for each element. A backward kernel that the decomposition table splits into steps (BatchNorm's,
LayerNorm's, GroupNorm's, softmax's backward) runs as those steps, so the sums inside it are probed too: MindSpore's
BatchNorm backward subtracts a float32 mean of the incoming gradient that is not the one the conv's bias gradient
then sums, and that difference is what a cancelling gradient keeps. The forward is left exact (and so is a
recomputation in backward, which runs with gradients enabled), so each probe takes the reference's branches at every
kink (a ReLU, a max-pool) and its outputs and buffers are the reference's. The largest distance of PROBE_RUNS probes
from the reference is each tensor's second measure of round-off; the rule takes the larger of the two. A probe
that fails to run is left out (the report's meta["reference"]["probe_skipped"] says why); compare_training does not
probe.

Measured (float32 CPU, torch 2.13 against MindSpore 2.10, bench/verdict_bench.py): on the attention gate of
compat/roundoff_cases.py, MindSpore's distance from float64 is at most about 5 times the larger measure over 24
seeds, where torch's own distance alone fell short by up to 200 times (4 false alarms of 24 without the probe).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

PROBE_ULPS = 1.0      # the largest relative perturbation of each gradient element, in float32 ulps
PROBE_RUNS = 2        # probes per pair: the round-off measure is their largest distance from the reference
FLOAT32_EPS = 2.0 ** -23


def gradient_probe(seed: int):
    """A context for a float64 run's backward (run_torch's backward_context): each floating result of an aten op
    the backward runs is perturbed by up to PROBE_ULPS float32 ulps, elementwise, from a generator seeded with
    ``seed`` (the same seed, the same probe). In-place and aliasing ops are left alone (a perturbed copy would
    break what they share); ops run with gradients enabled (a recomputation) are too."""
    import torch
    from torch._decomp import decomposition_table
    from torch.utils._python_dispatch import TorchDispatchMode

    generators: dict = {}      # one per device, so the noise is drawn where the tensor is

    def perturb(t):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            return t
        if t.device not in generators:
            generators[t.device] = torch.Generator(device=t.device).manual_seed(seed)
        noise = torch.rand(t.shape, generator=generators[t.device], dtype=t.dtype, device=t.device)
        return t * (1 + PROBE_ULPS * FLOAT32_EPS * (2 * noise - 1))

    class Probe(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if torch.is_grad_enabled():
                return func(*args, **kwargs)
            schema = func._schema
            if schema.name.endswith(("_backward", "_backward_data")) and func in decomposition_table:
                with self:            # its steps come through here again, each probed
                    return decomposition_table[func](*args, **kwargs)
            out = func(*args, **kwargs)
            if schema.is_mutable or any(r.alias_info is not None for r in schema.returns):
                return out
            return type(out)(perturb(t) for t in out) if isinstance(out, (tuple, list)) else perturb(out)

    return Probe()


def probe_seeds(seed: int) -> list[int]:
    """The seeds of a pair's probes (the pair's own seed moves them, so two pairs do not share draws)."""
    return [seed * PROBE_RUNS + k + 1 for k in range(PROBE_RUNS)]


def spread(reference: np.ndarray, probes: Sequence[np.ndarray]) -> np.ndarray | None:
    """Elementwise, the largest distance of the probes' values from the reference's (None without a probe of that
    shape)."""
    distances = [np.abs(p.astype(np.float64) - reference) for p in probes if p.shape == reference.shape]
    return np.maximum.reduce(distances) if distances else None
