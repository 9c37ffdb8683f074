"""Selective activation checkpointing on MindSpore, with torch's API shape (torch.utils.checkpoint's SAC).

    import functools
    from recompat.compat.selective import CheckpointPolicy, create_selective_checkpoint_contexts, ops

    save = [ops.aten.mm.default, ops.aten.bmm.default]                 # the ops whose outputs are kept
    context_fn = functools.partial(create_selective_checkpoint_contexts, save)
    y = mindspore.recompute(block, x, use_reentrant=False, context_fn=context_fn)
    y = checkpoint(block, x, use_reentrant=False, context_fn=context_fn)    # recompat's torch shim: the same

    def policy(ctx, op, *args, **kwargs):                                # or a policy, as in torch
        return CheckpointPolicy.MUST_SAVE if op == ops.aten.addmm.default else CheckpointPolicy.PREFER_RECOMPUTE

How: MindSpore's ``MsDispatchMode`` (PyNative) sees every op as it runs. The forward context runs each op, asks the
policy, and keeps the outputs of the ops to save (the store); the recompute context hands those back instead of
running the ops again, and runs the rest. The dispatch hook sits below autograd (measured on MindSpore 2.10): the
recomputation records every op's backward either way, so gradients equal a run without checkpointing, and what
runs again in backward is exactly what the policy did not save. ``mindspore.recompute`` enters the pair only with
``use_reentrant=False`` (its reentrant engine ignores ``context_fn``, silently); recompat's ``checkpoint`` raises
torch's ValueError for ``context_fn`` with ``use_reentrant=True``.

What a policy sees, so that torch policies keep their meaning: ``op`` is the torch op that stands for the MindSpore
op (mappings/selective.yaml: ``MatMul`` is ``aten.mm.default``, ``MatMul`` then ``BiasAdd`` is one
``aten.addmm.default``, ``BatchMatMul`` is ``aten.bmm.default``...): an :class:`Op` equal to, and hashed like,
``ops.aten.mm.default`` (so lists, sets and ``==`` work). A MindSpore op with no torch counterpart there is an Op
named ``mindspore.<Name>``, equal to no torch op. ``args`` and ``kwargs`` are MindSpore's own: a policy that reads
them (a matmul's weight shape) reads MindSpore's layout (``Dense`` keeps its weight (out, in), like torch's linear).

torch's rules kept: a list holds ops, else ValueError (an op packet such as ``ops.aten.mm`` names its overload);
anything but a list or a callable is a TypeError; a policy returning a bool means MUST_SAVE (True) or
PREFER_RECOMPUTE (False); any value but MUST_SAVE / PREFER_SAVE recomputes (the CPU_OFFLOAD policies too, as in
torch's eager mode); the policy runs in the forward only and ``ctx.is_recompute`` is always False (torch 2.13);
a second backward through one region is torch's RuntimeError. Not kept: ``allow_cache_entry_mutation=False`` cannot
check anything (MindSpore 2.10's in-place ops do not advance ``Tensor._version``, measured); the values are kept
as they are, like torch with the check off. GRAPH mode: a compiled construct runs no Python dispatch hook, so
the contexts do nothing there (the whole block is recomputed); op by op choice there is ``Primitive.recompute()``.
"""
from __future__ import annotations

import contextlib
import enum
import functools
from collections import defaultdict
from typing import Any, Callable

from mindspore.utils import MsDispatchMode

from recompat import mappings

from . import memory

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext", "create_selective_checkpoint_contexts", "noop_context_fn",
           "Op", "ops", "kept_bytes"]


class CheckpointPolicy(enum.Enum):
    """torch's values: an op's output is saved for backward (``*_SAVE``) or recomputed (``*_RECOMPUTE``)."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)


class SelectiveCheckpointContext:
    """What a policy is told besides the op: ``is_recompute`` (always False: the policy runs in the forward
    only, as in torch 2.13) and ``op_output``."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None):
        self.is_recompute = is_recompute
        self.op_output = op_output


# --------------------------------------------------------------------------- ops, by torch's names


class Op:
    """A torch op overload by name (``aten.mm.default``), or a MindSpore op with no torch counterpart
    (``mindspore.Name``). One object per name: equal and hashed by name."""

    _made: dict[str, "Op"] = {}

    def __new__(cls, name: str):
        made = cls._made.get(name)
        if made is None:
            made = cls._made[name] = super().__new__(cls)
            made._name = name
        return made

    def __getnewargs__(self):
        return (self._name,)

    def name(self) -> str:
        """torch's spelling: ``aten::mm`` (OpOverload.name())."""
        namespace, op, overload = self._name.split(".")
        return f"{namespace}::{op}" + ("" if overload == "default" else f".{overload}")

    @property
    def __name__(self) -> str:
        return self._name.split(".", 1)[1]

    def __repr__(self) -> str:
        return self._name

    __str__ = __repr__

    def __eq__(self, other):
        if isinstance(other, Op):
            return self is other
        return NotImplemented

    def __hash__(self):
        return hash(self._name)


class _Packet:
    """``ops.aten.mm``: torch's OpOverloadPacket; its overloads are attributes (``.default``)."""

    def __init__(self, namespace: str, op: str):
        self._namespace, self._op = namespace, op

    def __getattr__(self, overload: str) -> Op:
        if overload.startswith("__"):
            raise AttributeError(overload)
        return Op(f"{self._namespace}.{self._op}.{overload}")

    def __repr__(self):
        return f"{self._namespace}.{self._op}"


class _Namespace:
    def __init__(self, namespace: str):
        self._namespace = namespace

    def __getattr__(self, op: str) -> _Packet:
        if op.startswith("__"):
            raise AttributeError(op)
        return _Packet(self._namespace, op)


class _Ops:
    """``torch.ops`` by name: ``ops.aten.mm.default`` is the Op a MindSpore ``MatMul`` shows a policy."""

    def __getattr__(self, namespace: str) -> _Namespace:
        if namespace.startswith("__"):
            raise AttributeError(namespace)
        return _Namespace(namespace)


ops = _Ops()


# --------------------------------------------------------------------------- MindSpore op -> torch op


def _tensor(value) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def _flat(args):
    for a in args:
        if isinstance(a, (tuple, list)):
            yield from _flat(a)
        else:
            yield a


def _holds(way: mappings.MindSporeOp, args) -> bool:
    if way.rank is not None:
        first = next((a for a in _flat(args) if _tensor(a)), None)
        if first is None:
            return False
        if (len(first.shape) == 2) != (way.rank == 2):
            return False
    for index, wanted in ((way.none, False), (way.given, True)):
        if index is not None:
            value = args[index] if index < len(args) else None
            if _tensor(value) != wanted or (not wanted and value is not None):
                return False
    return True


class _Table:
    """selective.yaml, indexed by MindSpore op name."""

    def __init__(self, data: mappings.Selective):
        self.ignored = frozenset(data.ignored)
        self.ways: dict[str, list[tuple[mappings.MindSporeOp, Op]]] = defaultdict(list)
        for entry in data.ops:
            for way in entry.mindspore:
                self.ways[way.op].append((way, Op(entry.torch)))

    def single(self, name: str, args) -> Op:
        for way, op in self.ways.get(name, ()):
            if way.then is None and _holds(way, args):
                return op
        return Op(f"mindspore.{name}")

    def starts_pair(self, name: str, args) -> bool:
        return any(way.then is not None and _holds(way, args) for way, _ in self.ways.get(name, ()))

    def pair(self, first: str, first_args, second: str, second_args, first_out) -> Op | None:
        """The torch op `first` then `second` stand for, when `second` takes `first`'s output."""
        if not _tensor(first_out):
            return None
        # the tensor reaches the next op as another Python object over the same memory (measured)
        if not any(_tensor(a) and a.data_ptr() == first_out.data_ptr() for a in _flat(second_args)):
            return None
        for way, op in self.ways.get(first, ()):
            if way.then == second and _holds(way, first_args):
                return op
        return None


@functools.lru_cache(maxsize=None)
def _table() -> _Table:
    return _Table(mappings.default().selective)


# --------------------------------------------------------------------------- the two contexts


_RECOMPUTE = object()
_CONSUMED = object()
_MISMATCH = ("This can happen if the operations in the checkpointed region are nondeterministic or depend on "
             "global state that changed between forward and backward.")


class _Saved:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _run(func, args, kwargs):
    return func(*args, **kwargs) if kwargs else func(*args)


class _Pending:
    """An op that may be the first of a pair (MatMul before BiasAdd): decided when the next op is seen."""

    def __init__(self, name, index, args, kwargs, out):
        self.name, self.index, self.args, self.kwargs, self.out = name, index, args, kwargs, out


class _Caching(MsDispatchMode):
    """The forward: run every op, ask the policy, keep the outputs of the ops it saves."""

    def __init__(self, policy_fn: Callable, storage: dict):
        self.policy_fn = policy_fn
        self.storage = storage
        self.table = _table()
        self.counter: dict[str, int] = defaultdict(int)
        self.pending: _Pending | None = None

    def __ms_dispatch__(self, func, args, kwargs=None):
        table = self.table
        name = func.name
        out = _run(func, args, kwargs)
        if name in table.ignored:
            return out
        index = self.counter[name]
        self.counter[name] += 1
        if self.pending is not None:
            first, self.pending = self.pending, None
            op = table.pair(first.name, first.args, name, args, first.out)
            if op is not None:
                self._decide(op, [(first.name, first.index), (name, index)], out, first.args, first.kwargs)
                return out
            self._decide_single(first)
        if table.starts_pair(name, args):
            self.pending = _Pending(name, index, args, kwargs, out)
            return out
        self._decide(table.single(name, args), [(name, index)], out, args, kwargs)
        return out

    def _decide_single(self, p: _Pending):
        self._decide(self.table.single(p.name, p.args), [(p.name, p.index)], p.out, p.args, p.kwargs)

    def _decide(self, op: Op, places, out, args, kwargs):
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out), op, *args,
                                **(kwargs or {}))
        if isinstance(policy, bool):                          # torch's backward compatibility
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        entry = _Saved(out) if policy in _SAVE else _RECOMPUTE
        memory.decided("mindspore", repr(op), [name for name, _ in places], entry is not _RECOMPUTE,
                       [t for t in _flat([out]) if _tensor(t)])
        for name, index in places:                            # a pair: both hand back the pair's output
            self.storage[name][index] = entry

    def __exit__(self, *exc):
        if self.pending is not None:
            first, self.pending = self.pending, None
            self._decide_single(first)
        return super().__exit__(*exc)


class _Cached(MsDispatchMode):
    """The recomputation: hand back what the forward kept, run the rest."""

    def __init__(self, storage: dict):
        self.storage = storage
        self.ignored = _table().ignored
        self.counter: dict[str, int] = defaultdict(int)

    def __enter__(self):
        self.counter.clear()
        return super().__enter__()

    def __ms_dispatch__(self, func, args, kwargs=None):
        name = func.name
        if name in self.ignored:
            return _run(func, args, kwargs)
        index = self.counter[name]
        self.counter[name] += 1
        entries = self.storage.get(name)
        if entries is None:
            raise RuntimeError(f"MindSpore op {name} encountered during backward but not found in storage. "
                               f"{_MISMATCH}")
        entry = entries.get(index)
        if entry is None:
            raise RuntimeError(f"MindSpore op {name} invocation index {index} encountered during backward but not "
                               f"found in storage. {_MISMATCH}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to backward once on any "
                               "region computed under selective activation checkpoint.")
        if entry is _RECOMPUTE:
            return _run(func, args, kwargs)
        entries[index] = _CONSUMED
        return entry.value


def _policy_from_list(op_list: list) -> Callable:
    for op in op_list:
        if not isinstance(op, Op):
            extra = (" Please update the OpOverloadPacket to a specific OpOverload. For example, if you have "
                     "`ops.aten.mm`, change it to `ops.aten.mm.default`." if isinstance(op, _Packet) else "")
            raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}.{extra}")
    saved = frozenset(op_list)

    def policy_fn(ctx, op, *args, **kwargs):
        return CheckpointPolicy.MUST_SAVE if op in saved else CheckpointPolicy.PREFER_RECOMPUTE
    return policy_fn


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation: bool = False):
    """torch's ``create_selective_checkpoint_contexts`` for ``mindspore.recompute(..., use_reentrant=False,
    context_fn=...)`` and recompat's ``checkpoint``: the (forward, recompute) pair of contexts.

    Args:
        policy_fn_or_list: a list of ops to save (everything else is recomputed), or a policy
            ``(ctx, op, *args, **kwargs) -> CheckpointPolicy | bool``.
        allow_cache_entry_mutation: accepted; MindSpore keeps no version counter to check (module docstring).
    """
    if isinstance(policy_fn_or_list, list):
        policy_fn = _policy_from_list(policy_fn_or_list)
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict[str, dict[int, Any]] = defaultdict(dict)
    return _Caching(policy_fn, storage), _Cached(storage)


def noop_context_fn():
    """torch's default ``context_fn``: two contexts that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def kept_bytes(contexts) -> int:
    """Bytes of the distinct tensors the forward context of `contexts` keeps for backward (not yet handed back)."""
    forward = contexts[0]
    seen: dict[int, int] = {}
    for entries in forward.storage.values():
        for entry in entries.values():
            if isinstance(entry, _Saved):
                for t in _flat([entry.value]):
                    if _tensor(t):
                        seen[t.data_ptr()] = t.nbytes
    return sum(seen.values())
