"""A second model library nobody here wrote: vit-pytorch 1.26.11 (a test dependency, installed without its
torchvision requirement, which only its DINO trainer imports), translated with translate --scope model and compared
under MindSpore against the original, model by model.

What must hold for it as for MONAI (tests/test_monai.py): every file translates, and the translated models agree
with the originals under compare() (outputs, input and parameter gradients). The modules are imported without the
package's __init__, which imports every module, DINO's torchvision among them.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import sys
import types
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest

from recompat.cli import main

SPEC = importlib.util.find_spec("vit_pytorch")
pytestmark = pytest.mark.skipif(SPEC is None, reason="vit-pytorch is not installed (make install)")

# module, class, a small configuration (32x32 images, two blocks)
MODELS = {
    "ViT": ("vit", dict(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, heads=4, mlp_dim=128)),
    "SimpleViT": ("simple_vit", dict(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, heads=4,
                                     mlp_dim=128)),
    "DeepViT": ("deepvit", dict(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, heads=4, mlp_dim=128)),
    "CaiT": ("cait", dict(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, cls_depth=1, heads=4,
                          mlp_dim=128)),
    "CrossViT": ("cross_vit", dict(image_size=32, num_classes=10, depth=1, sm_dim=32, sm_patch_size=8,
                                   sm_enc_depth=1, sm_enc_heads=2, sm_enc_mlp_dim=64, lg_dim=64, lg_patch_size=16,
                                   lg_enc_depth=1, lg_enc_heads=2, lg_enc_mlp_dim=64, cross_attn_depth=1,
                                   cross_attn_heads=2)),
}


@pytest.fixture
def pynative():
    import mindspore

    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)   # process-global: another test may have set GRAPH mode
    yield


@pytest.fixture(scope="module")
def translated(tmp_path_factory):
    """(the folder holding the translated vit_pytorch, the translation's JSON report)."""
    installed = Path(list(SPEC.submodule_search_locations)[0])
    root = tmp_path_factory.mktemp("vit")
    shutil.copytree(installed, root / "source" / "vit_pytorch", ignore=shutil.ignore_patterns("__pycache__"))
    report = root / "report.json"
    code = main(["translate", str(root / "source" / "vit_pytorch"), "--scope", "model", "-o",
                 str(root / "out" / "vit_pytorch"), "--json", str(report), "-q"])
    assert code in (0, 1), code            # 1: manual sites are left (reported)
    return root / "out", json.loads(report.read_text())


def test_every_file_translates(translated):
    _, report = translated
    assert not [f["path"] for f in report["files"] if f["error"]]
    assert report["summary"]["files_changed"] > 70, report["summary"]


def test_each_model_compared_here_is_one_the_verdicts_say_will_run(translated):
    """translator/verdicts.py before running, against running (the test below): the models compared here run."""
    _, report = translated
    verdicts = {c["cls"]: c for c in report["classes"]}
    for name, (module, _) in MODELS.items():
        assert verdicts[f"vit_pytorch.{module}.{name}"]["verdict"] == "runs", verdicts[f"vit_pytorch.{module}.{name}"]


def _forget_package() -> None:
    for key in [k for k in sys.modules if k == "vit_pytorch" or k.startswith("vit_pytorch.")]:
        del sys.modules[key]


def _module(folder: Path, name: str):
    """vit_pytorch.<name> from `folder`, its package made empty: the real __init__ imports every module."""
    _forget_package()
    package = types.ModuleType("vit_pytorch")
    package.__path__ = [str(folder / "vit_pytorch")]
    sys.modules["vit_pytorch"] = package
    try:
        return importlib.import_module(f"vit_pytorch.{name}")
    finally:
        _forget_package()


@pytest.mark.runtime
@pytest.mark.parametrize("model", list(MODELS))
def test_the_translated_model_agrees_with_the_original(translated, model, pynative):
    import torch

    from recompat.compat import compare

    out, _ = translated
    module, config = MODELS[model]
    torch.manual_seed(0)
    original = getattr(_module(Path(list(SPEC.submodule_search_locations)[0]).parent, module), model)(**config)
    twin = getattr(_module(out, module), model)(**config)
    original.eval()
    twin.set_train(False)
    x = np.linspace(-1.0, 1.0, 2 * 3 * 32 * 32, dtype=np.float32).reshape(2, 3, 32, 32)
    report = compare(original, twin, [x])
    assert report.passed, str(report)
