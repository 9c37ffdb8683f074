"""How much a forward pass keeps for backward: the memory that recompute exists to save.

Both frameworks expose saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks; MindSpore's
saved_tensors_hooks, PyNative only): every tensor autograd keeps for backward passes through the
pack hook. Their bytes, counted once per storage, are "bytes kept for backward". The measure is
exact for what autograd saves and portable across devices (unlike a CPU process's RSS, which
moves with allocator caching). It does not see tensors a custom backward keeps by itself, such as
the inputs MindSpore's reentrant recompute stashes (one set per recomputed block). What a selective-checkpointing
store keeps (the op outputs a policy saves) is counted too: torch's (its caching dispatch mode, read while the
counter is active) and recompat's on MindSpore (compat.selective reports each decision through `decided`).

Count the forward only: recomputation in backward saves tensors again, briefly, and those must
not be charged to the forward.

    counter = SavedTensors("torch")
    with counter:
        loss = model(x).sum()
    loss.backward()
    counter.bytes
"""
from __future__ import annotations

import contextlib
from collections import Counter

from .runs import ForwardPhase

MEASURE = ("bytes of tensors saved for backward by the forward pass (saved-tensor hooks and selective-checkpointing "
           "stores, unique storages)")

_active: list["SavedTensors"] = []      # the counters entered, innermost last


class SavedTensors:
    """Context manager counting what autograd saves for backward while it is active."""

    def __init__(self, framework: str, owner=None):
        if framework not in ("torch", "mindspore"):
            raise ValueError(f"framework must be 'torch' or 'mindspore', not {framework!r}")
        self.framework = framework
        self.storages: dict[int, int] = {}
        # owner(tensor): the module a saved storage is charged to (compat.localise.Watch.owner); bytes by owner
        self.owner = owner
        self.by_owner: Counter = Counter()
        self.tensors = 0
        # selective checkpointing's decisions: (op as the policy saw it, saved) and (op as it ran, saved) -> count
        self.decisions: Counter = Counter()
        self.ran_decisions: Counter = Counter()
        self._hooks = None

    @property
    def bytes(self) -> int:
        return sum(self.storages.values())

    def _pack(self, t):
        self.tensors += 1
        if self.framework == "torch":
            storage = t.untyped_storage()
            key, nbytes = storage.data_ptr(), storage.nbytes()
        else:
            key, nbytes = t.data_ptr(), t.nbytes
        if self.owner is not None and key not in self.storages:
            self.by_owner[self.owner(t)] += nbytes
        self.storages[key] = nbytes
        return t

    def __enter__(self):
        if self.framework == "torch":
            import torch

            self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, _identity)
        else:
            import mindspore

            self._hooks = mindspore.saved_tensors_hooks(self._pack, _identity)
        self._hooks.__enter__()
        if self.framework == "torch" and not any(c.framework == "torch" for c in _active):
            _watch_torch_stores(True)
        _active.append(self)
        return self

    def __exit__(self, *exc):
        _active.remove(self)
        if self.framework == "torch" and not any(c.framework == "torch" for c in _active):
            _watch_torch_stores(False)
        return self._hooks.__exit__(*exc)


def decided(framework: str, op: str, ran: list[str], saved: bool, kept: list) -> None:
    """A selective-checkpointing policy decided on `op` (the name the policy saw; `ran`: the ops that ran for it) and
    the store keeps `kept` when `saved`: counted by every active counter of `framework`."""
    for counter in _active:
        if counter.framework == framework:
            counter.decisions[op, saved] += 1
            for name in ran:
                counter.ran_decisions[name, saved] += 1
            for tensor in kept if saved else ():
                counter._pack(tensor)


_torch_dispatch = None      # torch's own _CachingTorchDispatchMode.__torch_dispatch__ while it is watched


def _watch_torch_stores(on: bool) -> None:
    """Report each decision torch's selective checkpointing takes, and what its store keeps (torch 2.13's
    _CachingTorchDispatchMode: `storage[func][index]` is _RECOMPUTE or _VersionWrapper values; pinned by
    tests/test_selective.py, which counts torch's store), through `decided`."""
    global _torch_dispatch
    from torch.utils import checkpoint as tc
    from torch.utils._pytree import tree_flatten

    mode = tc._CachingTorchDispatchMode
    if not on:
        mode.__torch_dispatch__, _torch_dispatch = _torch_dispatch, None
        return
    original = _torch_dispatch = mode.__torch_dispatch__

    def watched(self, func, types, args=(), kwargs=None):
        before = {key: set(entries) for key, entries in self.storage.items()}
        out = original(self, func, types, args, kwargs)
        for key, entries in self.storage.items():
            for index in set(entries) - before.get(key, set()):
                saved = entries[index] is not tc._RECOMPUTE
                values = [getattr(w, "val", None) for w in (tree_flatten(entries[index])[0] if saved else ())]
                decided("torch", str(func), [str(func)], saved,
                        [v for v in values if v is not None and hasattr(v, "untyped_storage")])
        return out

    mode.__torch_dispatch__ = watched


def _identity(t):
    return t


@contextlib.contextmanager
def checkpointing_off(ms_model=None):
    """While active, every checkpointed or recomputed region runs as a plain call: what a model keeps for backward
    without recompute, whatever form marks it and whatever name it was imported by. torch: the two ways torch
    2.13's ``checkpoint`` runs a region (``CheckpointFunction.apply``, ``_checkpoint_without_reentrant_generator``;
    checkpoint_sequential and checkpoint_wrapper go through them). MindSpore 2.10: the two ways
    ``mindspore.recompute`` runs one (``_RecomputeCell``, ``recompute_without_reentrant``), and each cell of
    ``ms_model`` marked with ``Cell.recompute()``, which holds its recompute wrapper in ``_recompute_cell``.
    Pinned by tests/test_memory_plain.py."""
    import importlib

    from torch.utils import checkpoint as tc

    mr = importlib.import_module("mindspore.common.recompute")    # the module: mindspore.common.recompute is the function

    class DirectFunction:            # CheckpointFunction.apply(function, preserve_rng_state, *args)
        @staticmethod
        def apply(function, _preserve_rng_state, *args):
            return function(*args)

    def no_context(*_args, **_kwargs):
        yield      # torch's non-reentrant checkpoint runs the region between its two next() calls

    class DirectCell:                # _RecomputeCell(block)(*args): the block itself (a class: isinstance works)
        def __new__(cls, block):
            return block

    def direct(block, _output_recompute, _early_stop, _context_fn, *args, **kwargs):
        kwargs.pop("save_rng_state", None)       # recompute_without_reentrant's own, as it pops it
        return block(*args, **kwargs)

    patched = [(tc, "CheckpointFunction", DirectFunction), (tc, "_checkpoint_without_reentrant_generator", no_context),
               (mr, "_RecomputeCell", DirectCell), (mr, "recompute_without_reentrant", direct)]
    originals = [(module, name, getattr(module, name)) for module, name, _ in patched]
    # Cell.recompute() registers its wrapper as a child cell; a None in the instance's __dict__ is found first, and
    # taking it out finds the child again
    marked = [c for _n, c in ms_model.cells_and_names() if getattr(c, "_recompute_cell", None) is not None] \
        if ms_model is not None else []
    held = [(c, c.__dict__.get("_recompute_cell", _ABSENT)) for c in marked]
    for module, name, value in patched:
        setattr(module, name, value)
    for cell in marked:
        cell.__dict__["_recompute_cell"] = None
    try:
        yield
    finally:
        for module, name, value in originals:
            setattr(module, name, value)
        for cell, value in held:
            if value is _ABSENT:
                cell.__dict__.pop("_recompute_cell", None)
            else:
                cell.__dict__["_recompute_cell"] = value


_ABSENT = object()


class TorchReruns(ForwardPhase):
    """The torch modules whose forward runs again during backward while active: what checkpointing recomputes
    (torch's checkpoint, reentrant or not, checkpoint_wrapper, checkpoint_sequential, or a function calling
    modules). One global forward pre-hook (torch.nn.modules.module.register_module_forward_pre_hook); ``forward()``
    marks the forward, where a call is no rerun."""

    def __init__(self, model):
        self.names = {id(m): name for name, m in model.named_modules()}
        self.seen: set[str] = set()
        self._handle = None

    @property
    def modules(self) -> list[str]:
        """The outermost modules that ran again (a checkpointed block, not its layers)."""
        return outermost(self.seen)

    def _seen(self, module, args):
        if not self.in_forward and id(module) in self.names:
            self.seen.add(self.names[id(module)])

    def __enter__(self):
        from torch.nn.modules.module import register_module_forward_pre_hook

        self._handle = register_module_forward_pre_hook(self._seen)
        return self

    def __exit__(self, *exc):
        self._handle.remove()
        return False


class MindSporeReruns(ForwardPhase):
    """The MindSpore cells called again during backward while active: what recompute runs again, whatever form
    marks it (a ``Cell.recompute()`` cell's children, a block given to ``mindspore.recompute``). A forward pre-hook
    on every cell (MindSpore 2.10 has no global one; its hooks run for a recomputation, measured in
    tests/test_memory_regions.py); the recompute wrappers themselves are not watched."""

    def __init__(self, cell):
        self.cell = cell
        self.seen: set[str] = set()
        self._handles = []

    @property
    def cells(self) -> list[str]:
        """The outermost cells that ran again."""
        return outermost(self.seen)

    def __enter__(self):
        for path, cell in self.cell.cells_and_names():
            if "_recompute_cell" not in path.split("."):
                self._handles.append(cell.register_forward_pre_hook(
                    lambda _cell, _args, path=path: None if self.in_forward else self.seen.add(path)))
        return self

    def __exit__(self, *exc):
        for handle in self._handles:
            handle.remove()
        self._handles = []
        return False


def unrecomputed(torch_regions, ms_recomputed, paired) -> list[str]:
    """The regions torch recomputes (module paths) where MindSpore recomputes nothing at, inside or around their
    paired cells: a recompute mark lost there. ``ms_recomputed``: the cells MindSpore recomputed or marked, as torch
    paths; ``paired``: the torch paths that have a MindSpore cell. A region is judged where it or a module inside
    it has one (checkpoint_wrapper's inner module has none, its layers do); see judged_regions."""
    return [r for r in judged_regions(torch_regions, paired)
            if not any(_within(m, r) or _within(r, m) for m in ms_recomputed)]


def judged_regions(torch_regions, paired) -> list[str]:
    """The regions that are, or hold, a module with a MindSpore cell to pair (an nn.ReLU that the port calls as
    ops.relu has none, and cannot be judged)."""
    return [r for r in torch_regions if any(_within(p, r) for p in paired)]


def mindspore_marks(cell) -> list[str]:
    """The cells of ``cell`` marked with ``Cell.recompute()`` and the operators marked with
    ``Primitive.recompute()``, as paths ("" the cell itself; an operator as "path:op")."""
    marked = outermost(path for path, sub in cell.cells_and_names() if getattr(sub, "_has_config_recompute", False))
    from .graph_recompute import primitive_marks

    return marked + [f"{scope}:{op}" for scope, op in primitive_marks(cell)
                     if not any(_within(scope, m) for m in marked)]


def outermost(paths) -> list[str]:
    """The module paths not inside another of them (a marked block, not its layers nor its recompute wrapper)."""
    paths = set(paths)
    return sorted(p for p in paths if not any(o != p and _within(p, o) for o in paths))


def _within(path: str, outer: str) -> bool:
    return not outer or path == outer or path.startswith(outer + ".")
