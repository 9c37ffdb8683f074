"""The check on every output: nothing invalid is written. It parses a skeleton of the output (Source.skeleton: the
statements no edit touches written `pass`), which must parse only if the whole output does.

The property is tried on our model files and on a text with every kind of statement, with edits of any size
(a name, an expression, a statement, a header, a run of lines) whose text is often not Python."""
from __future__ import annotations

import ast
import os
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from recompat.translator.results import TranslateError
from recompat.translator.source import Source
from recompat.translator.translate import _check_own_output

REPO = Path(__file__).resolve().parents[1]
SHAPES = '''"""Every kind of statement, nested."""
from __future__ import annotations
import torch; from torch import nn


@torch.no_grad()
@staticmethod
def decorated(x: torch.Tensor, *a, k=1, **kw) -> torch.Tensor:
    if x is None: return x
    elif k: x = x + 1
    else:
        x = x * 2; y = x
    for i in range(3):
        while i:
            i -= 1
        else:
            pass
    try:
        y = torch.zeros(
            2, 3,  # a comment
            dtype=torch.float32)
    except (ValueError, TypeError) as e:
        raise RuntimeError("no") from e
    else:
        y = None
    finally:
        del y
    with torch.no_grad(), open("f") as f:
        match k:
            case 1 | 2:
                return [t for t in x if t]
            case _:
                return lambda: x \\
                    + 1
    return x


class Net(nn.Module):
    """Doc."""
    size: int = 3

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    @property
    def twice(self):
        return 2 * self.size

    async def forward(self, x):
        async with lock:
            await x
        global g
        return self.fc(x)


if __name__ == "__main__":
    Net()
'''
TEXTS = [SHAPES, SHAPES.replace("\n", "\r\n"), *(p.read_text() for p in sorted((REPO / "examples" / "tinynets").glob("*.py"))
                   if p.stat().st_size > 1000)]
JUNK = ["", "x", "pass", "(", ")", ":", "f(x)", "\n", "\n    ", "  ", "\t", "def", "#", "'", '"""', "'''", "\\",
        "\\\n", ",", "else:", "if c:", "if c:\n", "return 1", "\n    y = 2\n", "    def g():\n", "@d\n", "lambda: 0",
        "[", "]", ";", "import m", "f'{"]


def _spans(text: str) -> list[tuple[int, int]]:
    """Spans an edit may cover: every node's, each line's, each run of two lines."""
    src = Source(text.encode(), "t.py")
    out = [(src.start(n), src.end(n)) for n in ast.walk(ast.parse(text)) if hasattr(n, "end_lineno")]
    lines = len(src.text.splitlines())
    out += [(src.line_start(k), src.line_end(k)) for k in range(1, lines + 1)]
    out += [(src.line_start(k), src.line_end(k + 1)) for k in range(1, lines)]
    return out


@st.composite
def edited(draw):
    text = draw(st.sampled_from(TEXTS))
    spans = _spans(text)
    src = Source(text.encode(), "t.py")
    taken: list[tuple[int, int]] = []
    for _ in range(draw(st.integers(1, 4))):
        start, end = draw(st.sampled_from(spans))
        if draw(st.booleans()):
            end = start                   # an insertion
        if any(a < end and start < b or a == start for a, b in taken):
            continue                      # the translator's edits never overlap
        taken.append((start, end))
        keep = draw(st.booleans()) and end > start
        src.replace(start, end, (src.text[start:end] if keep else "") + draw(st.sampled_from(JUNK)))
    return src


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():     # junk may hold invalid escapes
            warnings.simplefilter("ignore")
            ast.parse(text)
        return True
    except SyntaxError:
        return False


@settings(max_examples=int(os.environ.get("RC_EXAMPLES", 400)), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(edited())
def test_the_skeleton_parses_only_if_the_output_does(src):
    skeleton = src.skeleton(ast.parse(src.text))
    event(f"the skeleton holds: {skeleton.holds()}")
    if skeleton.holds():
        assert _parses(src.result()), skeleton.text


def test_the_skeleton_is_the_touched_statements_only():
    text = SHAPES
    src = Source(text.encode(), "t.py")
    tree = ast.parse(text)
    fc = next(n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "Linear")
    src.replace_node(fc, "nn.Dense")
    skeleton = src.skeleton(tree).text
    assert "nn.Dense(4, 4)" in skeleton and "def __init__(self):" in skeleton and "class Net(nn.Module):" in skeleton
    assert "torch.zeros" not in skeleton and "def twice" not in skeleton and "Doc." not in skeleton
    assert len(skeleton) < len(text) / 3


def test_a_broken_edit_deep_in_a_class_is_refused():
    # planted bug: one edit in one method of a class among untouched ones writes an unclosed call
    text = SHAPES
    src = Source(text.encode(), "net.py")
    tree = ast.parse(text)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "fc")
    src.replace_node(call, "self.fc(x")
    with pytest.raises(TranslateError, match=r"net\.py: recompat produced invalid Python at line 54"):
        _check_own_output(src.result(), "net.py", src.skeleton(tree))


def test_what_the_skeleton_cannot_compile_the_whole_text_decides():
    # a `from __future__` import after an inserted line: the skeleton does not compile, the text parses
    text = "import os\nfrom __future__ import annotations\n"
    src = Source(text.encode(), "f.py")
    src.insert(0, "x = 1\n")
    _check_own_output(src.result(), "f.py", src.skeleton(ast.parse(text)))



def test_an_elif_is_checked_where_its_if_changed():
    # found by the property: an edit replaced the `if` line; the `elif` after it, untouched, must not be elided
    src = Source(SHAPES.encode(), "f.py")
    line = next(k for k, text in enumerate(SHAPES.splitlines(), 1) if text.strip() == "if x is None: return x")
    src.replace(src.line_start(line), src.line_end(line), "\n    y = 2\n")
    assert not _parses(src.result())
    with pytest.raises(TranslateError, match=r"f\.py: recompat produced invalid Python"):
        _check_own_output(src.result(), "f.py", src.skeleton(ast.parse(SHAPES)))
