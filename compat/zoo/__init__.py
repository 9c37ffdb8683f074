"""The paired model zoo: the same tiny model written for torch and for MindSpore, recompute on or off.

    from recompat.compat import zoo

    pair = zoo.get("transformer")
    tm = pair.build_torch(recompute=True)                       # torch twin, seeded, in pair.training mode
    mm = pair.build_mindspore(recompute=True, form="cell")       # MindSpore twin, Cell.recompute() form
    xs = pair.make_inputs(seed=0)                                # list of NumPy arrays (float32, int64 ids)
    for pair in zoo.pairs(): ...

Each pair is a module of this package that holds its torch twin, its MindSpore twin and its
``register(Pair(...))`` (``dropout.py`` holds the two dropout pairs); ``layers.py`` holds what they share. The
imports at the end of this file register them, in the order ``names()`` and ``pairs()`` give.

A :class:`Pair` holds two factories, ``torch_factory(recompute, form)`` and ``mindspore_factory(recompute,
form)``, and the forms each side supports:

* torch forms: ``"checkpoint"`` -- ``torch.utils.checkpoint`` the way real code calls it (the pair's
  description says which idiom) -- and, where listed, ``"compat"`` -- MindSpore's idioms on torch through
  :mod:`recompat.compat.recompute_on_torch` (``recompute(...)``, ``mark_recompute(module)``).
* MindSpore forms: ``"function"`` -- ``mindspore.recompute(block, ...)`` inside ``construct``; ``"cell"`` --
  ``cell.recompute()`` on the sub-cells at build time; ``"compat"`` -- torch's calls ported verbatim through
  :mod:`recompat.compat.checkpoint_on_mindspore` (``checkpoint``, ``checkpoint_sequential``).
* ``"selective"`` (both sides): checkpointing with a selective policy (torch's ``create_selective_checkpoint_contexts``;
  on MindSpore :mod:`recompat.compat.selective`'s, through ``mindspore.recompute(..., use_reentrant=False,
  context_fn=...)``); ``selective`` names, per side, the policy form and the form that recomputes the same blocks
  whole, for the suite's selective check.
* ``graph_forms``: the MindSpore forms measured to compile and run in GRAPH mode on CPU with gradients equal to
  the plain graph (``graph_skip`` says why a pair has none; ``notes`` why a form is missing).
* ``checkpointed``: the module paths the torch twin checkpoints (the MindSpore twin's cells have the same paths);
  in GRAPH mode each must hold operators the compiled graph recomputes (compat.graph_recompute), unless
  ``graph_unrecomputed`` records, per MindSpore form, the measured reason it recomputes none of them.

The two twins are the same model: same layer order and the same parameter paths, so weights transfer by path
(torch ``fc1.weight`` <-> MindSpore ``fc1.weight``; BatchNorm ``weight/bias/running_mean/running_var`` <->
``gamma/beta/moving_mean/moving_variance``; LayerNorm ``weight/bias`` <-> ``gamma/beta``; Embedding
``weight`` <-> ``embedding_table``). MindSpore defaults that differ from torch's are set explicitly:
``Conv2d(pad_mode='pad' | 'valid', has_bias=...)``, ``BatchNorm2d(momentum=1 - torch's, eps=1e-5)``,
``LayerNorm(epsilon=1e-5)``, ``Dropout(p=...)``, ``GELU(approximate=False)``.

``settings_differ`` names the settings the weight transfer finds different on purpose (``conv.padding``: the
torch twin pads explicitly before the conv) and why; any other differing setting fails the cross check.
``updated_twice`` lists the (torch) paths of the BatchNorm layers inside recomputed regions: their running
statistics are updated twice per step with recompute on, in both frameworks. ``known_differences`` maps a form (``"mindspore:function"``) to the measured reason why recompute on and off
do *not* give equal gradients in that form in PyNative mode (dropout masks); the tests pin that they differ. In
GRAPH mode every listed graph form gives equal gradients, dropout included (measured). ``notes`` record
what else holds (BatchNorm statistics updated twice under recompute in both frameworks; which forms keep dropout
masks). ``cross_training``: the mode for comparing torch with MindSpore in GRAPH mode and against a recording, when it
differs from ``training`` (dropout draws different masks in the two frameworks, so those pairs compare in eval
mode there; in PyNative the cross check replays torch's masks and runs the pair in ``training`` mode).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

import mindspore
import torch

__all__ = ["Pair", "register", "get", "names", "pairs", "TORCH_FORMS", "MINDSPORE_FORMS"]

TORCH_FORMS = ("checkpoint", "compat", "selective")
MINDSPORE_FORMS = ("function", "cell", "compat", "selective")


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
    # settings that differ on purpose (torch name -> why: the twin makes up for it elsewhere); the cross check
    # reports them instead of failing them, and fails one that no longer differs
    settings_differ: Mapping[str, str] = field(default_factory=dict)
    updated_twice: tuple[str, ...] = ()
    memory_ratio: float | None = None     # the least plain/recompute ratio of bytes kept the memory check accepts
    # selective checkpointing: framework -> (the form with a policy, the form recomputing the same blocks whole)
    selective: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # the module paths torch checkpoints, where GRAPH mode must recompute; per form, why it recomputes none of them
    checkpointed: tuple[str, ...] = ()
    graph_unrecomputed: Mapping[str, str] = field(default_factory=dict)
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
    if pair.graph_forms and not pair.checkpointed:
        raise ValueError(f"pair {pair.name!r} has graph forms but names no checkpointed modules")
    if not set(pair.graph_unrecomputed) <= set(pair.graph_forms):
        raise ValueError(f"pair {pair.name!r}: graph_unrecomputed names forms that are not graph forms: "
                         f"{sorted(set(pair.graph_unrecomputed) - set(pair.graph_forms))}")
    for side, forms in pair.selective.items():
        known = pair.torch_forms if side == "torch" else pair.mindspore_forms
        if side not in ("torch", "mindspore") or not set(forms) <= set(known):
            raise ValueError(f"pair {pair.name!r}: selective {side}: {forms} are not its forms")
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


# The pairs, one module each (two dropout pairs share one), register themselves when imported: this order is the
# order of names() and pairs(). layers.py holds what they share.
from . import seed_fc, doc_conv_relu, resnet_bn, transformer, dropout, deep_sequential  # noqa: E402,F401
from . import densenet_closure, nested, kwargs_tuple, frozen_input, selective_block, selective_mlp  # noqa: E402,F401
