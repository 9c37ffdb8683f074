"""What translated code imports from recompat (translate --scope model, torch -> MindSpore).

A torch layer class passed around as a value (a factory's table, `functools.partial(nn.Conv2d, ...)`, a default
argument) is called somewhere the translator cannot see, with torch's arguments. The translation writes
``torch_signature(nn.Conv2d, "torch.nn.Conv2d")`` there (the torch class it stands for named: several torch
classes may share a MindSpore one, InstanceNorm2d and GroupNorm): a subclass of the MindSpore class whose
constructor takes torch's arguments and translates them, when it is called, by the same mapping entry and the same
translator that rewrite a call written out (the call is rebuilt as text, translated with ``--scope model`` and its
arguments evaluated). Instances are instances of the MindSpore class. A call the entry cannot carry over raises
TypeError with the translator's reason.

``add_child(cell, name, module)`` is torch's ``add_module`` where MindSpore's method does something else (a
SequentialCell subclass, or a container the code builds).

``layer_tensor(layer, name)`` is torch's ``layer.name`` (a parameter or buffer) on a MindSpore layer whose class
the code does not fix (``isinstance(m, (nn.BatchNorm2d, nn.BatchNorm3d))``: gamma, or bn2d.gamma).

``initialized(tensor, init)`` is what torch.nn.init's in-place functions do (``nn.init.kaiming_normal_(w, a=0.01)``
becomes ``initialized(w, HeNormal(negative_slope=0.01))``): MindSpore has the initializers, not the in-place fill.

``einsum(equation, *operands)`` is torch.einsum from the operations MindSpore runs on every device (its own Einsum
has no CPU kernel in 2.10); its steps come from the equation and the shapes only, so GRAPH mode works them out
while it compiles.

``roll(input, shifts, dims)`` is torch.roll from slices (MindSpore 2.10's Roll has no CPU kernel), and
``layer_norm(input, normalized_shape, ...)`` torch's F.layer_norm from means (its LayerNormExt has none either).

``scaled_dot_product_attention(query, key, value, ...)`` is torch's F.scaled_dot_product_attention from matmuls
and a softmax (MindSpore 2.10 has none that runs on CPU).

``as_tensor(data, dtype=None)`` is torch.as_tensor: a tensor given is the tensor itself (GRAPH mode compiles it).

``logsigmoid(input)`` is torch's F.logsigmoid for every float (MindSpore's gives -inf and NaN gradients below
about -88.5 in float32).

``tensor_to(tensor, ...)`` is torch's ``tensor.to(...)``: a cast where a dtype is given, nothing for a device.

``tensor_any``, ``softmax``, ``logsumexp`` and ``binary_cross_entropy`` are torch's where MindSpore 2.10's own
compute other values on inputs real code passes (a zero in a float tensor, a fully masked attention row, a
saturated probability): the domain probes (compat/domain.py) found the difference and found these right. The
layer ``Softmax`` is torch's nn.Softmax, on ``softmax``, for the same reason.

``ModuleDict`` is torch's ModuleDict as a Cell (MindSpore's CellDict refuses containers as values).

``no_grad`` is torch.no_grad: ``with no_grad():``, ``@no_grad()`` and ``@no_grad``, on MindSpore's own
``mindspore._no_grad`` (PyNative).

``backward``, ``zero_grad``, ``optimizer_step``, ``clip_grad_norm_`` and ``grad`` are torch's training step on the
``.grad`` recompat keeps for MindSpore's parameters (recompat/grads.py; translator/steps.py writes them).
"""
from __future__ import annotations

import ast
import functools
import inspect
import math
import string
import warnings

from recompat.grads import GradScaler, backward, clip_grad_norm_, clip_grad_value_, grad, optimizer_step, zero_grad

__all__ = ["add_child", "autocast", "GradScaler", "backward", "clip_grad_norm_", "clip_grad_value_", "grad", "optimizer_step", "randint", "save", "load", "zero_grad", "as_tensor", "assign", "binary_cross_entropy", "einsum", "expm1", "initialized", "is_grad_enabled", "requires_grad",
           "layer_norm", "LayerNorm", "layer_tensor", "log1p", "logsigmoid", "logsumexp", "ModuleDict", "ModuleList", "no_grad", "RMSNorm", "roll",
           "scaled_dot_product_attention", "Softmax", "softmax", "tensor_any", "tensor_to", "tensor_type_as", "tensor_unflatten", "torch_signature",
           "UniformBetween"]


def __getattr__(name: str):
    # classes and functions on MindSpore's, made when first asked for (importing this module imports no framework)
    if name == "ModuleDict":
        return _module_dict()
    if name == "ModuleList":
        return _module_list()
    if name == "RMSNorm":
        return _rms_norm()
    if name == "LayerNorm":
        return _layer_norm()
    if name == "no_grad":
        return _no_grad()
    if name == "as_tensor":
        return _as_tensor()
    if name == "einsum":
        return _einsum()
    if name in DOMAIN_FIXES:
        return _domain_fixes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.lru_cache(maxsize=None)
def _no_grad() -> type:
    import mindspore

    class no_grad(mindspore._no_grad):  # noqa: N801 - torch's name
        """torch.no_grad on MindSpore (PyNative): what runs inside takes no part in gradients. MindSpore's
        ``_no_grad`` is a context manager and a decorator once made (``@no_grad()``); torch's also decorates as it
        is (``@no_grad``), which this adds. tests/test_framework_facts.py pins what ``_no_grad`` does."""

        def __new__(cls, func=None):
            if func is not None:       # @no_grad, bare
                return cls()(func)
            return super().__new__(cls)

        def __init__(self, func=None):
            super().__init__()

    no_grad.__module__ = __name__
    return no_grad


def torch_signature(target, api: str):
    """``target``, the MindSpore class or function of the mapping entry of the torch API named ``api``, made or
    called with that torch API's arguments: they are translated, by the same entry, when the program runs (keywords
    from a dict, ``**dd``, are known only then)."""
    return _adapter(target, api)


@functools.lru_cache(maxsize=None)
def _adapter(target, api: str):
    from recompat import mappings

    entry = mappings.default().model_scope["torch"].get(api)
    if entry is None or entry.rule not in ("api_class", "api_function") or not entry.proven:
        raise TypeError(f"recompat.runtime.torch_signature: {api} is no proven layer or function entry translated "
                        "from torch (see recompat's docs/en/index.md)")
    if entry.rule == "api_function":
        def call(*args, **kwargs):
            callee, margs, mkwargs = _arguments(api, args, kwargs)
            return callee(*margs, **mkwargs)

        functools.update_wrapper(call, target)
        call.__signature__ = _signature(entry.torch["signature"], method=False)
        return call

    def __new__(cls, *args, **kwargs):
        if cls is adapted:   # a call the entry cannot carry is made as its fallback's class (mappings: fallback_for)
            callee, margs, mkwargs = _arguments(api, args, kwargs)
            if callee is not target:
                return callee(*margs, **mkwargs)
        return target.__new__(cls)

    def __init__(self, *args, **kwargs):
        callee, margs, mkwargs = _arguments(api, args, kwargs)
        if callee is not target:
            raise TypeError(f"recompat.runtime.torch_signature: {type(self).__name__} derives from {api}, and the "
                            f"arguments it passes on need {callee.__module__}.{callee.__qualname__}, which its "
                            f"base is not: derive it from {callee.__module__}.{callee.__qualname__} instead")
        target.__init__(self, *margs, **mkwargs)

    # code that inspects it sees torch's parameters (inspect reads __new__ before __init__)
    __new__.__signature__ = __init__.__signature__ = _signature(entry.torch["signature"])
    adapted = type(target.__name__, (target,), {
        "__new__": __new__, "__init__": __init__, "__module__": target.__module__,
        "__qualname__": target.__qualname__,
        "__doc__": f"{target.__name__}, constructed with the arguments of {api} (recompat.runtime.torch_signature)."})
    return adapted


class _Default:
    """A recorded default, shown as written (it may name the source framework: torch.strided)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _signature(recorded: str, method: bool = True) -> inspect.Signature:
    """The recorded signature as inspect gives one, with ``self`` first for a method (read by
    reports.signatures.parse)."""
    from recompat.reports.signatures import _KINDS, parse

    kinds = {text: kind for kind, text in _KINDS.items()}
    P = inspect.Parameter
    return inspect.Signature([P("self", P.POSITIONAL_OR_KEYWORD)] * method + [
        P(p.bare, kinds[p.kind], default=P.empty if p.default is None else _Default(p.default))
        for p in parse(recorded)])


def _arguments(api: str, args: tuple, kwargs: dict) -> tuple[object, list, dict]:
    """torch's call of ``api`` -> MindSpore's callee and arguments: the call is written as text (a value that reads
    back as itself as its literal, any other as a name), translated, and evaluated with those names bound."""
    values: dict[str, object] = {}

    def text(value) -> str:
        try:
            literal = repr(value)
            if type(ast.literal_eval(literal)) is type(value) and ast.literal_eval(literal) == value:
                return literal
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
        if (spelled := _dtype_name(value)) is not None:
            return spelled       # a MindSpore dtype (translated code's): by its name, which the translation keeps
        name = f"_recompat_value{len(values)}"
        values[name] = value
        return name

    call = ", ".join([*(text(a) for a in args), *(f"{k}={text(v)}" for k, v in kwargs.items())])
    imports, callee, arg_texts, kwarg_texts = _translated(api, call)
    namespace = dict(values)
    exec(imports, namespace)    # the target framework's imports the translated text needs
    return (eval(callee, namespace), [eval(t, namespace) for t in arg_texts],
            {k: eval(t, namespace) for k, t in kwarg_texts.items()})


def _dtype_name(value) -> str | None:
    """A MindSpore dtype's qualified name (mindspore.float16); None for any other value."""
    from mindspore.common import dtype

    return _dtype_names().get(value) if isinstance(value, dtype.Type) else None


@functools.lru_cache(maxsize=None)
def _dtype_names() -> dict:
    """MindSpore's dtypes -> their qualified names."""
    import mindspore
    from mindspore.common import dtype

    names: dict = {}
    for name, value in vars(dtype).items():
        if isinstance(value, dtype.Type) and getattr(mindspore, name, None) is value:
            names.setdefault(value, f"mindspore.{name}")
    return names


@functools.lru_cache(maxsize=4096)
def _translated(api: str, call: str) -> tuple[str, str, list[str], dict[str, str]]:
    """``api(call)`` translated to MindSpore: (its import lines, the callee's text, positional argument texts,
    keyword texts)."""
    from recompat.translator.translate import translate_bytes

    source = f"import mindspore\nimport torch\n\n\ndef _call():\n    return {api}({call})\n"
    result = translate_bytes(source.encode(), "<recompat.runtime>", to="mindspore", scope="model")
    manual = [d.message for site in result.sites for d in site.diagnostics if d.status == "manual"]
    if manual or result.new_data is None:
        raise TypeError(f"recompat.runtime.torch_signature: {api}({call}) has no MindSpore counterpart: "
                        + (manual[0] if manual else "the call is left as it is"))
    for message in (d.message for site in result.sites for d in site.diagnostics if d.status == "partial"):
        warnings.warn(f"recompat.runtime.torch_signature: {message}", stacklevel=4)   # once per call (cached)
    tree = ast.parse(result.new_data)
    imports = "\n".join(ast.unparse(s) for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom)))
    made = next(s for s in tree.body if isinstance(s, ast.FunctionDef)).body[0].value
    if not isinstance(made, ast.Call) or any(isinstance(a, ast.Starred) for a in made.args) \
            or any(k.arg is None for k in made.keywords) or torch_signature.__name__ in ast.unparse(made.func):
        raise TypeError(f"recompat.runtime.torch_signature: {api}({call}) becomes {ast.unparse(made)}, "
                        "which is no call of the counterpart with its arguments written out")
    return (imports, ast.unparse(made.func), [ast.unparse(a) for a in made.args],
            {k.arg: ast.unparse(k.value) for k in made.keywords})


def add_child(cell, name: str, module) -> None:
    """torch's ``Module.add_module(name, module)`` where the model is a SequentialCell (a torch Sequential subclass,
    translated): the child also joins the sequence construct runs, as in torch. MindSpore 2.10's
    ``insert_child_to_cell`` holds the child in ``_cells`` only, and SequentialCell runs ``cell_list``, the list its
    own methods refresh from ``_cells`` (tests/test_framework_facts.py pins both)."""
    import mindspore

    cell.insert_child_to_cell(name, module)
    if isinstance(cell, mindspore.nn.SequentialCell):
        cell.cell_list = list(cell._cells.values())
        cell._is_dynamic_name.append(False)      # a name of its own, not an index


def initialized(tensor, init):
    """``tensor`` filled from ``init`` (a ``mindspore.common.initializer`` instance), in place, and returned, as
    torch.nn.init's functions do. A Parameter takes the values through ``set_data``; another tensor through
    ``copy_``: MindSpore 2.10 has no CPU kernel for the in-place fills (``fill_``, ``zero_``, ``normal_``,
    ``uniform_``; tests/test_framework_facts.py pins it), and only a Parameter has ``set_data``."""
    from mindspore.common.initializer import initializer

    return assign(tensor, initializer(init, tensor.shape, tensor.dtype).init_data())


def UniformBetween(low=0.0, high=1.0):  # noqa: N802 - it stands for an initializer class
    """A MindSpore initializer drawing from U(low, high): torch's ``x.uniform_(a, b)`` and ``nn.init.uniform_``.
    MindSpore's own ``Uniform(scale)`` draws from U(-scale, scale) only; this one draws as it does and shifts."""
    return _uniform_between()(low, high)


@functools.lru_cache(maxsize=None)
def _uniform_between() -> type:
    from mindspore.common.initializer import Uniform

    class _UniformBetween(Uniform):
        def __init__(self, low, high):
            super().__init__(scale=(high - low) / 2)
            self.shift = (high + low) / 2

        def _initialize(self, arr):
            super()._initialize(arr)
            arr += self.shift

    return _UniformBetween


@functools.lru_cache(maxsize=None)
def _module_dict() -> type:
    from mindspore import nn

    class ModuleDict(nn.Cell):
        """torch.nn.ModuleDict as a Cell: layers by name, in the order they were set, each a child under its name
        (so a parameter is named <name>.<parameter> as in torch). MindSpore 2.10's nn.CellDict refuses a
        SequentialCell, CellList or CellDict as a value (tests/test_framework_facts.py pins it); this takes any
        Cell. Like torch's, it has no construct of its own."""

        def __init__(self, modules=None):
            super().__init__()
            if modules is not None:
                self.update(modules)

        def __getitem__(self, key: str):
            return self._cells[key]

        def __setitem__(self, key: str, module) -> None:
            self.insert_child_to_cell(key, module)

        def __delitem__(self, key: str) -> None:
            del self._cells[key]

        def __len__(self) -> int:
            return len(self._cells)

        def __iter__(self):
            return iter(self._cells)

        def __contains__(self, key) -> bool:
            return key in self._cells

        def keys(self):
            return self._cells.keys()

        def values(self):
            return self._cells.values()

        def items(self):
            return self._cells.items()

        def update(self, modules) -> None:
            for key, module in (modules.items() if hasattr(modules, "items") else modules):
                self[key] = module

        def pop(self, key: str):
            module = self[key]
            del self[key]
            return module

        def clear(self) -> None:
            self._cells.clear()

    ModuleDict.__module__ = __name__
    return ModuleDict


@functools.lru_cache(maxsize=None)
def _module_list() -> type:
    from mindspore import nn

    class ModuleList(nn.Cell):
        """torch.nn.ModuleList as a Cell, for a list that may hold None: torch keeps an empty slot there (MONAI,
        timm and Hugging Face build `ModuleList([... if cond else None ...])`), MindSpore 2.10's nn.CellList
        refuses it. Indexed, sliced, iterated, appended to, extended and inserted into as torch's is; the layer in
        slot i is a child named "i" (so a parameter is named <i>.<parameter> as in torch), a None slot has no
        child. Like torch's, it has no construct of its own."""

        def __init__(self, modules=None):
            super().__init__()
            object.__setattr__(self, "_slots", [])   # past Cell.__setattr__: a list of Cells would become a child
            if modules is not None:
                self.extend(modules)

        def _prefix(self) -> str:
            """What the names of its layers' parameters hold before their slot (set when a model takes it)."""
            return next((p.name[:-len(k)] for k, p in self.parameters_and_names() if p.name.endswith(k)), "")

        def _place(self, i: int, module, prefix: str) -> None:
            if module is not None:
                self.insert_child_to_cell(str(i), module)
                for k, param in module.parameters_and_names():
                    param.name = f"{prefix}{i}.{k}"

        def _renumber(self) -> None:
            """Each layer a child under its slot's number again, its parameters renamed to match."""
            prefix = self._prefix()
            self._cells.clear()
            for i, module in enumerate(self._slots):
                self._place(i, module, prefix)

        def __getitem__(self, index):
            if isinstance(index, slice):
                return type(self)(self._slots[index])
            return self._slots[index]

        def __setitem__(self, index: int, module) -> None:
            self._slots[index] = module
            self._renumber()

        def __delitem__(self, index) -> None:
            del self._slots[index]
            self._renumber()   # as torch's: the layers after it move up a number

        def __len__(self) -> int:
            return len(self._slots)

        def __iter__(self):
            return iter(self._slots)

        def __iadd__(self, modules):
            return self.extend(modules)

        def append(self, module):
            prefix = self._prefix()
            self._slots.append(module)
            self._place(len(self._slots) - 1, module, prefix)
            return self

        def extend(self, modules):
            for module in modules:
                self.append(module)
            return self

        def insert(self, index: int, module) -> None:
            self._slots.insert(index, module)
            self._renumber()

    ModuleList.__module__ = __name__
    return ModuleList


def _shape_tuple(normalized_shape) -> tuple:
    """torch's normalized_shape (an int or a sequence of ints) as a tuple."""
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


@functools.lru_cache(maxsize=None)
def _rms_norm() -> type:
    import mindspore
    from mindspore import nn, ops

    class RMSNorm(nn.Cell):
        """torch.nn.RMSNorm as a Cell (MindSpore 2.10 has none): x / sqrt(mean(x**2) + eps) over the last
        len(normalized_shape) dims, times ``weight`` (torch's name, so torch's weights transfer by name) where
        ``elementwise_affine``. ``eps`` left out is the input dtype's machine epsilon, as torch's."""

        def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
            super().__init__()
            shape = _shape_tuple(normalized_shape)
            self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
            self.weight = mindspore.Parameter(ops.ones(shape, dtype or mindspore.float32), name="weight") \
                if elementwise_affine else None

        def construct(self, x):
            axes = tuple(range(-len(self.normalized_shape), 0))
            eps = self.eps if self.eps is not None else finfo(x.dtype).eps
            out = x * ops.rsqrt((x * x).mean(axis=axes, keep_dims=True) + eps)
            # torch's keeps the input's dtype (a float16 input with a float32 weight gives float16)
            return (out * self.weight).astype(x.dtype) if self.weight is not None else out

    RMSNorm.__module__ = __name__
    return RMSNorm


@functools.lru_cache(maxsize=None)
def _layer_norm() -> type:
    import mindspore
    from mindspore import nn, ops

    class LayerNorm(nn.Cell):
        """torch.nn.LayerNorm as a Cell, for what MindSpore's nn.LayerNorm cannot take (entry layernorm_exact): no
        learned scale or shift (``elementwise_affine=False``), no shift (``bias=False``), a shape of several
        axes or one the call does not show. torch's arguments, attributes and parameter names (``weight``,
        ``bias``), so torch's weights transfer by name; computed by ``layer_norm`` (MindSpore 2.10's mint
        LayerNorm has no CPU kernel)."""

        def __init__(self, normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, device=None,
                     dtype=None):
            super().__init__()
            shape = _shape_tuple(normalized_shape)
            self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
            dtype = dtype or mindspore.float32
            self.weight = mindspore.Parameter(ops.ones(shape, dtype), name="weight") if elementwise_affine else None
            self.bias = mindspore.Parameter(ops.zeros(shape, dtype), name="bias") \
                if elementwise_affine and bias else None

        def construct(self, x):
            return layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    LayerNorm.__module__, LayerNorm.__qualname__ = __name__, "LayerNorm"
    return LayerNorm


def assign(tensor, value):
    """``tensor`` with ``value`` written into it, in place, and returned: torch's in-place tensor methods
    (``x.mul_(2)`` translated to ``assign(x, x.mul(2))``). A Parameter takes the values through ``set_data``, another
    tensor through ``copy_``: MindSpore 2.10 on CPU has no kernel for some in-place methods (``clamp_``, ``fill_``)
    and runs others without writing into the tensor (``mul_``, ``add_``; tests/test_framework_facts.py pins both)."""
    from mindspore import Parameter

    if isinstance(tensor, Parameter):
        tensor.set_data(value)
    else:
        tensor.copy_(value)
    return tensor


def layer_tensor(layer, name: str):
    """The tensor (or other attribute) torch calls ``name`` on ``layer``, a MindSpore layer: where the mapping
    entries of its class (or of the nearest class it derives from that has entries: torch_signature's adapters) put
    it (BatchNorm2d's weight is gamma, BatchNorm3d's bn2d.gamma, Conv2d's groups is group); ``name`` itself where
    they list no other. AttributeError naming the layer where its class has no counterpart of it."""
    entries = next((found for cls in type(layer).__mro__ if (found := _layer_entries().get(cls))), ())
    places = {e.mindspore_attribute(name) for e in entries} or {name}     # by its class or one it derives from

    if None in places or len(places) > 1:
        raise AttributeError(f"recompat.runtime.layer_tensor: {type(layer).__name__} holds no single counterpart "
                             f"of torch's {name!r} (its mapping entries give {sorted(map(str, places))})")
    return functools.reduce(getattr, places.pop().split("."), layer)


@functools.lru_cache(maxsize=None)
def _layer_entries() -> dict[type, list]:
    """MindSpore layer class -> the mapping entries that pair a torch layer with it."""
    import importlib

    from recompat import mappings

    found: dict[type, list] = {}
    for entry in mappings.default().layer_pairs:
        module, _, attr = entry.mindspore["api"].rpartition(".")
        try:
            cls = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            continue
        found.setdefault(cls, []).append(entry)
    return found


def tensor_type_as(tensor, other):
    """torch's ``tensor.type_as(other)``: the tensor cast to other's dtype (itself where it already has it). A cast
    to an integer or bool dtype stops the gradient there, as torch's does (an integer tensor has none); MindSpore's
    own Tensor.type_as passes gradients through it."""
    return tensor if tensor.dtype == other.dtype else _cast(tensor, other.dtype)


def _cast(tensor, dtype):
    """``tensor`` as ``dtype``; the gradient stops at a cast to an integer or bool dtype, as torch's does (an
    integer tensor has none), where MindSpore's astype passes it through."""
    import mindspore

    cast = tensor.astype(dtype)
    floating = dtype in (mindspore.float16, mindspore.float32, mindspore.float64, mindspore.bfloat16,
                         mindspore.complex64, mindspore.complex128)
    return cast if floating else mindspore.ops.stop_gradient(cast)


def tensor_unflatten(tensor, dim, sizes):
    """torch's ``tensor.unflatten(dim, sizes)`` on a MindSpore tensor, which has no unflatten: dim ``dim`` split
    into ``sizes`` (one of them may be -1), by a reshape. As torch's, it refuses sizes whose product is not that
    dim's size."""
    shape = tuple(tensor.shape)
    at = dim + len(shape) if dim < 0 else dim
    if not 0 <= at < len(shape):
        raise IndexError(f"unflatten: dim {dim} is out of range for a tensor of {len(shape)} dims")
    sizes = tuple(int(n) for n in sizes)
    known = math.prod(n for n in sizes if n != -1)
    free = -1 in sizes
    if sizes.count(-1) > 1 or (not free and known != shape[at]) or (free and (not known or shape[at] % known)):
        raise RuntimeError(f"unflatten: sizes {list(sizes)} do not multiply to the size of dim {dim} ({shape[at]})")
    # the -1 worked out here: with another dim empty, a reshape cannot tell it (MindSpore makes it 0)
    sizes = tuple(shape[at] // known if n == -1 else n for n in sizes)
    return tensor.reshape(shape[:at] + sizes + shape[at + 1:])


def tensor_to(tensor, *args, **kwargs):
    """torch's ``tensor.to(...)`` on a MindSpore tensor, which MindSpore places by its context: the tensor cast to
    the dtype given (``x.to(dtype)``, ``dtype=``) or to the dtype of a tensor given (``x.to(other)``); a device
    (``x.to(device)``, ``x.to(y.device)``, ``device=``), ``non_blocking`` and ``memory_format`` change nothing.
    Which of torch's three forms a call is, only its values tell, so they decide here: a MindSpore dtype is the
    dtype, a tensor gives its dtype, True/False are non_blocking then copy, anything else is a device. As in torch,
    the tensor itself comes back where its dtype is the one asked for, and a copy where ``copy=True``; a cast to
    an integer or bool dtype stops the gradient, as torch's (MindSpore's astype passes it through)."""
    import mindspore

    unknown = set(kwargs) - {"device", "dtype", "non_blocking", "copy", "memory_format"}
    if unknown:
        raise TypeError(f"recompat.runtime.tensor_to: unexpected keyword {', '.join(sorted(unknown))} (torch's "
                        "Tensor.to takes device, dtype, non_blocking, copy, memory_format)")
    flags = [a for a in args if isinstance(a, bool)]
    copy = kwargs.get("copy", flags[1] if len(flags) > 1 else False)
    wanted = set()
    for value in (*(a for a in args if not isinstance(a, bool)), kwargs.get("device"), kwargs.get("dtype")):
        if isinstance(value, mindspore.Tensor):
            value = value.dtype
        if isinstance(value, mindspore.common.dtype.Type):
            wanted.add(value)
        elif isinstance(value, type):   # a Python type (float) is neither a dtype MindSpore takes nor a device
            raise TypeError(f"recompat.runtime.tensor_to: {value.__name__} is not a MindSpore dtype: give "
                            "mindspore.float32 or the like")
    if len(wanted) > 1:
        raise TypeError(f"recompat.runtime.tensor_to: two dtypes given ({', '.join(sorted(map(str, wanted)))})")
    if wanted and wanted != {tensor.dtype}:
        return _cast(tensor, wanted.pop())   # an integer cast stops the gradient, as torch's
    return tensor.copy() if copy else tensor


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention on MindSpore tensors, as torch defines it: softmax(query @
    key^T * scale + mask) @ value, with scale 1/sqrt(the last axis of query) unless given; a bool ``attn_mask`` keeps
    where it is True, another is added; ``is_causal`` keeps a query from the keys after it (the mask's upper right
    corner, as torch's); ``enable_gqa`` shares each key and value head among query heads; dropout of probability
    ``dropout_p`` on the attention weights, in training and evaluation alike, as torch's. From matmuls and a softmax:
    MindSpore 2.10 has no such function that runs on CPU."""
    import math

    import mindspore
    from mindspore import ops

    if is_causal and attn_mask is not None:
        raise ValueError("scaled_dot_product_attention: give attn_mask or is_causal=True, not both (as torch)")
    if enable_gqa and key.shape[-3] != query.shape[-3]:
        key = ops.repeat_interleave(key, query.shape[-3] // key.shape[-3], -3)
        value = ops.repeat_interleave(value, query.shape[-3] // value.shape[-3], -3)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = ops.matmul(query, key.swapaxes(-2, -1)) * scale
    if is_causal:
        attn_mask = ops.tril(ops.ones((query.shape[-2], key.shape[-2]), mindspore.bool_))
    if attn_mask is not None:
        if attn_mask.dtype == mindspore.bool_:
            scores = scores.masked_fill(ops.logical_not(attn_mask), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = ops.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = ops.dropout(weights, p=dropout_p)
    return ops.matmul(weights, value)


@functools.lru_cache(maxsize=None)
def _as_tensor():
    # made on first use with MindSpore's names bound outside it: GRAPH mode compiles no import statement
    from mindspore import Tensor, tensor

    def as_tensor(data, dtype=None):
        """torch.as_tensor on MindSpore: a tensor given is returned as it is (cast where a dtype is given), so its
        gradient flows and GRAPH mode compiles it; other data becomes ``mindspore.tensor(data, dtype)``, which
        GRAPH mode accepts for constants only (``mindspore.tensor`` of a tensor computed in construct does not
        compile)."""
        if isinstance(data, Tensor):
            return data if dtype is None else data.astype(dtype)
        return tensor(data, dtype=dtype)
    return as_tensor


def logsigmoid(input):  # noqa: A002 - torch's parameter name
    """torch.nn.functional.logsigmoid on a MindSpore tensor, computed as min(x, 0) - log1p(exp(-|x|)), which holds
    for every float: MindSpore 2.10's ops.logsigmoid gives -inf and a NaN gradient below about -88.5 in float32
    and 0 above about 17 (tests/test_runtime.py)."""
    from mindspore import ops

    return ops.minimum(input, 0.0) - ops.log1p(ops.exp(-ops.abs(input)))


def roll(input, shifts, dims=None):  # noqa: A002 - torch's parameter names
    """torch.roll on a MindSpore tensor: each axis of ``dims`` shifted by its ``shifts``, what leaves one end coming
    back at the other; with no ``dims``, the flattened tensor, reshaped back. Built from two slices and a concat
    per axis: MindSpore 2.10's Roll has no CPU kernel (tests/test_framework_facts.py)."""
    from mindspore import ops

    if dims is None:
        return roll(input.reshape(-1), shifts, 0).reshape(input.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise ValueError(f"roll(): shifts and dims must have the same length, got {shifts} and {dims}")
    for shift, dim in zip(shifts, dims):
        n = input.shape[dim]
        shift %= n if n else 1
        if shift:
            input = ops.cat((ops.narrow(input, dim, n - shift, shift), ops.narrow(input, dim, 0, n - shift)), dim)
    return input


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):  # noqa: A002 - torch's names
    """torch.nn.functional.layer_norm on a MindSpore tensor: normalised over its last len(normalized_shape) axes
    by their mean and biased variance, then scaled by ``weight`` and shifted by ``bias`` where given. MindSpore
    2.10's ops.layer_norm has no CPU kernel (tests/test_framework_facts.py)."""
    shape = _shape_tuple(normalized_shape)
    if tuple(input.shape[len(input.shape) - len(shape):]) != shape:
        raise ValueError(f"layer_norm(): normalized_shape {list(shape)} is not the end of the input's shape "
                         f"{list(input.shape)}")
    axes = tuple(range(len(input.shape) - len(shape), len(input.shape)))
    centred = input - input.mean(axis=axes, keep_dims=True)
    out = centred / ((centred * centred).mean(axis=axes, keep_dims=True) + eps).sqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def _reduced_shape(shape: tuple, dim, keepdim: bool) -> tuple:
    """The shape torch's reduction over `dim` (an int, a tuple, or None: every axis) gives."""
    axes = range(len(shape)) if dim is None else [d % max(len(shape), 1) for d in ((dim,) if isinstance(dim, int)
                                                                                  else dim)]
    return tuple(1 if i in axes else n for i, n in enumerate(shape) if keepdim or i not in axes)


DOMAIN_FIXES = ("tensor_any", "softmax", "logsumexp", "binary_cross_entropy", "Softmax", "expm1", "log1p")


@functools.lru_cache(maxsize=None)
def _domain_fixes() -> dict:
    """torch's any, softmax (and nn.Softmax), logsumexp and binary_cross_entropy on MindSpore, where MindSpore 2.10's own compute
    other values on inputs real code passes (compat/domain.py found them; docs/behaviours.md). Made on first use,
    MindSpore's names bound outside them: GRAPH mode compiles no import statement."""
    import mindspore
    from mindspore import nn, ops

    reduced_shape = ops.constexpr(reuse_result=False)(_reduced_shape)   # worked out from constants in GRAPH

    def tensor_any(input, dim=None, keepdim=False):  # noqa: A002 - torch's names
        """torch's ``input.any(dim, keepdim)``: whether any element is non-zero (NaN is), taken on ``input != 0``.
        MindSpore 2.10's Tensor.any is wrong on a float or int tensor with a zero in it, and over an empty axis
        gives whatever memory held, bool input too: an empty reduction is False."""
        if 0 in input.shape:   # nothing to reduce, or an empty result
            return ops.zeros(reduced_shape(input.shape, dim, keepdim), mindspore.bool_)
        return (input != 0).any(dim, keepdim)

    def softmax(input, dim=None, dtype=None):  # noqa: A002 - torch's names
        """torch's softmax, ``exp(x - max) / sum``: a row that is all -inf, or holds +inf or NaN, is NaN as torch's
        is (MindSpore 2.10's softmax makes it zeros). The max is held constant for the gradient (softmax does not
        change with it). ``dim`` left out: torch's choice, dim 0 for 0-, 1- and 3-D inputs, else 1."""
        if dtype is not None:
            input = input.astype(dtype)
        if dim is None:
            dim = 0 if input.ndim in (0, 1, 3) else 1
        if 0 in input.shape:
            return input * 1   # empty: MindSpore's max refuses it
        shifted = ops.exp(input - ops.stop_gradient(input.max(axis=dim, keepdims=True)))
        return shifted / shifted.sum(axis=dim, keepdims=True)

    def logsumexp(input, dim, keepdim=False):  # noqa: A002 - torch's names
        """torch's ``input.logsumexp(dim, keepdim)``, ``log(sum(exp(x - m))) + m`` with m the max where it is
        finite, else 0: a row all -inf gives -inf and one with +inf gives inf, as torch's (MindSpore 2.10's gives
        NaN for both); an integer tensor is taken as float32, as torch does; over an empty axis, -inf (MindSpore's
        raises)."""
        if not ops.is_floating_point(input):
            input = input.astype(mindspore.float32)
        if 0 in input.shape:
            return ops.full(reduced_shape(input.shape, dim, keepdim), -math.inf, dtype=input.dtype)
        top = ops.stop_gradient(input.max(axis=dim, keepdims=True))
        top = ops.where(ops.isinf(top), ops.zeros_like(top), top)
        out = ops.log(ops.exp(input - top).sum(axis=dim, keepdims=True)) + top
        return out if keepdim else out.squeeze(dim)

    class BinaryCrossEntropy(nn.Cell):
        """The elementwise loss, each log at least -100, with torch's own backward as its bprop."""

        def construct(self, p, t):
            return -(t * ops.clamp(ops.log(p), min=-100.0) + (1 - t) * ops.clamp(ops.log(1 - p), min=-100.0))

        def bprop(self, p, t, out, dout):
            return dout * (p - t) / ops.clamp((1 - p) * p, min=1e-12), dout * (ops.log(1 - p) - ops.log(p))

    elementwise = BinaryCrossEntropy()

    def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,  # noqa: A002
                             reduction="mean"):
        """torch's F.binary_cross_entropy: each log taken as at least -100, as torch's is (MindSpore 2.10's at
        log(1e-12): probabilities of exactly 0 or 1 give other losses), with torch's gradients (its own backward,
        not that of the clamped logs): ``(input - target) / max((1 - input) * input, 1e-12)`` for the input,
        finite at exactly 0 and 1, and ``log(1 - input) - log(input)`` for the target. size_average= and
        reduce= are torch's old spelling of reduction=."""
        if size_average is not None or reduce is not None:
            reduction = ("mean" if size_average in (None, True) else "sum") if reduce in (None, True) else "none"
        if reduction not in ("none", "mean", "sum"):
            raise ValueError(f"binary_cross_entropy(): reduction={reduction!r} is none of 'none', 'mean', 'sum'")
        loss = elementwise(input, target)
        if weight is not None:
            loss = loss * weight
        if reduction == "mean" and 0 in loss.shape:
            return ops.full((), math.nan, dtype=loss.dtype)   # torch's mean of nothing (MindSpore's is inf)
        if reduction == "none":
            return loss
        return loss.mean() if reduction == "mean" else loss.sum()

    class Softmax(nn.Cell):
        """torch's nn.Softmax: ``softmax`` above along ``dim`` (left out: torch's choice from the input's rank)."""

        def __init__(self, dim=None):
            super().__init__()
            self.dim = dim

        def construct(self, input):  # noqa: A002 - torch's name
            return softmax(input, self.dim)

    Softmax.__module__ = __name__

    def near_zero(input, series, far):
        """``series`` (a power series, for |x| < 1e-3) or ``far`` of ``input`` in float64, in torch's result
        dtype (float32 for an integer or bool tensor). Each branch is given only its own inputs (the other's get a
        harmless constant), so neither sends a NaN or inf into the other's gradient."""
        x = input.astype(mindspore.float64)
        small = ops.abs(x) < 1e-3
        out = ops.where(small, series(ops.where(small, x, ops.zeros_like(x))),
                        far(ops.where(small, ops.ones_like(x), x)))
        return out.astype(input.dtype if ops.is_floating_point(input) else mindspore.float32)

    def expm1(input):  # noqa: A002 - torch's name
        """torch.expm1, accurate near 0 as torch's is: MindSpore 2.10's ops.expm1 is exp(x) - 1 in the input's
        dtype, 19% off at x = 1e-7 (tests/test_runtime.py). In float64: x (1 + x/2 + x^2/6 + x^3/24) near 0 (-0
        kept), else exp(x) - 1; the gradients are those of the same formulas."""
        return near_zero(input, lambda x: x * (1 + x * (0.5 + x * (1 / 6 + x / 24))), lambda x: ops.exp(x) - 1)

    def log1p(input):  # noqa: A002 - torch's name
        """torch.log1p, accurate near 0 as torch's is: MindSpore 2.10's ops.log1p is log(1 + x), 19% off at
        x = 1e-7 and 0 at 1e-30 (tests/test_runtime.py). In float64: x (1 - x/2 + x^2/3 - x^3/4) near 0, else
        log(1 + x)."""
        return near_zero(input, lambda x: x * (1 - x * (0.5 - x * (1 / 3 - x / 4))), lambda x: ops.log(1 + x))

    return {"tensor_any": tensor_any, "softmax": softmax, "logsumexp": logsumexp,
            "binary_cross_entropy": binary_cross_entropy, "Softmax": Softmax, "expm1": expm1, "log1p": log1p}


def randint(low=0, high=None, size=None, *, dtype=None):
    """torch.randint: randint(high, size) or randint(low, high, size), int64 by default, drawn by MindSpore's
    ops.randint (which takes only the second form)."""
    import mindspore
    from mindspore import ops

    if size is None:            # torch's randint(high, size): the two given are high and size
        low, high, size = 0, low, high
    elif high is None:          # randint(10, size=(3,))
        low, high = 0, low
    if high is None or size is None:
        raise TypeError("randint() needs high and size: randint(high, size) or randint(low, high, size)")
    if int(low) >= int(high):     # torch's message (MindSpore's: "invalid min/max values")
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return ops.randint(int(low), int(high), tuple(size), dtype=dtype or mindspore.int64)


def save(obj, f) -> None:
    """torch.save of a state dict (`model.state_dict()`: a mapping of names to tensors) or of a Cell: a MindSpore
    checkpoint written at `f` as it is named (mindspore.save_checkpoint would add .ckpt), whole or not at all."""
    import mindspore

    from recompat import _files

    if isinstance(obj, mindspore.nn.Cell):
        obj = obj.state_dict()       # keyed by path: a Parameter's own name may repeat in a model
    if isinstance(obj, dict) and obj and all(isinstance(v, mindspore.Tensor) for v in obj.values()):
        items = [{"name": k, "data": v} for k, v in obj.items()]
    else:
        raise TypeError(f"recompat.runtime.save (torch.save) writes a MindSpore checkpoint: give it a state dict "
                        f"(model.state_dict(), a dict of tensors) or a Cell, not a {type(obj).__name__}; other "
                        f"objects: pickle them, or mindspore.save_checkpoint(..., append_dict=...) for numbers")
    _files.write_atomic_with(f, lambda tmp: mindspore.save_checkpoint(items, tmp), suffix=".ckpt")


def load(f):
    """torch.load of a checkpoint recompat.runtime.save (or mindspore.save_checkpoint) wrote: its state dict, for
    `model.load_state_dict(...)`. A file torch wrote is named as such, with the command that converts it."""
    import mindspore

    from recompat.compat.weight_files import sniff

    held = sniff(f)
    if held is not None:
        raise ValueError(f"{f} is a {held} file (torch wrote it): MindSpore reads its own checkpoints. Convert it "
                         f"once with the model it is for: recompat weights {f} -o {f}.ckpt --model module:Class, "
                         f"and load that")
    if str(f).endswith(".ckpt"):
        return mindspore.load_checkpoint(str(f))
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as folder:   # load_checkpoint reads only a name ending in .ckpt
        link = os.path.join(folder, "checkpoint.ckpt")
        os.symlink(os.path.abspath(f), link)
        return mindspore.load_checkpoint(link)


def is_grad_enabled() -> bool:
    """torch.is_grad_enabled on MindSpore (PyNative): False inside ``no_grad`` (``mindspore._no_grad``, which
    ``recompat.runtime.no_grad`` is), True elsewhere, as torch's outside ``torch.no_grad``. MindSpore keeps that
    state on its PyNative executor; tests/test_runtime.py pins it against torch's."""
    from mindspore.common.api import _pynative_executor

    return bool(_pynative_executor.enable_grad())


class autocast:  # noqa: N801 - torch's name
    """torch.autocast (torch.amp.autocast, torch.cuda.amp.autocast) on MindSpore, which has no such context: a
    context and a decorator that changes nothing, so the region computes in its tensors' own dtypes. torch runs
    the ops its autocast lists (matmul, convolution, linear) in ``dtype`` there: where that is float16 or
    bfloat16, the values differ by that precision (this side keeps float32's). MindSpore's mixed precision is
    the network's own: mindspore.amp.auto_mixed_precision(net, "O2", dtype)."""

    def __init__(self, device_type: str = "cuda", dtype=None, enabled: bool = True, cache_enabled=None):
        self.device_type, self.dtype, self.enabled = device_type, dtype, enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def run(*args, **kwargs):
            with self:
                return function(*args, **kwargs)
        return run


def requires_grad(tensor) -> bool:
    """torch's ``tensor.requires_grad`` on MindSpore, whose Tensor keeps no such flag: a Parameter's own
    ``requires_grad``; a floating tensor: whether gradients are recorded (is_grad_enabled), torch's answer for a
    value computed from parameters that require them; an integer or bool tensor: False, as torch's (it cannot
    have a gradient). What differs: the mode when it is read counts, not when the tensor was made: a floating
    tensor made from data alone (an input batch), or under no_grad and read after it, requires none in torch,
    while here it is taken to wherever gradients are recorded."""
    import mindspore

    if isinstance(tensor, mindspore.Parameter):
        return bool(tensor.requires_grad)
    return bool(mindspore.ops.is_floating_point(tensor)) and is_grad_enabled()


def finfo(type=None):  # noqa: A002 - torch's name
    """torch.finfo on MindSpore, which has none: the limits NumPy gives for the dtype's NumPy type (float32 when none
    is given), torch's values (the same IEEE formats), as Python numbers as torch's are (MindSpore's ops refuse a
    NumPy scalar where they take a number)."""
    import types

    import mindspore
    import numpy

    info = numpy.finfo(mindspore.dtype_to_nptype(mindspore.float32 if type is None else type))
    return types.SimpleNamespace(
        bits=int(info.bits), dtype=str(info.dtype), resolution=10.0 ** -int(info.precision),   # as torch writes it
        **{name: float(getattr(info, name)) for name in ("eps", "max", "min", "tiny", "smallest_normal")})


def normalize(input, p=2.0, dim=1, eps=1e-12):  # noqa: A002 - torch's names
    """torch.nn.functional.normalize on a MindSpore tensor: ``input`` divided by its p-norm along ``dim``, that norm
    taken as at least ``eps``. The floor is taken on the sum of powers (``eps ** p``), so that a norm below it passes
    no gradient back, as torch's clamp does, and a zero vector's gradient is 0, not NaN. MindSpore 2.10's
    mint.nn.functional.normalize has no CPU kernel ("LinalgVectorNorm unregistered")."""
    from mindspore import ops

    powered = input * input if p == 2 else ops.abs(input) ** p
    total = ops.maximum(powered.sum(axis=dim, keepdims=True), ops.full((), eps ** p, dtype=input.dtype))
    return input / (ops.sqrt(total) if p == 2 else total ** (1.0 / p))


@functools.lru_cache(maxsize=None)
def _einsum():
    # made on first use with MindSpore's names bound outside it: GRAPH mode compiles no import statement
    from mindspore import ops

    plan = ops.constexpr(reuse_result=False)(_einsum_plan)   # worked out from constants: compile time in GRAPH

    def einsum(*args):
        """torch.einsum on MindSpore tensors: ``einsum("bhxy,bhyd->bhxd", a, v)``, the operands also as one list,
        the output left implicit (the labels seen once, in alphabetical order), ``...`` for broadcast dimensions, a
        label repeated within one operand for its diagonal, and torch's sublist form (``einsum(a, [0, 1], b,
        [1, 2])``). The operands are contracted pairwise, left to right, each pair as one batched matmul
        (transpose, reshape, matmul): MindSpore 2.10's ``ops.einsum`` has no CPU kernel and ``mint.einsum`` runs on
        Ascend only (tests/test_framework_facts.py). The steps are worked out from the equation and the shapes
        alone (_einsum_plan), which GRAPH mode does while it compiles. ValueError, as torch raises it, for an
        equation that does not fit."""
        if not args:
            raise ValueError("einsum(): must specify the equation string and at least one operand")
        if isinstance(args[0], str):
            equation = args[0]
            operands = args[1] if len(args) == 2 and isinstance(args[1], (list, tuple)) else args[1:]
        else:
            equation, operands = _sublist_form(args)
        shapes = ()
        for operand in operands:
            shapes = shapes + (tuple(operand.shape),)
        x = operands[0]
        y = operands[0]
        for step in plan(equation, shapes):   # a constant: GRAPH mode unrolls the loop
            kind = step[0]
            if kind == "load":
                y = operands[step[1]]
            elif kind == "matmul":
                x = ops.matmul(x, y)
            elif kind == "mul":   # an outer product: MindSpore 2.10's batched matmul fails in backward then
                x = x * y
            elif step[1] == 0:
                x = _einsum_step(ops, x, step)
            else:
                y = _einsum_step(ops, y, step)
        return x
    return einsum


def _einsum_step(ops, x, step):
    """One step of _einsum_plan on one operand: a diagonal, a sum, a transpose or a reshape."""
    kind = step[0]
    if kind == "diag":     # ("diag", operand, n, the eye's shape to multiply by, the axis summed)
        return (x * ops.eye(step[2], step[2], x.dtype).reshape(step[3])).sum(axis=step[4])
    if kind == "sum":      # ("sum", operand, axes, keepdims)
        return x.sum(axis=step[2], keepdims=step[3])
    if kind == "perm":
        return x.transpose(step[2])
    return x.reshape(step[2])


def _sublist_form(args) -> tuple[str, tuple]:
    """torch's sublist form: operand, its labels as ints, ..., optionally the output's labels last."""
    pairs, output = (args[:-1], args[-1]) if len(args) % 2 else (args, None)
    equation = ",".join(_letters(s) for s in pairs[1::2]) + ("" if output is None else "->" + _letters(output))
    return equation, tuple(pairs[0::2])


def _letters(sublist) -> str:   # torch numbers the labels 0-51: A-Z, then a-z
    return "".join("..." if i is Ellipsis else (string.ascii_uppercase + string.ascii_lowercase)[i] for i in sublist)


def _einsum_plan(equation: str, shapes: tuple) -> tuple:
    """The steps of einsum: per operand, its repeated labels taken on their diagonal and the labels no one else
    needs summed out; then each next operand contracted with what came before; the output's order last. Each step
    names the operand it acts on (0: what came before, 1: the operand loaded last) and its sizes: the shapes are
    all it reads."""
    terms, output = _einsum_labels(equation, [len(shape) for shape in shapes])
    steps: list[tuple] = []
    labels, shape = _plan_reduce(steps, 0, terms[0], list(shapes[0]), _labels_needed(output, terms[1:]))
    for i in range(1, len(terms)):
        steps.append(("load", i))
        keep = _labels_needed(output, terms[i + 1:])
        y_labels, y_shape = _plan_reduce(steps, 1, terms[i], list(shapes[i]), keep | set(labels))
        labels, shape = _plan_contract(steps, labels, shape, y_labels, y_shape, keep)
    _plan_permute(steps, 0, [labels.index(label) for label in output])
    return tuple(steps)


def _plan_permute(steps: list, operand: int, order: list[int]) -> None:
    if order != sorted(order):
        steps.append(("perm", operand, tuple(order)))


def _einsum_labels(equation: str, ndims: list[int]) -> tuple[list[list], list]:
    """Each operand's label per dimension and the output's; ``...`` becomes ("...", k) labels, right-aligned."""
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum(): {equation!r} has {len(terms)} operand subscripts for {len(ndims)} operands")
    ellipsis_dims = 0
    for term, ndim in zip(terms, ndims):
        explicit = len(term.replace("...", ""))
        if ("..." in term and explicit > ndim) or ("..." not in term and explicit != ndim):
            raise ValueError(f"einsum(): the subscript {term!r} does not fit an operand of {ndim} dimensions")
        ellipsis_dims = max(ellipsis_dims, ndim - explicit if "..." in term else 0)

    def expand(term: str, width: int) -> list:
        head, dots, tail = term.partition("...")
        middle = [("...", k) for k in range(ellipsis_dims - width, ellipsis_dims)] if dots else []
        return [*head, *middle, *tail]

    labels = [expand(t, n - len(t.replace("...", ""))) for t, n in zip(terms, ndims)]
    if arrow:
        out = expand(output, ellipsis_dims)
    else:   # implicit: the broadcast dimensions, then the labels seen once, in alphabetical order
        seen = [label for term in labels for label in term if isinstance(label, str)]
        out = [("...", k) for k in range(ellipsis_dims)] + sorted(l for l in set(seen) if seen.count(l) == 1)
    every = {label for term in labels for label in term}
    if any(label not in every for label in out) or len(set(out)) != len(out):
        raise ValueError(f"einsum(): the output subscripts of {equation!r} must each appear once, in an operand")
    return labels, out


def _labels_needed(output, pending: list) -> set:
    return set(output).union(*pending)


def _plan_reduce(steps: list, operand: int, labels: list, shape: list, keep: set) -> tuple[list, list]:
    """One operand with a repeated label taken on its diagonal and the labels no one else needs summed out."""
    labels = list(labels)
    for label in dict.fromkeys(labels):
        while labels.count(label) > 1:
            p = labels.index(label)
            q = labels.index(label, p + 1)
            n = shape[p]
            steps.append(("diag", operand, n, tuple(n if i in (p, q) else 1 for i in range(len(labels))), q))
            del labels[q], shape[q]
    gone = tuple(i for i, label in enumerate(labels) if label not in keep)
    if gone:
        steps.append(("sum", operand, gone, False))
        shape = [n for i, n in enumerate(shape) if i not in gone]
        labels = [label for label in labels if label in keep]
    return labels, shape


def _plan_contract(steps: list, x_labels: list, x_shape: list, y_labels: list, y_shape: list,
                   keep: set) -> tuple[list, list]:
    """x and y multiplied over their shared labels, summed over the shared ones ``keep`` lacks: one matmul of
    (batch..., x's own, contracted) by (batch..., contracted, y's own)."""
    shared = [label for label in x_labels if label in y_labels]
    batch = [label for label in shared if label in keep]
    summed = [label for label in shared if label not in keep]
    x_own = [label for label in x_labels if label not in shared]
    y_own = [label for label in y_labels if label not in shared]
    x_shape, y_shape = list(x_shape), list(y_shape)
    for label in summed:   # a size-1 dimension broadcasts: sum the other side over it first
        i, j = x_labels.index(label), y_labels.index(label)
        if x_shape[i] == 1 and y_shape[j] != 1:
            steps.append(("sum", 1, (j,), True))
            y_shape[j] = 1
        elif y_shape[j] == 1 and x_shape[i] != 1:
            steps.append(("sum", 0, (i,), True))
            x_shape[i] = 1
    x_size, y_size = dict(zip(x_labels, x_shape)), dict(zip(y_labels, y_shape))
    _plan_permute(steps, 0, [x_labels.index(label) for label in batch + x_own + summed])
    _plan_permute(steps, 1, [y_labels.index(label) for label in batch + summed + y_own])
    k = math.prod(x_size[label] for label in summed)
    steps.append(("reshape", 0, tuple(x_size[label] for label in batch)
                  + (math.prod(x_size[label] for label in x_own), k)))
    steps.append(("reshape", 1, tuple(y_size[label] for label in batch)
                  + (k, math.prod(y_size[label] for label in y_own))))
    steps.append(("mul",) if k == 1 else ("matmul",))
    batch_shape = tuple(max(x_size[label], y_size[label]) for label in batch)   # a size 1 broadcasts
    shape = batch_shape + tuple(x_size[label] for label in x_own) + tuple(y_size[label] for label in y_own)
    steps.append(("reshape", 0, shape))
    return batch + x_own + y_own, list(shape)

