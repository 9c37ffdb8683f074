"""Pair ``deep_sequential``: ``checkpoint_sequential`` over a deep chain of Linear/Dense + ReLU layers."""
from __future__ import annotations

import mindspore
from mindspore import nn as msnn
from torch import nn as tnn
from torch.utils.checkpoint import checkpoint_sequential

from .. import checkpoint_on_mindspore as ms_compat
from . import Pair, register
from .layers import randn


_DEEP, _SEGMENTS, _WIDTH = 16, 4, 16


def _torch_chain():
    layers = []
    for _ in range(_DEEP):
        layers += [tnn.Linear(_WIDTH, _WIDTH), tnn.ReLU()]
    return tnn.Sequential(*layers)


class TorchDeepSequential(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint"):
        super().__init__()
        self.seq = _torch_chain()
        self.recompute = recompute

    def forward(self, x):
        if self.recompute:
            return checkpoint_sequential(self.seq, _SEGMENTS, x, use_reentrant=False)
        return self.seq(x)


class MsDeepSequential(msnn.Cell):
    def __init__(self, recompute=True, form="compat"):
        super().__init__()
        layers = []
        for _ in range(_DEEP):
            layers += [msnn.Dense(_WIDTH, _WIDTH), msnn.ReLU()]
        self.seq = msnn.SequentialCell(layers)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            size = len(layers) // _SEGMENTS
            for layer in layers[:size * (_SEGMENTS - 1)]:        # torch's segmentation: the last segment is not
                layer.recompute()

    def _segment(self, start, end):
        layers = list(self.seq.cells())[start:end]

        def forward(x):
            for layer in layers:
                x = layer(x)
            return x
        return forward

    def construct(self, x):
        if self.compat_form:
            return ms_compat.checkpoint_sequential(self.seq, _SEGMENTS, x, use_reentrant=False)
        if self.function_form:                                   # recompat's translated recompute_sequential
            size = len(self.seq) // _SEGMENTS
            for start in range(0, size * (_SEGMENTS - 1), size):
                x = mindspore.recompute(self._segment(start, start + size), x, use_reentrant=False, early_stop=False)
            return self._segment(size * (_SEGMENTS - 1), len(self.seq))(x)
        return self.seq(x)


register(Pair(
    name="deep_sequential",
    checkpointed=tuple(f"seq.{i}" for i in range(2 * _DEEP // _SEGMENTS * (_SEGMENTS - 1))),
    graph_unrecomputed={
        "cell": "each layer is marked on its own, and each is a one-op cell whose output MindSpore's compiled graph "
                "keeps: nothing is recomputed (torch's checkpoint_sequential recomputes whole segments; measured "
                "with compat.graph_recompute)",
        "compat": "compiled, compat.checkpoint_sequential recomputes layer by layer (see notes): one-op regions, "
                  "nothing recomputed (measured with compat.graph_recompute)"},
    description=f"{_DEEP} Linear/Dense+ReLU layers ({2 * _DEEP} children) in one Sequential: torch "
                f"checkpoint_sequential(seq, {_SEGMENTS}, x, use_reentrant=False); MindSpore the same call through "
                "compat.checkpoint_sequential, the translator's recompute_sequential (mindspore.recompute of each "
                "segment, non-reentrant, early_stop=False), or .recompute() on every layer of the first "
                f"{_SEGMENTS - 1} segments.",
    torch_factory=TorchDeepSequential, mindspore_factory=MsDeepSequential,
    inputs=lambda rng: [randn(rng, 4, _WIDTH)],
    mindspore_forms=("compat", "function", "cell"),
    graph_forms=("cell", "compat"),
    memory_ratio=1.5,
    notes=("torch's segmentation: segment size len // segments; the last segment (with the remainder) runs "
           "without recompute.",
           "GRAPH mode: the function form (a closure per segment, made by a method in construct) does not compile "
           "(RuntimeError 'Illegal AnfNode for evaluating'); the cell and compat forms do (compat.checkpoint_sequential "
           "recomputes layer by layer when compiled: a SequentialCell slice made in a compiled construct loses its "
           "parameters' gradients, measured)."),
))
