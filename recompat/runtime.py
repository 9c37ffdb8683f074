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
"""
from __future__ import annotations

import ast
import functools
import inspect
import warnings

__all__ = ["add_child", "initialized", "layer_tensor", "torch_signature"]


def torch_signature(cls: type, api: str) -> type:
    """``cls``, the MindSpore class of the mapping entry of the torch class named ``api``, constructed with that torch
    class's arguments."""
    return _adapter(cls, api)


@functools.lru_cache(maxsize=None)
def _adapter(cls: type, api: str) -> type:
    from recompat import mappings

    entry = mappings.default().model_scope["torch"].get(api)
    if entry is None or entry.rule != "api_class" or not entry.proven:
        raise TypeError(f"recompat.runtime.torch_signature: {api} is no proven layer entry translated from torch "
                        "(see recompat's docs/en/index.md)")

    def __init__(self, *args, **kwargs):
        margs, mkwargs = _arguments(api, args, kwargs)
        cls.__init__(self, *margs, **mkwargs)

    __init__.__signature__ = _signature(entry.torch["signature"])   # code that inspects it sees torch's parameters
    return type(cls.__name__, (cls,), {
        "__init__": __init__, "__module__": cls.__module__, "__qualname__": cls.__qualname__,
        "__doc__": f"{cls.__name__}, constructed with the arguments of {api} (recompat.runtime.torch_signature)."})


class _Default:
    """A recorded default, shown as written (it may name the source framework: torch.strided)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _signature(recorded: str) -> inspect.Signature:
    """The recorded signature as inspect gives one, with ``self`` first (read by reports.signatures.parse)."""
    from recompat.reports.signatures import _KINDS, parse

    kinds = {text: kind for kind, text in _KINDS.items()}
    P = inspect.Parameter
    return inspect.Signature([P("self", P.POSITIONAL_OR_KEYWORD)] + [
        P(p.bare, kinds[p.kind], default=P.empty if p.default is None else _Default(p.default))
        for p in parse(recorded)])


def _arguments(api: str, args: tuple, kwargs: dict) -> tuple[list, dict]:
    """torch's arguments of ``api`` -> MindSpore's: the call is written as text (a value that reads back as itself
    as its literal, any other as a name), translated, and its arguments evaluated with those names bound."""
    values: dict[str, object] = {}

    def text(value) -> str:
        try:
            literal = repr(value)
            if type(ast.literal_eval(literal)) is type(value) and ast.literal_eval(literal) == value:
                return literal
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
        name = f"_recompat_value{len(values)}"
        values[name] = value
        return name

    call = ", ".join([*(text(a) for a in args), *(f"{k}={text(v)}" for k, v in kwargs.items())])
    imports, arg_texts, kwarg_texts = _translated(api, call)
    namespace = dict(values)
    exec(imports, namespace)    # the target framework's imports the translated text needs
    return ([eval(t, namespace) for t in arg_texts],
            {k: eval(t, namespace) for k, t in kwarg_texts.items()})


@functools.lru_cache(maxsize=4096)
def _translated(api: str, call: str) -> tuple[str, list[str], dict[str, str]]:
    """``api(call)`` translated to MindSpore: (its import lines, positional argument texts, keyword texts)."""
    from recompat.translator.translate import translate_bytes

    source = f"import torch\n\n\ndef _call():\n    return {api}({call})\n"
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
    return (imports, [ast.unparse(a) for a in made.args],
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
    """The tensor torch calls ``name`` on ``layer``, a MindSpore layer: where the mapping entries of its class (or
    of the nearest class it derives from that has entries: torch_signature's adapters) put it (BatchNorm2d's
    weight is gamma, BatchNorm3d's bn2d.gamma); ``name`` itself where they list no other.
    AttributeError naming the layer where its class has no counterpart of that tensor."""
    entries = next((found for cls in type(layer).__mro__ if (found := _layer_entries().get(cls))), ())
    places = {e.mindspore_tensor(name) for e in entries} or {name}     # by its class or one it derives from

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
