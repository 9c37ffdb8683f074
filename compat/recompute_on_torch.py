"""MindSpore recompute idioms on torch.

    from recompat.compat.recompute_on_torch import recompute, mark_recompute

    y = recompute(self.block, x)                       # mindspore.recompute(block, *args, ...)
    mark_recompute(self.layer)                         # Cell.recompute(): inside recomputed, output kept

Both run on ``torch.utils.checkpoint.checkpoint`` and keep MindSpore 2.10's keyword names and defaults
(``use_reentrant=True``, ``output_recompute=False``, ``early_stop=True``, ``context_fn=None``, and the
hidden ``save_rng_state=True``, which becomes torch's ``preserve_rng_state``). Where the two differ:

* MindSpore's reentrant form computes parameter gradients even when no input requires a gradient (a block fed
  raw data); torch's reentrant checkpoint then returns an output without a gradient and the block's parameters
  get none ("None of the inputs have requires_grad=True"). Here that case runs torch's non-reentrant form, so
  the parameters get their gradients, as on MindSpore.
* MindSpore forwards keyword arguments to the block in both forms; torch's reentrant form refuses them. Here they
  are passed positionally into the reentrant region (tensors among them are tracked like the other inputs).
* ``output_recompute=True`` (recompute the block's output too, merging adjacent recomputed blocks) has no torch
  counterpart: :class:`OutputRecomputeWarning`, and it runs non-reentrant as MindSpore's does (values are the
  same; only memory differs).
* MindSpore's reentrant form refuses a block that is not a Cell (PyNative); torch accepts any callable, and so
  does this function.
* ``context_fn`` with ``use_reentrant=True`` is MindSpore's (and torch's) ValueError.

``mark_recompute(module)`` gives a torch module ``Cell.recompute()`` behaviour by overriding its ``forward`` on
the instance with a checkpointed call of the original: its inside is recomputed in backward, its output is kept,
forward (pre-)hooks fire once per call (on MindSpore, too, a forward hook fires once: the rerun calls construct
directly), and parameter names (``state_dict`` keys) do not change -- unlike ``checkpoint_wrapper``, which adds
``_checkpoint_wrapped_module.``. ``torch.distributed._composable.checkpoint(module)`` does the same through
hooks (it runs on CPU without a process group) but only non-reentrant; the override supports both forms.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import torch
from torch.utils.checkpoint import checkpoint as _torch_checkpoint

from recompat import mappings

__all__ = ["recompute", "mark_recompute", "unmark_recompute", "is_marked", "OutputRecomputeWarning"]


class OutputRecomputeWarning(UserWarning):
    """MindSpore's ``output_recompute=True`` has no torch counterpart: the block's output is kept."""


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


class _KeywordsAsPositional:
    """Call ``function(*args[:n], **dict(zip(keys, args[n:])))``: keyword arguments through the reentrant form."""

    def __init__(self, function, n_positional, keys):
        self.function, self.n, self.keys = function, n_positional, keys

    def __call__(self, *args):
        return self.function(*args[:self.n], **dict(zip(self.keys, args[self.n:])))


def _recompute(block, args, kwargs, *, use_reentrant=True, output_recompute=False, early_stop=True,
               context_fn=None, save_rng_state=True, stacklevel=3):
    if output_recompute:
        warnings.warn("output_recompute=True has no torch counterpart: the block's output is kept for backward "
                      "(values are unchanged; adjacent recomputed blocks are not merged). Running non-reentrant, "
                      "as MindSpore does.", OutputRecomputeWarning, stacklevel=stacklevel)
        use_reentrant = False
    if use_reentrant:
        if context_fn is not None:
            raise ValueError("context_fn is only supported when use_reentrant=False.")
        needs_grad = any(t.requires_grad for t in _tensors((args, kwargs)))
        if needs_grad or not torch.is_grad_enabled():
            if kwargs:
                keys = tuple(kwargs)
                return _torch_checkpoint(_KeywordsAsPositional(block, len(args), keys), *args,
                                         *(kwargs[k] for k in keys), use_reentrant=True,
                                         preserve_rng_state=save_rng_state)
            return _torch_checkpoint(block, *args, use_reentrant=True, preserve_rng_state=save_rng_state)
        # no input requires grad: torch's reentrant form would drop the parameter gradients; MindSpore's keeps them
    extra = {"context_fn": context_fn} if context_fn is not None else {}
    return _torch_checkpoint(block, *args, use_reentrant=False, early_stop=early_stop,
                             preserve_rng_state=save_rng_state, **extra, **kwargs)


def recompute(block: Callable, *args, use_reentrant: bool = True, output_recompute: bool = False,
              early_stop: bool = True, context_fn: Callable | None = None, save_rng_state: bool = True,
              **kwargs) -> Any:
    """``mindspore.recompute(block, *args, ...)`` on torch: ``block(*args, **kwargs)``, recomputed in backward.

    Args:
        block: a module or any callable.
        use_reentrant: MindSpore's default True -> torch's reentrant checkpoint (non-reentrant when no input
            requires grad, see the module docstring).
        output_recompute: no torch counterpart: OutputRecomputeWarning, and non-reentrant.
        early_stop: torch's ``early_stop`` (non-reentrant only; both frameworks ignore it for reentrant).
        context_fn: torch's / MindSpore's pair of context managers (non-reentrant only).
        save_rng_state: torch's ``preserve_rng_state``: dropout in the block gets the same mask when recomputed.
        **kwargs: passed to ``block``, in both forms (as MindSpore does).
    """
    return _recompute(block, args, kwargs, use_reentrant=use_reentrant, output_recompute=output_recompute,
                      early_stop=early_stop, context_fn=context_fn, save_rng_state=save_rng_state)


class _RecomputedForward:
    """The ``forward`` that mark_recompute puts on a module instance."""

    def __init__(self, module: torch.nn.Module, inner: Callable | None, options: dict):
        self.module = module
        self.inner = inner            # a forward set on the instance before marking, else None (the class's)
        self.options = options

    def original(self):
        if self.inner is not None:
            return self.inner
        return type(self.module).forward.__get__(self.module)

    def __call__(self, *args, **kwargs):
        return _recompute(self.original(), args, kwargs, stacklevel=4, **self.options)

    def __repr__(self):
        return f"<recomputed forward of {type(self.module).__name__} {self.options}>"


def mark_recompute(module: torch.nn.Module, *, use_reentrant: bool = True, output_recompute: bool = False,
                   early_stop: bool = True, context_fn: Callable | None = None, **kwargs) -> torch.nn.Module:
    """``Cell.recompute()`` on a torch module: every later call recomputes the module's inside in backward and
    keeps its output; parameter names are unchanged. Returns the module (``Cell.recompute`` returns None).

    Keyword-only like ``Cell.recompute``. ``mp_comm_recompute``, ``parallel_optimizer_comm_recompute`` and
    ``recompute_slice_activation`` (parallel-training communication and activation slicing) are accepted and have
    no effect on one torch process; any other key is MindSpore's ValueError. Marking again replaces the options
    (MindSpore raises when a reentrant mark is changed to non-reentrant; the last mark wins here).
    """
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"mark_recompute expects a torch.nn.Module, got {type(module).__name__}")
    # Cell.recompute's auto-parallel keys: the only keyword arguments it takes besides its own
    allowed = [p.mindspore for p in mappings.default().entry("cell_recompute").params if p.parallel]
    for key in kwargs:
        if key not in allowed:
            raise ValueError(f"For 'recompute', keyword '{key}' is not recognized! the key kwargs must be "
                             + ", ".join(f"'{k}'" for k in allowed))
    options = dict(use_reentrant=use_reentrant, output_recompute=output_recompute, early_stop=early_stop,
                   context_fn=context_fn)
    current = module.__dict__.get("forward")
    if isinstance(current, _RecomputedForward):
        current.options = options
    else:
        module.forward = _RecomputedForward(module, current, options)
    return module


def unmark_recompute(module: torch.nn.Module) -> torch.nn.Module:
    """Undo :func:`mark_recompute`."""
    current = module.__dict__.get("forward")
    if isinstance(current, _RecomputedForward):
        if current.inner is None:
            del module.forward
        else:
            module.forward = current.inner
    return module


def is_marked(module: torch.nn.Module) -> bool:
    """Whether :func:`mark_recompute` marked ``module``."""
    return isinstance(module.__dict__.get("forward"), _RecomputedForward)
