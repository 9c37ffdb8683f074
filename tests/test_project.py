"""translate --scope model over a package: a class deriving from a model class of another file of the tree is a
model too (translator/project.py), so its forward/construct is renamed, both ways."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import SETTING_PACKAGE
from recompat.translator import project
from recompat.translator.engine import Options, run

TORCH_PACKAGE = {
    "__init__.py": "from .regressor import Regressor\n",
    "regressor.py": """\
        from torch import nn


        class Regressor(nn.Module):
            def forward(self, x):
                return x
        """,
    "upsample.py": """\
        from torch import nn


        class UpSample(nn.Sequential):
            pass


        Upsample = UpSample
        """,
    "classifier.py": """\
        import torch
        from pkg import Regressor                 # through the package's __init__
        from .upsample import Upsample            # another name for a class


        class Classifier(Regressor):
            def forward(self, x):
                return x * 2


        class Critic(Classifier):
            def forward(self, x: torch.Tensor):
                return x.mean(1)


        class Wrapped(Upsample):
            def forward(self, x):
                return x


        class Plain:
            def forward(self, x):                 # no model: its forward stays
                return x
        """,
}


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")


def translated_in_place(tmp_path: Path, files: dict[str, str]):
    """The package `files` written to tmp_path/pkg and translated there to MindSpore (--scope model): (its folder,
    the report)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    write(pkg, files)
    return pkg, run(Options(paths=[str(pkg)], to="mindspore", scope="model", in_place=True, quiet=True))


def test_a_class_deriving_from_another_files_model_is_a_model(tmp_path):
    pkg, report = translated_in_place(tmp_path, TORCH_PACKAGE)
    assert report.summary.files_failed == 0
    out = (pkg / "classifier.py").read_text()
    for cls in ("Classifier", "Critic", "Wrapped"):
        body = out.split(f"class {cls}(")[1].split("\nclass ")[0]
        assert "def construct(self, x" in body and "def forward" not in body, (cls, out)
    assert "def forward(self, x):                 # no model" in out.split("class Plain")[1]


def test_the_same_across_files_from_mindspore_to_torch(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    write(pkg, {
        "__init__.py": "",
        "base.py": "from mindspore import nn\n\n\nclass Block(nn.Cell):\n    def construct(self, x):\n        return x\n",
        "net.py": "import mindspore\nfrom .base import Block\n\n\nclass Net(Block):\n    def construct(self, x):\n"
                  "        return mindspore.ops.relu(x)\n",
    })
    run(Options(paths=[str(pkg)], to="torch", scope="model", in_place=True, quiet=True))
    assert "    def forward(self, x):" in (pkg / "net.py").read_text()


@pytest.mark.parametrize("jobs", [1, 2])
def test_workers_give_what_one_process_gives(tmp_path, jobs):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    write(pkg, TORCH_PACKAGE)
    run(Options(paths=[str(pkg)], to="mindspore", scope="model", in_place=True, quiet=True, jobs=jobs))
    assert (pkg / "classifier.py").read_text().count("def construct") == 3


def test_model_classes_follow_re_exports_and_stop_at_cycles():
    from recompat import mappings

    facts = {
        "a": {"module": "a", "classes": {"a.A": ["torch.nn.Module"], "a.Loop": ["a.Loop2"], "a.Loop2": ["a.Loop"]},
              "bindings": {}},
        "b": {"module": "b", "classes": {"b.B": ["c.A"]}, "bindings": {}},
        "c": {"module": "c", "classes": {}, "bindings": {"A": "a.A", "X": "c.Y", "Y": "c.X"}},
    }
    models = project.model_classes(list(facts.values()), mappings.default().frameworks["torch"])
    assert {"a.A", "b.B", "c.A"} <= models and not {"a.Loop", "a.Loop2", "c.X"} & models
    assert project.missed_models(facts["b"], models) == {"b.B"}
    assert project.missed_models({**facts["b"], "models": ["b.B"]}, models) == set()
    assert project.module_name("x/pkg/__init__.py", "pkg") == "pkg"
    assert project.module_name("x/pkg/m.py", "pkg") == "pkg.m" and project.module_name("m.py", None) is None


# -- MindSpore -> torch: what a recompute mark is on, looked up in the package ------------------------

MINDSPORE_PACKAGE = {
    "__init__.py": "from .layers import Norm\n",
    "base.py": """\
        from mindspore import nn


        class Block(nn.Cell):
            pass
        """,
    "layers.py": """\
        from mindspore import nn
        from mindspore.ops import operations as P
        from .base import Block


        class MLP(Block):                      # a Cell through a class of another file
            def construct(self, x):
                return x


        class Inner(nn.Cell):
            pass


        class Norm(nn.Cell):
            def __init__(self):
                super().__init__()
                self.softmax = P.Softmax().shard(((1, 1),))   # an operator: shard returns it
                self.inner = Inner()                           # a Cell: a class of the same module


        class Helper:                          # no Cell: its recompute is its own
            def recompute(self, flag):
                return flag


        def make_dropout(p):
            if p > 0:
                dropout = nn.Dropout(p=p)
            else:
                dropout = nn.Dropout(p=0.0)
            return dropout


        def make_unknown(f):
            return f()
        """,
    "model.py": """\
        from mindspore import nn
        from pkg import Norm                   # through the package's __init__
        from .layers import MLP, Helper, make_dropout, make_unknown


        class Model(nn.Cell):
            def __init__(self, rms):
                super().__init__()
                norm = Norm if rms else nn.LayerNorm
                self.mlp = MLP()
                self.norm = norm()
                self.attn = Norm()
                self.dropout = make_dropout(0.1)
                self.helper = Helper()
                self.other = make_unknown(int)

            def select(self):
                self.mlp.recompute()
                self.norm.recompute(False)
                self.attn.softmax.recompute()
                self.dropout.recompute(False)
                self.helper.recompute(False)
                self.other.recompute()
                self.attn.inner.recompute()

            def construct(self, x):
                return self.attn.softmax(self.dropout(self.mlp(x)))
        """,
}


def test_marks_on_classes_factories_and_attributes_of_other_files(tmp_path):
    """The package's other modules say what each receiver is: a Cell through a base class in a third file, a
    class chosen at run time between two Cells, an operator held by another file's class, a factory's Cell; a
    class of the package that is no Cell has its own recompute; a factory returning what nothing shows stays; a
    class of the module that holds the attribute is read there."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    write(pkg, MINDSPORE_PACKAGE)
    report = run(Options(paths=[str(pkg / "model.py")], to="torch", check=True, quiet=True, json_path=None))
    sites = {(s.line, s.api.rsplit(".", 1)[0].rsplit(".", 1)[-1]): [d.code for d in s.diagnostics]
             for r in report.results for s in r.sites}
    by_line = {line: codes for (line, _), codes in sites.items()}
    assert by_line == {
        18: ["RC211"],             # self.mlp: MLP(Block), Block(nn.Cell) in base.py
        19: ["RC216"],             # self.norm: Norm or nn.LayerNorm, both Cells
        20: ["RC222"],             # self.attn.softmax: P.Softmax().shard(...) in layers.py's Norm: an operator's mark goes
        21: ["RC216"],             # self.dropout: make_dropout returns an nn.Dropout on every path
        23: ["RC290"],             # self.other: make_unknown returns what nothing shows
        24: ["RC211"],             # self.attn.inner: Inner(), a Cell of layers.py itself, marked in place
    }, by_line
    message = {s.line: s.diagnostics[-1].message for r in report.results for s in r.sites}
    assert "self.attn.softmax.recompute() on an operator dropped" in message[20]
    assert "the pkg package (this file included) does not show that self.other is a Cell" in message[23]


def test_the_tree_reads_each_module_once_and_only_its_own_package():
    from recompat import mappings

    read = []
    sources = {"pkg.a": b"from mindspore import nn\nclass A(nn.Cell):\n    pass\n",
               "pkg.b": b"from pkg.a import A\nclass B(A):\n    pass\nclass C(B, dict):\n    pass\n"}

    def reader(module):
        read.append(module)
        return (sources[module], "pkg") if module in sources else None

    frameworks = mappings.default().frameworks.values()
    tree = project.Tree(reader, frameworks, "pkg")
    assert tree.kind("pkg.b.B") == project.CELL and tree.kind("pkg.b.C") == project.CELL
    assert tree.kind("pkg.b.B") == project.CELL
    assert tree.kind("other.Thing") is None and tree.kind("pkg.missing.X") is None
    assert sorted(read) == ["pkg.a", "pkg.b", "pkg.missing"]




def test_a_mark_on_a_parameter_is_read_from_every_call_of_the_package(tmp_path):
    """`layer.recompute()` in LayerSetting is on a Cell: every call of set_recompute (through __call__, through
    the instance the model holds) passes one, a block the model builds or one it puts in a CellList; a child of
    a Cell (`layer._cells`) is a Cell, whatever the recursive call passes; `getattr(layer, attr)` stays."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    write(pkg, SETTING_PACKAGE)

    def marks():
        report = run(Options(paths=[str(pkg / "setting.py")], to="torch", check=True, quiet=True, json_path=None))
        return {s.line: [d.code for d in s.diagnostics] for r in report.results for s in r.sites}

    assert marks() == {11: ["RC219", "RC211"], 19: ["RC211"], 23: ["RC223"]}   # 23: getattr(layer, attr), by name
    # planted: a caller that passes an operator makes the parameter not shown, and with it the children
    model = SETTING_PACKAGE["model.py"].replace("from mindspore import nn\n",
                                                "from mindspore import nn, ops\n").replace(
        "                    layer = Block()\n", "                    layer = ops.ReLU()\n")
    write(pkg, {"model.py": model})
    assert marks() == {11: ["RC290"], 19: ["RC290"], 23: ["RC223"]}


STAR_PACKAGE = {
    "__init__.py": "",
    "activations.py": """\
        import torch
        from torch import nn as nn
        from torch.nn import functional as F


        class Swish(nn.Module):
            def forward(self, x):
                return x * torch.sigmoid(x)
        """,
    "create.py": """\
        from .activations import *


        LAYERS = dict(relu=nn.ReLU, selu=nn.SELU, swish=Swish)


        class SwishTwice(Swish):
            def forward(self, x):
                return F.relu(x)
        """,
    "heads.py": """\
        from .activations import *


        def head(n):
            return nn.Linear(n, 2)
        """,
}


def test_names_read_through_a_star_import_keep_their_meaning(tmp_path):
    """`from .activations import *` binds activations' torch names; activations' translation binds them to
    MindSpore's, or drops them. So where they are read they are translated, a name left as torch code is imported
    there itself, a class deriving from a star-imported model is a model, and a file that uses the names without
    spelling `torch` is translated too."""
    pkg, report = translated_in_place(tmp_path, STAR_PACKAGE)
    assert report.summary.files_failed == 0
    create = (pkg / "create.py").read_text()
    header, body = create.split("\n\n\n", 1)
    assert header.startswith("from .activations import *\n") and "from torch import nn" in header, create
    assert "selu=nn.SELU" in body and "relu=nn.ReLU" not in body and "def construct(self, x)" in body, create
    assert "F.relu" not in body, create
    heads = (pkg / "heads.py").read_text()
    assert "nn.Linear" not in heads and "Dense(n, 2)" in heads, heads


@pytest.mark.runtime
def test_a_star_imported_package_imports_with_each_name_from_its_framework(tmp_path):
    import subprocess
    import sys

    pkg, _ = translated_in_place(tmp_path, STAR_PACKAGE)
    probe = ("import mindspore, torch\nfrom pkg import create, heads\n"
             "assert create.LAYERS['selu'] is torch.nn.SELU\n"
             "assert issubclass(create.LAYERS['relu'], mindspore.nn.Cell)\n"
             "assert issubclass(create.SwishTwice, mindspore.nn.Cell)\n"
             "assert isinstance(heads.head(3), mindspore.nn.Dense)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
