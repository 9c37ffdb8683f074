"""einops for MindSpore: what translated code imports where the torch code used einops.

einops ships a layer module per framework (`einops.layers.torch`) and finds the backend of a tensor among the
subclasses of its `AbstractBackend` (its extension point). MindSpore has neither, so this module registers a
MindSpore backend, making einops' functions (`rearrange`, `reduce`, `repeat`, ...) take MindSpore tensors, and
defines the layers as Cells on einops' own mixins, so patterns are parsed and checked by einops itself.
`mappings/libraries.yaml` sends `einops` and `einops.layers.torch` here (translate --scope model).
"""
from __future__ import annotations

try:
    import einops as _einops
    from einops._backends import AbstractBackend
    from einops.layers import RearrangeMixin, ReduceMixin
except ModuleNotFoundError as exc:   # the torch code this was translated from needed einops as well
    raise ModuleNotFoundError(
        "recompat.einops needs the einops package (the torch code this was translated from used it): "
        "pip install einops") from exc

import mindspore
from mindspore import nn, ops

# The functions, for `from einops import rearrange` translated to `from recompat.einops import rearrange`.
from einops import asnumpy, einsum, pack, parse_shape, rearrange, reduce, repeat, unpack  # noqa: E402,F401

__version__ = _einops.__version__
__all__ = ["Rearrange", "Reduce", "asnumpy", "einsum", "pack", "parse_shape", "rearrange", "reduce", "repeat", "unpack"]

_FLOATS = (mindspore.float16, mindspore.float32, mindspore.float64, mindspore.bfloat16)
_REDUCTIONS = {"min": ops.amin, "max": ops.amax, "sum": ops.sum, "mean": ops.mean, "prod": ops.prod,
               "any": ops.any, "all": ops.all}


class MindSporeBackend(AbstractBackend):
    """einops' operations on mindspore.Tensor (PyNative). einops picks it for a tensor once mindspore is
    imported, as it does its own backends."""

    framework_name = "mindspore"

    def is_appropriate_type(self, tensor):
        return isinstance(tensor, mindspore.Tensor)

    def from_numpy(self, x):
        return mindspore.Tensor(x)

    def to_numpy(self, x):
        return x.asnumpy()

    def arange(self, start, stop):
        return ops.arange(start, stop, dtype=mindspore.int64)

    def shape(self, x):
        return tuple(x.shape)

    def reshape(self, x, shape):
        return ops.reshape(x, tuple(shape))

    def transpose(self, x, axes):
        return ops.transpose(x, tuple(axes))

    def reduce(self, x, operation, axes):
        if operation not in _REDUCTIONS:
            raise NotImplementedError(f"einops reduction {operation!r} on MindSpore")
        return _REDUCTIONS[operation](x, tuple(axes))

    def stack_on_zeroth_dimension(self, tensors: list):
        return ops.stack(tensors)

    def add_axis(self, x, new_position):
        return ops.expand_dims(x, new_position)

    def tile(self, x, repeats):
        return ops.tile(x, tuple(repeats))

    def concat(self, tensors, axis: int):
        return ops.cat(tensors, axis)

    def einsum(self, pattern, *x):
        from recompat.runtime import einsum    # MindSpore 2.10's own einsum has no CPU kernel

        return einsum(pattern, *x)

    def is_float_type(self, x):
        return x.dtype in _FLOATS

    def layers(self):
        import recompat.einops

        return recompat.einops


class Rearrange(RearrangeMixin, nn.Cell):
    """einops.layers.torch.Rearrange as a Cell: `Rearrange("b c h w -> b (h w) c")(x)`.

    einops picks a tensor's backend and works out the reshapes in Python, which GRAPH mode cannot compile. Where
    the pattern allows (no `...`, each input axis composed of at most one axis of unknown length), the layer keeps
    a plan made once from the pattern: a reshape to the elementary axes (their lengths read off the input's shape),
    one transpose, a reshape to the output's axes; GRAPH mode compiles that. Other patterns go through einops."""

    def __init__(self, pattern: str, **axes_lengths):
        super().__init__(pattern, **axes_lengths)
        self._plan = _plan(pattern, axes_lengths)

    def construct(self, x):
        if self._plan is None:
            return self._apply_recipe(x)
        left, perm, right = self._plan
        shape = x.shape
        if len(shape) != len(left):
            raise ValueError(f"Rearrange({self.pattern!r}) expects a {len(left)}-d tensor, got {len(shape)}-d")
        sizes = ()
        for i in range(len(left)):   # a static loop: GRAPH mode unrolls it, the shape being known
            known = 1
            for n in left[i]:
                if n > 0:
                    known = known * n
            if shape[i] % known != 0 or (-1 not in left[i] and shape[i] != known):
                raise ValueError(f"Rearrange({self.pattern!r}): input axis {i} of length {shape[i]} does not "
                                 f"split into {left[i]}")
            for n in left[i]:
                sizes = sizes + ((shape[i] // known) if n < 0 else n,)
        x = ops.transpose(ops.reshape(x, sizes), perm)
        out = ()
        for group in right:
            size = 1
            for k in group:
                size = size * sizes[k]
            out = out + (size,)
        return ops.reshape(x, out)


def _plan(pattern: str, axes_lengths: dict) -> tuple | None:
    """(per input axis, the lengths of the elementary axes it composes, -1 for the one read off the input; the
    transpose of the elementary axes; per output axis, the elementary axes it composes), or None where the pattern
    needs einops (`...`, two unknown lengths in one input axis, an axis of the output the input lacks)."""
    from einops.parsing import ParsedExpression

    before, _, after = pattern.partition("->")
    try:
        left, right = ParsedExpression(before), ParsedExpression(after)
    except Exception:   # einops' own check (RearrangeMixin.__init__) has already said what is wrong
        return None
    if left.has_ellipsis or right.has_ellipsis:
        return None
    names = [n for group in left.composition for n in group]
    lengths = []
    for group in left.composition:
        unknown = [n for n in group if n not in axes_lengths]
        if len(unknown) > 1 or not all(isinstance(n, str) for n in group):
            return None
        lengths.append(tuple(-1 if n not in axes_lengths else int(axes_lengths[n]) for n in group))
    out_names = [n for group in right.composition for n in group]
    if sorted(out_names) != sorted(names) or len(set(names)) != len(names):
        return None
    perm = tuple(names.index(n) for n in out_names)
    place = {n: i for i, n in enumerate(out_names)}   # after the transpose, the elementary axes are in output order
    right_groups = tuple(tuple(perm[place[n]] for n in group) for group in right.composition)
    return tuple(lengths), perm, right_groups


class Reduce(ReduceMixin, nn.Cell):
    """einops.layers.torch.Reduce as a Cell: `Reduce("b c h w -> b c", "mean")(x)`."""

    def construct(self, x):
        return self._apply_recipe(x)
