"""Value changes of the core API set (a param's `convert` in mappings/), either way.

A converter gets the source side's values of every param row that names it (argument text as written, or the
source default: the entry's, mostly derived from its recorded signature, so no default is written again here),
keyed by source name (a row with none: by target name), plus the call's other arguments as written, with `names`
(source name -> target name), and returns the target side's arguments and a note (a guess the output rests on,
reported as partial) or None. Text in, text out: nothing here imports a framework.

transfer_weights (compat/weights.py) compares a built layer pair's settings through the same converters (`apply`,
values in, values out) and reads what a MindSpore convolution's padding amounts to from `conv_pads`, so translation
and weight transfer cannot disagree on a convention.
"""
from __future__ import annotations

import ast
import math

from recompat.constants import OTHER
from recompat.mappings import same   # two defaults that mean the same: the data layer's notion, used here


class Unconvertible(Exception):
    """A value with no counterpart on the target side; the message says why (shown in RC309)."""


class Deferred(Unconvertible):
    """A value the conversion needs to see, which only the running program knows (a variable): a layer's call can be
    translated when it runs (recompat.runtime.torch_signature, RC317); any other is left by hand (RC309)."""


def _literal(text: str | None):
    try:
        return ast.literal_eval(text.strip()) if text is not None else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOT_LITERAL


_NOT_LITERAL = object()


def is_literal(text: str) -> bool:
    """Does the text read as a Python literal (a value known before the program runs)?"""
    return _literal(text) is not _NOT_LITERAL


def _simple(text: str) -> bool:
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, (ast.Name, ast.Attribute, ast.Constant, ast.Call, ast.Subscript))


def _number(x: float) -> str:
    return repr(round(x, 12))


def one_minus(to: str, values: dict, names: dict) -> tuple[dict, str | None]:
    """BatchNorm momentum (torch: weight of the new value; MindSpore: of the old), Dropout p <-> keep_prob."""
    source = next(iter(names))
    target, text = names[source], values[source]
    v = _literal(text)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return {target: _number(1 - v)}, None
    if v is None:
        raise Unconvertible(f"{text.strip()} has no 1 - m counterpart (torch's cumulative moving average)")
    return {target: f"1 - {text.strip()}" if _simple(text) else f"1 - ({text.strip()})"}, None


def gelu_approximate(to: str, values: dict, names: dict) -> tuple[dict, str | None]:
    source = next(iter(names))
    target, text = names[source], values[source]
    v = _literal(text)
    table = {"none": False, "tanh": True} if to == "mindspore" else {False: "none", True: "tanh"}
    if v not in table:
        raise Unconvertible(f"approximate={text.strip()} is decided at run time or has no counterpart")
    return {target: repr(table[v])}, None


def shape_tuple(to: str, values: dict, names: dict) -> tuple[dict, str | None]:
    """torch's LayerNorm takes an int or a shape; MindSpore's a tuple, normalising over its last len() axes
    (begin_norm_axis / begin_params_axis, default -1)."""
    shape_name = "normalized_shape"
    text = next(t for k, t in values.items() if k == shape_name)
    v = _literal(text)
    if v is _NOT_LITERAL:   # (4, dim): a shape of names is a shape still, of as many axes as it is written with
        v = _written_sequence(text)
    if to == "mindspore":
        if isinstance(v, int):
            return {shape_name: f"({text.strip()},)"}, None
        if isinstance(v, (tuple, list)):
            if len(v) != 1:   # measured: begin_norm_axis=-2 raises on a 3-D and a 4-D input alike
                raise Unconvertible(f"{text.strip()} spans {len(v)} axes: MindSpore 2.10's LayerNorm refuses a "
                                    "begin_norm_axis below -1, and a positive one needs the input's rank")
            return {shape_name: text.strip()}, None
        return {shape_name: f"({text.strip()},)"}, f"{text.strip()} is taken for an int (a shape needs begin_norm_axis)"
    axes = {k: _literal(t) for k, t in values.items() if k in ("begin_norm_axis", "begin_params_axis")}
    n = len(v) if isinstance(v, (tuple, list)) else None
    for k, a in axes.items():
        if a is not None and a != -(n or 1):
            raise Unconvertible(f"{k}={a}: torch's LayerNorm normalises over exactly the shape's last axes")
    if isinstance(v, (tuple, list)) and len(v) == 1:
        return {shape_name: repr(v[0]) if isinstance(v[0], int) else text.strip()[1:-1].rstrip(", ")}, None
    return {shape_name: text.strip()}, None


def _written_sequence(text: str):
    """The elements of a tuple or list display as written (`(4, dim)` -> ('4', 'dim')), else _NOT_LITERAL."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return _NOT_LITERAL
    if isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return tuple(ast.unparse(e) for e in node.elts)
    return _NOT_LITERAL


def conv_padding(to: str, values: dict, names: dict) -> tuple[dict, str | None]:
    """torch: padding (int, one value per spatial axis, 'same', 'valid') + padding_mode; MindSpore: pad_mode +
    padding (an int, or (before, after) per axis: Conv2d's (top, bottom, left, right); Conv1d takes an int only)."""
    if to == "mindspore":
        if "padding_mode" in values and _literal(values["padding_mode"]) != "zeros":
            raise Unconvertible(f"padding_mode={values['padding_mode'].strip()}: "
                                "MindSpore's convolutions pad with zeros only")
        text = values["padding"]
        v = _literal(text)
        if v in ("same", "valid"):
            return {"pad_mode": repr(v), "padding": "0"}, None
        if v == 0 or (isinstance(v, (tuple, list)) and v and all(x == 0 for x in v)):
            return {"pad_mode": "'valid'", "padding": "0"}, None
        if isinstance(v, int):
            return {"pad_mode": "'pad'", "padding": text.strip()}, None
        if isinstance(v, (tuple, list)) and len(v) == 1 and isinstance(v[0], int):
            # Conv1d's (n,): MindSpore's Conv1d takes an int only (it refuses a tuple)
            return {"pad_mode": "'pad'", "padding": repr(v[0])}, None
        if isinstance(v, (tuple, list)) and v and all(isinstance(x, int) for x in v):
            # one value per spatial axis -> (before, after) per axis: Conv2d's (h, w) is (h, h, w, w), Conv3d's
            # (d, h, w) is (d, d, h, h, w, w)
            return {"pad_mode": "'pad'", "padding": repr(tuple(x for x in v for _ in (0, 1)))}, None
        if v is _NOT_LITERAL:
            return {"pad_mode": "'pad'", "padding": text.strip()}, f"padding={text.strip()} is taken for an int"
        raise Unconvertible(f"padding={text.strip()} has no MindSpore form")
    mode = _literal(values["pad_mode"])
    text = values["padding"]
    v = _literal(text)
    if mode == "same":
        return {"padding": "'same'"}, "torch's padding='same' needs stride 1"
    if mode == "valid":
        return {"padding": "0"}, None
    if mode == "pad":
        if isinstance(v, int):
            return {"padding": text.strip()}, None
        if isinstance(v, (tuple, list)) and len(v) in (4, 6) and v[0::2] == v[1::2]:
            return {"padding": repr(tuple(v[0::2]))}, None     # (t, b, l, r) with t == b, l == r is (t, l)
        if v is _NOT_LITERAL:
            return {"padding": text.strip()}, f"padding={text.strip()} is taken for an int"
        raise Unconvertible(f"padding={text.strip()}: torch pads both sides of an axis alike")
    raise Unconvertible(f"pad_mode={values['pad_mode'].strip()} is decided at run time or unknown")


# the settings MindSpore's pools take in pad_mode='valid' (any other needs 'pad'); a call that leaves one out has
# torch's default, which is this value
_VALID_POOL = {"dilation": 1, "return_indices": False, "ceil_mode": False}


def pool_padding(to: str, values: dict, names: dict) -> tuple[dict, str | None]:
    """Pools: torch's stride defaults to kernel_size (None), MindSpore's to 1 (it refuses None); torch pads by
    `padding`, MindSpore by pad_mode + padding, and needs pad_mode='pad' for dilation, return_indices, ceil_mode."""
    out = {}
    if to == "mindspore":
        if "stride" in names:
            stride = values["stride"]
            copy = _literal(stride) is None or stride.strip() == "kernel_size"
            out["stride"] = values.get("kernel_size", "1").strip() if copy else stride.strip()
        if "padding" in names or "pad_mode" in names:
            v = _literal(values["padding"])
            others = any(k in values and _literal(values[k]) != ok for k, ok in _VALID_POOL.items())
            if (v == 0 or v == (0, 0)) and not others:
                out.update(pad_mode="'valid'", padding="0")
            elif isinstance(v, (int, tuple, list)) or v is _NOT_LITERAL:
                out.update(pad_mode="'pad'", padding=values["padding"].strip())
            else:
                raise Unconvertible(f"padding={values['padding'].strip()} has no MindSpore form")
        return out, None
    if "stride" in names:
        out["stride"] = values["stride"].strip()
    if "padding" in names or "pad_mode" in names:
        mode = _literal(values["pad_mode"])
        if mode == "valid":
            out["padding"] = "0"
        elif mode == "pad":
            out["padding"] = values["padding"].strip()
        else:
            raise Unconvertible(f"pad_mode={values['pad_mode'].strip()}: torch's pools have no 'same' padding")
    return out, None


# a model's parameters as an optimizer takes them, by side: torch steps only those that got a gradient, so frozen
# ones stay; MindSpore steps every parameter it is given (get_parameters() would move frozen ones by weight decay)
_PARAMETERS = {"torch": "parameters", "mindspore": "trainable_params"}
_LAYER_PARAMETERS = {"torch": "parameters", "mindspore": "get_parameters"}


def trainable_params(to: str, values: dict, names: dict) -> tuple[dict, str | None]:
    """An optimizer's parameters: every `m.parameters(...)` in the argument (alone, in param groups, filtered)
    <-> `m.trainable_params(...)`; anything else goes as it is, with a note."""
    source = next(iter(names))
    text = values[source].strip()
    # the argument comes rendered: a layer's parameters() may already be the target's layer method (module_parameters
    # in mappings/nn_modules.yaml: get_parameters), which an optimizer takes as trainable_params() too
    old = {_PARAMETERS[OTHER[to]], _LAYER_PARAMETERS[to]}
    new = _PARAMETERS[to]
    try:
        tree = ast.parse(f"(\n{text}\n)", mode="eval")
    except SyntaxError:
        tree = None
    lines = f"(\n{text}\n)".encode().splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    ends = sorted(((starts[n.func.end_lineno - 1] + n.func.end_col_offset, n.func.attr)
                   for n in ast.walk(tree or ast.Module([]))
                   if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in old),
                  reverse=True)
    if not ends:
        return {names[source]: text}, (f"{text} is passed as it is: a MindSpore optimizer takes the Cell's "
                                        f"{_PARAMETERS['mindspore']}()" if to == "mindspore" else
                                        f"{text} is passed as it is: a torch optimizer takes the module's parameters()")
    out = b"".join(lines)
    for end, name in ends:
        out = out[:end - len(name)] + new.encode() + out[end:]
    return {names[source]: out.decode()[2:-2]}, None


def gradients(to: str, values: dict, names: dict) -> tuple[dict, str | None]:
    """Gradient clipping: torch clips the parameters' .grad in place, MindSpore clips the gradients it is given and
    returns them; the loop around it changes, not a value."""
    if to == "mindspore":
        raise Unconvertible("torch clips the parameters' .grad in place; MindSpore clips the gradients "
                            "value_and_grad returned and returns them: grads = ops.clip_by_norm(grads, max_norm)")
    raise Unconvertible("MindSpore clips the gradients it is given; torch clips the parameters' .grad in place "
                        "after backward(): torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)")


_FLOAT_CONSTANTS = {"inf", "nan", "pi", "e", "tau"}      # math.inf, np.nan, ...


def _python_type(node: ast.AST) -> type | None:
    """The Python type of a plain scalar expression (bool, int or float); None when it cannot be told here."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)):
        return type(node.value)
    if isinstance(node, ast.UnaryOp):
        inner = _python_type(node.operand)
        return bool if isinstance(node.op, ast.Not) else (int if inner is bool else inner)
    if isinstance(node, ast.BinOp):
        kinds = {_python_type(node.left), _python_type(node.right)}
        if None in kinds:
            return float if float in kinds else None
        return float if float in kinds or isinstance(node.op, (ast.Div, ast.Pow)) else int
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("float", "int", "bool"):
        return {"float": float, "int": int, "bool": bool}[node.func.id]
    if (isinstance(node, ast.Attribute) and node.attr in _FLOAT_CONSTANTS and isinstance(node.value, ast.Name)
            and node.value.id in ("math", "np", "numpy")):
        return float
    return None


# what torch.full makes of a Python fill value, where MindSpore's ops.full makes int64 (bool: True -> 1)
_FULL_DTYPES = {float: "mindspore.float32", bool: "mindspore.bool_"}


def fill_dtype(to: str, values: dict, names: dict) -> tuple[dict, str | None]:
    """torch.full takes its dtype from the fill value (float: the default float32; int: int64; bool: bool);
    MindSpore 2.10's ops.full makes int64 from any Python scalar, so a float fill is truncated (2.7 -> 2, -inf ->
    -9223372036854775808): a float or bool fill gets its torch dtype written out."""
    fill, dtype = values["fill_value"].strip(), values.get("dtype")
    out = {names["fill_value"]: fill}
    if dtype is not None and not same(dtype, "None"):
        return {**out, names["dtype"]: dtype.strip()}, None
    if to != "mindspore":
        return out, None
    try:
        kind = _python_type(ast.parse(fill, mode="eval").body)
    except SyntaxError:
        kind = None
    if kind is int:
        return out, None
    if kind in _FULL_DTYPES:
        return {**out, names["dtype"]: _FULL_DTYPES[kind]}, None
    raise Unconvertible(f"the fill value {fill} is not a literal: torch takes the dtype from its type, MindSpore's "
                        "ops.full makes int64 from a Python float (2.7 -> 2); pass dtype=")


def transpose_padding(to: str, values: dict, names: dict) -> tuple[dict, str | None]:
    """A 2-D transposed convolution's padding with output_padding: MindSpore 2.10's own output_padding computes other
    values, but cropping p before and p - output_padding after each axis gives torch's output exactly (measured):
    padding=(p_h, p_h - op_h, p_w, p_w - op_w), pad_mode='pad'. Where output_padding exceeds padding there is no
    such form."""
    if to != "mindspore":
        raise Unconvertible("MindSpore's asymmetric transposed padding has no torch form")
    op_text = values.get("output_padding", "0")
    op = _literal(op_text)
    if op == 0 or (isinstance(op, (tuple, list)) and op and all(x == 0 for x in op)):
        return conv_padding(to, values, names)
    if "padding_mode" in values and _literal(values["padding_mode"]) != "zeros":
        raise Unconvertible(f"padding_mode={values['padding_mode'].strip()}: only 'zeros' is torch's for a "
                            "transposed convolution")
    p = _literal(values["padding"])
    axes = len(op) if isinstance(op, (tuple, list)) else len(p) if isinstance(p, (tuple, list)) else 2
    ps, ops = _per_axis(p, axes), _per_axis(op, axes)
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (*ps, *ops)):
        raise Unconvertible(f"output_padding={op_text.strip()} with padding={values['padding'].strip()} is decided "
                            "at run time: MindSpore's own output_padding computes other values")
    if any(o > q for q, o in zip(ps, ops)):
        raise Unconvertible(f"output_padding={op_text.strip()} exceeds padding={values['padding'].strip()}: "
                            "MindSpore's own output_padding computes other values (measured 0.78 apart)")
    return {"pad_mode": "'pad'", "padding": repr(tuple(x for q, o in zip(ps, ops) for x in (q, q - o)))}, None


def instance_groups(to: str, values: dict, names: dict) -> tuple[dict, str | None]:
    """torch's InstanceNorm over C channels is a GroupNorm of C groups of one channel each (the same mean and variance
    per sample and channel); MindSpore 2.10's own InstanceNorm has no CPU kernel."""
    if to != "mindspore":
        raise Unconvertible("a GroupNorm is an InstanceNorm only where num_groups is num_channels")
    channels = values["num_features"].strip()
    return {"num_groups": channels, "num_channels": channels}, None


def interpolate_scale(to: str, values: dict, names: dict) -> tuple[dict, str | None]:
    """Upsample / interpolate by scale_factor: torch makes the output size floor(in x scale) and maps coordinates by
    scale_factor; MindSpore 2.10 refuses scale_factor on 3-D and 4-D input unless recompute_scale_factor=True, which
    maps them by the size ratio (out / in), and takes floats only. The two agree wherever in x scale is a whole
    number (measured, outputs and gradients, every mode but bicubic), so a scale_factor goes as floats with
    recompute_scale_factor=True, and a factor that is no whole number is noted. MindSpore's bicubic computes other
    values (measured 0.21 apart)."""
    out = {names[k]: v.strip() for k, v in values.items() if k in names and k != "scale_factor"}
    mode = _literal(values.get("mode", "'nearest'"))
    if mode == "bicubic":
        raise Unconvertible("MindSpore's bicubic kernel computes other values (measured 0.21 apart)")
    note = None if mode is not _NOT_LITERAL else (f"mode={values['mode'].strip()} is decided at run time: "
                                                  "MindSpore's 'bicubic' computes other values")
    text = values.get("scale_factor", "None").strip()
    scale = _literal(text)
    if to != "mindspore" or scale is None:
        return {**out, names["scale_factor"]: text}, note
    if scale is _NOT_LITERAL:
        raise Deferred(f"scale_factor={text} is decided at run time: MindSpore takes floats only")
    factors = scale if isinstance(scale, (tuple, list)) else (scale,)
    if not all(isinstance(f, (int, float)) and not isinstance(f, bool) and math.isfinite(f) for f in factors):
        raise Unconvertible(f"scale_factor={text} is not a finite number or a sequence of them")
    floats = ", ".join(_number(float(f)) for f in factors)
    out[names["scale_factor"]] = f"({floats},)" if isinstance(scale, (tuple, list)) and len(factors) == 1 else \
        f"({floats})" if isinstance(scale, (tuple, list)) else floats
    recomputed = _literal(values.get("recompute_scale_factor", "None")) is True   # torch maps by out / in too
    out[names["recompute_scale_factor"]] = "True"
    if not recomputed and any(float(f) != int(f) for f in factors):
        note = "; ".join(filter(None, [note, f"scale_factor={text} is no whole number: the same output only where the "
                                             "input size times it is a whole number"]))
    return out, note


CONVERTERS = {f.__name__: f for f in (one_minus, gelu_approximate, shape_tuple, conv_padding, pool_padding,
                                      trainable_params, gradients, fill_dtype, instance_groups,
                                      transpose_padding, interpolate_scale)}


def convert_text(name: str, to: str, values: dict, names: dict) -> tuple[dict, str | None]:
    """Run the converter `name` on source text. A value chosen at run time between two others
    (`pad_mode="pad" if padding else "valid"`) is converted branch by branch, and each target value that differs
    between the branches is chosen the same way (`padding=padding if padding else 0`); the branches must give
    the same target names."""
    for key, text in values.items():
        try:
            node = ast.parse(text.strip(), mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(node, ast.IfExp):
            continue
        (a, note_a), (b, note_b) = (convert_text(name, to, {**values, key: ast.unparse(branch)}, names)
                                    for branch in (node.body, node.orelse))
        if a.keys() != b.keys():
            raise Unconvertible(f"{key}={text.strip()}: its branches give different {'/'.join(sorted(a | b))}")
        test = ast.unparse(node.test)
        wrap = lambda t: f"({t})" if isinstance(ast.parse(t, mode="eval").body,
                                               (ast.IfExp, ast.Lambda, ast.NamedExpr)) else t
        out = {k: a[k] if same(a[k], b[k]) else f"{wrap(a[k])} if {wrap(test)} else {wrap(b[k])}" for k in a}
        notes = [n for n in dict.fromkeys((note_a, note_b)) if n]
        return out, "; ".join(notes) or None
    return CONVERTERS[name](to, values, names)


def apply(name: str, to: str, values: dict, names: dict) -> dict:
    """A converter on values rather than text (transfer_weights reads a built layer's settings): `values` maps
    each source name to a Python value (repr() must read back), the result maps target names to values. Raises
    Unconvertible as the converter does."""
    out, _ = CONVERTERS[name](to, {k: repr(v) for k, v in values.items()}, names)
    result = {}
    for k, text in out.items():
        v = _literal(text)
        result[k] = text if v is _NOT_LITERAL else v
    return result


def _per_axis(v, n: int) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def conv_pads(pad_mode: str, padding, kernel_size, dilation, stride, n: int) -> list[tuple[int, int]] | None:
    """What a MindSpore convolution's pad_mode + padding pads, as (before, after) for each of the last n spatial
    axes (MindSpore keeps Conv1d's settings as a 2-D convolution's: the last n are the real ones); None where it
    depends on the input size ('same' with a stride > 1 and a kernel wider than one element). torch's padding pads what conv_padding makes of it."""
    mode = str(pad_mode).strip("'\"").lower()
    if mode == "valid":
        return [(0, 0)] * n
    if mode == "same":
        totals = [d * (k - 1) for d, k in zip(_per_axis(dilation, n)[-n:], _per_axis(kernel_size, n)[-n:])]
        # with a stride, 'same' pads by the input size -- except where the kernel spans one element (1x1): then
        # (ceil(size / stride) - 1) * stride + 1 - size is never above 0, whatever the size
        if any(s != 1 and t for s, t in zip(_per_axis(stride, n)[-n:], totals)):
            return None
        return [(t // 2, t - t // 2) for t in totals]
    if mode == "pad":
        if isinstance(padding, int):
            return [(padding, padding)] * n
        flat = tuple(padding)[-2 * n:]
        if len(flat) != 2 * n:
            return None
        return [(flat[2 * i], flat[2 * i + 1]) for i in range(n)]
    return None
