"""torch.utils.checkpoint idioms on MindSpore.

    from recompat.compat.checkpoint_on_mindspore import checkpoint, checkpoint_sequential

    y = checkpoint(self.block, x)                               # torch's default: reentrant
    y = checkpoint(layer.__call__, h, mask, use_reentrant=False)
    y = checkpoint(bn_function, *prev_features)                 # any callable (densenet closure)
    y = checkpoint_sequential(self.seq, 4, x, use_reentrant=False)

Both keep torch 2.13's signatures and argument rules:

* ``use_reentrant=None`` warns like torch and means True. ``preserve_rng_state`` (default True), ``context_fn``,
  ``determinism_check``, ``debug`` and ``early_stop`` are accepted like torch's. With ``use_reentrant=True`` any
  other keyword argument is torch's ValueError("Unexpected keyword arguments: ..."), and so are ``context_fn``
  and ``debug``; with ``use_reentrant=False`` keyword arguments go to ``function``.
* ``checkpoint_sequential`` splits an ``nn.SequentialCell`` (or a list) like torch: segment size
  ``len // segments``; the first ``segments - 1`` segments are recomputed, the last (with the remainder) runs
  normally; ``preserve_rng_state`` is its only keyword argument.

The engine (PyNative): ``mindspore.recompute(function, *args, use_reentrant=False, early_stop=False,
save_rng_state=preserve_rng_state, context_fn=...)`` for every callable and both values of torch's flag.
torch's two variants give the same values and differ in autograd plumbing; MindSpore's two engines do not give
the same values, and only the non-reentrant one can be made exact (measured on MindSpore 2.10, pinned in
tests/test_shims.py and tests/test_framework_facts.py):

* MindSpore's reentrant engine refuses anything but a Cell (a closure's parameters are invisible to it: it would
  drop their gradients), breaks backward when ``save_rng_state`` is passed at all, and draws dropout masks
  through a per-primitive cache of random-op outputs: ``mindspore.recompute(cell)`` draws a new ``nn.Dropout``
  mask; the bound-method form ``Cell.recompute()`` uses keeps it only while each dropout layer runs once per
  step inside one region -- a layer used outside and inside a region, in two regions (shared layers), or in
  nested regions gets wrong masks, even in the forward. So it is not used.
* ``early_stop=False`` always: with True, MindSpore 2.10 crashes in backward when the block's last saving op is a
  conv or a dropout ("Stack input_args_info_stack_ is empty"); it changes how much is recomputed, never a value.
  torch's ``early_stop`` is accepted and ignored.
* Left as torch's reentrant variant differs: tensors inside tuples/lists get gradients here (torch's reentrant
  variant gives them none); a function whose inputs need no gradient still gives its parameters gradients.

RNG (``preserve_rng_state=True``): torch guarantees that gradients through dropout equal a run without
checkpoint. MindSpore cannot rewind an ``nn.Dropout`` (its primitive owns its mask stream, seeded at
construction) and ``ops.dropout`` takes fresh seeds at every call, so the recomputation would draw new masks.
This module keeps torch's guarantee itself:

===============================================  ===========================================================
random op in the region                          recomputation
===============================================  ===========================================================
``ops.Dropout`` (``nn.Dropout``, ``ops.dropout``) the forward's mask, replayed: exact, in every form and pattern
seeded functional random ops (``ops.uniform``...) the seed counter (``mindspore.common.seed._KERNEL_SEED``) is
                                                 put back: same seeds, same numbers (needs mindspore.set_seed)
ops drawing from the default generator           restored by MindSpore (``save_rng_state``)
``ops.Dropout2D`` / ``Dropout3D`` (nn.Dropout2d)  NEW mask: RecomputeRNGWarning
===============================================  ===========================================================

The mask tape: while a recomputed region runs forward, ``ops.Dropout`` draws its mask as usual (the same stream,
the same mask as without recompute), the region keeps the mask (one float32 tensor the size of the dropout's
input: torch keeps only an RNG state), and the output is ``x * (mask * (1 / keep_prob))`` -- bit for bit the
kernel's output. The recomputation gets the masks back in order, without running the primitive, so its stream is
not advanced either. Nested regions replay from the innermost region recomputing.

Where masks cannot be replayed (Dropout2D/3D, or a recomputation that runs other dropout calls than its
forward), ``checkpoint`` warns with :class:`RecomputeRNGWarning` rather than raising: torch code checkpoints
blocks with dropout all the time, and an error would make a ported model untrainable with no remedy but
rewriting it. The difference is never silent: the warning (once per call site) names the remedy
(``preserve_rng_state=False`` states that different masks are acceptable, and silences it), and it is an error
for anyone who asks: ``warnings.simplefilter("error", RecomputeRNGWarning)`` -- the harness's tests do.
``preserve_rng_state=False``: nothing is replayed (MindSpore does not restore its default generator either).

GRAPH mode (a compiled ``construct`` or ``@jit``): both functions take MindSpore's own compile-time branch
(``_run_in_jit()``, as ``mindspore.recompute`` does) and hand the block to ``mindspore.recompute``, a graph-level
recompute where none of the above applies; ``checkpoint_sequential`` then recomputes the functions of the first
``segments - 1`` segments one by one (a SequentialCell slice made in a compiled construct loses its parameters'
gradients, measured). Dropout masks are kept there (measured for nn.Dropout and ops.dropout). What GRAPH mode
cannot compile stays uncompilable: ``checkpoint(layer.__call__, ...)`` (the expression ``layer.__call__``
itself) and a closure block (``mindspore.recompute(closure, ...)`` compiled kills the process, see the zoo's
densenet_closure pair).
"""
from __future__ import annotations

import contextlib
import importlib
import warnings
from typing import Any, Callable, Iterable

import mindspore
from mindspore import nn

__all__ = ["checkpoint", "checkpoint_sequential", "RecomputeRNGWarning"]


class RecomputeRNGWarning(UserWarning):
    """The recomputation in backward cannot draw the same random numbers as the forward did.

    Gradients through the random op then differ from a run without recompute (torch's
    ``preserve_rng_state=True`` guarantees they do not). Make it an error with
    ``warnings.simplefilter("error", RecomputeRNGWarning)``.
    """


_USE_REENTRANT_WARNING = (
    "recompat.compat.checkpoint_on_mindspore.checkpoint: the use_reentrant parameter should be passed explicitly "
    "(as with torch.utils.checkpoint.checkpoint). It defaults to True, like torch.")
_USE_REENTRANT_WARNING_SEQ = (
    "recompat.compat.checkpoint_on_mindspore.checkpoint_sequential: the use_reentrant parameter should be passed "
    "explicitly (as with torch.utils.checkpoint.checkpoint_sequential). It defaults to True, like torch.")

# --------------------------------------------------------------------------- MindSpore internals used

_seed_module = importlib.import_module("mindspore.common.seed")     # `mindspore.common.seed` is also a function
try:
    from mindspore.graph.api import _no_grad, _pynative_executor, _run_in_jit
except ImportError:  # pragma: no cover
    _pynative_executor = None
    _no_grad = contextlib.nullcontext

    def _run_in_jit():
        return False


def _grad_recording() -> bool:
    if _pynative_executor is None:  # pragma: no cover
        return True
    return bool(_pynative_executor.requires_grad())


# --------------------------------------------------------------------------- RNG: mask tape, seed replay


class _SeedReplay:
    """Record the functional-random-op seed counter at forward, put it back for the recomputation."""

    def __init__(self):
        self.snapshot = None

    @contextlib.contextmanager
    def recording(self):
        self.snapshot = dict(_seed_module._KERNEL_SEED)
        yield

    @contextlib.contextmanager
    def replay(self):
        if self.snapshot is None:
            yield
            return
        table = _seed_module._KERNEL_SEED
        current = dict(table)
        table.clear()
        table.update(self.snapshot)
        try:
            yield
        finally:
            table.clear()
            table.update(current)


class _Frame:
    """The dropout masks one recomputed region drew: recorded at forward, replayed in order when recomputed."""

    def __init__(self):
        self.masks: list = []                 # (key, mask)
        self.replaying = False
        self.position = 0
        self.unreplayable: list[str] = []     # random ops seen that cannot be replayed
        self.mismatches = 0


def _dropout_classes():
    from mindspore import ops
    replayable = [ops.Dropout]                 # nn.Dropout's primitive and ops.dropout's
    watched = [c for c in (getattr(ops, n, None) for n in ("Dropout2D", "Dropout3D")) if c is not None]
    return replayable, watched


class _Tape:
    """While a recomputed region runs (forward or recomputation), ``ops.Dropout.__call__`` goes through here.

    Forward: the real primitive draws the mask (as in a run without recompute: same stream, same mask), every
    recording region keeps it, and the output is ``x * (mask * (1 / keep_prob))`` -- bit for bit the kernel's
    output. Recomputation: the innermost replaying region hands back its masks in order; the primitive does not
    run, so its stream is not advanced either. Dropout2D/Dropout3D are only noted (their masks are not replayed).
    The patch is class-level and exists only while some region is on the stack (not thread-safe: PyNative runs
    one Python thread).
    """

    stack: list[_Frame] = []
    saved: list = []

    @classmethod
    @contextlib.contextmanager
    def frame(cls, frame: _Frame, replay: bool):
        if not cls.stack:
            cls._patch()
        frame.replaying, frame.position = replay, 0
        cls.stack.append(frame)
        try:
            yield frame
        finally:
            cls.stack.remove(frame)
            if not cls.stack:
                cls._unpatch()

    @classmethod
    def _patch(cls):
        replayable, watched = _dropout_classes()
        cls.saved = []
        for klass in replayable + watched:
            own = klass.__dict__.get("__call__")
            resolved = klass.__call__
            if klass in replayable:
                def patched(prim, x, *args, __resolved=resolved, **kwargs):
                    return _Tape._dropout(prim, x, __resolved, *args, **kwargs)
            else:
                def patched(prim, *args, __resolved=resolved, **kwargs):
                    for frame in _Tape.stack:
                        frame.unreplayable.append(f"{type(prim).__name__} (its mask is not replayed)")
                    return __resolved(prim, *args, **kwargs)
            cls.saved.append((klass, own))
            klass.__call__ = patched

    @classmethod
    def _unpatch(cls):
        for klass, own in cls.saved:
            if own is None:
                del klass.__call__
            else:
                klass.__call__ = own
        cls.saved = []

    @staticmethod
    def _key(prim, x):
        # A functional ops.dropout builds a new primitive at every call (random_cache=False): match those by what
        # they draw; a layer's primitive (nn.Dropout) also by identity.
        persistent = prim.attrs.get("random_cache", True) is not False
        return (id(prim) if persistent else None, prim.keep_prob, tuple(x.shape))

    @classmethod
    def _dropout(cls, prim, x, original, *args, **kwargs):
        if args or kwargs:                                   # not the known signature: leave it alone
            return original(prim, x, *args, **kwargs)
        key = cls._key(prim, x)
        replay = next((f for f in reversed(cls.stack) if f.replaying), None)
        mask = None
        if replay is not None:
            if replay.position < len(replay.masks) and replay.masks[replay.position][0] == key:
                mask = replay.masks[replay.position][1]
                replay.position += 1
            else:
                replay.mismatches += 1
        if mask is None:
            with _no_grad():
                _, mask = original(prim, x)
        for frame in cls.stack:
            if not frame.replaying:
                frame.masks.append((key, mask))
        return x * (mask * (1.0 / prim.keep_prob)), mask


def _warn_rng(frame: _Frame, stacklevel: int):
    kinds = sorted(set(frame.unreplayable))
    warnings.warn(
        f"recompat.compat.checkpoint_on_mindspore: the recomputed region ran {', '.join(kinds)}; the recomputation "
        "in backward draws a different mask, so gradients differ from a run without recompute (torch's "
        "preserve_rng_state=True would make them equal). Use nn.Dropout / ops.dropout inside recomputed regions "
        "(their masks are replayed), or pass preserve_rng_state=False to accept different masks.",
        RecomputeRNGWarning, stacklevel=stacklevel + 1)


def _warn_mismatch(frame: _Frame):
    if frame.mismatches:
        warnings.warn(
            "recompat.compat.checkpoint_on_mindspore: the recomputation ran other dropout calls than the forward did "
            f"({frame.mismatches} not replayed): the region is not deterministic, and its gradients differ from a "
            "run without recompute.", RecomputeRNGWarning, stacklevel=2)


class _Contexts:
    """Context managers made and entered together each time this is entered (forward, or each recomputation)."""

    def __init__(self, *factories):
        self.factories = factories
        self.stack = None

    def __enter__(self):
        with contextlib.ExitStack() as stack:
            for factory in self.factories:
                stack.enter_context(factory())
            self.stack = stack.pop_all()
        return self

    def __exit__(self, *exc):
        stack, self.stack = self.stack, None
        return stack.__exit__(*exc)


# --------------------------------------------------------------------------- the engine


class _Segment:
    """functions[start:end] run in order (a checkpoint_sequential segment)."""

    def __init__(self, functions: list):
        self.functions = functions

    def __call__(self, input):
        for function in self.functions:
            input = function(input)
        return input


def _non_reentrant(function, args, kwargs, preserve_rng_state, context_fn, stacklevel):
    if not _grad_recording():                       # no gradient is being taken: nothing will be recomputed
        return function(*args, **kwargs)
    seeds = _SeedReplay() if preserve_rng_state else None
    frame = _Frame() if preserve_rng_state else None

    def contexts():
        if context_fn is not None:
            user_forward, user_recompute = context_fn()
        else:
            user_forward, user_recompute = contextlib.nullcontext(), contextlib.nullcontext()
        if seeds is None:
            return user_forward, user_recompute

        def recomputing():
            @contextlib.contextmanager
            def replay():
                with _Tape.frame(frame, replay=True):
                    yield
                _warn_mismatch(frame)
            return replay()

        return (_Contexts(seeds.recording, lambda: _Tape.frame(frame, replay=False), lambda: user_forward),
                _Contexts(seeds.replay, recomputing, lambda: user_recompute))

    out = mindspore.recompute(function, *args, use_reentrant=False, early_stop=False, context_fn=contexts,
                              save_rng_state=preserve_rng_state, **kwargs)
    if frame is not None and frame.unreplayable:
        try:
            _warn_rng(frame, stacklevel + 1)
        except Exception:
            # the warning made an error: the gradient being taken is abandoned; MindSpore's own recompute clears
            # the PyNative executor the same way, else the next gradient in the process fails in its backward
            if _pynative_executor is not None:
                _pynative_executor.clear_res()
            raise
    return out


# --------------------------------------------------------------------------- public API


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None, preserve_rng_state: bool = True,
               context_fn: Callable | None = None, determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs) -> Any:
    """``torch.utils.checkpoint.checkpoint`` on MindSpore: run ``function(*args, **kwargs)`` and recompute it in
    backward. See the module docstring for the engine and for RNG.

    Args:
        function: any callable: a Cell, a bound method, a function, a lambda or closure.
        use_reentrant: torch's flag; None warns and means True. It selects torch's argument rules; the engine is
            MindSpore's non-reentrant one either way (see the module docstring).
        preserve_rng_state: replay dropout masks and random seeds in the recomputation (the table in the module
            docstring); where that is impossible, a RecomputeRNGWarning after the forward.
        context_fn: torch's pair of context managers (non-reentrant only, as in torch).
        determinism_check: "default" or "none" (validated as torch does; MindSpore checks nothing).
        debug: accepted (non-reentrant only, as in torch); no effect.
        early_stop: accepted, ignored: MindSpore's non-reentrant early stop crashes on conv/dropout endings.
        **kwargs: passed to ``function`` (``use_reentrant=False`` only, as in torch).
    """
    if _run_in_jit():  # @jit.cond: True
        # compiled (GRAPH mode / jit): MindSpore's graph-level recompute of the block, which ignores the flags
        return mindspore.recompute(function, *args, **kwargs)
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        if context_fn is not None or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    return _non_reentrant(function, args, kwargs, preserve_rng_state, context_fn, stacklevel=2)


def _graph_sequential(functions, segments, input):
    """checkpoint_sequential compiled (GRAPH mode / jit): graph-level recompute of every function of the first
    segments - 1 segments, one by one (the same values as recomputing the segment whole). Not slices: a
    SequentialCell slice made in a compiled construct loses its parameters' gradients (measured, MindSpore 2.10)."""
    n = len(functions)
    recomputed = (n // segments) * (segments - 1)
    for i in range(n):
        if i < recomputed:
            input = mindspore.recompute(functions[i], input)
        else:
            input = functions[i](input)
    return input


def _as_list(functions) -> list:
    if isinstance(functions, nn.SequentialCell):
        return list(functions.cells())
    if isinstance(functions, nn.CellList):
        return list(functions)
    return list(functions)


def checkpoint_sequential(functions: Iterable[Callable] | nn.SequentialCell, segments: int, input,
                          use_reentrant: bool | None = None, **kwargs):
    """``torch.utils.checkpoint.checkpoint_sequential`` on MindSpore (PyNative).

    ``functions`` is an ``nn.SequentialCell`` (split into its cells), a ``CellList`` or a list of callables.
    Segment size is ``len(functions) // segments``; the first ``segments - 1`` segments are each recomputed in
    backward (as by :func:`checkpoint`), the last segment, with the remainder, runs normally. ``segments``
    larger than the number of functions is torch's ValueError. ``preserve_rng_state`` is the only keyword.
    """
    if _run_in_jit():  # @jit.cond: True
        return _graph_sequential(functions, segments, input)
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING_SEQ, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    functions = _as_list(functions)
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):   # step 0 -> ValueError, as torch
        end = start + segment_size - 1
        input = checkpoint(_Segment(functions[start:end + 1]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _Segment(functions[end + 1:])(input)
