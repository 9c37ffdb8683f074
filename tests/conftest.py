"""Shared test set-up and the test models more than one test file uses.

The models are plain names here; a test file imports them (`from conftest import TORCH_CHECKPOINT_MODEL`: pytest
puts tests/ on sys.path). The MindSpore cells are built on first use, so a test file that never asks for one
never imports MindSpore (the pure-text tests stay pure text).

tests/cases/ holds the translation cases (before.py/after.py pairs, run by tests/test_cases.py): data, not test
modules, so pytest collects nothing under it.
"""
from __future__ import annotations

import functools
from pathlib import Path

collect_ignore_glob = ["cases/*"]

CASES = Path(__file__).parent / "cases"

# A torch model whose one checkpoint call the translator converts (CLI and report runs over a small tree); its block
# is also called plainly, so the call stays a call (mindspore.recompute) in the default style.
TORCH_CHECKPOINT_MODEL = """\
import torch
from torch.utils.checkpoint import checkpoint


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = checkpoint(self.block, x)
        return self.block(y)
"""

# The MindSpore seed: a Dense marked with recompute() in __init__, an operator marked too, the rest plain.
# Its whole translation to torch is the case tests/cases/to_torch/seed_cell_mark_checkpointed_operator_mark_dropped.
MINDSPORE_SEED = (CASES / "to_torch" / "seed_cell_mark_checkpointed_operator_mark_dropped" / "before.py").read_text(encoding="utf-8")


# -- MindSpore cells shared by tests/test_shims.py and tests/test_framework_facts.py ---------------------------

MINDSPORE_CELLS = ("Block", "DropBlock")


@functools.cache
def _mindspore_cells() -> dict:
    # nn and ops become this module's globals, so the cells' construct reads them as any module's code does
    # (GRAPH mode resolves globals, not a function's closure)
    global nn, ops
    from mindspore import nn, ops

    class Block(nn.Cell):
        """Dense 4->8 + ReLU (optionally times a mask), counting calls to construct."""

        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(4, 8)
            self.relu = nn.ReLU()
            self.calls = 0

        def construct(self, x, mask=None):
            self.calls += 1
            y = self.relu(self.dense(x))
            if mask is not None:
                y = y * mask
            return y

    class DropBlock(nn.Cell):
        """Dense 4->8 then dropout p=0.5: the nn.Dropout cell, or ops.dropout with functional=True."""

        def __init__(self, functional=False):
            super().__init__()
            self.dense = nn.Dense(4, 8)
            self.drop = nn.Dropout(p=0.5)
            self.functional = functional

        def construct(self, x):
            h = self.dense(x)
            if self.functional:
                return ops.dropout(h, p=0.5, training=True)
            return self.drop(h)

    return {"Block": Block, "DropBlock": DropBlock}


def __getattr__(name: str):
    if name in MINDSPORE_CELLS:
        return _mindspore_cells()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- the mappings cache (recompat.mappings.load): the run's own folder, so the suite never writes to ~/.cache. A hook,
# not a fixture: test modules load the mappings at import (collection) time. Subprocesses inherit the variable.
_SAVED_CACHE_ENV: dict = {}


def pytest_configure(config):
    import os
    import tempfile

    _SAVED_CACHE_ENV["RECOMPAT_CACHE_DIR"] = os.environ.get("RECOMPAT_CACHE_DIR")
    os.environ["RECOMPAT_CACHE_DIR"] = _SAVED_CACHE_ENV["folder"] = tempfile.mkdtemp(prefix="recompat-cache-")


def pytest_unconfigure(config):
    import os
    import shutil

    if "folder" in _SAVED_CACHE_ENV:
        shutil.rmtree(_SAVED_CACHE_ENV.pop("folder"), ignore_errors=True)
        before = _SAVED_CACHE_ENV.pop("RECOMPAT_CACHE_DIR")
        if before is None:
            os.environ.pop("RECOMPAT_CACHE_DIR", None)
        else:
            os.environ["RECOMPAT_CACHE_DIR"] = before



def translate_model(code: str):
    """(the translated text, its diagnostics): code translated to MindSpore with --scope model, every core entry
    taken as proven (as the paired examples are); the text must parse."""
    import ast

    from recompat import mappings
    from recompat.compat.prove import every_entry_proven
    from recompat.translator.translate import translate_bytes

    r = translate_bytes(code.encode(), "m.py", to="mindspore", scope="model",
                        mappings=every_entry_proven(mappings.default()))
    out = (r.new_data or code.encode()).decode()      # None: nothing changed
    ast.parse(out)
    return out, [d for s in r.sites for d in s.diagnostics]


# A MindSpore package whose marks are on a parameter, answered from every call the package makes (project.Tree):
# tests/test_project.py, tests/test_translation_memory.py
SETTING_PACKAGE = {
    "__init__.py": "",
    "setting.py": """\
        import mindspore                   # the file uses MindSpore: its marks are MindSpore's
        class LayerSetting:
            def __init__(self, recompute):
                self.recompute = recompute

            def __call__(self, layer, layer_id):
                self.set_recompute(layer, layer_id)

            def set_recompute(self, layer, layer_id):
                if self.recompute:
                    layer.recompute()
                else:
                    LayerSetting.select(layer, ["attn"])

            @staticmethod
            def select(layer, patterns):
                for name, cell in layer._cells.items():
                    if name in patterns:
                        cell.recompute()
                    LayerSetting.select(cell, patterns[1:])
                for attr in dir(layer):
                    operator = getattr(layer, attr)
                    operator.recompute()
        """,
    "model.py": """\
        from mindspore import nn
        from pkg.setting import LayerSetting


        class Block(nn.Cell):
            pass


        class Model(nn.Cell):
            def __init__(self, config, spec):
                super().__init__()
                self.setting = LayerSetting(config.recompute)
                self.layers = nn.CellList()
                for i in range(2):
                    layer = Block()
                    self.setting(layer, i)
                for i in range(2):
                    built = spec.build()                # what nothing shows, but a CellList takes Cells only
                    self.setting(built, i)
                    self.layers.append(built)
        """,
}
