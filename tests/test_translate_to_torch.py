"""MindSpore -> torch: every recognised form's rewritten text, what is left alone, imports, idempotence,
the round trip with the other direction, and the CLI.

Whole-file before/after forms are cases in tests/cases/to_torch/ (tests/test_cases.py); here are the
parametrized variants, the round-trip properties and the CLI."""
from __future__ import annotations

import ast
import re
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import MINDSPORE_SEED
from recompat.cli import main
from recompat.constants import STYLES
from recompat.translator.translate import translate_bytes


def to_torch(code: str, path: str = "m.py"):
    result = translate_bytes(textwrap.dedent(code).encode(), path, to="torch")
    out = (result.new_data or textwrap.dedent(code).encode()).decode()
    return result, out


def to_ms(code: str, style: str):
    result = translate_bytes(code.encode(), "m.py", to="mindspore", style=style)
    return (result.new_data or code.encode()).decode()


def codes(result) -> list[str]:
    return [d.code for s in result.sites for d in s.diagnostics]


SEED = MINDSPORE_SEED   # its whole translation is a case: tests/cases/to_torch/seed_cell_mark_checkpointed_operator_mark_dropped


@pytest.mark.parametrize("imports, call", [
    ("from mindspore import recompute", "recompute"),
    ("import mindspore as ms", "ms.recompute"),
    ("import mindspore", "mindspore.recompute"),
    ("from mindspore import recompute as rc", "rc"),
])
def test_the_function_form_through_every_import(imports, call):
    result, out = to_torch(f"""\
        {imports}
        from mindspore import nn


        class Net(nn.Cell):
            def construct(self, x):
                return {call}(self.block, x)
    """)
    assert "return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False)" in out
    assert imports not in out   # the import only the site used is gone
    assert out.startswith("import torch.utils.checkpoint\nfrom mindspore import nn\n")
    assert codes(result) == ["RC201", "RC200"]


@pytest.mark.parametrize("keywords, expected, expected_codes", [
    ("use_reentrant=False", "use_reentrant=False", []),
    ("use_reentrant=flag", "use_reentrant=False", ["RC201"]),
    ("save_rng_state=False", "preserve_rng_state=False, use_reentrant=False", ["RC205", "RC201"]),
    ("use_reentrant=False, early_stop=False", "use_reentrant=False, early_stop=False", []),
    ("use_reentrant=False, context_fn=ctx", "use_reentrant=False, context_fn=ctx", ["RC206"]),
    ("output_recompute=False", "use_reentrant=False", ["RC203", "RC201"]),
    ("use_reentrant=True", "use_reentrant=False", ["RC201"]),
    ("output_recompute=True", "use_reentrant=False", ["RC204", "RC202"]),
    ("use_reentrant=True, output_recompute=True", "use_reentrant=False", ["RC204", "RC202"]),
    ("scale=2.0", "scale=2.0, use_reentrant=False", ["RC202"]),
    ("use_reentrant=True, scale=2.0", "use_reentrant=False, scale=2.0", ["RC202"]),
    ("**opts", '**{"use_reentrant": False, **opts}', ["RC207", "RC201", "RC208"]),
])
def test_each_keyword_is_a_recorded_decision(keywords, expected, expected_codes):
    result, out = to_torch(f"""\
        import mindspore


        def f(block, x, flag, ctx, opts):
            return mindspore.recompute(block, x, {keywords})
    """)
    assert f"return torch.utils.checkpoint.checkpoint(block, x, {expected})" in out
    assert codes(result) == [*expected_codes, "RC200"]
    ast.parse(out)


@pytest.mark.parametrize("mark, expected, expected_codes", [
    ("recompute_slice_activation=True", "(layer)", ["RC212", "RC211"]),
    ("mp_comm_recompute=False, parallel_optimizer_comm_recompute=True", "(layer)", ["RC212", "RC212", "RC211"]),
    ("use_reentrant=False, early_stop=False", "(layer, early_stop=False)", ["RC211"]),
    ("use_reentrant=False, context_fn=ctx", "(layer, context_fn=ctx)", ["RC206", "RC211"]),
])
def test_mark_options_on_the_composable_form(mark, expected, expected_codes):
    """mindformers-style: a loop variable over a CellList, known to be a Cell by its MindSpore-only keywords
    or by the SequentialCell it ends up in."""
    result, out = to_torch(f"""\
        import mindspore as ms


        def mark_all(blocks, ctx):
            layers = []
            for layer in blocks:
                layer.recompute({mark})
                layers.append(layer)
            return ms.nn.SequentialCell(*layers)
    """)
    assert f"        torch.distributed._composable.checkpoint{expected}\n" in out
    assert codes(result) == expected_codes


@pytest.mark.parametrize("code, why", [
    ("""\
        from mindspore import nn
        from .blocks import make_block


        def build():
            block = make_block()
            block.recompute()
            return block
    """, "does not show that block is a Cell"),
    ("""\
        from mindspore import nn


        def f(cell):
            return cell.recompute()
    """, "does not show"),
    ("""\
        from mindspore import nn


        def build(opts):
            block = nn.Dense(2, 2)
            block.recompute(**opts)
            return nn.SequentialCell([block])
    """, "**opts"),
    ("""\
        import mindspore


        def f(args):
            return mindspore.recompute(*args)
    """, "first argument"),
    # the spelling of older releases: False turns recompute off, a run-time mode is not known
    ("""\
        from mindspore import nn


        def build():
            block = nn.Dense(2, 2)
            block.recompute_(False)
            return nn.SequentialCell([block])
    """, "mode=False turns recompute off"),
    ("""\
        from mindspore import nn


        def build(enable):
            block = nn.Dense(2, 2)
            block.recompute_(mode=enable)
            return nn.SequentialCell([block])
    """, "mode=enable is decided at run time"),
    ("""\
        from mindspore import nn


        def build():
            block = nn.Dense(2, 2)
            block.recompute_(True, output_recompute=True)
            return nn.SequentialCell([block])
    """, "recompute_ takes mode only"),
    # mode is the older spelling's flag, not an option of Cell.recompute
    ("""\
        from mindspore import nn


        def build():
            block = nn.Dense(2, 2)
            block.recompute(mode=True)
            return nn.SequentialCell([block])
    """, "mode is not a Cell.recompute option"),
])
def test_what_cannot_be_converted_stays_with_a_comment(code, why):
    result, out = to_torch(code)
    assert result.changed and [s.status for s in result.sites] == ["manual"]
    message = result.sites[0].diagnostics[-1].message
    assert why in message
    assert f"# recompat: RC290 {message}\n" in out
    ast.parse(out)
    assert to_torch(out)[1] == out   # again: nothing changes


@pytest.mark.parametrize("code, kept", [
    ("""\
        from mindspore import ops


        class Net:
            def __init__(self):
                self.softmax = ops.Softmax()
                self.softmax.recompute()
                self.layers = [self.softmax]
    """, "        self.softmax = ops.Softmax()\n        self.layers = [self.softmax]\n"),
    ("""\
        from mindspore import ops


        class Net:
            def __init__(self):
                self.relus = [ops.ReLU().recompute()]
    """, "        self.relus = [ops.ReLU()]\n"),
    ("""\
        from mindspore import ops


        class Net:
            def __init__(self, on):
                self.relu = ops.ReLU()
                self.relu.recompute(on)
    """, "        self.relu = ops.ReLU()\n"),
], ids=["used-after", "as-a-value", "mode-at-run-time"])
def test_an_operators_mark_goes_wherever_it_is(code, kept):
    """torch cannot recompute one operator without keeping its output (bench/selective_bench.py): the mark goes,
    whatever else uses the operator, wherever its value goes, whatever its mode (off is torch's default too)."""
    result, out = to_torch(code)
    assert [[d.code for d in s.diagnostics] for s in result.sites] == [["RC222"]]
    assert [s.status for s in result.sites] == ["partial"]
    assert kept in out and "recompute" not in out
    assert "checkpoint the module that runs it" in result.sites[0].diagnostics[0].message
    ast.parse(out)
    assert to_torch(out)[1] == out


@pytest.mark.parametrize("code", [
    # a recompute method of an unrelated class
    """\
    import mindspore


    class Cache:
        def recompute(self):
            pass


    def refresh():
        cache = Cache()
        cache.recompute()
    """,
    # a local function named recompute
    """\
    import mindspore


    def recompute(block, x):
        return block(x)


    def f(block, x):
        return recompute(block, x)
    """,
    # no MindSpore in the file
    """\
    class Net:
        def __init__(self, block):
            self.block = block
            self.block.recompute()
    """,
    # a string and a comment that mention it
    """\
    import mindspore
    # mindspore.recompute(self.block, x)
    HELP = "call layer.recompute() in __init__"
    """,
    # a Cell's own method named recompute, called on self and on an instance held in an attribute
    """\
    from mindspore import nn


    class Helper:
        def recompute(self, block):
            return block


    class Model(nn.Cell):
        def __init__(self, block):
            super().__init__()
            self.helper = Helper()
            self.recompute(block)
            self.helper.recompute(block)

        def recompute(self, block):
            return self.helper.recompute(block)
    """,
    # inherited from a class of this file; and the older spelling as a method of the project's own
    """\
    import mindspore


    class Base:
        def recompute(self, x):
            return x

        def recompute_(self):
            return 0


    class Child(Base):
        def run(self):
            Child().recompute(1)
            return self.recompute(2) + self.recompute_()
    """,
])
def test_what_is_not_mindspores_is_left_alone(code):
    result, _ = to_torch(code)
    assert not result.changed and result.sites == []


def test_formatting_is_kept_crlf_and_comments():
    code = SEED.replace("    x = self.fc2(x)", "    x = self.fc2(x)  # the big one")
    data = textwrap.dedent(code).replace("\n", "\r\n").encode()
    result = translate_bytes(data, "m.py", to="torch")
    out = result.new_data
    assert b"\r\n" in out and b"\n" not in out.replace(b"\r\n", b"")
    assert b"x = torch.utils.checkpoint.checkpoint(self.fc2, x, use_reentrant=False)  # the big one\r\n" in out


def test_a_file_without_sites_is_not_rewritten():
    result = translate_bytes(b"import mindspore\nx = 1\n", "m.py", to="torch")
    assert not result.changed and result.new_data is None


# -- round trip ---------------------------------------------------------------------------------

REENTRANT = ["", ", use_reentrant=True", ", use_reentrant=False"]
EARLY_STOP = ["", ", early_stop=True", ", early_stop=False"]
MARK_FORMS = ["attr_calls", "loop_sequence", "none"]


@st.composite
def mindspore_files(draw) -> str:
    """A MindSpore model file with function-form calls and marks, in forms marked convertible both ways."""
    calls = []
    # every import of MindSpore is used (an unused one is not recompat's to touch; torch -> MindSpore then uses it)
    via = draw(st.sampled_from(["recompute", "ms.recompute"]))
    for i in range(draw(st.integers(1, 3))):
        reentrant = draw(st.sampled_from(REENTRANT))
        # non-reentrant with early stop is what MindSpore 2.10 crashes on (RC117): not a convertible form
        early_stop = draw(st.sampled_from(EARLY_STOP[::2] if "False" in reentrant else EARLY_STOP))
        kws = reentrant + early_stop + draw(st.sampled_from(["", ", output_recompute=False"]))
        calls.append(f"        x = {via}(self.block{i}, x{kws})")
    mark = draw(st.sampled_from(MARK_FORMS))
    init = [f"        self.block{i} = nn.Dense(4, 4)" for i in range(len(calls))]
    if mark == "attr_calls":
        init += ["        self.head = nn.Dense(4, 4)", "        self.head.recompute()"]
        calls.append("        x = self.head(x)")
    elif mark == "loop_sequence":
        init += ["        layers = []", "        for _ in range(2):", "            layer = nn.Dense(4, 4)",
                 "            layer.recompute()", "            layers.append(layer)",
                 "        self.tail = nn.SequentialCell(layers)"]
        calls.append("        x = self.tail(x)")
    return "\n".join([
        "import mindspore as ms" if via == "ms.recompute" else "from mindspore import recompute",
        "from mindspore import nn", "", "",
        "class Net(nn.Cell):", "    def __init__(self):", "        super().__init__()", *init, "",
        "    def construct(self, x):", *calls, "        return x", ""])


def _without_reentrancy_and_early_stop(text: str) -> str:
    """What a round trip may change and no more: MindSpore's reentrant recompute comes back non-reentrant (RC201:
    torch's non-reentrant form is the one that computes what MindSpore's does), and the MindSpore step writes
    early_stop=False on every non-reentrant call (RC117: MindSpore 2.10 crashes on some blocks with early stop)."""
    return re.sub(r",\s*(use_reentrant|early_stop)=(True|False)", "", text)


def _imports_in_any_order(text: str) -> str:
    """The file with its leading import lines sorted: the cell style takes `recompute` out of the MindSpore imports,
    so the way back adds torch's import at another place."""
    lines = text.splitlines(keepends=True)
    n = next((i for i, line in enumerate(lines) if not line.startswith(("import ", "from "))), len(lines))
    return "".join(sorted(lines[:n]) + lines[n:])


@pytest.mark.parametrize("style", STYLES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mindspore_files())
def test_round_trip_from_mindspore(style, ms0):
    t1 = to_torch(ms0)[1]
    ms2 = to_ms(t1, style)
    t3 = to_torch(ms2)[1]
    t5 = to_torch(to_ms(t3, style))[1]
    assert "recompute" not in t1
    settled = _without_reentrancy_and_early_stop if style == "function" else (
        lambda text: _imports_in_any_order(_without_reentrancy_and_early_stop(text)))
    assert settled(t3) == settled(t1)
    assert t5 == t3   # stable from the second round on
    # no site lost: every call recomputes after the round trip
    assert t3.count("torch.utils.checkpoint.checkpoint(") == ms0.count("recompute(self.") + (
        "self.head.recompute()" in ms0)
    assert ("torch.distributed._composable.checkpoint(layer)" in t3) == ("layer.recompute()" in ms0)


TORCH_CALLS = ["checkpoint(self.block, x, use_reentrant=True)",
               "checkpoint(self.block, x, use_reentrant=False)",
               "checkpoint(self.block, x, use_reentrant=False, preserve_rng_state=False)",
               "checkpoint(self.block, x, use_reentrant=True, early_stop=True)",
               "checkpoint(self.block.__call__, x)"]


@pytest.mark.parametrize("style", STYLES)
@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(TORCH_CALLS), min_size=1, max_size=3), st.booleans())
def test_round_trip_from_torch(style, calls, composable):
    lines = ["import torch", "from torch import nn", "from torch.utils.checkpoint import checkpoint"]
    if composable:
        lines.append("from torch.distributed._composable import checkpoint as mark")
    lines += ["", "", "class Net(nn.Module):", "    def __init__(self):", "        super().__init__()",
              "        self.block = nn.Linear(4, 4)"]
    if composable:
        lines += ["        self.tail = nn.Linear(4, 4)", "        mark(self.tail)"]
    lines += ["", "    def forward(self, x):", *(f"        x = {c}" for c in calls), "        return x", ""]
    t0 = "\n".join(lines)
    ms1 = to_ms(t0, style)
    ms3 = to_ms(to_torch(ms1)[1], style)
    ms5 = to_ms(to_torch(ms3)[1], style)
    assert "checkpoint" not in ms1
    # the calls come back non-reentrant, then all is stable (the cell style may then mark calls whose reentrancy
    # differed before: one option for all of them)
    if style == "function":
        assert _without_reentrancy_and_early_stop(ms3) == _without_reentrancy_and_early_stop(ms1)
    assert ms5 == ms3
    marked = ms1.count("self.block.recompute(")
    if style == "function":
        assert ms1.count("recompute(") == len(calls) + composable and not marked
    else:   # every call recomputes: each a mindspore.recompute call, or all plain calls of the block marked once
        assert (marked, ms1.count("recompute(self.block")) in ((0, len(calls)), (1, 0))


# -- CLI ------------------------------------------------------------------------------------------

def test_cli_translates_a_tree_to_torch(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "net.py").write_text(textwrap.dedent(SEED))
    (src / "other.py").write_text("import mindspore\n")
    code = main(["translate", str(src), "--to", "torch", "-o", str(tmp_path / "out"), "--json",
                 str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "checkpoint(self.fc2, x" in (tmp_path / "out" / "net.py").read_text()
    assert (tmp_path / "out" / "other.py").read_text() == "import mindspore\n"
    assert "2 sites: 1 converted, 1 partial" in err   # the operator's mark goes (RC222)
    code = main(["translate", str(tmp_path / "out"), "--to", "torch", "--check"])
    assert code == 0   # the output has nothing left to translate
    assert main(["translate", str(src), "--to", "torch", "--check"]) == 1


def test_cli_refuses_style_cell_with_to_torch(tmp_path, capsys):
    (tmp_path / "net.py").write_text(textwrap.dedent(SEED))
    assert main(["translate", str(tmp_path), "--to", "torch", "--style", "cell", "--check"]) == 2
    assert "--style cell shapes MindSpore output only" in capsys.readouterr().err


def test_a_file_whose_only_recompute_name_is_capitalised_is_read():
    """The trigger word is matched in any case: TransformerRecomputeConfig alone is reported (RC260, RC261)."""
    src = ("from mindformers.modules.transformer import TransformerRecomputeConfig\n\n"
           "config = TransformerRecomputeConfig(True)\n")
    result = translate_bytes(src.encode(), "model.py", to="torch")
    assert [d.code for s in result.sites for d in s.diagnostics] == ["RC260", "RC261"]


def test_a_settings_only_name_used_in_its_own_package_carries_over_with_it():
    """TransformerRecomputeConfig only holds settings that mindformers' own code acts on (settings_only): used in
    mindformers itself it is translated with the package, not reported; in another package it is. A name that
    does something (DeepSpeed's checkpointing, tests/test_sweep.py) is reported in its own package too."""
    src = ("from mindformers.modules.transformer import TransformerRecomputeConfig\n\n"
           "config = TransformerRecomputeConfig(True)\n")
    result = translate_bytes(src.encode(), "parallel_config.py", to="torch", package="mindformers.core")
    assert result.sites == [] and result.new_data is None
    other = translate_bytes(src.encode(), "parallel_config.py", to="torch", package="mymodels.core")
    assert [d.code for s in other.sites for d in s.diagnostics] == ["RC260", "RC261"]


# -- conditions, undoing marks, marks as values -----------------------------------------------------

CONDITIONAL = """\
    from mindspore import nn
    from mindspore.ops import operations as P


    class Net(nn.Cell):
        def __init__(self, select=False):
            super().__init__()
            self.fc = nn.Dense(4, 4)
            self.mul = P.Mul()
            self.mul.shard(((1, 1), (1, 1)))
            if select:
                self.fc.recompute()
                self.mul.recompute()

        def construct(self, x):
            return self.mul(self.fc(x), x)
"""


def test_a_conditional_mark_stays_conditional():
    """A mark under `if` must not become checkpointing that runs when the condition is false: the Cell is marked
    in place under the same `if`; the operator's mark goes (RC222); the calls stay."""
    result, out = to_torch(CONDITIONAL)
    assert codes(result) == ["RC211", "RC222"]
    assert ("        if select:\n"
            "            torch.distributed._composable.checkpoint(self.fc)\n"
            "\n"
            "    def construct") in out
    assert "        return self.mul(self.fc(x), x)\n" in out
    assert "functools" not in out
    ast.parse(out)
    assert to_torch(out)[1] == out


def test_an_unconditional_mark_checkpoints_the_calls_in_sight():
    """Out of the `if`, the calls are checkpointed where they are; a method call on the operator that is a
    statement of its own (`shard`) calls no operator and does not stop it."""
    result, out = to_torch(CONDITIONAL.replace("            if select:\n", "").replace(
        "                self.", "            self."))
    assert codes(result) == ["RC201", "RC210", "RC222"]
    assert "return self.mul(torch.utils.checkpoint.checkpoint(self.fc, x, use_reentrant=False), x)" in out
    assert "recompute" not in out and "functools" not in out


@pytest.mark.parametrize("undo, kind", [("recompute(False)", "RC215"), ("recompute(mode=False)", "RC215")])
def test_undoing_a_mark_is_torchs_default(undo, kind):
    """`op.recompute(False)` turns recompute off, which is what torch does unasked: the statement goes (a block
    it empties gets `pass`), a mark used as a value gives its operator; partial, with what differs said."""
    code = f"""\
        from mindspore import nn, ops


        class Net(nn.Cell):
            def __init__(self, select=True):
                super().__init__()
                self.relu = ops.ReLU()
                self.nonzero = ops.NonZero().{undo}
                if select:
                    self.relu.{undo}

            def construct(self, x):
                return self.relu(x)
    """
    result, out = to_torch(code)
    assert codes(result) == [kind, kind] and {s.status for s in result.sites} == {"partial"}
    assert "        self.nonzero = ops.NonZero()\n" in out
    assert "        if select:\n            pass\n" in out
    assert "recompute" not in out and "selective policy" in result.sites[0].diagnostics[0].message
    ast.parse(out)


def test_recompute_false_on_a_cell_goes_with_the_reason():
    result, out = to_torch("""\
        from mindspore import nn


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.norm = nn.LayerNorm((4,))
                self.norm.recompute(False)
    """)
    assert codes(result) == ["RC216"] and "raises TypeError" in result.sites[0].diagnostics[0].message
    assert "recompute" not in out and "pass" not in out


ONE_OPERATOR = """\
    import mindspore as ms
    from mindspore import nn


    def get_dropout(p):
        return nn.Dropout(p=p)


    class Attention(nn.Cell):
        def __init__(self, select=True):
            super().__init__()
            self.softmax = nn.Softmax().to_float(ms.float16)
            self.dropout = get_dropout(0.1)
            self.dense = nn.Dense(4, 4)
            self.softmax.softmax.shard(((1, 1),))
            self.dropout.dropout.recompute(False)
            if select:
                self.softmax.softmax.recompute()
                self.dense.matmul.recompute()

        def construct(self, x):
            return self.dropout(self.softmax(self.dense(x)))
"""


def test_a_mark_on_the_one_operator_of_a_layer_goes_like_any_operators():
    """nn.Softmax runs its operator `softmax` and nothing else: its mark is an operator's, and goes (RC222), as
    turning it off does (RC215), through the factory that makes the layer. Whether nn.Dense's matmul is an
    operator the file does not show: that mark stays (RC290)."""
    result, out = to_torch(ONE_OPERATOR)
    assert [[d.code for d in s.diagnostics] for s in result.sites] == [["RC215"], ["RC222"], ["RC290"]]
    assert "        if select:\n            # recompat: RC290" in out
    assert "self.softmax.softmax.recompute" not in out and "self.dropout.dropout.recompute" not in out
    assert "self.softmax.softmax.shard(((1, 1),))" in out
    ast.parse(out)
    assert to_torch(out)[1] == out


VALUE_MARK = """\
    from mindspore import nn
    from mindspore.ops import operations as P


    class Net(nn.Cell):
        def __init__(self, fused=True):
            super().__init__()
            self.reshape = P.Reshape().recompute(True)
            self.shard()

        def shard(self):
            self.reshape.shard(((1,),))

        def construct(self, x):
            return self.reshape(x, (-1,))
"""


def test_an_operator_marked_as_a_value_is_the_operator():
    """`self.op = Op().recompute()` marks the operator it returns: the mark goes (RC222), the operator stays (shard
    still reaches it) and its calls stay plain, under a condition too."""
    result, out = to_torch(VALUE_MARK)
    assert codes(result) == ["RC222"]
    assert "        self.reshape = P.Reshape()\n" in out
    assert "        return self.reshape(x, (-1,))\n" in out
    ast.parse(out)
    code = VALUE_MARK.replace("            self.reshape = P.Reshape().recompute(True)\n            self.shard()\n",
                              "            self.reshape = P.Reshape()\n"
                              "            if fused:\n                self.reshape = P.Reshape().recompute(True)\n")
    result, out = to_torch(code)
    assert codes(result) == ["RC222"]
    assert "        if fused:\n            self.reshape = P.Reshape()\n" in out
    ast.parse(out)


def test_removing_every_mark_of_a_block_leaves_pass():
    """Each deleted statement is known to the next deletion: the block's last one becomes `pass`."""
    result, out = to_torch("""\
        from mindspore import nn


        class Net(nn.Cell):
            def __init__(self, use_ckpt):
                super().__init__()
                self.a = nn.Dense(4, 4)
                self.b = nn.Dense(4, 4)
                for _ in range(1):
                    self.a.recompute()
                    self.b.recompute()

            def construct(self, x):
                return self.b(self.a(x))
    """)
    ast.parse(out)
    assert [s.status for s in result.sites] == ["converted", "converted"]


def test_cell_init_keywords_torch_has_no_use_for_are_dropped_with_the_reason():
    """`super().__init__(auto_prefix=False)` is a call of Cell's constructor: its entry drops what torch's Module
    refuses (TypeError), each with a partial diagnostic; a super().__init__() without arguments is no site."""
    code = textwrap.dedent("""\
        from mindspore import nn


        class Net(nn.Cell):
            def __init__(self):
                super().__init__(auto_prefix=False, flags={"a": 1})
                self.fc = nn.Dense(4, 4)

            def construct(self, x):
                return self.fc(x)


        class Plain(nn.Cell):
            def __init__(self):
                super(Plain, self).__init__()
    """)
    result = translate_bytes(code.encode(), "m.py", to="torch", scope="model")
    out = result.new_data.decode()
    assert "        super().__init__()\n" in out and "        super(Plain, self).__init__()\n" in out
    dropped = [d for s in result.sites for d in s.diagnostics if d.code == "RC306"]
    assert [d.message.split(" dropped")[0] for d in dropped] == ["mindspore.nn.Cell: auto_prefix",
                                                                 "mindspore.nn.Cell: flags"]
    assert all(s.line != 15 for s in result.sites)


@pytest.mark.parametrize("arguments, dropped", [("auto_prefix=True", []), ("flags=None", []),
                                                 ("auto_prefix=False", ["auto_prefix"]), ("True", [])])
def test_a_cell_init_keyword_at_what_torch_does_anyway_goes_with_nothing_lost(arguments, dropped):
    """auto_prefix=True is what torch's Module does (its parameter names are attribute paths), flags=None is
    Cell's own default: dropping them loses nothing, so no partial note; auto_prefix=False is one (RC306)."""
    code = textwrap.dedent(f"""\
        from mindspore import nn


        class Net(nn.Cell):
            def __init__(self):
                super().__init__({arguments})
                self.fc = nn.Dense(4, 4)

            def construct(self, x):
                return self.fc(x)
    """)
    result = translate_bytes(code.encode(), "m.py", to="torch", scope="model")
    assert "        super().__init__()\n" in result.new_data.decode()
    notes = [d.message.split(" dropped")[0].rsplit(": ", 1)[1] for s in result.sites for d in s.diagnostics
             if d.code == "RC306"]
    assert notes == dropped
    init = [s for s in result.sites if s.line == 6]
    assert init and all(s.status == ("partial" if dropped else "converted") for s in init)


def test_a_name_rebound_before_it_goes_into_a_sequential_cell_is_not_taken_for_a_cell():
    """`layers.append(layer)` then `SequentialCell(layers)` shows that layer is a Cell only where layer holds one
    kind of value: here the marked one is an operator, and the name is bound again before it goes in."""
    result, out = to_torch("""\
        from mindspore import nn, ops


        def build(make):
            layers = []
            layer = ops.ReLU()
            layer.recompute()
            layer = make()
            layers.append(layer)
            return nn.SequentialCell(layers)
    """)
    assert codes(result) == ["RC290"] and "    layer.recompute()\n" in out


def test_an_operator_that_becomes_a_torch_module_loses_its_mark_in_a_whole_model_translation():
    """The whole-model translation makes ops.ReLU() an nn.ReLU module; its conditional mark goes (RC222) and the
    block it leaves empty gets `pass`: the translated file runs, with gradients."""
    code = """\
        from mindspore import nn, ops


        class Net(nn.Cell):
            def __init__(self, select=True):
                super().__init__()
                self.fc = nn.Dense(4, 4)
                self.relu = ops.ReLU()
                if select:
                    self.relu.recompute()

            def construct(self, x):
                return self.relu(self.fc(x))
    """
    whole = translate_bytes(textwrap.dedent(code).encode(), "m.py", to="torch", scope="model")
    out = whole.new_data.decode()
    assert "        if select:\n            pass\n" in out
    assert "self.relu = nn.ReLU()" in out and "checkpoint" not in out
    assert "RC222" in codes(whole)
    import torch

    namespace: dict = {}
    exec(compile(out, "translated.py", "exec"), namespace)
    net = namespace["Net"]()
    net(torch.randn(2, 4)).sum().backward()
    assert net.fc.weight.grad is not None


def test_a_loop_over_a_container_of_layers_yields_cells():
    """A CellList's and a SequentialCell's items, a CellDict's values, the list a SequentialCell was built from
    (a slice of it too) are Cells; a plain list that no container takes shows nothing."""
    result, out = to_torch("""\
        from mindspore import nn


        class Net(nn.Cell):
            def __init__(self, n, things):
                super().__init__()
                self.layers = nn.CellList([nn.Dense(4, 4) for _ in range(n)])
                self.named = nn.CellDict({"a": nn.Dense(4, 4)})
                blocks = [nn.Dense(4, 4) for _ in range(n)]
                self.seq = nn.SequentialCell(*blocks)
                self.things = things
                for layer in self.layers:
                    layer.recompute()
                for name, cell in self.named.items():
                    cell.recompute()
                for block in blocks[:2]:
                    block.recompute()
                for thing in self.things:
                    thing.recompute()
    """)
    assert [[d.code for d in s.diagnostics] for s in result.sites] == [["RC211"], ["RC211"], ["RC211"], ["RC290"]]
    assert "torch.distributed._composable.checkpoint(block)" in out and "    thing.recompute()\n" in out


def test_names_mindspore_re_exports_are_read_as_their_public_names():
    """mindspore.common.dtype.float32 is mindspore.float32, mindspore.nn.cell.Cell is mindspore.nn.Cell
    (frameworks.yaml reexports, pinned by identity in tests/test_framework_facts.py): the whole-model
    translation finds their entries."""
    code = textwrap.dedent("""\
        from mindspore.common import dtype as mstype
        from mindspore.common.tensor import Tensor
        from mindspore.nn.cell import Cell


        class Net(Cell):
            def construct(self, x: Tensor) -> Tensor:
                return x.astype(mstype.float32) if False else x
    """)
    result = translate_bytes(code.encode(), "m.py", to="torch", scope="model")
    out = result.new_data.decode()
    assert "class Net(nn.Module):" in out and "x: torch.Tensor" in out and "torch.float32" in out
    assert "mindspore.common.dtype.float32" not in {s.api for s in result.sites if s.status == "manual"}


def test_reentrancy_decided_at_run_time_becomes_non_reentrant():
    """MindSpore's recompute gives the parameters their gradients whichever form runs; torch's non-reentrant
    form is the one that does the same: a flag decided at run time becomes False, said (RC201)."""
    result, out = to_torch("""\
        from mindspore import nn


        class Net(nn.Cell):
            def __init__(self, reentrant):
                super().__init__()
                self.fc = nn.Dense(4, 4)
                self.fc.recompute(use_reentrant=reentrant)

            def construct(self, x):
                return self.fc(x)
    """)
    assert "return torch.utils.checkpoint.checkpoint(self.fc, x, use_reentrant=False)" in out
    first = result.sites[0].diagnostics[0]
    assert first.code == "RC201" and "use_reentrant=reentrant (decided at run time)" in first.message


def test_a_mark_undone_in_the_same_block_cancels_out_and_one_undone_elsewhere_goes_too():
    """`self.mul.recompute()` then `self.mul.recompute(False)` in the same block: nothing is recomputed on
    MindSpore, so nothing is checkpointed in torch (both go, RC221). A mark and an undo in another method: each
    goes on its own (RC222, RC215), since torch gets neither."""
    result, out = to_torch("""\
        from mindspore import nn, ops


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.mul = ops.Mul()
                self.add = ops.Add()
                self.mul.recompute()
                self.add.recompute()
                self.mul.recompute(False)

            def exclude(self):
                self.add.recompute(False)

            def construct(self, x):
                return self.add(self.mul(x, x), x)
    """)
    by_line = {s.line: [d.code for d in s.diagnostics] for s in result.sites}
    assert by_line == {9: ["RC221"], 10: ["RC222"], 11: ["RC221"], 14: ["RC215"]}
    assert "recompute" not in out and "self.add(self.mul(x, x), x)" in out


def test_mindspores_older_keyword_names_are_read_as_the_parameter():
    """`x.mean(axis=..., keep_dims=...)` is MindSpore's older spelling of `x.mean(dim=..., keepdim=...)`
    (mindspore_aliases): the whole-model translation writes torch's names instead of leaving the call."""
    code = textwrap.dedent("""\
        from mindspore import nn


        class Pool(nn.Cell):
            def construct(self, x):
                return x.mean(axis=(2, 3), keep_dims=True) + x.sum(axis=1, keepdims=True)
    """)
    result = translate_bytes(code.encode(), "m.py", to="torch", scope="model")
    assert "x.mean(dim=(2, 3), keepdim=True) + x.sum(dim=1, keepdim=True)" in result.new_data.decode()
    assert not [s for s in result.sites if s.status == "manual"]


def test_a_reported_module_reached_through_an_alias_is_reported_where_it_is_used():
    """Stage 3 walks a file only where a use can be found: here the use spells no word of the family, only the
    import its root name comes from does."""
    result, out = to_torch("""\
        import mindspore
        from mindspore.common import recompute as R


        def f(x):
            return R.something(x)
    """)
    assert sorted((s.line, d.code) for s in result.sites for d in s.diagnostics) == [(2, "RC261"), (6, "RC260")]
    assert "# recompat: RC260 mindspore.common.recompute left as it is" in out


def test_a_file_that_only_names_recompute_as_a_setting_is_left_alone():
    """The word alone is no site: a flag called recompute, read and passed on, is not MindSpore's API."""
    code = """\
        import mindspore
        from mindspore import nn


        class Net(nn.Cell):
            def __init__(self, config):
                super().__init__()
                self.recompute = config.recompute
                self.block = nn.Dense(2, 2)

            def construct(self, x):
                return self.block(x)
    """
    result, out = to_torch(code)
    assert result.sites == [] and out == textwrap.dedent(code)


def test_recompats_selective_checkpointing_in_mindspore_code_is_reported_at_every_use():
    """MindSpore code that uses recompat.compat.selective (a translation from torch): on torch those contexts would
    watch MindSpore's ops only, so each use, also of a name imported from the module, is reported (RC260)."""
    result, out = to_torch("""
        import functools
        import mindspore
        from recompat.compat.selective import create_selective_checkpoint_contexts, ops

        def f(block, x):
            ctx = functools.partial(create_selective_checkpoint_contexts, [ops.aten.mm.default])
            return mindspore.recompute(block, x, use_reentrant=False, context_fn=ctx)
    """)
    found = codes(result)
    assert found.count("RC260") == 2 and found.count("RC261") == 2 and "RC200" in found
    assert "# recompat: RC260 recompat.compat.selective left as it is" in out


@pytest.mark.parametrize("mark, call", [
    ("", "mindspore.recompute(self.b, x, use_reentrant=False, context_fn=None)"),
    ("self.b.recompute(use_reentrant=False, context_fn=None)", "self.b(x)")])
def test_context_fn_none_is_mindspores_default_and_goes(mark, call):
    """torch calls its context_fn: None there is a TypeError at run time, and its default is the same no-op."""
    result, out = to_torch(f"""
        import mindspore
        from mindspore import nn

        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.b = nn.Dense(2, 2)
                {mark}

            def construct(self, x):
                return {call}
    """)
    assert "context_fn" not in out and "RC209" in codes(result)
