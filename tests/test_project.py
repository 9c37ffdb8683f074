"""translate --scope model over a package: a class deriving from a model class of another file of the tree is a
model too (translator/project.py), so its forward/construct is renamed, both ways."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

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


def test_a_class_deriving_from_another_files_model_is_a_model(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    write(pkg, TORCH_PACKAGE)
    report = run(Options(paths=[str(pkg)], to="mindspore", scope="model", in_place=True, quiet=True))
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
