"""Whole-model translation, proven by compare(): the zoo's torch twins and the seeds' examples, translated.

Zoo (torch -> MindSpore): each pair's torch twin is cut out of its pair's module in compat/zoo/ as source (its
class, the classes, functions and constants it uses, the imports those need), translated with
``translate_bytes(..., scope="model")``, imported from a file, built with the torch twin's constructor arguments
and compared with the torch twin by ``compare()`` (torch's weights transferred; outputs, input and parameter
gradients, buffers). Both variants are run: ``plain`` (recompute off: the model translation alone) and
``recompute`` (the torch twin's checkpoint form, so the translated checkpoint sites run too), in the pair's
cross-framework training mode and tolerances.

Seeds (../shared/seeds/, MindSpore's recompute documentation): the code blocks that define a model
(recompat.compat.seeds) are translated to the other framework and compared the same way, MindSpore's weights
copied into the torch translation for the MindSpore originals (``weights="mindspore"``).

A translation that still has manual sites (an API whose mapping is missing or not yet proven by its paired
example) does not run: the test is an xfail naming those APIs (never strict), and turns into a pass by itself once
the mappings cover them. A translation with no manual site must import, build and pass compare().
"""
from __future__ import annotations

import ast
import collections
import functools
import importlib.util
import inspect
import itertools
import os
import sys
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest

import mindspore as ms

from recompat.compat import compare, recomputed_ops, zoo
from recompat.compat.graph_recompute import unrecomputed
from recompat.compat.runs import normalise_inputs
from recompat.compat.seeds import code_blocks
from recompat.translator.translate import translate_bytes

pytestmark = pytest.mark.runtime

SEED = 0
SEEDS_DIR = Path(os.environ.get("RECOMPAT_SEEDS", Path(__file__).resolve().parents[2] / "shared" / "seeds"))
# Inputs of the seeds' models (by class name): shapes from the seed's own example, random normal float32 values.
SEED_INPUTS = {"Net": [(2, 12)], "MyCell": [(2, 2, 2, 2)]}
RTOL, ATOL = 1e-4, 1e-5          # cross-framework float32 (compat/compare.py's table)

_counter = itertools.count()


@pytest.fixture(autouse=True)
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)     # process-global; tests may share a process (pytest-xdist)
    yield


# --------------------------------------------------------------------------- the torch twins' source

@functools.lru_cache(maxsize=None)
def _pair_module(name: str) -> tuple[str, ast.Module, dict[str, int], str]:
    """(source, tree, top-level name -> index of the statement that binds it, package) of a pair's module."""
    module = sys.modules[name]
    source = inspect.getsource(module)
    tree = ast.parse(source)
    out: dict[str, int] = {}
    for i, node in enumerate(tree.body):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            out[node.name] = i
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                out.update((n.id, i) for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update(((a.asname or a.name).split(".")[0], i) for a in node.names)
    return source, tree, out, module.__package__


def torch_twin(pair: zoo.Pair) -> tuple[str, str, dict]:
    return twin_source(pair.torch_factory)


def twin_source(factory) -> tuple[str, str, dict]:
    """(module source, class name, the factory's keyword arguments) of one side of a pair: its class and what
    it uses of compat/zoo/ (classes, functions, constants, imports), in each module's order. What it imports from
    another module of the zoo (`from .layers import ms_conv`) is written into the file, so the file holds the
    whole model for a translation to work on; other imports stay imports."""
    keywords = {}
    if isinstance(factory, functools.partial):
        factory, keywords = factory.func, dict(factory.keywords)
    need: dict[str, set[int]] = {}            # module -> indexes of the statements the twin uses
    inlined: set[tuple[str, str]] = set()     # (module, name) imported from the zoo and written out instead
    todo = [(factory.__module__, factory.__name__)]
    while todo:
        module, name = todo.pop()
        _, tree, definitions, package = _pair_module(module)
        i = definitions.get(name)
        if i is None:
            continue
        node = tree.body[i]
        if isinstance(node, ast.ImportFrom) and node.level and node.module:
            target = importlib.util.resolve_name("." * node.level + node.module, package)
            alias = next(a for a in node.names if (a.asname or a.name) == name)
            _, its_tree, its_definitions, _ = _pair_module(target) if target in sys.modules else (0, 0, {}, 0)
            defined = name in its_definitions and not isinstance(its_tree.body[its_definitions[name]],
                                                                   (ast.Import, ast.ImportFrom))
            if alias.asname is None and defined and target.startswith(zoo.__name__ + "."):
                if (module, name) not in inlined:
                    inlined.add((module, name))
                    todo.append((target, name))
                continue
        if i in need.setdefault(module, set()):
            continue
        need[module].add(i)
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            todo += [(module, n.id) for n in ast.walk(node) if isinstance(n, ast.Name)]
    parts = ["from __future__ import annotations\n"]
    for module in sorted(need, key=lambda m: m == factory.__module__):   # the zoo's shared modules first
        source, tree, _, package = _pair_module(module)
        for i in sorted(need[module]):
            node = tree.body[i]
            if isinstance(node, ast.ImportFrom) and node.level:   # from .. import recompute_on_torch as torch_compat
                kept = [a for a in node.names if (module, a.asname or a.name) not in inlined]
                target = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
                if kept:
                    parts.append(ast.unparse(ast.ImportFrom(module=target, names=kept, level=0)) + "\n")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                parts.append(ast.get_source_segment(source, node) + "\n")
            else:
                parts.append("\n\n" + ast.get_source_segment(source, node) + "\n")
    return "".join(parts), factory.__name__, keywords


# --------------------------------------------------------------------------- translating and importing

@functools.lru_cache(maxsize=None)
def translated(source: str, path: str, to: str):
    result = translate_bytes(source.encode(), path, to=to, scope="model")
    text = result.new_data.decode() if result.new_data is not None else source
    return text, result


def manual_apis(result) -> collections.Counter:
    return collections.Counter(s.api for s in result.sites if s.status == "manual")


def xfail_if_manual(result, what: str) -> None:
    manual = manual_apis(result)
    if manual:
        listed = ", ".join(f"{api} x{n}" if n > 1 else api for api, n in sorted(manual.items()))
        pytest.xfail(f"{what}: {sum(manual.values())} manual site(s) left: {listed}")


def load(text: str, directory: Path, stem: str):
    """Import ``text`` from a file under ``directory`` as a fresh module (sys.modules left as it was)."""
    name = f"_recompat_translated_{stem}_{next(_counter)}"
    path = directory / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module        # while it runs: dataclasses and typing look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def _inputs(shapes) -> list[np.ndarray]:
    rng = np.random.default_rng(SEED)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


# --------------------------------------------------------------------------- zoo: torch -> MindSpore

@pytest.mark.filterwarnings("ignore:None of the inputs have requires_grad")   # checkpoint under no_grad
def test_the_cut_out_torch_twins_are_the_zoo_models(tmp_path):
    """The extracted source, imported as it is (untranslated), builds the zoo's torch twin: same parameters,
    same buffers, same outputs on the same weights."""
    import torch

    for pair in zoo.pairs():
        source, cls, keywords = torch_twin(pair)
        module = load(source, tmp_path, pair.name)
        for recompute in (False, True):
            want = pair.build_torch(recompute=recompute, form="checkpoint")
            torch.manual_seed(SEED)
            got = getattr(module, cls)(recompute, "checkpoint", **keywords)
            assert list(got.state_dict()) == list(want.state_dict()), pair.name
        got.load_state_dict(want.state_dict())
        xs = [torch.from_numpy(a) for a in pair.make_inputs(SEED)]
        with torch.no_grad():
            a, b = got.eval()(*xs), want.eval()(*xs)
        for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            torch.testing.assert_close(x, y, msg=pair.name)


@pytest.mark.parametrize("variant", ["plain", "recompute"])
@pytest.mark.parametrize("name", zoo.names())
def test_zoo_torch_twin_translated_to_mindspore_passes_compare(name, variant, tmp_path):
    pair = zoo.get(name)
    source, cls, keywords = torch_twin(pair)
    text, result = translated(source, f"zoo/{name}.py", "mindspore")
    xfail_if_manual(result, f"zoo pair {name}")
    module = load(text, tmp_path, name)
    recompute = variant == "recompute"
    training = pair.cross_mode_training
    torch_model = pair.build_torch(recompute=recompute, form="checkpoint", training=training)
    ms.set_seed(SEED)
    cell = getattr(module, cls)(recompute, "checkpoint", **keywords)
    assert isinstance(cell, ms.nn.Cell), f"{cls} translated is a {type(cell).__mro__}, not a MindSpore Cell"
    cell.set_train(training)
    arrays = pair.make_inputs(SEED)
    rtol, atol = pair.tolerance
    report = compare(torch_model, cell, arrays, rtol=rtol, atol=atol, seed=SEED,
                     grad_inputs=pair.differentiable(arrays))
    assert report.passed, f"{name} ({variant}), translated:\n{text}\n{report}"


# --------------------------------------------------------------------------- zoo: torch -> MindSpore, GRAPH mode

TRANSLATED_FORM = "function"      # torch's checkpoint(block, ...) translates to mindspore.recompute(block, ...)
_GRAPH_CASES = [p.name for p in zoo.pairs() if TRANSLATED_FORM in p.graph_forms]


@pytest.mark.parametrize("name", _GRAPH_CASES)
def test_zoo_translation_recomputes_in_graph_mode_what_torch_checkpoints(name, tmp_path, monkeypatch):
    """The translated torch twin, compiled in GRAPH mode, recomputes operators under each module torch checkpoints
    (compat.graph_recompute), as the pair's own function form does (or, where the zoo records that form recomputes
    nothing there, nothing)."""
    pair = zoo.get(name)
    source, cls, keywords = torch_twin(pair)
    text, result = translated(source, f"zoo/{name}.py", "mindspore")
    xfail_if_manual(result, f"zoo pair {name}")
    module = load(text, tmp_path, name)
    monkeypatch.setitem(sys.modules, module.__name__, module)     # GRAPH mode reads the module while compiling
    ms.set_seed(SEED)
    cell = getattr(module, cls)(True, "checkpoint", **keywords)
    cell.set_train(pair.training)
    values, keys = normalise_inputs(pair.make_inputs(SEED))
    tensors = [ms.Tensor(v) for v in values]
    found = (recomputed_ops(cell, *tensors) if keys is None else recomputed_ops(cell, **dict(zip(keys, tensors))))
    scopes = sorted({op.scope for op in found})
    missing = unrecomputed(found, pair.checkpointed)
    known = pair.graph_unrecomputed.get(TRANSLATED_FORM)
    if known:
        assert missing == list(pair.checkpointed), f"{name}: the zoo records ({known}), yet it recomputes {scopes}"
    else:
        assert not missing, (f"{name}, translated: nothing recomputed under {missing} in GRAPH mode (torch "
                             f"checkpoints {list(pair.checkpointed)}; recomputed: {scopes})\n{text}")


# --------------------------------------------------------------------------- zoo: MindSpore -> torch

_MS_CASES = [pytest.param(p.name, form, id=f"{p.name}-{form}") for p in zoo.pairs()
             for form in p.mindspore_forms if form != "compat"]   # compat: recompat's own shim, not MindSpore's


@pytest.mark.filterwarnings("ignore:None of the inputs have requires_grad")
@pytest.mark.parametrize("recompute", [False, True], ids=["plain", "recompute"])
@pytest.mark.parametrize("name, form", _MS_CASES)
def test_zoo_mindspore_twin_translated_to_torch_passes_compare(name, form, recompute, tmp_path):
    """A MindSpore model file, translated whole (--scope model --to torch), is a torch model that computes what
    the MindSpore one does: outputs, input and parameter gradients, in each recompute form MindSpore has
    (mindspore.recompute, Cell.recompute) and without recompute."""
    import torch

    pair = zoo.get(name)
    source, cls, keywords = twin_source(pair.mindspore_factory)
    text, result = translated(source, f"zoo/{name}_ms.py", "torch")
    xfail_if_manual(result, f"zoo pair {name} (MindSpore -> torch)")
    module = load(text, tmp_path, f"{name}_ms")
    training = pair.cross_mode_training
    cell = pair.build_mindspore(recompute=recompute, form=form, training=training)
    torch.manual_seed(SEED)
    model = getattr(module, cls)(recompute, form, **keywords)
    assert isinstance(model, torch.nn.Module), f"{cls} translated is a {type(model).__mro__}, not a torch Module"
    model.train(training)
    arrays = pair.make_inputs(SEED)
    rtol, atol = pair.tolerance
    report = compare(model, cell, arrays, rtol=rtol, atol=atol, seed=SEED, grad_inputs=pair.differentiable(arrays))
    assert report.passed, f"{name} ({form}, recompute={recompute}), translated:\n{text}\n{report}"


# --------------------------------------------------------------------------- seeds: both ways

def _seed_blocks():
    if not SEEDS_DIR.is_dir():
        return []
    out = []
    for path in sorted(SEEDS_DIR.iterdir()):
        if path.is_file():
            out += code_blocks(path.read_text(encoding="utf-8", errors="replace"), path.name)
    return out


SEED_BLOCKS = _seed_blocks()
_SEED_CASES = [pytest.param(b, m, id=f"{b.name.split('_')[0]}-{b.framework}-{m}") for b in SEED_BLOCKS
               for m in b.models[:1]]


@pytest.mark.skipif(not SEEDS_DIR.is_dir(), reason=f"no seeds folder at {SEEDS_DIR}")
def test_the_seeds_hold_mindspore_model_code():
    frameworks = collections.Counter(b.framework for b in SEED_BLOCKS)
    assert frameworks["mindspore"] >= 1, [b.name for b in SEED_BLOCKS]


@pytest.mark.filterwarnings("ignore:torch.utils.checkpoint. the use_reentrant parameter")   # the seed's own cp(f, x)
@pytest.mark.parametrize("block, model", _SEED_CASES)
def test_seed_model_translated_passes_compare(block, model, tmp_path):
    assert model in SEED_INPUTS, f"{block.name}: model {model}: add its input shapes to SEED_INPUTS"
    to = "torch" if block.framework == "mindspore" else "mindspore"
    text, result = translated(block.source, block.name, to)
    xfail_if_manual(result, f"seed {block.name} ({block.framework} -> {to})")
    original = load(block.source, tmp_path, "seed_original")
    translation = load(text, tmp_path, "seed_translated")
    arrays = _inputs(SEED_INPUTS[model])
    import torch

    torch.manual_seed(SEED)
    ms.set_seed(SEED)
    if block.framework == "mindspore":
        cell, torch_model, weights = getattr(original, model)(), getattr(translation, model)(), "mindspore"
    else:
        torch_model, cell, weights = getattr(original, model)(), getattr(translation, model)(), "torch"
    assert isinstance(torch_model, torch.nn.Module) and isinstance(cell, ms.nn.Cell), (type(torch_model), type(cell))
    torch_model.train(True)
    cell.set_train(True)
    report = compare(torch_model, cell, arrays, weights=weights, rtol=RTOL, atol=ATOL, seed=SEED)
    assert report.passed, f"{block.name} -> {to}, translated:\n{text}\n{report}"
