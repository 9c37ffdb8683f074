"""One forward and one backward of a model in each framework, captured as NumPy arrays.

``run_torch(model, inputs)`` and ``run_mindspore(cell, inputs)`` do the same thing on either side:

* ``inputs`` is a list (or tuple) of NumPy arrays passed positionally, or a dict passed as keyword
  arguments. Floating arrays become tensors that require grad; integer and bool arrays (token ids,
  masks) do not. Anything that is not a NumPy array is passed through unchanged.
* ``grad_inputs`` (indices, or keys for dict inputs) names the inputs that need a gradient; by
  default every floating input does.
* ``forward_context`` (a context-manager factory, e.g. ``lambda: SavedTensors("torch")``) is entered
  around the forward only: what it measures is not charged the backward's recomputation. MindSpore
  enters it inside the differentiated function (PyNative; GRAPH mode compiles the forward, so it is
  not entered there).
* On a CUDA device float32 runs in full float32: TF32 (cuDNN's default for convolutions) is off for the run.
* The model runs once, in the mode the caller left it in (``model.train()`` / ``cell.set_train()``).
  The seed is set first (``torch.manual_seed`` inside ``torch.random.fork_rng``, so the caller's
  torch RNG is left as it was; ``mindspore.set_seed``, which is process-global).
* The outputs (a tensor, nested tuples/lists, dicts) are flattened in a stable order into names:
  ``output``, ``output[0]``, ``output[1].key``. Non-tensor leaves (None, Python numbers) are skipped.
* The backward is seeded with a fixed random cotangent per *floating* output, drawn in flattening
  order (a dict's keys sorted, so that two dicts with their keys in another order get the same
  cotangent per name) from ``numpy.random.default_rng(seed).standard_normal(shape)`` and cast to the output's
  dtype, identical on both sides: ``loss = sum_i (out_i * cot_i).sum()``. Never ones: a softmax
  output summed has zero gradient and would prove nothing.
* Captured, in this order (``RunResult.tensors`` keeps insertion order; ``RunResult.kinds`` says
  which is which):

  ========== ==================== ==========================================================
  kind       names                what
  ========== ==================== ==========================================================
  output     ``output[0]``        every tensor leaf of the output
  input-grad ``input[0].grad``    gradient of each floating input (dict inputs: ``input.x.grad``)
  param-grad ``fc1.weight.grad``  gradient of every trainable parameter, in torch's names
  buffer     ``bn.running_mean``  state after the step: torch ``named_buffers()`` minus
                                  ``num_batches_tracked`` plus frozen parameters
                                  (``requires_grad=False``); MindSpore non-trainable Parameters
  ========== ==================== ==========================================================

  MindSpore names are translated into torch's through the inverse of ``name_map`` (torch name ->
  MindSpore name, as ``transfer_weights`` returns it); a MindSpore name the map does not hold keeps
  its own name (and will then show up as a one-sided, failing row in a comparison).

Decisions:

* **Gradients that do not exist are zeros.** A parameter (or floating input) that the forward does
  not use has ``.grad is None`` in torch; MindSpore's ``value_and_grad`` returns zeros for it. The
  torch side fills in zeros too, so both sides compare, and lists those names in
  ``meta["zero_filled_grads"]``.
* **Frozen torch parameters are buffers.** MindSpore cannot tell a frozen Parameter from a buffer
  (both are ``requires_grad=False`` Parameters), so torch parameters with ``requires_grad=False``
  are captured as kind ``buffer`` (no ``.grad`` suffix) on the torch side as well.
* **bfloat16** has no NumPy dtype: such tensors are stored as float32 (exact) and
  ``RunResult.dtypes`` keeps the framework's dtype name (``"bfloat16"``), which is what comparisons
  and tolerances use.
* **GRAPH mode** (``run_mindspore(..., mode="graph")``) compiles the forward and the backward
  together, so the cotangents must exist before the run: their shapes are taken from a PyNative
  probe forward first, after which every Parameter (BatchNorm moving statistics included) is
  restored and the seed set again. The probe costs one extra forward. MindSpore's context mode is
  process-global: it is set for the run and restored afterwards. A model GRAPH mode cannot compile
  raises ``MindSporeGraphError`` naming the cell, with MindSpore's own message attached.

``RunResult.to_npz(path)`` / ``RunResult.from_npz(path)`` save and load a run losslessly (arrays
in a ``.npz``, names, kinds, dtypes and meta in a ``.json`` beside it), for record and replay.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import platform
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from recompat._files import write_atomic
from recompat.constants import MS_MODES

KINDS = ("output", "input-grad", "param-grad", "param", "buffer")   # param: a value after a training step
FORMAT_VERSION = 1
COTANGENT = ("numpy default_rng(seed).standard_normal(shape), one per floating output in flattening order, "
             "dict keys sorted")


class ForwardPhase:
    """Tells a forward call from a recomputation in backward: ``forward()`` is entered around the forward (the
    callers' forward_context does), and ``in_forward`` is true inside it."""

    in_forward = False

    @contextlib.contextmanager
    def forward(self):
        self.in_forward = True
        try:
            yield
        finally:
            self.in_forward = False


class MindSporeGraphError(RuntimeError):
    """MindSpore GRAPH mode could not compile or run the model."""


@dataclass
class RunResult:
    """Every output, input gradient, parameter gradient and buffer of one run, as NumPy arrays."""

    framework: str
    tensors: dict[str, np.ndarray] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    # The framework's dtype name per tensor ("float32", "bfloat16", "int64"); defaults to the array's.
    dtypes: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, kind: str, array: np.ndarray, dtype: str | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
        if name in self.tensors:
            raise ValueError(f"{self.framework}: tensor {name!r} captured twice")
        array = np.asarray(array)
        self.tensors[name] = array
        self.kinds[name] = kind
        self.dtypes[name] = dtype or array.dtype.name

    def dtype_of(self, name: str) -> str:
        return self.dtypes.get(name) or self.tensors[name].dtype.name

    def names(self, kind: str | None = None) -> list[str]:
        return [n for n in self.tensors if kind is None or self.kinds.get(n) == kind]

    def __repr__(self) -> str:
        counts = {k: len(self.names(k)) for k in KINDS}
        return f"RunResult({self.framework!r}, {counts}, meta={self.meta!r})"

    # ----- record / replay -------------------------------------------------------------------
    @staticmethod
    def _paths(path: str | os.PathLike) -> tuple[Path, Path]:
        p = Path(path)
        if p.suffix != ".npz":
            p = p.with_name(p.name + ".npz")
        return p, p.with_suffix(".json")

    def to_npz(self, path: str | os.PathLike) -> Path:
        """Write ``path`` (.npz, arrays) and the .json beside it (names, kinds, dtypes, meta).

        Both files are written atomically. Returns the .npz path."""
        npz, js = self._paths(path)
        npz.parent.mkdir(parents=True, exist_ok=True)
        names = list(self.tensors)
        arrays = {f"t{i:05d}": np.ascontiguousarray(self.tensors[n]) for i, n in enumerate(names)}
        doc = {
            "format": FORMAT_VERSION,
            "framework": self.framework,
            "names": names,
            "kinds": [self.kinds[n] for n in names],
            "dtypes": [self.dtype_of(n) for n in names],
            "meta": self.meta,
        }
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        write_atomic(npz, buffer.getvalue())
        write_atomic(js, json.dumps(doc, indent=2, default=_json_default))
        return npz

    @classmethod
    def from_npz(cls, path: str | os.PathLike) -> "RunResult":
        """Load what :meth:`to_npz` wrote. A missing, damaged or edited pair of files is a ValueError naming the
        file (a record is replayed on another machine: say which file to record again, not a bare KeyError)."""
        npz, js = cls._paths(path)
        again = "record the run again"
        try:
            doc = json.loads(js.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:   # missing, unreadable, truncated or not JSON
            raise ValueError(f"{js}: cannot read this recorded run ({exc}) — {again}") from exc
        if not isinstance(doc, dict) or doc.get("format") != FORMAT_VERSION:
            found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
            raise ValueError(f"{js}: unknown recorded-run format {found!r} (this recompat reads format "
                             f"{FORMAT_VERSION}) — {again} with this version")
        columns = [doc.get(k) for k in ("names", "kinds", "dtypes")]
        if (not isinstance(doc.get("framework"), str) or not isinstance(doc.get("meta", {}), dict)
                or not all(isinstance(c, list) and all(isinstance(v, str) for v in c) for c in columns)
                or len({len(c) for c in columns}) != 1):
            raise ValueError(f"{js}: not a recorded run as recompat writes it (framework, meta, and names, kinds "
                             f"and dtypes of one length are expected) — the file was edited or damaged; {again}")
        result = cls(framework=doc["framework"], meta=doc.get("meta", {}))
        arrays = load_arrays(npz, again)
        for i, (name, kind, dtype) in enumerate(zip(*columns)):
            if f"t{i:05d}" not in arrays:
                raise ValueError(f"{npz}: holds no array for {name!r} (t{i:05d}), which {js.name} lists — {again}")
            try:
                result.add(name, kind, arrays[f"t{i:05d}"], dtype)
            except ValueError as exc:   # an unknown kind, a name listed twice
                raise ValueError(f"{js}: {exc} — the file was edited or damaged; {again}") from exc
        return result


def load_arrays(path: str | os.PathLike, remedy: str) -> dict[str, np.ndarray]:
    """Every array of an .npz file; a missing or damaged one is a ValueError naming it, ending with ``remedy``."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path}: cannot read these recorded arrays ({type(exc).__name__}: {exc}) — {remedy}") \
            from exc


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (set, tuple)):
        return list(obj)
    return str(obj)


# ----- flattening ------------------------------------------------------------------------------
def flatten_outputs(out: Any, is_tensor, prefix: str = "output") -> Iterator[tuple[str, tuple, Any]]:
    """Yield ``(name, path, tensor)`` for every tensor leaf of ``out`` in a stable order.

    Tuples and lists are indexed (``output[0]``), dicts keyed (``output.key``, in the dict's own
    order); ``path`` is the sequence of indices and keys that reaches the leaf."""

    def walk(obj, name, path):
        if is_tensor(obj):
            yield name, path, obj
        elif isinstance(obj, Mapping):
            for k, v in obj.items():
                yield from walk(v, f"{name}.{k}", path + (k,))
        elif isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                yield from walk(v, f"{name}[{i}]", path + (i,))
        # anything else (None, numbers, strings) is not a tensor: skipped on both sides

    yield from walk(out, prefix, ())


def normalise_inputs(inputs) -> tuple[list[Any], list[str] | None]:
    """(values, keys): keys is None for positional inputs."""
    if isinstance(inputs, np.ndarray):
        return [inputs], None
    if isinstance(inputs, Mapping):
        return list(inputs.values()), [str(k) for k in inputs]
    if isinstance(inputs, (list, tuple)):
        return list(inputs), None
    raise TypeError(f"inputs must be a list of NumPy arrays or a dict of them, not {type(inputs).__name__}")


def _needs_grad(values, keys, grad_inputs) -> list[bool]:
    """Per input: floating and selected by grad_inputs (indices or dict keys; None selects all)."""
    if grad_inputs is None:
        return [_is_float_array(v) for v in values]
    chosen = set(grad_inputs)
    known = set(range(len(values))) | set(keys or ())
    if chosen - known:
        raise ValueError(f"grad_inputs {sorted(map(str, chosen - known))} name no input; inputs: "
                         f"{keys if keys is not None else list(range(len(values)))}")
    return [_is_float_array(v) and (i in chosen or (keys is not None and keys[i] in chosen))
            for i, v in enumerate(values)]


def _input_name(i: int, keys: list[str] | None) -> str:
    return f"input.{keys[i]}" if keys is not None else f"input[{i}]"


def _is_float_array(v) -> bool:
    return isinstance(v, np.ndarray) and np.issubdtype(v.dtype, np.floating)


class _Cotangents:
    """One standard-normal draw per floating output, in flattening order, from default_rng(seed)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def draw(self, shape) -> np.ndarray:
        return self.rng.standard_normal(tuple(int(s) for s in shape))


def _draw_cotangents(leaves, seed: int, is_float) -> dict[int, np.ndarray]:
    """{position in ``leaves`` (flatten_outputs' tuples): cotangent} for the floating leaves. Drawn in path order
    with dict keys sorted: output names pair by name, so a cotangent must follow the name, not the dict's order."""
    def key(j):
        return tuple((0, k) if isinstance(k, int) else (1, str(k)) for k in leaves[j][1])

    cot = _Cotangents(seed)
    return {j: cot.draw(leaves[j][2].shape) for j in sorted(range(len(leaves)), key=key) if is_float(leaves[j][2])}


# ----- torch -----------------------------------------------------------------------------------
def _torch_dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def _torch_numpy(t) -> np.ndarray:
    import torch

    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.clone().numpy()


def _meta(framework_version: str, device: str, mode: str, training, seed: int) -> dict:
    """What a run records about where it ran (RunResult.meta)."""
    return {"framework_version": framework_version, "device": device, "mode": mode, "training": bool(training),
            "seed": seed, "cotangent": COTANGENT, "python": platform.python_version(), "numpy": np.__version__}


def run_torch(model, inputs, *, seed: int = 0, device: str = "cpu", grad_inputs=None,
              forward_context=None, backward_context=None) -> RunResult:
    """One forward and one backward of a torch module; see the module docstring. ``forward_context``: a callable
    giving a context entered around the forward; ``backward_context``: a context entered around the backward (the
    round-off probe, compat.roundoff)."""
    import torch

    dev = torch.device(device)
    model.to(dev)
    values, keys = normalise_inputs(inputs)
    needs_grad = _needs_grad(values, keys, grad_inputs)
    result = RunResult(framework="torch", meta=_meta(torch.__version__, str(dev), "eager", model.training, seed))
    for p in model.parameters():
        p.grad = None
    with _full_float32(dev):
        args, leaves = _torch_step(model, values, keys, needs_grad, seed, dev, forward_context, backward_context)
    _record_torch(result, model, args, leaves, needs_grad, keys)
    return result


@contextlib.contextmanager
def _full_float32(dev):
    """On a CUDA device, float32 matmuls and convolutions in float32, not TF32 (cuDNN allows TF32 convolutions by
    default): TF32 keeps 10 mantissa bits, and a differential run compares float32 with float32. Restored after."""
    if dev.type != "cuda":
        yield
        return
    import torch

    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def _torch_step(model, values, keys, needs_grad, seed: int, dev, forward_context, backward_context=None):
    """Forward, then backward of sum(output * cotangent); (the input tensors, the output leaves)."""
    import torch

    # the caller's RNG state is left as it was: CPU, plus the accelerator this run uses
    fork_devices = [dev.index or 0] if dev.type != "cpu" else []
    with torch.random.fork_rng(devices=fork_devices, device_type=None if dev.type == "cpu" else dev.type):
        torch.manual_seed(seed)
        args = []
        for v, grad in zip(values, needs_grad):
            if isinstance(v, np.ndarray):
                t = torch.from_numpy(np.array(v, copy=True)).to(dev)
                if grad:
                    t.requires_grad_(True)
                args.append(t)
            else:
                args.append(v)
        with forward_context() if forward_context else contextlib.nullcontext():
            out = model(**dict(zip(keys, args))) if keys is not None else model(*args)

        loss = None
        leaves = list(flatten_outputs(out, lambda o: isinstance(o, torch.Tensor)))
        cots = _draw_cotangents(leaves, seed, lambda t: t.is_floating_point())
        for j, (name, _path, t) in enumerate(leaves):
            if j in cots:
                c = torch.from_numpy(cots[j]).to(device=t.device, dtype=t.dtype)
                if t.requires_grad:
                    term = (t * c).sum()
                    loss = term if loss is None else loss + term
        if loss is not None:
            with backward_context if backward_context is not None else contextlib.nullcontext():
                loss.backward()
    return args, leaves


def _record_torch(result: RunResult, model, args, leaves, needs_grad, keys) -> None:
    """Outputs, input and parameter gradients (zeros where none flowed, listed), buffers and frozen parameters."""
    zero_filled = []
    for name, _path, t in leaves:
        result.add(name, "output", _torch_numpy(t), _torch_dtype_name(t.dtype))
    for i, (grad, t) in enumerate(zip(needs_grad, args)):
        if grad:
            name = f"{_input_name(i, keys)}.grad"
            if t.grad is None:
                zero_filled.append(name)
                g = np.zeros(t.shape, dtype=_torch_numpy(t).dtype)
            else:
                g = _torch_numpy(t.grad)
            result.add(name, "input-grad", g, _torch_dtype_name(t.dtype))
    frozen = []
    for pname, p in model.named_parameters():
        if not p.requires_grad:
            frozen.append((pname, p))
            continue
        name = f"{pname}.grad"
        if p.grad is None:
            zero_filled.append(name)
            g = np.zeros(p.shape, dtype=_torch_numpy(p).dtype)
        else:
            g = _torch_numpy(p.grad)
        result.add(name, "param-grad", g, _torch_dtype_name(p.dtype))
    for bname, b in list(model.named_buffers()) + frozen:
        if bname.rsplit(".", 1)[-1] == "num_batches_tracked":
            continue
        result.add(bname, "buffer", _torch_numpy(b), _torch_dtype_name(b.dtype))
    result.meta["zero_filled_grads"] = zero_filled


# ----- MindSpore -------------------------------------------------------------------------------
def _ms_dtype_name(dtype) -> str:
    return str(dtype).lower()


def _ms_numpy(t) -> np.ndarray:
    import mindspore as ms

    if t.dtype == ms.bfloat16:
        t = t.astype(ms.float32)
    return np.array(t.asnumpy(), copy=True)


def _ms_is_float(t) -> bool:
    import mindspore as ms

    return t.dtype in (ms.float16, ms.float32, ms.float64, ms.bfloat16)


def _ms_loss_cell_class():
    """A Cell computing sum_i (leaf_i * cot_i).sum() over the cell's outputs; GRAPH mode compiles it.

    Built lazily so that importing this module does not import MindSpore."""
    import mindspore.nn as nn

    class _CotangentLoss(nn.Cell):
        def __init__(self, net, n_in, keys, paths, cot_leaves):
            super().__init__(auto_prefix=False)  # keep the user's parameter names untouched
            self.net = net
            self.n_in = n_in
            self.keys = keys  # () for positional inputs
            self.paths = paths
            self.cot_leaves = cot_leaves

        def construct(self, *args):
            if len(self.keys) > 0:
                kw = {}
                for i in range(len(self.keys)):
                    kw[self.keys[i]] = args[i]
                out = self.net(**kw)
            else:
                ins = ()
                for i in range(self.n_in):
                    ins = ins + (args[i],)
                out = self.net(*ins)
            leaves = ()
            for p in self.paths:
                leaf = out
                for k in p:
                    leaf = leaf[k]
                leaves = leaves + (leaf,)
            loss = 0.0
            for j in range(len(self.cot_leaves)):
                loss = loss + (leaves[self.cot_leaves[j]] * args[self.n_in + j]).sum()
            return loss, leaves

    return _CotangentLoss


def run_mindspore(cell, inputs, *, seed: int = 0, mode: str = "pynative", name_map: Mapping[str, str] | None = None,
                  grad_inputs=None, forward_context=None) -> RunResult:
    """One forward and one backward of a MindSpore cell, named in torch's terms through ``name_map``."""
    import mindspore as ms
    from mindspore import Tensor

    if mode not in MS_MODES:
        raise ValueError(f"mode must be {' or '.join(map(repr, MS_MODES))}, not {mode!r}")
    values, keys = normalise_inputs(inputs)
    previous_mode = ms.get_context("mode")
    result = RunResult(framework="mindspore", meta=_meta(ms.__version__, str(ms.get_context("device_target")), mode,
                                                         getattr(cell, "training", False), seed))
    args = [Tensor(np.array(v, copy=True)) if isinstance(v, np.ndarray) else v for v in values]
    grad_position = tuple(i for i, grad in enumerate(_needs_grad(values, keys, grad_inputs)) if grad)
    weights = list(cell.trainable_params())

    def call(*a):
        return cell(**dict(zip(keys, a))) if keys is not None else cell(*a)

    try:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        if mode == "pynative":
            fn, extra, captured = _ms_pynative_loss(call, seed, forward_context)
        else:
            fn, extra, captured = _ms_graph_loss(cell, call, args, keys, seed)
        aux, grads = _ms_value_and_grad(cell, fn, args, extra, grad_position, weights, mode)
    finally:
        ms.set_context(mode=previous_mode)
    _record_mindspore(result, cell, aux, captured, grads, grad_position, weights, args, keys, name_map)
    return result


def _ms_pynative_loss(call, seed: int, forward_context):
    """(fn returning (loss, output leaves), its extra inputs, the leaves' names as it fills them) in PyNative."""
    import mindspore as ms
    from mindspore import Tensor

    ms.set_seed(seed)
    captured: list[tuple[str, Any]] = []

    def fn(*a):
        with forward_context() if forward_context else contextlib.nullcontext():
            out = call(*a)
        loss = None
        captured.clear()
        leaves = list(flatten_outputs(out, lambda o: isinstance(o, Tensor)))
        cots = _draw_cotangents(leaves, seed, _ms_is_float)
        for j, (name, _path, t) in enumerate(leaves):
            captured.append((name, t))
            if j in cots:
                term = (t * Tensor(cots[j]).astype(t.dtype)).sum()
                loss = term if loss is None else loss + term
        if loss is None:
            loss = Tensor(0.0, ms.float32)
        return loss, tuple(t for _n, t in captured)

    return fn, [], captured


def _ms_graph_loss(cell, call, args, keys, seed: int):
    """The same for GRAPH mode: the output structure probed in PyNative (every Parameter then put back as it
    was), the loss a Cell GRAPH mode compiles, the cotangents passed in as inputs; leaves the context in GRAPH."""
    import mindspore as ms
    from mindspore import Tensor

    saved = [(p, _ms_numpy(p), p.dtype) for p in cell.get_parameters()]
    ms.set_seed(seed)
    probe_out = call(*args)
    for p, arr, dt in saved:
        p.set_data(Tensor(arr).astype(dt))
    leaves = list(flatten_outputs(probe_out, lambda o: isinstance(o, Tensor)))
    del probe_out
    cots = _draw_cotangents(leaves, seed, _ms_is_float)
    cot_leaves = sorted(cots)
    extra = [Tensor(cots[j]).astype(leaves[j][2].dtype) for j in cot_leaves]
    captured = [(name, None) for name, _p, _t in leaves]
    fn = _ms_loss_cell_class()(
        cell, len(args), tuple(keys or ()), tuple(path for _n, path, _t in leaves), tuple(cot_leaves)
    )
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(seed)
    return fn, extra, captured


def _ms_value_and_grad(cell, fn, args, extra, grad_position, weights, mode: str):
    """(output leaves, gradients or None) of fn; a GRAPH mode failure is a MindSporeGraphError naming the cell."""
    import mindspore as ms

    try:
        if grad_position or weights:
            grad_fn = ms.value_and_grad(
                fn,
                grad_position=grad_position if grad_position else None,
                weights=weights if weights else None,
                has_aux=True,
            )
            (_loss, aux), grads = grad_fn(*args, *extra)
        else:
            _loss, aux = fn(*args, *extra)
            grads = None
    except Exception as err:
        # an abandoned gradient leaves MindSpore's PyNative executor mid-graph: the next one would fail
        from mindspore.graph.api import _pynative_executor
        _pynative_executor.clear_res()
        if mode == "graph":
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise MindSporeGraphError(
                f"MindSpore GRAPH mode could not compile or run {type(cell).__name__}: {first}\n"
                f"(run it with mode='pynative' to compare without GRAPH mode; MindSpore's full "
                f"message is chained below)"
            ) from err
        raise
    return aux, grads


def _record_mindspore(result: RunResult, cell, aux, captured, grads, grad_position, weights, args, keys,
                      name_map) -> None:
    """Outputs, input and parameter gradients and frozen parameters (buffers), named in torch's terms."""
    # aux is the tuple of output leaves (has_aux returns the rest of fn's outputs as a tuple).
    if isinstance(aux, tuple) and len(aux) == 1 and isinstance(aux[0], tuple):
        aux = aux[0]
    if len(aux) != len(captured):
        raise RuntimeError(
            f"MindSpore returned {len(aux)} output tensors, the probe saw {len(captured)}: "
            f"{[n for n, _ in captured]}"
        )
    for (name, _), t in zip(captured, aux):
        result.add(name, "output", _ms_numpy(t), _ms_dtype_name(t.dtype))

    input_grads, weight_grads = _split_grads(grads, grad_position, weights)
    for i, g in zip(grad_position, input_grads):
        result.add(f"{_input_name(i, keys)}.grad", "input-grad", _ms_numpy(g), _ms_dtype_name(args[i].dtype))

    inverse = {v: k for k, v in (name_map or {}).items()}
    structural = {id(p): n for n, p in cell.parameters_and_names()}
    unmapped: list[str] = []  # MindSpore names name_map does not hold: kept as they are

    def torch_name(p) -> str:
        own = structural.get(id(p)) or p.name
        for candidate in (own, p.name):
            if candidate in inverse:
                return inverse[candidate]
        if name_map is not None:
            unmapped.append(own)
        return own

    for p, g in zip(weights, weight_grads):
        result.add(f"{torch_name(p)}.grad", "param-grad", _ms_numpy(g), _ms_dtype_name(p.dtype))
    for _n, p in cell.parameters_and_names():
        if not p.requires_grad:
            result.add(torch_name(p), "buffer", _ms_numpy(p), _ms_dtype_name(p.dtype))
    for n, b in cell.named_buffers():       # Cell.register_buffer's
        result.add(inverse.get(n, n), "buffer", _ms_numpy(b), _ms_dtype_name(b.dtype))
    result.meta["unmapped_names"] = unmapped


def _split_grads(grads, grad_position: Sequence[int], weights: Sequence[Any]):
    """value_and_grad's gradient structure -> (input grads, weight grads) as two lists."""
    from mindspore import Tensor

    def as_list(g):
        if g is None:
            return []
        return [g] if isinstance(g, Tensor) else list(g)

    if grads is None:
        return [], []
    if grad_position and weights:
        gi, gw = grads
        return as_list(gi), as_list(gw)
    if grad_position:
        return as_list(grads), []
    return [], as_list(grads)
