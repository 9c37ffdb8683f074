"""The paired model zoo: the same tiny model written for torch and for MindSpore, recompute on or off.

    from recompat.compat import zoo

    pair = zoo.get("transformer")
    tm = pair.build_torch(recompute=True)                       # torch twin, seeded, in pair.training mode
    mm = pair.build_mindspore(recompute=True, form="cell")       # MindSpore twin, Cell.recompute() form
    xs = pair.make_inputs(seed=0)                                # list of NumPy arrays (float32, int64 ids)
    for pair in zoo.pairs(): ...

A :class:`Pair` holds two factories, ``torch_factory(recompute, form)`` and ``mindspore_factory(recompute,
form)``, and the forms each side supports:

* torch forms: ``"checkpoint"`` -- ``torch.utils.checkpoint`` the way real code calls it (the pair's
  description says which idiom) -- and, where listed, ``"compat"`` -- MindSpore's idioms on torch through
  :mod:`recompat.compat.torch` (``recompute(...)``, ``mark_recompute(module)``).
* MindSpore forms: ``"function"`` -- ``mindspore.recompute(block, ...)`` inside ``construct``; ``"cell"`` --
  ``cell.recompute()`` on the sub-cells at build time; ``"compat"`` -- torch's calls ported verbatim through
  :mod:`recompat.compat.mindspore` (``checkpoint``, ``checkpoint_sequential``).
* ``graph_forms``: the MindSpore forms measured to compile and run in GRAPH mode on CPU with gradients equal to
  the plain graph (``graph_skip`` says why a pair has none; ``notes`` why a form is missing).

The two twins are the same model: same layer order and the same parameter paths, so weights transfer by path
(torch ``fc1.weight`` <-> MindSpore ``fc1.weight``; BatchNorm ``weight/bias/running_mean/running_var`` <->
``gamma/beta/moving_mean/moving_variance``; LayerNorm ``weight/bias`` <-> ``gamma/beta``; Embedding
``weight`` <-> ``embedding_table``). MindSpore defaults that differ from torch's are set explicitly:
``Conv2d(pad_mode='pad' | 'valid', has_bias=...)``, ``BatchNorm2d(momentum=1 - torch's, eps=1e-5)``,
``LayerNorm(epsilon=1e-5)``, ``Dropout(p=...)``, ``GELU(approximate=False)``.

``updated_twice`` lists the (torch) paths of the BatchNorm layers inside recomputed regions: their running
statistics are updated twice per step with recompute on, in both frameworks. ``known_differences`` maps a form (``"mindspore:function"``) to the measured reason why recompute on and off
do *not* give equal gradients in that form in PyNative mode (dropout masks); the tests pin that they differ. In
GRAPH mode every listed graph form gives equal gradients, dropout included (measured). ``notes`` record
what else holds (BatchNorm statistics updated twice under recompute in both frameworks; which forms keep dropout
masks). ``cross_training``: the mode for comparing torch with MindSpore when it differs from ``training``
(dropout draws different masks in the two frameworks, so those pairs compare in eval mode).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

import mindspore
import torch
import torch.nn.functional as F
from mindspore import nn as msnn
from mindspore import ops
from torch import nn as tnn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

from . import mindspore as ms_compat
from . import torch as torch_compat

__all__ = ["Pair", "register", "get", "names", "pairs", "TORCH_FORMS", "MINDSPORE_FORMS"]

TORCH_FORMS = ("checkpoint", "compat")
MINDSPORE_FORMS = ("function", "cell", "compat")


@dataclass(frozen=True)
class Pair:
    """A torch model and its MindSpore twin, with inputs and what holds for them."""

    name: str
    description: str
    torch_factory: Callable[[bool, str], torch.nn.Module]
    mindspore_factory: Callable[[bool, str], mindspore.nn.Cell]
    inputs: Callable[[np.random.Generator], list]
    torch_forms: tuple[str, ...] = ("checkpoint",)
    mindspore_forms: tuple[str, ...] = ("function",)
    graph_forms: tuple[str, ...] = ()
    graph_skip: str = ""
    training: bool = True
    cross_training: bool | None = None
    grad_inputs: tuple[int, ...] | None = None
    rtol: float | None = None
    atol: float | None = None
    known_differences: Mapping[str, str] = field(default_factory=dict)
    updated_twice: tuple[str, ...] = ()
    memory_ratio: float | None = None     # the least plain/recompute ratio of bytes kept the memory check accepts
    notes: tuple[str, ...] = ()

    def build_torch(self, recompute: bool = True, form: str | None = None, seed: int = 0,
                    training: bool | None = None) -> torch.nn.Module:
        form = form or self.torch_forms[0]
        if form not in self.torch_forms:
            raise ValueError(f"pair {self.name!r} has torch forms {self.torch_forms}, not {form!r}")
        torch.manual_seed(seed)
        model = self.torch_factory(recompute, form)
        model.train(self.training if training is None else training)
        return model

    def build_mindspore(self, recompute: bool = True, form: str | None = None, seed: int = 0,
                        training: bool | None = None) -> mindspore.nn.Cell:
        form = form or self.mindspore_forms[0]
        if form not in self.mindspore_forms:
            raise ValueError(f"pair {self.name!r} has MindSpore forms {self.mindspore_forms}, not {form!r}")
        mindspore.set_seed(seed)
        cell = self.mindspore_factory(recompute, form)
        cell.set_train(self.training if training is None else training)
        return cell

    def make_inputs(self, seed: int = 0) -> list:
        return self.inputs(np.random.default_rng(seed))

    def differentiable(self, arrays: list) -> tuple[int, ...]:
        """Indices of the inputs that need a gradient (grad_inputs, else every floating input)."""
        if self.grad_inputs is not None:
            return self.grad_inputs
        return tuple(i for i, a in enumerate(arrays) if np.issubdtype(np.asarray(a).dtype, np.floating))

    @property
    def tolerance(self) -> tuple[float, float]:
        return (1e-4 if self.rtol is None else self.rtol, 1e-5 if self.atol is None else self.atol)

    @property
    def cross_mode_training(self) -> bool:
        return self.training if self.cross_training is None else self.cross_training


_REGISTRY: dict[str, Pair] = {}


def register(pair: Pair) -> Pair:
    if pair.name in _REGISTRY:
        raise ValueError(f"a pair named {pair.name!r} is already registered")
    for form in pair.graph_forms:
        if form not in pair.mindspore_forms:
            raise ValueError(f"pair {pair.name!r}: graph form {form!r} is not one of its forms")
    _REGISTRY[pair.name] = pair
    return pair


def get(name: str) -> Pair:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no pair named {name!r}; pairs: {', '.join(_REGISTRY)}") from None


def names() -> list[str]:
    return list(_REGISTRY)


def pairs() -> list[Pair]:
    return list(_REGISTRY.values())


# --------------------------------------------------------------------------- MindSpore layers with torch's defaults

def ms_conv(cin, cout, k, padding=0, bias=True):
    return msnn.Conv2d(cin, cout, k, pad_mode="pad" if padding else "valid", padding=padding, has_bias=bias)


def ms_bn(n, torch_momentum=0.1):
    return msnn.BatchNorm2d(n, eps=1e-5, momentum=1.0 - torch_momentum)


def ms_ln(n):
    return msnn.LayerNorm((n,), epsilon=1e-5)


def _randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


_BN_NOTE = ("BatchNorm running statistics are updated twice in one step inside a recomputed region, in both "
            "frameworks (torch num_batches_tracked == 2; drift x(2 - momentum) = 1.9x a plain step): outputs and "
            "gradients are equal with recompute on and off, the statistics are not; torch and MindSpore agree "
            "with each other when both recompute the same blocks.")


# =========================================================================== 1. seed: fc1/fc2/fc3

class TorchSeedNet(tnn.Module):
    """Seed 000/001: ``x = cp(self._checkpoint, x)`` around fc2 + relu."""

    def __init__(self, recompute=True, form="checkpoint"):
        super().__init__()
        self.fc1 = tnn.Linear(12, 24)
        self.fc2 = tnn.Linear(24, 32)
        self.fc3 = tnn.Linear(32, 2)
        self.recompute = recompute and form == "checkpoint"
        if recompute and form == "compat":
            torch_compat.mark_recompute(self.fc2)              # the MindSpore twin's fc2.recompute()

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = checkpoint(self._checkpoint, x, use_reentrant=True) if self.recompute else self._checkpoint(x)
        return self.fc3(x)

    def _checkpoint(self, x):
        return F.relu(self.fc2(x))


class MsSeedNet(msnn.Cell):
    """Seed 000/001 MindSpore side: ``fc2.recompute(); relu2.recompute()`` (cell form)."""

    def __init__(self, recompute=True, form="cell"):
        super().__init__()
        self.fc1 = msnn.Dense(12, 24)
        self.relu1 = ops.ReLU()
        self.fc2 = msnn.Dense(24, 32)
        self.relu2 = ops.ReLU()
        self.fc3 = msnn.Dense(32, 2)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            self.fc2.recompute()
            self.relu2.recompute()                              # a Primitive: takes effect in GRAPH mode only

    def _checkpoint(self, x):
        return self.relu2(self.fc2(x))

    def construct(self, x):
        x = self.relu1(self.fc1(x))
        if self.function_form:
            x = mindspore.recompute(self._checkpoint, x, use_reentrant=False, early_stop=False)
        elif self.compat_form:
            x = ms_compat.checkpoint(self._checkpoint, x, use_reentrant=True)
        else:
            x = self._checkpoint(x)
        return self.fc3(x)


register(Pair(
    name="seed_fc",
    description="The seeds' fc1/fc2/fc3 net: torch cp(self._checkpoint, x) around fc2+relu; MindSpore "
                "fc2.recompute() + relu2.recompute() (seed form), mindspore.recompute(self._checkpoint, x, "
                "use_reentrant=False) (a bound method: the reentrant form refuses it in PyNative), or the torch "
                "call through compat.checkpoint.",
    torch_factory=TorchSeedNet, mindspore_factory=MsSeedNet,
    inputs=lambda rng: [_randn(rng, 2, 12)],
    torch_forms=("checkpoint", "compat"), mindspore_forms=("cell", "function", "compat"),
    graph_forms=("cell", "function", "compat"),
    notes=("relu2.recompute() marks a Primitive: it takes effect in GRAPH mode only.",
           "In PyNative, fc2.recompute() recomputes only the inside of Dense (its output is kept)."),
))


# =========================================================================== 2. doc example: conv + relu

class TorchDocConv(tnn.Module):
    """MindSpore's doc example on torch: conv (2->2, k2, 'same', no bias) checkpointed, then relu."""

    def __init__(self, recompute=True, form="checkpoint"):
        super().__init__()
        self.conv = tnn.Conv2d(2, 2, 2, bias=False)
        self.recompute = recompute and form == "checkpoint"
        if recompute and form == "compat":
            torch_compat.mark_recompute(self.conv)

    def forward(self, x):
        x = F.pad(x, (0, 1, 0, 1))          # MindSpore's pad_mode='same' for k=2: nothing before, 1 after
        y = checkpoint(self.conv, x, use_reentrant=False) if self.recompute else self.conv(x)
        return F.relu(y)


class MsDocConv(msnn.Cell):
    """MindSpore's doc example (mindspore.recompute): ``y = recompute(self.conv, x); return self.relu(y)``."""

    def __init__(self, recompute=True, form="function"):
        super().__init__(auto_prefix=False)
        self.conv = msnn.Conv2d(2, 2, 2, has_bias=False)      # as in the doc: pad_mode 'same' (the default)
        self.relu = ops.ReLU()
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            self.conv.recompute()

    def construct(self, x):
        if self.function_form:
            y = mindspore.recompute(self.conv, x)
        elif self.compat_form:
            y = ms_compat.checkpoint(self.conv, x, use_reentrant=False)
        else:
            y = self.conv(x)
        return self.relu(y)


register(Pair(
    name="doc_conv_relu",
    description="The mindspore.recompute doc example: MyCell(auto_prefix=False) with recompute(self.conv, x) "
                "then ReLU; conv 2->2, kernel 2, pad_mode 'same' (the doc's default), no bias. torch: an explicit "
                "(0, 1, 0, 1) pad (what 'same' does for an even kernel) and checkpoint(self.conv, x, "
                "use_reentrant=False).",
    torch_factory=TorchDocConv, mindspore_factory=MsDocConv,
    inputs=lambda rng: [_randn(rng, 2, 2, 5, 5)],
    torch_forms=("checkpoint", "compat"), mindspore_forms=("function", "cell", "compat"),
    graph_forms=("function", "cell", "compat"),
    notes=("The block ends in a conv: MindSpore's non-reentrant recompute with early_stop=True would crash in "
           "backward; compat.checkpoint(use_reentrant=False) passes early_stop=False.",
           "The doc's weight_init='ones' is left out so that gradients are not symmetric."),
))


# =========================================================================== 3. residual blocks with BatchNorm

class TorchResidualBlock(tnn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = tnn.Conv2d(channels, channels, 3, padding=1)
        self.bn1 = tnn.BatchNorm2d(channels)
        self.conv2 = tnn.Conv2d(channels, channels, 3, padding=1)
        self.bn2 = tnn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


class TorchResNet(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint", blocks=3, channels=8):
        super().__init__()
        self.conv = tnn.Conv2d(3, channels, 3, padding=1)
        self.bn = tnn.BatchNorm2d(channels)
        self.recompute = recompute and form == "checkpoint"
        self.layer1 = self._make_layer(blocks, channels, mark=recompute and form == "compat")
        self.fc = tnn.Linear(channels, 4)

    def _make_layer(self, layer_num, channels, mark):
        layers = [TorchResidualBlock(channels)]
        for _ in range(1, layer_num):
            block = TorchResidualBlock(channels)
            if mark:
                torch_compat.mark_recompute(block)         # MindSpore's resnet_block.recompute(), on torch
            layers.append(block)
        return tnn.Sequential(*layers)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        for i, block in enumerate(self.layer1):
            if self.recompute and i > 0:
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self.fc(x.mean((2, 3)))


class MsResidualBlock(msnn.Cell):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = ms_conv(channels, channels, 3, padding=1)
        self.bn1 = ms_bn(channels)
        self.relu = msnn.ReLU()
        self.conv2 = ms_conv(channels, channels, 3, padding=1)
        self.bn2 = ms_bn(channels)

    def construct(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


class MsResNet(msnn.Cell):
    """The MindSpore recompute tutorial's ResNet: ``resnet_block.recompute()`` inside ``_make_layer``."""

    def __init__(self, recompute=True, form="cell", blocks=3, channels=8):
        super().__init__()
        self.conv = ms_conv(3, channels, 3, padding=1)
        self.bn = ms_bn(channels)
        self.relu = msnn.ReLU()
        self.layer1 = self._make_layer(blocks, channels, mark=recompute and form == "cell")
        self.fc = msnn.Dense(channels, 4)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"

    def _make_layer(self, layer_num, channels, mark):
        layers = [MsResidualBlock(channels)]
        for _ in range(1, layer_num):
            resnet_block = MsResidualBlock(channels)
            if mark:
                resnet_block.recompute()
            layers.append(resnet_block)
        return msnn.SequentialCell(layers)

    def construct(self, x):
        x = self.relu(self.bn(self.conv(x)))
        i = 0
        for block in self.layer1:
            if self.function_form and i > 0:
                x = mindspore.recompute(block, x)
            elif self.compat_form and i > 0:
                x = ms_compat.checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
            i += 1
        return self.fc(x.mean(axis=(2, 3)))


register(Pair(
    name="resnet_bn",
    description="Residual blocks (conv-BN-relu-conv-BN + identity) built in a _make_layer loop; every block after "
                "the first is recomputed: MindSpore resnet_block.recompute() in the loop (tutorial form), "
                "mindspore.recompute(block, x) in construct, or compat.checkpoint; torch checkpoint(block, x, "
                "use_reentrant=False) for the same blocks, or compat.torch.mark_recompute(block) in the loop.",
    torch_factory=TorchResNet, mindspore_factory=MsResNet,
    inputs=lambda rng: [_randn(rng, 2, 3, 6, 6)],
    torch_forms=("checkpoint", "compat"), mindspore_forms=("cell", "function", "compat"),
    graph_forms=("cell", "function", "compat"),
    updated_twice=("layer1.1.bn1", "layer1.1.bn2", "layer1.2.bn1", "layer1.2.bn2"),
    notes=(_BN_NOTE, "The first block of the layer is not recomputed (as in the tutorial), on both sides, so the "
                     "statistics of the two frameworks agree with recompute on."),
))


# =========================================================================== 4. transformer layers

class TorchAttention(tnn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q = tnn.Linear(dim, dim)
        self.k = tnn.Linear(dim, dim)
        self.v = tnn.Linear(dim, dim)
        self.o = tnn.Linear(dim, dim)

    def forward(self, x, mask):
        b, t, d = x.shape
        hd = d // self.heads

        def split(y):
            return y.reshape(b, t, self.heads, hd).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) * (hd ** -0.5) + mask.reshape(b, 1, 1, t)
        att = torch.softmax(scores, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, d)
        return self.o(y)


class TorchTransformerLayer(tnn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.ln1 = tnn.LayerNorm(dim)
        self.attn = TorchAttention(dim, heads)
        self.ln2 = tnn.LayerNorm(dim)
        self.mlp = tnn.Sequential(tnn.Linear(dim, hidden), tnn.GELU(), tnn.Linear(hidden, dim))

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.mlp(self.ln2(x))


class TorchTransformer(tnn.Module):
    """Hugging Face style: ``if self.gradient_checkpointing and self.training:
    self._gradient_checkpointing_func(layer.__call__, hidden, mask)``."""

    def __init__(self, recompute=True, form="checkpoint", vocab=16, dim=16, heads=2, hidden=32, layers=2):
        super().__init__()
        self.embed = tnn.Embedding(vocab, dim)
        self.layers = tnn.ModuleList([TorchTransformerLayer(dim, heads, hidden) for _ in range(layers)])
        self.ln_f = tnn.LayerNorm(dim)
        self.head = tnn.Linear(dim, 8)
        self.gradient_checkpointing = recompute and form == "checkpoint"
        self._gradient_checkpointing_func = functools.partial(checkpoint, use_reentrant=False)
        if recompute and form == "compat":
            for layer in self.layers:
                torch_compat.mark_recompute(layer)          # MindSpore's layer.recompute(), on torch

    def forward(self, ids, mask):
        hidden = self.embed(ids)
        extended = (1.0 - mask) * -10000.0
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden = self._gradient_checkpointing_func(layer.__call__, hidden, extended)
            else:
                hidden = layer(hidden, extended)
        return self.head(self.ln_f(hidden))


class MsAttention(msnn.Cell):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q = msnn.Dense(dim, dim)
        self.k = msnn.Dense(dim, dim)
        self.v = msnn.Dense(dim, dim)
        self.o = msnn.Dense(dim, dim)

    def construct(self, x, mask):
        b, t, d = x.shape
        hd = d // self.heads
        q = ops.transpose(self.q(x).reshape(b, t, self.heads, hd), (0, 2, 1, 3))
        k = ops.transpose(self.k(x).reshape(b, t, self.heads, hd), (0, 2, 1, 3))
        v = ops.transpose(self.v(x).reshape(b, t, self.heads, hd), (0, 2, 1, 3))
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) * (hd ** -0.5) + mask.reshape(b, 1, 1, t)
        att = ops.softmax(scores, axis=-1)
        y = ops.transpose(ops.matmul(att, v), (0, 2, 1, 3)).reshape(b, t, d)
        return self.o(y)


class MsTransformerLayer(msnn.Cell):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.ln1 = ms_ln(dim)
        self.attn = MsAttention(dim, heads)
        self.ln2 = ms_ln(dim)
        self.mlp = msnn.SequentialCell([msnn.Dense(dim, hidden), msnn.GELU(approximate=False),
                                        msnn.Dense(hidden, dim)])

    def construct(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.mlp(self.ln2(x))


class MsTransformer(msnn.Cell):
    def __init__(self, recompute=True, form="function", vocab=16, dim=16, heads=2, hidden=32, layers=2):
        super().__init__()
        self.embed = msnn.Embedding(vocab, dim)
        self.layers = msnn.CellList([MsTransformerLayer(dim, heads, hidden) for _ in range(layers)])
        self.ln_f = ms_ln(dim)
        self.head = msnn.Dense(dim, 8)
        self.gradient_checkpointing = recompute and form in ("function", "compat")
        self.compat_form = form == "compat"
        self._gradient_checkpointing_func = functools.partial(ms_compat.checkpoint, use_reentrant=False)
        if recompute and form == "cell":
            for layer in self.layers:
                layer.recompute()

    def construct(self, ids, mask):
        hidden = self.embed(ids)
        extended = (1.0 - mask) * -10000.0
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                if self.compat_form:
                    hidden = self._gradient_checkpointing_func(layer.__call__, hidden, extended)
                else:
                    hidden = mindspore.recompute(layer, hidden, extended)
            else:
                hidden = layer(hidden, extended)
        return self.head(self.ln_f(hidden))


def _transformer_inputs(rng):
    ids = rng.integers(0, 16, size=(2, 6)).astype(np.int64)
    mask = np.ones((2, 6), np.float32)
    mask[1, 4:] = 0.0                                          # padding in the second sequence
    return [ids, mask]


register(Pair(
    name="transformer",
    description="Two pre-LN transformer layers (2-head attention with an additive padding mask, GELU MLP, "
                "LayerNorm) over token embeddings, checkpointed per layer behind a gradient_checkpointing flag: "
                "torch functools.partial(checkpoint, use_reentrant=False)(layer.__call__, hidden, mask) (Hugging "
                "Face style) or compat.torch.mark_recompute(layer); MindSpore mindspore.recompute(layer, hidden, "
                "mask), layer.recompute(), or the torch call through compat.checkpoint.",
    torch_factory=TorchTransformer, mindspore_factory=MsTransformer,
    inputs=_transformer_inputs,
    torch_forms=("checkpoint", "compat"), mindspore_forms=("function", "cell", "compat"),
    graph_forms=("cell", "function"),
    grad_inputs=(),
    notes=("Inputs that need no gradient: integer token ids and a float padding mask (turned into an additive "
           "mask inside the model, passed to every checkpointed layer).",
           "GELU is exact on both sides (MindSpore GELU(approximate=False)); LayerNorm epsilon 1e-5 on both.",
           "GRAPH mode: the compat form does not compile -- not the shim: GRAPH mode cannot compile the "
           "expression layer.__call__ (Cell.__call__ calls context functions construct may not call); "
           "checkpoint(layer, ...) compiles."),
))


# =========================================================================== 5/6. dropout

class TorchDropoutNet(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint", functional=False):
        super().__init__()
        self.fc1 = tnn.Linear(8, 16)
        self.block = TorchDropBlock(functional)
        self.fc2 = tnn.Linear(16, 4)
        self.recompute = recompute
        self.form = form

    def forward(self, x):
        h = F.relu(self.fc1(x))
        if self.recompute and self.form == "checkpoint":
            h = checkpoint(self.block, h, use_reentrant=False)              # preserve_rng_state=True (default)
        elif self.recompute and self.form == "compat":
            h = torch_compat.recompute(self.block, h)                       # save_rng_state=True (default)
        else:
            h = self.block(h)
        return self.fc2(h)


class TorchDropBlock(tnn.Module):
    def __init__(self, functional):
        super().__init__()
        self.dense = tnn.Linear(16, 16)
        self.drop = tnn.Dropout(p=0.5)
        self.functional = functional

    def forward(self, x):
        h = F.relu(self.dense(x))
        return F.dropout(h, p=0.5, training=self.training) if self.functional else self.drop(h)


class MsDropBlock(msnn.Cell):
    def __init__(self, functional):
        super().__init__()
        self.dense = msnn.Dense(16, 16)
        self.relu = msnn.ReLU()
        self.drop = msnn.Dropout(p=0.5)
        self.functional = functional

    def construct(self, x):
        h = self.relu(self.dense(x))
        if self.functional:
            return ops.dropout(h, p=0.5, training=self.training)
        return self.drop(h)


class MsDropoutNet(msnn.Cell):
    def __init__(self, recompute=True, form="cell", functional=False):
        super().__init__()
        self.fc1 = msnn.Dense(8, 16)
        self.relu = msnn.ReLU()
        self.block = MsDropBlock(functional)
        self.fc2 = msnn.Dense(16, 4)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            self.block.recompute()

    def construct(self, x):
        h = self.relu(self.fc1(x))
        if self.function_form:
            h = mindspore.recompute(self.block, h)
        elif self.compat_form:
            h = ms_compat.checkpoint(self.block, h, use_reentrant=True)
        else:
            h = self.block(h)
        return self.fc2(h)


_DROPOUT_NOTE = ("torch: checkpoint gradients equal the plain run (preserve_rng_state=True restores the RNG). "
                 "MindSpore: nn.Dropout's primitive owns its mask stream (seeded at construction; set_seed does not "
                 "rewind it), so the twins with recompute on and off are built after the same seed. torch and "
                 "MindSpore draw different masks: they are compared in eval mode (dropout off).")

register(Pair(
    name="dropout",
    description="A block Dense-ReLU-nn.Dropout(p=0.5) between two Dense layers, recomputed: torch checkpoint(block, "
                "h, use_reentrant=False) or compat.torch.recompute(block, h); MindSpore block.recompute(), "
                "mindspore.recompute(block, h), or compat.checkpoint(block, h, use_reentrant=True).",
    torch_factory=functools.partial(TorchDropoutNet, functional=False),
    mindspore_factory=functools.partial(MsDropoutNet, functional=False),
    inputs=lambda rng: [_randn(rng, 8, 8)],
    torch_forms=("checkpoint", "compat"), mindspore_forms=("cell", "function", "compat"),
    graph_forms=("cell", "function", "compat"),
    cross_training=False,
    known_differences={
        "mindspore:function": "mindspore.recompute(cell, x) (reentrant) draws a new nn.Dropout mask when it "
                              "recomputes: the loss equals the plain run, the gradients do not, and the primitive's "
                              "stream runs one draw ahead afterwards.",
    },
    notes=(_DROPOUT_NOTE,
           "Equal to the plain run: block.recompute() (MindSpore's reentrant engine caches the random op's output "
           "per primitive; it holds while each dropout layer runs once per step in one region -- nested marks break "
           "it from the second step, see tests/test_shims.py) and compat.checkpoint (its mask tape replays the "
           "forward's masks, in every form and pattern measured).",
           "Not equal: mindspore.recompute(block, h), reentrant or not (a new mask in the recomputation).",
           "GRAPH mode: block.recompute() and mindspore.recompute(block, h) both give gradients equal to the plain "
           "graph (the graph-level recompute keeps the mask)."),
))

register(Pair(
    name="dropout_functional",
    description="The dropout pair with functional dropout: torch F.dropout(h, 0.5, self.training), MindSpore "
                "ops.dropout(h, p=0.5, training=self.training) inside the recomputed block.",
    torch_factory=functools.partial(TorchDropoutNet, functional=True),
    mindspore_factory=functools.partial(MsDropoutNet, functional=True),
    inputs=lambda rng: [_randn(rng, 8, 8)],
    torch_forms=("checkpoint", "compat"), mindspore_forms=("compat", "cell", "function"),
    graph_forms=("cell", "function", "compat"),
    cross_training=False,
    known_differences={
        "mindspore:cell": "Cell.recompute() keeps nn.Dropout masks but not ops.dropout's: the functional op takes "
                          "fresh seeds at every call (and opts out of the random cache), so the recomputation draws a "
                          "new mask.",
        "mindspore:function": "mindspore.recompute draws a new mask for ops.dropout (fresh seeds at every call).",
    },
    notes=(_DROPOUT_NOTE,
           "Equal to the plain run only through compat.checkpoint: its mask tape replays the forward's masks (the "
           "functional op builds a new primitive, with fresh seeds, at every call).",
           "GRAPH mode: the cell and function forms give gradients equal to the plain graph."),
))


# =========================================================================== 7. checkpoint_sequential, deep chain

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
    description=f"{_DEEP} Linear/Dense+ReLU layers ({2 * _DEEP} children) in one Sequential: torch "
                f"checkpoint_sequential(seq, {_SEGMENTS}, x, use_reentrant=False); MindSpore the same call through "
                "compat.checkpoint_sequential, the translator's recompute_sequential (mindspore.recompute of each "
                "segment, non-reentrant, early_stop=False), or .recompute() on every layer of the first "
                f"{_SEGMENTS - 1} segments.",
    torch_factory=TorchDeepSequential, mindspore_factory=MsDeepSequential,
    inputs=lambda rng: [_randn(rng, 4, _WIDTH)],
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


# =========================================================================== 8. densenet closure

class TorchDenseLayer(tnn.Module):
    """torchvision's _DenseLayer: a closure over norm1/relu1/conv1, cp.checkpoint(closure, *prev_features)."""

    def __init__(self, cin, growth=4, bottleneck=8, recompute=True):
        super().__init__()
        self.norm1 = tnn.BatchNorm2d(cin)
        self.relu1 = tnn.ReLU()
        self.conv1 = tnn.Conv2d(cin, bottleneck, 1, bias=False)
        self.norm2 = tnn.BatchNorm2d(bottleneck)
        self.relu2 = tnn.ReLU()
        self.conv2 = tnn.Conv2d(bottleneck, growth, 3, padding=1, bias=False)
        self.memory_efficient = recompute

    def bn_function(self, inputs):
        concated = torch.cat(inputs, 1)
        return self.conv1(self.relu1(self.norm1(concated)))

    def call_checkpoint_bottleneck(self, inputs):
        def closure(*inputs):
            return self.bn_function(inputs)
        return checkpoint(closure, *inputs, use_reentrant=False)

    def forward(self, inputs):
        if self.memory_efficient:
            bottleneck_output = self.call_checkpoint_bottleneck(inputs)
        else:
            bottleneck_output = self.bn_function(inputs)
        return self.conv2(self.relu2(self.norm2(bottleneck_output)))


class TorchDenseBlock(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint", cin=4, growth=4):
        super().__init__()
        self.denselayer1 = TorchDenseLayer(cin, growth, recompute=recompute)
        self.denselayer2 = TorchDenseLayer(cin + growth, growth, recompute=recompute)

    def forward(self, x):
        features = [x]
        for layer in (self.denselayer1, self.denselayer2):
            features.append(layer(features))
        return torch.cat(features, 1)


class MsDenseLayer(msnn.Cell):
    def __init__(self, cin, growth=4, bottleneck=8, recompute=True, form="function"):
        super().__init__()
        self.norm1 = ms_bn(cin)
        self.relu1 = msnn.ReLU()
        self.conv1 = ms_conv(cin, bottleneck, 1, bias=False)
        self.norm2 = ms_bn(bottleneck)
        self.relu2 = msnn.ReLU()
        self.conv2 = ms_conv(bottleneck, growth, 3, padding=1, bias=False)
        self.memory_efficient = recompute
        self.compat_form = form == "compat"

    def bn_function(self, inputs):
        concated = ops.cat(inputs, 1)
        return self.conv1(self.relu1(self.norm1(concated)))

    def call_checkpoint_bottleneck(self, inputs):
        def closure(*inputs):
            return self.bn_function(inputs)
        if self.compat_form:
            return ms_compat.checkpoint(closure, *inputs, use_reentrant=False)
        # a closure ends in conv1: non-reentrant (closures are not Cells) with early_stop=False (a conv ending crashes)
        return mindspore.recompute(closure, *inputs, use_reentrant=False, early_stop=False)

    def construct(self, inputs):
        if self.memory_efficient:
            bottleneck_output = self.call_checkpoint_bottleneck(inputs)
        else:
            bottleneck_output = self.bn_function(inputs)
        return self.conv2(self.relu2(self.norm2(bottleneck_output)))


class MsDenseBlock(msnn.Cell):
    def __init__(self, recompute=True, form="function", cin=4, growth=4):
        super().__init__()
        self.denselayer1 = MsDenseLayer(cin, growth, recompute=recompute, form=form)
        self.denselayer2 = MsDenseLayer(cin + growth, growth, recompute=recompute, form=form)

    def construct(self, x):
        features = [x]
        for layer in (self.denselayer1, self.denselayer2):
            features.append(layer(features))
        return ops.cat(features, 1)


register(Pair(
    name="densenet_closure",
    description="Two torchvision-style dense layers: closure(*inputs) = conv1(relu1(norm1(cat(inputs)))) "
                "checkpointed with the previous features splatted, cp.checkpoint(closure, *prev_features, "
                "use_reentrant=False); MindSpore mindspore.recompute(closure, *prev, use_reentrant=False, "
                "early_stop=False) or the torch call through compat.checkpoint.",
    torch_factory=TorchDenseBlock, mindspore_factory=MsDenseBlock,
    inputs=lambda rng: [_randn(rng, 2, 4, 5, 5)],
    mindspore_forms=("function", "compat"),
    graph_skip="No Cell form (the recomputed region is a closure), and mindspore.recompute(closure, *prev) "
               "compiled in GRAPH mode kills the process with SIGSEGV on CPU (MindSpore 2.10, every time; the "
               "plain twin compiles and runs): tests/test_zoo.py pins it in a subprocess.",
    updated_twice=("denselayer1.norm1", "denselayer2.norm1"),
    notes=(_BN_NOTE + " Here norm1 is inside the closure (twice), norm2 outside (once).",
           "The closure ends in a conv: non-reentrant recompute needs early_stop=False in MindSpore 2.10."),
))


# =========================================================================== 9. nested checkpoints

class TorchInner(tnn.Module):
    def __init__(self):
        super().__init__()
        self.fc = tnn.Linear(8, 8)

    def forward(self, x):
        return torch.tanh(self.fc(x))


class TorchOuter(tnn.Module):
    def __init__(self, recompute):
        super().__init__()
        self.a = tnn.Linear(8, 8)
        self.inner = TorchInner()
        self.b = tnn.Linear(8, 8)
        self.recompute = recompute

    def forward(self, x):
        h = F.relu(self.a(x))
        h = checkpoint(self.inner, h, use_reentrant=False) if self.recompute else self.inner(h)
        return self.b(h) * h


class TorchNested(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint"):
        super().__init__()
        self.outer = TorchOuter(recompute)
        self.head = tnn.Linear(8, 4)
        self.recompute = recompute

    def forward(self, x):
        h = checkpoint(self.outer, x, use_reentrant=False) if self.recompute else self.outer(x)
        return self.head(h)


class MsInner(msnn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = msnn.Dense(8, 8)

    def construct(self, x):
        return ops.tanh(self.fc(x))


class MsOuter(msnn.Cell):
    def __init__(self, function_form, compat_form):
        super().__init__()
        self.a = msnn.Dense(8, 8)
        self.relu = msnn.ReLU()
        self.inner = MsInner()
        self.b = msnn.Dense(8, 8)
        self.function_form = function_form
        self.compat_form = compat_form

    def construct(self, x):
        h = self.relu(self.a(x))
        if self.function_form:
            h = mindspore.recompute(self.inner, h)
        elif self.compat_form:
            h = ms_compat.checkpoint(self.inner, h, use_reentrant=False)
        else:
            h = self.inner(h)
        return self.b(h) * h


class MsNested(msnn.Cell):
    def __init__(self, recompute=True, form="function"):
        super().__init__()
        self.outer = MsOuter(recompute and form == "function", recompute and form == "compat")
        self.head = msnn.Dense(8, 4)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            self.outer.inner.recompute()                   # the child first: a parent's mark skips marked children
            self.outer.recompute()

    def construct(self, x):
        if self.function_form:
            h = mindspore.recompute(self.outer, x)
        elif self.compat_form:
            h = ms_compat.checkpoint(self.outer, x, use_reentrant=False)
        else:
            h = self.outer(x)
        return self.head(h)


register(Pair(
    name="nested",
    description="A checkpointed block whose forward checkpoints an inner block: torch checkpoint(outer, x, "
                "use_reentrant=False) around checkpoint(inner, h, use_reentrant=False); MindSpore nested "
                "mindspore.recompute (reentrant inside reentrant), inner.recompute() then outer.recompute(), or "
                "nested compat.checkpoint.",
    torch_factory=TorchNested, mindspore_factory=MsNested,
    inputs=lambda rng: [_randn(rng, 4, 8)],
    mindspore_forms=("function", "cell", "compat"),
    graph_forms=("cell", "function", "compat"),
    notes=("Cell.recompute() on a parent also recomputes its children; a child already marked keeps its own mark "
           "(MindSpore logs that a parent's mark skips it).",),
))


# =========================================================================== 10. keyword and tuple inputs/outputs

class TorchKwTupleBlock(tnn.Module):
    def __init__(self):
        super().__init__()
        self.fa = tnn.Linear(6, 8)
        self.fb = tnn.Linear(6, 8)
        self.fo = tnn.Linear(8, 3)

    def forward(self, xs, mask=None, scale=1.0):
        a, b = xs
        h = torch.tanh(self.fa(a) + self.fb(b)) * scale
        if mask is not None:
            h = h * mask
        return h, self.fo(h)


class TorchKwTuple(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint"):
        super().__init__()
        self.block = TorchKwTupleBlock()
        self.head = tnn.Linear(8, 2)
        self.recompute = recompute

    def forward(self, a, b, mask):
        if self.recompute:
            h, o = checkpoint(self.block, (a, b), mask=mask, scale=0.5, use_reentrant=False)
        else:
            h, o = self.block((a, b), mask=mask, scale=0.5)
        return self.head(h), o


class MsKwTupleBlock(msnn.Cell):
    def __init__(self):
        super().__init__()
        self.fa = msnn.Dense(6, 8)
        self.fb = msnn.Dense(6, 8)
        self.fo = msnn.Dense(8, 3)

    def construct(self, xs, mask=None, scale=1.0):
        a, b = xs
        h = ops.tanh(self.fa(a) + self.fb(b)) * scale
        if mask is not None:
            h = h * mask
        return h, self.fo(h)


class MsKwTuple(msnn.Cell):
    def __init__(self, recompute=True, form="function"):
        super().__init__()
        self.block = MsKwTupleBlock()
        self.head = msnn.Dense(8, 2)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            self.block.recompute(use_reentrant=False, early_stop=False)   # tensors inside a tuple: non-reentrant

    def construct(self, a, b, mask):
        if self.function_form:
            h, o = mindspore.recompute(self.block, (a, b), mask=mask, scale=0.5, use_reentrant=False,
                                       early_stop=False)
        elif self.compat_form:
            h, o = ms_compat.checkpoint(self.block, (a, b), mask=mask, scale=0.5, use_reentrant=False)
        else:
            h, o = self.block((a, b), mask=mask, scale=0.5)
        return self.head(h), o


register(Pair(
    name="kwargs_tuple",
    description="A block taking a tuple (a, b) and keyword arguments (mask=, scale=), returning a tuple; the model "
                "returns a tuple too. torch checkpoint(block, (a, b), mask=m, scale=0.5, use_reentrant=False); "
                "MindSpore mindspore.recompute(block, (a, b), mask=m, scale=0.5, use_reentrant=False), "
                "block.recompute(use_reentrant=False), or compat.checkpoint.",
    torch_factory=TorchKwTuple, mindspore_factory=MsKwTuple,
    inputs=lambda rng: [_randn(rng, 4, 6), _randn(rng, 4, 6), (rng.random((4, 8)) > 0.3).astype(np.float32)],
    mindspore_forms=("function", "cell", "compat"),
    graph_forms=("cell", "function", "compat"),
    grad_inputs=(0, 1),
    notes=("Tensors inside a tuple get gradients only through non-reentrant recompute (torch and MindSpore alike; "
           "compat.checkpoint gives them gradients with either flag); the mask is a float input that needs no "
           "gradient.",),
))


# =========================================================================== 11. an input that needs no gradient

class TorchFrozenInput(tnn.Module):
    def __init__(self, recompute=True, form="checkpoint"):
        super().__init__()
        self.block = tnn.Sequential(tnn.Linear(8, 16), tnn.ReLU(), tnn.Linear(16, 16), tnn.Tanh())
        self.head = tnn.Linear(16, 4)
        self.recompute = recompute
        self.form = form

    def forward(self, x):
        if self.recompute and self.form == "checkpoint":
            h = checkpoint(self.block, x, use_reentrant=False)
        elif self.recompute:
            h = torch_compat.recompute(self.block, x)       # MindSpore's reentrant default, on torch
        else:
            h = self.block(x)
        return self.head(h)


class MsFrozenInput(msnn.Cell):
    def __init__(self, recompute=True, form="function"):
        super().__init__()
        self.block = msnn.SequentialCell([msnn.Dense(8, 16), msnn.ReLU(), msnn.Dense(16, 16), msnn.Tanh()])
        self.head = msnn.Dense(16, 4)
        self.function_form = recompute and form == "function"
        self.compat_form = recompute and form == "compat"
        if recompute and form == "cell":
            self.block.recompute()

    def construct(self, x):
        if self.function_form:
            h = mindspore.recompute(self.block, x)
        elif self.compat_form:
            h = ms_compat.checkpoint(self.block, x, use_reentrant=False)
        else:
            h = self.block(x)
        return self.head(h)


register(Pair(
    name="frozen_input",
    description="The first block of a model, fed raw data that needs no gradient, recomputed: torch "
                "checkpoint(block, x, use_reentrant=False) or compat.torch.recompute(block, x); MindSpore "
                "mindspore.recompute(block, x) (reentrant), block.recompute(), or compat.checkpoint.",
    torch_factory=TorchFrozenInput, mindspore_factory=MsFrozenInput,
    inputs=lambda rng: [_randn(rng, 4, 8)],
    torch_forms=("checkpoint", "compat"), mindspore_forms=("function", "cell", "compat"),
    graph_forms=("cell", "function", "compat"),
    grad_inputs=(),
    notes=("torch's reentrant checkpoint with no input requiring grad returns an output without grad: the block's "
           "parameters would get no gradient (torch warns). MindSpore's reentrant form computes them. The torch "
           "twin uses use_reentrant=False; compat.torch.recompute switches to it by itself in that case.",),
))
