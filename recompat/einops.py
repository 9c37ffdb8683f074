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
    """einops.layers.torch.Rearrange as a Cell: `Rearrange("b c h w -> b (h w) c")(x)`."""

    def construct(self, x):
        return self._apply_recipe(x)


class Reduce(ReduceMixin, nn.Cell):
    """einops.layers.torch.Reduce as a Cell: `Reduce("b c h w -> b c", "mean")(x)`."""

    def construct(self, x):
        return self._apply_recipe(x)
