"""Which weights compare() judges: the user's own conversion wherever they brought one, torch's copied in otherwise.

    choice = choose_weights(torch_model, ms_model, "auto")      # or "torch", "mindspore", "as-is", "model.ckpt"
    choice.run_with      # what run_pair is given: "as-is" (each model runs with what it holds), "torch", "mindspore"
    choice.judged        # the sentence the report prints: which weights were judged, and why

Why. Copying torch's weights into the MindSpore model hides the conversion the user wrote: a dropped bias or a
running variance left at ones is overwritten before anything runs. So:

- A path loads the file into the MindSpore model first, as the user would (``mindspore.load_checkpoint`` and
  ``load_param_into_net``): a MindSpore ``.ckpt``, or a torch file (.pt, .pth, .bin, .safetensors) converted the
  way ``recompat weights`` converts it, for the MindSpore model. Then each model runs with what it holds and the
  values are judged before the run (rows of kind "weight"). A key of the file the model has no parameter for is a
  failing row (its value is lost); a parameter the file does not hold is named in the sentence.
- "auto" (compare()'s default) looks at what the two models hold: where the MindSpore model already holds torch's
  values for at least HELD_SHARE of the elements of torch's parameters that are not constant (random
  initialisation never makes two such tensors equal across frameworks; a constant, such as LayerNorm's ones, says
  nothing), the user converted them, and they are judged as held, within round-off as they were found alike (two
  models given the same computed weights differ by ulps; a dropped bias differs by the bias). Otherwise (two freshly built models) torch's
  are copied in, and the sentence says so and how to judge one's own. Buffers do not count: many are computed
  alike on both sides (position ids, sinusoid tables).
- "torch", "mindspore", "as-is": as asked.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from recompat.constants import either

# "auto" judges the MindSpore model's own weights where it holds torch's values for at least this share of the
# elements of torch's non-constant parameters. Measured: two freshly built models hold 0% (a deterministic
# initialisation, such as a sinusoid embedding, is a few percent at most); a user's conversion holds ~100%, less
# what it dropped.
HELD_SHARE = 0.5

NAMED = ("auto", "torch", "mindspore", "as-is")
TORCH_FILES = (".pt", ".pth", ".bin", ".safetensors")

_AS_ASKED = {
    "torch": "torch's, copied into the MindSpore model (weights='torch')",
    "mindspore": "MindSpore's, copied into the torch model (weights='mindspore')",
    "as-is": "each model's own, as the user converted them (weights='as-is')",
}


@dataclass
class WeightChoice:
    """What compare() does with the weights: ``run_with`` is run_pair's ``weights``; ``judged`` says which
    weights were judged; ``file``: the weight file loaded into the MindSpore model; ``unused``: keys of that
    file the model has no parameter for; ``not_in_file``: MindSpore parameters the file does not hold."""
    asked: str
    run_with: str
    judged: str
    file: str | None = None
    exact: bool = True          # the values held judged bit for bit; "auto" judges within round-off, as it found them
    unused: list[str] = field(default_factory=list)
    not_in_file: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        out = {"asked": self.asked, "run_with": self.run_with, "judged": self.judged}
        if self.file:
            out.update(file=self.file, unused=self.unused, not_in_file=self.not_in_file)
        return out


def is_path(weights) -> bool:
    """A ``weights`` value that names a file rather than a side."""
    return isinstance(weights, os.PathLike) or (isinstance(weights, str) and weights not in NAMED)


def check_weights(weights) -> None:
    """A ValueError for a ``weights`` that is neither a name of NAMED nor the path of a weight file."""
    from .weight_files import FORMATS

    if isinstance(weights, (str, os.PathLike)) and (not is_path(weights) or Path(weights).suffix.lower() in FORMATS):
        return
    raise ValueError(f"weights must be {either(map(repr, NAMED))} or the path of a weight file (a MindSpore .ckpt, "
                     f"or a torch {', '.join(TORCH_FILES)} converted as `recompat weights` does), not {weights!r}")


def choose_weights(torch_model, ms_model, weights="auto") -> WeightChoice:
    """Decide (and, for a file, load) the weights compare() runs with; see the module docstring."""
    check_weights(weights)
    if is_path(weights):
        return _load_file(ms_model, Path(weights))
    if weights != "auto":
        return WeightChoice(weights, weights, _AS_ASKED[weights])
    held, total, n_held, n_total = held_share(torch_model, ms_model)
    share = held / total if total else 0.0
    if total and share >= HELD_SHARE:
        return WeightChoice("auto", "as-is", exact=False, judged=(
            f"the MindSpore model's own, as the user converted them: it already held torch's values for {n_held} of "
            f"{n_total} parameters ({share:.0%} of their elements), so nothing was copied and they are judged as held, "
            f"within round-off (weights='auto')"))
    return WeightChoice("auto", "torch", (
        f"torch's, copied into the MindSpore model: it held torch's values for {n_held} of {n_total} parameters, "
        f"so the two were taken as freshly built (weights='auto'); to judge your own conversion, load it into the "
        f"MindSpore model first, or pass weights='model.ckpt'"))


def held_share(torch_model, ms_model) -> tuple[int, int, int, int]:
    """(elements held alike, elements, parameters held alike, parameters) over torch's trainable parameters whose
    values are not all one number, as the two models hold them now."""
    from .compare import default_tolerance
    from .weights import transfer_weights

    transfer = transfer_weights(torch_model, ms_model, copy=False)
    buffers = set(transfer.buffers)
    held = total = n_held = n_total = 0
    for name, t, m in transfer.values():
        if name in buffers or t.size < 2 or not np.issubdtype(t.dtype, np.floating) or np.all(t == t.flat[0]):
            continue
        rtol, atol = default_tolerance(m.dtype.name)       # a conversion through float64 is alike too
        alike = t.shape == m.shape and np.allclose(m.astype(np.float64), t.astype(np.float64), rtol=rtol, atol=atol)
        n_total += 1
        total += t.size
        if alike:
            n_held += 1
            held += t.size
    return held, total, n_held, n_total


def _load_file(ms_model, path: Path) -> WeightChoice:
    """Load a weight file into the MindSpore model as a user does; a torch file is converted for the model first
    (compat.weight_files, what `recompat weights` runs). A file that cannot be used is a WeightFileError naming it,
    and the model is left as it was."""
    import mindspore

    from .weight_files import WeightFileError, convert, read

    source = str(path)
    if path.suffix.lower() in TORCH_FILES:
        report, arrays, dtypes = convert(path, ms_model, destination="the MindSpore model")
        if not report.ok:
            raise WeightFileError(f"{path}: cannot be converted for the MindSpore model:\n{report.text()}")
        source = f"{path} (converted as `recompat weights` does)"
    else:
        held = read(path)       # a file that is not a MindSpore checkpoint says so, by name
        arrays, dtypes = held.arrays, held.dtypes
    state = {k: mindspore.Parameter(mindspore.Tensor(a).astype(getattr(mindspore, dtypes[k])), name=k)
             for k, a in arrays.items()}
    # MindSpore stops at the first shape that differs, having loaded those before it: check them all first
    params = ms_model.parameters_dict()
    wrong = [f"{k} is {tuple(a.shape)} in the file, {tuple(params[k].shape)} in the model"
             for k, a in arrays.items() if k in params and tuple(a.shape) != tuple(params[k].shape)]
    if wrong:
        raise WeightFileError(f"{path}: does not fit the MindSpore model: {'; '.join(wrong)}; nothing was loaded")
    not_loaded, unused = mindspore.load_param_into_net(ms_model, state, strict_load=False)
    judged = f"the MindSpore model's, as loaded from {source}; torch's as the torch model holds them"
    if not_loaded:
        judged += f"; {len(not_loaded)} parameters not in the file kept their own values: {', '.join(not_loaded)}"
    return WeightChoice(str(path), "as-is", judged, file=str(path), unused=list(unused), not_in_file=list(not_loaded))


def unused_rows(choice: WeightChoice):
    """A failing row (kind "weight") for each key of the loaded file that no parameter of the model took: the
    conversion wrote a name the model does not have, and that value is lost."""
    from .compare import CompareRow

    if not choice.unused:
        return []
    name = Path(choice.file).name
    return [CompareRow.verdict(f"{name}[{key!r}]", "weight", False, f"{choice.file} holds {key!r}, which the MindSpore model has no "
                               f"parameter for: the conversion named it otherwise than the model does, and its "
                               f"value was not loaded") for key in choice.unused]
