"""`recompat translate` on Jupyter notebooks (translator/notebooks.py): the code cells translated as one file, put
back cell by cell, the rest of the notebook's JSON byte for byte; diagnostics as file.ipynb:cell:line:col."""
from __future__ import annotations

import json
import os

import pytest

from recompat.cli import main

CELLS = [
    {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# A training notebook, é\n", "Text."]},
    {"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {},
     "outputs": [{"name": "stdout", "output_type": "stream", "text": ["hello\n"]}],
     "source": ["%matplotlib inline\n", "import torch\n", "from torch import nn\n", "import torch.nn.functional as F"]},
    {"cell_type": "code", "execution_count": 2, "id": "c2", "metadata": {}, "outputs": [],
     "source": ["class Net(nn.Module):\n", "    def __init__(self):\n", "        super().__init__()\n",
                "        self.fc = nn.Linear(4, 3)\n", "\n", "    def forward(self, x):\n", "        return self.fc(x)\n"]},
    {"cell_type": "code", "execution_count": 3, "id": "c3", "metadata": {}, "outputs": [],
     "source": ["model = Net()\n", "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n",
                "x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))\n", "losses = []\n", "for step in range(5):\n",
                "    optimizer.zero_grad()\n", "    loss = F.cross_entropy(model(x), y)\n", "    loss.backward()\n",
                "    optimizer.step()\n", "    losses.append(loss.item())"]},
    {"cell_type": "code", "execution_count": None, "id": "c4", "metadata": {}, "outputs": [],
     "source": "%%bash\necho torch.randn(3)"},
    {"cell_type": "code", "execution_count": None, "id": "c5", "metadata": {}, "outputs": [],
     "source": ["!ls\n", "print(torch.cuda.is_available())"]},
]


def _notebook(path, indent=1, sort_keys=True):
    nb = {"cells": CELLS, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
          "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(nb, indent=indent, sort_keys=sort_keys, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    return text


def _sources(nb: dict) -> list[str]:
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in nb["cells"]]


@pytest.mark.parametrize("indent, sort_keys", [(1, True), (2, False)], ids=["nbformat", "indent 2, key order"])
def test_a_notebooks_code_cells_translate_and_the_rest_stays_byte_for_byte(tmp_path, capsys, indent, sort_keys):
    original = _notebook(tmp_path / "train.ipynb", indent, sort_keys)
    code = main(["translate", str(tmp_path / "train.ipynb"), "--scope", "model", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0, err
    text = (tmp_path / "out" / "train.ipynb").read_text(encoding="utf-8")
    before, after = json.loads(original), json.loads(text)
    # the JSON is written as it was: the same settings give the same text
    assert text == json.dumps(after, indent=indent, sort_keys=sort_keys, ensure_ascii=False) + "\n"
    for a, b in zip(before["cells"], after["cells"]):
        assert {k: v for k, v in a.items() if k != "source"} == {k: v for k, v in b.items() if k != "source"}
    assert before["metadata"] == after["metadata"]
    new = _sources(after)
    assert new[0] == _sources(before)[0]                                   # markdown untouched
    assert new[1].startswith("%matplotlib inline\n") and "from mindspore import nn, ops" in new[1]
    assert "class Net(nn.Cell):" in new[2] and "def construct(self, x):" in new[2]
    assert "backward(forward_fn, model, optimizer)" in new[3] and "global loss" in new[3]
    assert new[4] == "%%bash\necho torch.randn(3)"                         # a cell magic is not Python
    assert new[5].startswith("!ls\n# recompat: RC301") and new[5].endswith("\nprint(torch.cuda.is_available())")
    assert isinstance(after["cells"][2]["source"], list) and isinstance(after["cells"][4]["source"], str)
    # diagnostics name the cell (1-based among all cells) and the line in it
    assert f"{tmp_path / 'train.ipynb'}:4:8:5: RC340 [converted] loss.backward()" in err
    assert f"{tmp_path / 'train.ipynb'}:6:2:7: RC301 [manual] torch.cuda.is_available" in err


@pytest.mark.runtime
def test_the_translated_notebook_trains_on_mindspore(tmp_path):
    os.environ.setdefault("GLOG_v", "3")
    _notebook(tmp_path / "train.ipynb")
    assert main(["translate", str(tmp_path / "train.ipynb"), "--scope", "model", "-o", str(tmp_path / "out"),
                 "-q"]) == 0
    nb = json.loads((tmp_path / "out" / "train.ipynb").read_text(encoding="utf-8"))
    code = "\n".join(line for src in _sources(nb)[1:4] for line in src.splitlines() if not line.startswith("%"))
    exec(compile(code, "train.ipynb", "exec"), namespace := {})
    losses = namespace["losses"]
    assert len(losses) == 5 and losses[-1] < losses[0]


def test_clear_outputs_clears_the_translated_notebooks_outputs(tmp_path):
    _notebook(tmp_path / "train.ipynb")
    assert main(["translate", str(tmp_path / "train.ipynb"), "--scope", "model", "--in-place", "--clear-outputs",
                 "-q"]) == 0
    nb = json.loads((tmp_path / "train.ipynb").read_text(encoding="utf-8"))
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in nb["cells"] if c["cell_type"] == "code")


def test_a_notebook_that_cannot_be_written_back_as_it_was_is_refused(tmp_path, capsys):
    nb = {"cells": CELLS, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "odd.ipynb").write_text(json.dumps(nb, separators=(",", ":")) + "  \n", encoding="utf-8")
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    code = main(["translate", str(tmp_path), "--scope", "model", "--in-place", "-q"])
    err = capsys.readouterr().err
    assert code == 2
    assert "odd.ipynb: its JSON is not laid out as Jupyter writes it" in err and "--exclude it" in err
    assert "broken.ipynb: not a Jupyter notebook" in err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
