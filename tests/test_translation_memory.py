"""A translation frees what it builds (syntax trees, their indexes, scopes) by reference counting as it ends.

The engine pauses Python's cyclic garbage collector while it translates a file (translator/engine.py), and a
reference cycle made on the way (a nested function that calls itself, an exception kept in a local of a frame
its traceback holds) keeps the file's trees alive until the collector runs: on a large tree that collecting was
a tenth of the run. So no syntax node may outlive a translation that was given no cache to keep it in."""
from __future__ import annotations

import ast
import gc
import textwrap
from pathlib import Path

import pytest

from conftest import SETTING_PACKAGE
from recompat import mappings
from recompat.translator import project
from recompat.translator.translate import translate_bytes

REPO = Path(__file__).resolve().parents[1]

# torch -> MindSpore, whole model: a value only the running program knows (RC309, deferred), a layer, a loop
DEFERRED = b"""\
import torch
import torch.nn.functional as F
from torch import nn


class Down(nn.Module):
    def __init__(self, levels):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(4, 4, 3) for _ in range(levels)])

    def forward(self, x, k):
        for conv in self.convs:
            x = conv(x)
        return F.interpolate(x, scale_factor=1 / (2 ** k))
"""


def nodes_left_by(work) -> int:
    """How many syntax nodes a second run of `work` leaves alive (the first fills the caches of mappings and
    parsed snippets), with the cyclic collector paused as the engine pauses it."""
    work()
    gc.collect()
    gc.disable()
    try:
        before = _nodes()
        work()
        return _nodes() - before
    finally:
        gc.enable()


def _nodes() -> int:
    # type(), not isinstance(): a weak proxy to a dead object (another test's) raises when asked its class
    return sum(issubclass(type(o), ast.AST) for o in gc.get_objects())


@pytest.mark.parametrize("path", sorted((REPO / "examples").rglob("*.py")), ids=lambda p: p.name)
def test_a_whole_model_translation_leaves_no_tree_behind(path):
    data = path.read_bytes()
    assert nodes_left_by(lambda: translate_bytes(data, str(path), to="mindspore", scope="model")) == 0


def test_a_call_left_by_hand_leaves_no_tree_behind():
    result = translate_bytes(DEFERRED, "down.py", to="mindspore", scope="model")
    assert "RC309" in {d.code for s in result.sites for d in s.diagnostics}   # the case this test is for
    assert nodes_left_by(lambda: translate_bytes(DEFERRED, "down.py", to="mindspore", scope="model")) == 0


def test_questions_to_the_package_leave_no_tree_behind(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for name, text in SETTING_PACKAGE.items():   # a mark on a parameter, asked of every call
        (pkg / name).write_text(textwrap.dedent(text))
    frameworks = mappings.default().frameworks.values()
    data = (pkg / "setting.py").read_bytes()

    def work():   # the Tree keeps what it parsed for its run: made and dropped here
        tree = project.Tree.on_disk(str(tmp_path), "pkg", frameworks)
        return translate_bytes(data, str(pkg / "setting.py"), to="torch", package="pkg", classes=tree)

    assert "RC211" in {d.code for s in work().sites for d in s.diagnostics}   # a Cell: answered from model.py's calls
    assert nodes_left_by(work) == 0
