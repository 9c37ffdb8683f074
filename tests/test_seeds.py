"""recompat.compat.seeds: model code out of documentation text (pure text, no framework imported)."""
from __future__ import annotations

import ast

from recompat.compat.seeds import code_blocks

PAGE = """\
Some prose about recompute.
# PyTorch
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        return self.fc(x)
x = torch.randn(2, 2)
print(Net()(x))
# mindspore
import mindspore
from mindspore import nn
class Block(nn.Cell):
    def construct(self, x):
        return x
class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = Block()
    def construct(self, x):
        return self.block(x)
model = Net()
More prose that is not code.
"""


def test_plain_blocks_keep_imports_and_classes_and_name_the_outer_model():
    torch_block, ms_block = code_blocks(PAGE, "page.txt")
    assert (torch_block.framework, torch_block.models) == ("torch", ["Net"])
    assert (ms_block.framework, ms_block.models) == ("mindspore", ["Net", "Block"])
    assert ms_block.name == "page.txt:14"
    for block in (torch_block, ms_block):
        tree = ast.parse(block.source)
        assert all(isinstance(n, (ast.Import, ast.ImportFrom, ast.ClassDef)) for n in tree.body)
    assert "print(" not in torch_block.source and "model = Net()" not in ms_block.source


def test_a_flattened_doctest_gets_its_indentation_back():
    text = ("Examples\n>>> import mindspore.nn as nn >>> from mindspore import ops >>> class MyCell(nn.Cell): "
            "... def __init__(self): ... super().__init__() ... self.relu = ops.ReLU() ... ... "
            "def construct(self, x): ... y = self.relu(x) ... return y >>> net = MyCell() >>> print(net) [[1. 2.]]")
    (block,) = code_blocks(text)
    assert block.models == ["MyCell"]
    assert "    def construct(self, x):\n        y = self.relu(x)\n        return y" in block.source


def test_a_doctest_one_statement_a_line():
    text = ">>> import torch\n>>> class M(torch.nn.Module):\n...     def forward(self, x):\n...         return x\n"
    (block,) = code_blocks(text)
    assert (block.framework, block.models) == ("torch", ["M"])


def test_text_without_model_code_gives_nothing():
    assert code_blocks("prose only\n>>> model = nn.Sequential(...)\nimport os\nx = 1\n") == []
    assert code_blocks("# title ```python import torch class Net(nn.Module): def f(self): ... ```") == []
