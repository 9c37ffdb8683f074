"""torch's accumulated gradients on MindSpore: what a translated training step calls (translate --scope model).

torch keeps each parameter's gradient on the parameter (`.grad`): `loss.backward()` adds to it, `optimizer.step()`
reads it, `optimizer.zero_grad()` clears it, `clip_grad_norm_` scales it in place. MindSpore keeps none:
`value_and_grad` returns the gradients of a function and the optimizer is called with them. This module keeps
torch's `.grad` beside MindSpore's parameters, so that a step translates statement for statement, and gradient
accumulation (several backward() before one step()), clipping, several optimizers and zero_grad() anywhere in the
loop keep torch's meaning:

    out = model(x)                       out: object
    loss = loss_fn(out, y)               loss: object
    loss.backward()               ->     def forward_fn():
                                             nonlocal out, loss
                                             out = model(x)
                                             loss = loss_fn(out, y)
                                             return loss
                                         backward(forward_fn, model, loss_fn, optimizer)
    optimizer.step()              ->     optimizer_step(optimizer)
    optimizer.zero_grad()         ->     zero_grad(optimizer)
    clip_grad_norm_(params, 1.0)  ->     clip_grad_norm_(params, 1.0)

The forward function returns the value to differentiate; `backward` differentiates it with respect to the
parameters of what it is given (the models the step calls, the optimizers it steps), adds each gradient to the
parameter's accumulated one, and returns what the function returned. Gradients are kept by the
parameter's identity in this process. What differs from torch: MindSpore's optimizer is called with a gradient for
every parameter it holds, so a parameter with none (it took no part in any backward since zero_grad) is given
zeros and its value is put back after the step, as torch leaves it; its optimizer state (momentum, Adam's moments)
still takes the step, where torch's does not.
"""
from __future__ import annotations

import inspect
import math
import warnings

__all__ = ["GradScaler", "backward", "clip_grad_norm_", "clip_grad_value_", "grad", "optimizer_step", "zero_grad"]

_GRADS: dict[int, tuple] = {}      # id(parameter) -> (parameter, its accumulated gradient)


def _parameters(*holders) -> list:
    """The parameters of optimizers, Cells, parameters or iterables of them, each once, in order; anything else
    (a function, a tensor that is no parameter, a number) holds none."""
    import mindspore

    found = []
    for obj in holders:
        if isinstance(obj, mindspore.Parameter):
            found.append(obj)
        elif isinstance(obj, mindspore.nn.Cell):
            found += list(obj.trainable_params())
        elif isinstance(getattr(obj, "parameters", None), (tuple, list, mindspore.ParameterTuple)):  # an optimizer
            found += list(obj.parameters)
        elif isinstance(obj, (list, tuple, set)) or inspect.isgenerator(obj):
            found += _parameters(*obj)
    seen: set[int] = set()
    return [p for p in found if not (id(p) in seen or seen.add(id(p)))]


def grad(parameter):
    """torch's `parameter.grad`: the gradient accumulated since the last zero_grad, or None."""
    kept = _GRADS.get(id(parameter))
    return None if kept is None else kept[1]


def backward(forward, *holders):
    """torch's `loss.backward()` for the loss `forward()` computes: `forward` returns the value to differentiate (or
    a tuple of it and values the code reads afterwards); the parameters of `holders` (the models the step calls,
    the optimizers it steps: Cells, optimizers, parameters; anything else holds none) that require a gradient get
    it added to their accumulated one. Returns what `forward` returned."""
    import mindspore
    from mindspore import ops

    params = [p for p in _parameters(*holders) if p.requires_grad]
    if not params:
        raise RuntimeError("backward: nothing given holds a parameter that requires a gradient (torch: element 0 of "
                           "tensors does not require grad and does not have a grad_fn)")

    def value_and_rest():
        out = forward()
        if not isinstance(out, tuple) or not out:
            out = (out,)
        return out[0], tuple(out[1:])

    (value, rest), grads = mindspore.value_and_grad(value_and_rest, None, params, has_aux=True)()
    if value.size != 1:
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs (torch's backward() without "
                           f"a gradient): the value differentiated has shape {tuple(value.shape)}")
    if not any(bool(ops.any(g != 0)) for g in grads):
        warnings.warn("backward: every gradient is exactly zero: the loss was likely made outside the function "
                      "differentiated (a value computed before it, which MindSpore does not differentiate through, "
                      "where torch's backward() would); compute it inside", RuntimeWarning, stacklevel=2)
    for p, g in zip(params, grads):
        kept = _GRADS.get(id(p))
        _GRADS[id(p)] = (p, g if kept is None else ops.add(kept[1], g))
    return (value, *rest) if rest else value


def zero_grad(obj, set_to_none: bool = True) -> None:
    """torch's `optimizer.zero_grad()` / `module.zero_grad()`: the accumulated gradients of its parameters cleared
    (None, torch's default since 2.0; zeros with set_to_none=False)."""
    from mindspore import ops

    for p in _parameters(obj):
        if set_to_none:
            _GRADS.pop(id(p), None)
        elif id(p) in _GRADS:
            _GRADS[id(p)] = (p, ops.zeros_like(_GRADS[id(p)][1]))


def optimizer_step(optimizer) -> None:
    """torch's `optimizer.step()`: the MindSpore optimizer called with its parameters' accumulated gradients. A
    parameter with no gradient keeps its value, as torch's optimizers skip it."""
    from mindspore import ops

    params = list(optimizer.parameters)
    missing = [p for p in params if id(p) not in _GRADS]
    if len(missing) == len(params):
        return
    kept = [(p, p.value().copy()) for p in missing]
    optimizer(tuple(_GRADS[id(p)][1] if id(p) in _GRADS else ops.zeros_like(p) for p in params))
    for p, value in kept:
        p.set_data(value)


def _with_grads(parameters) -> list:
    return [p for p in _parameters(parameters) if id(p) in _GRADS]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """torch.nn.utils.clip_grad_norm_: the accumulated gradients scaled in place so that their total norm is at
    most max_norm (by max_norm / (norm + 1e-6), as torch does); returns the total norm before clipping."""
    import mindspore
    from mindspore import ops

    params = _with_grads(parameters)
    if not params:
        return mindspore.Tensor(0.0, mindspore.float32)
    grads = [_GRADS[id(p)][1] for p in params]
    norm_type = float(norm_type)
    if math.isinf(norm_type):
        norms = ops.stack([ops.abs(g).max() for g in grads])
        total = norms.max()
    else:
        norms = ops.stack([ops.pow(ops.pow(ops.abs(g), norm_type).sum(), 1.0 / norm_type) for g in grads])
        total = ops.pow(ops.pow(norms, norm_type).sum(), 1.0 / norm_type)
    if error_if_nonfinite and not bool(ops.isfinite(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           f"it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           f"norm anyway, set `error_if_nonfinite=False`")
    coef = ops.clamp(max_norm / (total + 1e-6), max=1.0)
    for p, g in zip(params, grads):
        _GRADS[id(p)] = (p, g * coef.astype(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    """torch.nn.utils.clip_grad_value_: each accumulated gradient clamped to [-clip_value, clip_value] in place."""
    from mindspore import ops

    for p in _with_grads(parameters):
        _GRADS[id(p)] = (p, ops.clamp(_GRADS[id(p)][1], -float(clip_value), float(clip_value)))


class GradScaler:
    """torch.amp.GradScaler (and torch.cuda.amp's) on the .grad this module keeps, with torch's arguments and
    methods: ``scale(loss)`` multiplies by the scale, ``backward`` then accumulates scaled gradients,
    ``unscale_(optimizer)`` divides its parameters' gradients by the scale and notes whether any is inf or NaN,
    ``step(optimizer)`` unscales if not done yet and steps unless one was (torch skips that step), ``update()``
    halves the scale after a skipped step (``backoff_factor``) and doubles it after ``growth_interval`` steps
    without one (``growth_factor``). What differs: torch disables a CUDA scaler where CUDA is missing (it warns);
    this one scales as ``enabled`` says on any device (a power of two: the same gradients, but where they
    overflow)."""

    def __init__(self, device: str = "cuda", init_scale: float = 65536.0, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        if growth_factor <= 1.0 or not 0.0 < backoff_factor < 1.0 or growth_interval < 1:
            raise ValueError(f"GradScaler: growth_factor must be > 1 ({growth_factor}), backoff_factor in (0, 1) "
                             f"({backoff_factor}) and growth_interval >= 1 ({growth_interval}), as torch's")
        self._enabled = bool(enabled)
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval, self._growth_tracker = int(growth_interval), 0
        self._unscaled: dict[int, bool] = {}       # id(optimizer) -> found inf or NaN, once unscaled this step

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        """The outputs times the scale (a tensor, or a list or tuple of them); as they are when disabled."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def unscale_(self, optimizer) -> None:
        """The optimizer's gradients divided by the scale, in place, once per step (torch raises on a second)."""
        from mindspore.amp import all_finite

        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        params = _with_grads(optimizer)
        grads = tuple(_GRADS[id(p)][1] for p in params)
        for p, g in zip(params, grads):
            _GRADS[id(p)] = (p, g * (1.0 / self._scale))
        # MindSpore's own check, one reduction over every gradient (torch's is fused too)
        self._unscaled[id(optimizer)] = bool(grads) and not bool(all_finite(grads))

    def step(self, optimizer, *args, **kwargs):
        """optimizer_step(optimizer), unless its unscaled gradients hold an inf or NaN (then nothing: torch skips
        the step). Returns None, as torch's does for an optimizer step without a closure."""
        if args or kwargs:
            raise RuntimeError("GradScaler.step: a closure is not supported (torch's neither)")
        if not self._enabled:
            return optimizer_step(optimizer)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if not self._unscaled[id(optimizer)]:
            optimizer_step(optimizer)
        return None

    def update(self, new_scale=None) -> None:
        """The scale for the next step: ``new_scale`` if given; else halved (backoff_factor) after a skipped step,
        doubled (growth_factor) after growth_interval steps in a row without one."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        elif any(self._unscaled.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        elif not self._unscaled:
            raise AssertionError("No inf checks were recorded prior to update.")   # torch's words
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._unscaled = {}

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state: dict) -> None:
        if not self._enabled:
            return
        if not state:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state["scale"])
        self._growth_factor, self._backoff_factor = float(state["growth_factor"]), float(state["backoff_factor"])
        self._growth_interval, self._growth_tracker = int(state["growth_interval"]), int(state["_growth_tracker"])
