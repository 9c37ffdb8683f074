"""torch -> MindSpore rewrites, form by form: the exact text a user gets, and that it parses.

Each recognised form's whole-file before/after is a case in tests/cases/to_mindspore/ (tests/test_cases.py); here
are the forms a case cannot hold (several import forms, bytes-level formatting and encodings, errors, files that
work together) and the messages."""
import ast
import textwrap

import pytest

from recompat.translator.translate import TranslateError, translate_bytes


def translate(code: str, style: str = "function"):
    result = translate_bytes(textwrap.dedent(code).encode(), "model.py", style=style)
    text = result.new_data.decode() if result.changed else textwrap.dedent(code)
    ast.parse(text)
    again = translate_bytes(text.encode(), "model.py", style=style)
    assert not again.changed, "translating the output again must change nothing"
    return text, result


def codes(result):
    return [d.code for s in result.sites for d in s.diagnostics]


def test_seed_example_bound_method_and_alias():
    text, result = translate("""
        import torch
        from torch.utils.checkpoint import checkpoint as cp
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super(Net, self).__init__()
                self.fc2 = nn.Linear(24, 48)

            def forward(self, x):
                x = cp(self._checkpoint, x)
                return x

            def _checkpoint(self, x):
                return nn.functional.relu(self.fc2(x))
    """)
    assert "import mindspore\nimport torch.nn as nn" in text
    assert "from torch.utils.checkpoint" not in text
    # a bound method is not a Cell: MindSpore's reentrant form would raise TypeError
    assert "x = mindspore.recompute(self._checkpoint, x, use_reentrant=False, early_stop=False)" in text
    assert codes(result) == ["RC101", "RC117", "RC100"]
    assert [s.status for s in result.sites] == ["converted"]


def test_every_import_form_is_recognised():
    forms = {
        "import torch\n": "torch.utils.checkpoint.checkpoint",
        "import torch as th\n": "th.utils.checkpoint.checkpoint",
        "import torch.utils.checkpoint\n": "torch.utils.checkpoint.checkpoint",
        "import torch.utils.checkpoint as cp\n": "cp.checkpoint",
        "from torch.utils import checkpoint\n": "checkpoint.checkpoint",
        "from torch.utils.checkpoint import checkpoint\n": "checkpoint",
        "from torch.utils.checkpoint import checkpoint as grad_ckpt\n": "grad_ckpt",
    }
    for imp, call in forms.items():
        text, result = translate(imp + f"\n\ndef f(block, x):\n    return {call}(block, x, use_reentrant=False)\n")
        assert "return mindspore.recompute(block, x, use_reentrant=False, early_stop=False)" in text, imp
        assert [s.api for s in result.sites] == ["torch.utils.checkpoint.checkpoint"], imp


def test_checkpoint_sequential_gets_a_support_function_once():
    text, result = translate("""
        import torch.nn as nn
        from torch.utils.checkpoint import checkpoint_sequential


        def run(model, x, y):
            x = checkpoint_sequential(model, 2, x, use_reentrant=False)
            return checkpoint_sequential(model, 3, y, preserve_rng_state=False)
    """)
    assert text.count("def recompute_sequential(") == 1
    assert "x = recompute_sequential(model, 2, x)\n" in text
    assert "return recompute_sequential(model, 3, y, save_rng_state=False)" in text
    assert "import mindspore\n" in text
    assert "\n\n\ndef recompute_sequential(" in text and "(input)\n\n\ndef run(" in text
    assert codes(result).count("RC120") == 2


def test_formatting_outside_the_sites_is_kept_byte_for_byte():
    code = (
        "# -*- coding: utf-8 -*-\r\n"
        "'''Docstring with 'quotes'.'''\r\n"
        "import torch.utils.checkpoint as cp\r\n"
        "\r\n"
        "\r\n"
        "def f(blk, x):  # résumé\r\n"
        "    y = {'k': \"v\"}   # odd   spacing\r\n"
        "    return cp.checkpoint(blk, x, use_reentrant=False)  # tail\r\n"
    )
    result = translate_bytes(code.encode(), "m.py")
    out = result.new_data.decode()
    assert out == code.replace("import torch.utils.checkpoint as cp", "import mindspore").replace(
        "cp.checkpoint(", "mindspore.recompute(").replace("use_reentrant=False)", "use_reentrant=False, early_stop=False)")


def test_bom_and_declared_encoding_are_kept():
    bom = b"\xef\xbb\xbf" + b"import torch.utils.checkpoint as cp\n\ncp.checkpoint(f, x, use_reentrant=False)\n"
    out = translate_bytes(bom, "bom.py").new_data
    assert out.startswith(b"\xef\xbb\xbfimport mindspore\n")
    latin = ("# -*- coding: latin-1 -*-\nimport torch.utils.checkpoint as cp\n"
             "s = 'caf\u00e9'; y = cp.checkpoint(f, x, use_reentrant=False)\n").encode("latin-1")
    out = translate_bytes(latin, "latin.py").new_data
    assert out.decode("latin-1").endswith("s = 'caf\u00e9'; y = mindspore.recompute(f, x, use_reentrant=False, early_stop=False)\n")


def test_non_ascii_before_a_site_on_the_same_line():
    text, _ = translate("""
        from torch.utils.checkpoint import checkpoint
        def f(g, x): s = "日本語"; return checkpoint(g, x, use_reentrant=False)
    """)
    assert 's = "日本語"; return mindspore.recompute(g, x, use_reentrant=False, early_stop=False)' in text


def test_files_without_sites_are_not_rewritten():
    for code in ["x = 1\n", "# a checkpoint is saved here\nsave_checkpoint(model)\n"]:
        result = translate_bytes(code.encode(), "m.py")
        assert not result.changed and result.new_data is None


@pytest.mark.parametrize("code, fragment", [
    ("from torch.utils.checkpoint import checkpoint\nprint 'hello'\n", "port it to Python 3"),
    ("import torch.utils.checkpoint\ndef f(:\n    pass\n", "does not parse"),
])
def test_unparsable_files_raise_a_clear_error(code, fragment):
    with pytest.raises(TranslateError, match="bad.py:") as err:
        translate_bytes(code.encode(), "bad.py")
    assert fragment in str(err.value)


def test_undecodable_file_names_the_line():
    with pytest.raises(TranslateError, match=r"bad\.py:2: not valid utf-8"):
        translate_bytes(b"import torch.utils.checkpoint\nx = '\xe9'\n", "bad.py")


@pytest.mark.parametrize("scope", ["checkpoint", "model"])
def test_output_that_is_not_python_is_never_returned(monkeypatch, scope):
    # planted bug: the last stage of each pass writes a broken statement; the check on the output must refuse it
    from recompat.translator import models, torch_to_mindspore

    code = "import torch\nfrom torch.utils.checkpoint import checkpoint\ny = checkpoint(f, torch.ones(2))\n"
    if scope == "model":
        spell = models.ModelTranslator.spell
        monkeypatch.setattr(models.ModelTranslator, "spell", lambda self, taken: (
            self.src.insert(len(self.src.text), "def (:\n"), spell(self, taken))[1])
    else:
        settle = torch_to_mindspore.settle_imports
        monkeypatch.setattr(torch_to_mindspore, "settle_imports", lambda src, tree, *a: (
            settle(src, tree, *a), src.insert(len(src.text), "return (\n")))
    with pytest.raises(TranslateError, match=r"model\.py: recompat produced invalid Python at line \d+"):
        translate_bytes(code.encode(), "model.py", scope=scope)


def test_what_compiling_refuses_but_parses_is_still_translated():
    # the output is checked by compiling it; a file Python parses but would not compile (a module-level return)
    # is the user's: its translation is not refused for that
    result = translate_bytes(b"import torch.utils.checkpoint as cp\ny = cp.checkpoint(f, x)\nreturn y\n", "m.py")
    assert result.changed and b"mindspore.recompute" in result.new_data


def test_files_that_cannot_hold_a_site_are_not_parsed():
    # "checkpoint" in the text but no import of torch's: passed over, even if it would not parse
    result = translate_bytes(b"print 'saving checkpoint'\n", "py2.py")
    assert not result.changed and result.sites == []


def test_holder_attributes_assigned_in_another_file():
    base = translate_bytes(textwrap.dedent("""
        import functools
        from torch.utils.checkpoint import checkpoint


        class PreTrainedModel:
            def gradient_checkpointing_enable(self, kwargs):
                self._gradient_checkpointing_func = functools.partial(checkpoint, **kwargs)
    """).encode(), "modeling_utils.py")
    assert base.holders == ["_gradient_checkpointing_func"]
    model = textwrap.dedent("""
        class Decoder(PreTrainedModel):
            def forward(self, h):
                for layer in self.layers:
                    if self.gradient_checkpointing and self.training:
                        h = self._gradient_checkpointing_func(layer.__call__, h)
                    else:
                        h = layer(h)
                return h
    """).encode()
    assert not translate_bytes(model, "modeling_x.py").changed  # alone, nothing says it is torch's
    result = translate_bytes(model, "modeling_x.py", holders=base.holders)
    assert b"h = self._gradient_checkpointing_func(layer, h)" in result.new_data
    assert b"import" not in result.new_data  # nothing new is needed in this file


def test_a_function_level_import_leaves_no_blank_line_opening_the_body():
    text, _ = translate("""
        def run(f, x):
            from torch.utils.checkpoint import checkpoint

            return checkpoint(f, x, use_reentrant=False)
    """)
    assert "def run(f, x):\n    return mindspore.recompute(f, x, use_reentrant=False, early_stop=False)\n" in text


def test_a_block_emptied_of_imports_keeps_a_pass():
    """Both imports of the block go; the second deletion knows of the first, so the block is not left empty."""
    text, _ = translate("""
        try:
            from torch.utils.checkpoint import checkpoint
            from torch.utils.checkpoint import checkpoint_sequential
        except ImportError:
            raise


        def run(f, x):
            return checkpoint(f, x, use_reentrant=False)
    """)
    assert "\ntry:\n    pass\nexcept ImportError:\n" in text
    ast.parse(text)


@pytest.mark.parametrize("line, kept", [
    ("import os; from torch.utils.checkpoint import checkpoint", "import os\n"),
    ("from torch.utils.checkpoint import checkpoint; import os", "import os\n"),
    ("import os; from torch.utils.checkpoint import checkpoint; import re", "import os; import re\n"),
])
def test_an_import_sharing_its_line_goes_with_its_semicolon(line, kept):
    text, _ = translate(line + "\n\n\ndef run(f, x):\n    return checkpoint(f, x, use_reentrant=False)\n")
    assert kept in text and "pass" not in text


def test_a_site_inside_a_dropped_value_goes_with_it():
    text, result = translate("""
        from torch.utils.checkpoint import checkpoint


        def f(g, x):
            return checkpoint(g, x, use_reentrant=False, determinism_check=checkpoint(g, x))
    """)
    assert "return mindspore.recompute(g, x, use_reentrant=False, early_stop=False)\n" in text
    assert 'determinism_check=checkpoint(g, x) dropped' in " ".join(d.message for s in result.sites
                                                                    for d in s.diagnostics)


def test_a_module_alias_with_a_fallback_is_reported_at_each_call():
    text, result = translate("""
        try:
            import torch.utils.checkpoint as cp
        except ImportError:
            cp = None


        def f(g, x):
            if cp is None:
                return g(x)
            return cp.checkpoint(g, x) + cp.checkpoint(g, x, use_reentrant=False)
    """)
    assert [(s.line, s.status) for s in result.sites] == [(11, "manual"), (11, "manual"), (3, "manual")]
    assert codes(result) == ["RC191", "RC191", "RC161"]   # the import stays, and says so
    assert text.count("# recompat: RC191 torch.utils.checkpoint.checkpoint left as it is") == 1


@pytest.mark.parametrize("dropout, noted", [("self.drop(y)", False), ("ops.dropout(y, p=0.5)", True)])
def test_a_reentrant_mark_keeps_dropout_cells_but_not_dropout_functions(dropout, noted):
    _, result = translate(f"""
        from torch.distributed._composable import checkpoint


        class Block(nn.Cell):
            def __init__(self):
                super().__init__()
                self.drop = nn.Dropout(p=0.5)

            def construct(self, y):
                return {dropout}


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.block = Block()
                checkpoint(self.block)
    """)
    assert ("RC150" in codes(result)) == noted
    assert [s.status for s in result.sites] == ["partial" if noted else "converted"]


@pytest.mark.parametrize("draw, noted", [("torch.randn_like(mu)", "torch.randn_like"),
                                         ("randn(4, 8)", "torch.randn"),            # from torch import randn
                                         ("np.random.rand(4, 8)", None), ("mu * 0", None)])
def test_a_file_that_draws_random_values_is_told_that_mindspores_recompute_draws_new_ones(draw, noted):
    """MindSpore's recompute draws new values where torch's checkpoint redraws the forward's
    (tests/test_draw_replay.py measures it): every checkpoint site of a file that draws says so (RC151, partial),
    naming what it draws; a NumPy draw or none at all is no such call."""
    _, result = translate(f"""
        import numpy as np
        import torch
        from torch import randn
        from torch.utils.checkpoint import checkpoint


        def sample(mu):
            return mu + {draw}


        def f(mu):
            return checkpoint(sample, mu, use_reentrant=False)
    """)
    notes = [d for s in result.sites for d in s.diagnostics if d.code == "RC151"]
    if noted is None:
        assert not notes and [s.status for s in result.sites] == ["converted"]
    else:
        assert [s.status for s in result.sites] == ["partial"] and len(notes) == 1
        assert f"code a recomputed region may run draws random values ({noted}; " in notes[0].message
        assert "MindSpore 2.10 (PyNative) draws new ones" in \
            notes[0].message


@pytest.mark.parametrize("where, noted", [("main", False), ("helper", True), ("model", True)])
def test_only_a_draw_a_recomputed_region_may_run_is_told(where, noted):
    """RC151 for a draw in a model's code or in a function a region calls, not for one in main() or a training
    loop (the data, the initial weights), which no recomputation runs again."""
    draw = {"main": ("x", "x = torch.randn(4, 8)"), "helper": ("noisy(x)", "x = x"),
            "model": ("x + torch.rand_like(x)", "x = x")}[where]
    _, result = translate(f"""
        import torch
        from torch import nn
        from torch.utils.checkpoint import checkpoint


        def noisy(x):
            return x + torch.randn_like(x)


        class Block(nn.Module):
            def forward(self, x):
                return {draw[0]}


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                return checkpoint(self.block, x, use_reentrant=False)


        def main():
            {draw[1]}
            noise = torch.randn(4, 8)
            return Net()(x + noise)
    """)
    notes = [d for s in result.sites for d in s.diagnostics if d.code == "RC151"]
    assert bool(notes) == noted, [d.message for s in result.sites for d in s.diagnostics]


def test_cell_style_names_every_keyword_the_mark_stands_for():
    text, result = translate("""
        from torch.utils.checkpoint import checkpoint


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                return checkpoint(self.block, x, use_reentrant=False, context_fn=ctx, early_stop=True)
    """, style="cell")
    assert "self.block.recompute(use_reentrant=False, early_stop=False, context_fn=ctx)" in text
    assert "return self.block(x)" in text
    messages = [d.message for s in result.sites for d in s.diagnostics]
    assert any("use_reentrant=False, context_fn=ctx, early_stop=True" in m for m in messages), messages
    assert "RC115" in codes(result)   # the context managers must still be MindSpore's


def test_model_scope_sites_report_lines_of_the_users_file_after_checkpoint_edits():
    """The model pass works on the checkpoint pass's output (an import added, lines moved): its sites still name
    the user's lines."""
    from recompat.translator.translate import translate_bytes

    source = ("import torch\n"
              "from torch.utils.checkpoint import checkpoint\n"
              "from torch.utils.checkpoint import CheckpointPolicy\n"
              "\n"
              "\n"
              "def f(block, x):\n"
              "    y = checkpoint(block, x, use_reentrant=False)\n"
              "    return torch.tril(y) + y\n")
    result = translate_bytes(source.encode(), "m.py", scope="model")
    tril = [s for s in result.sites if s.api == "torch.tril"]
    assert [(s.line, d.line) for s in tril for d in s.diagnostics] == [(8, 8)]
    assert "    return torch.tril(y) + y" in result.new_data.decode()


def test_a_diagnostic_quoting_source_of_several_lines_is_one_short_line():
    src = textwrap.dedent("""\
        from torch.utils.checkpoint import checkpoint


        def f(block, x):
            return checkpoint(block, x, use_reentrant=False, mask=make_mask(
                x.shape[0],
                x.shape[1],
                fill=float("-inf"),
                device=x.device,
            ))
    """)
    result = translate_bytes(src.encode(), "m.py")
    carried = next(d for s in result.sites for d in s.diagnostics if d.code == "RC116")
    assert "\n" not in carried.message
    assert carried.message.startswith("mask=make_mask( x.shape[0], x.shape[1],")
    assert carried.message.split(" carried over")[0].endswith("...")
    assert len(carried.message) < 100


def test_the_import_statements_are_every_one_ast_walk_finds_in_source_order():
    """names.imports reads the tree's index, or walks only statements: it must still see every import, nested ones
    included."""
    from pathlib import Path

    from recompat.translator import names, tree_index

    nested = textwrap.dedent("""\
        import a
        try:
            from . import b
        except ImportError:
            import c
        else:
            import d
        finally:
            import e
        match x:
            case 1:
                import f
        class K:
            def m(self):
                with g:
                    for i in j:
                        while k:
                            if z:
                                from .. import h
                            else:
                                import i
        async def n():
            async with o:
                import p
    """)
    trees = [ast.parse(nested)] + [ast.parse(p.read_bytes()) for p in
                                   sorted(Path(names.__file__).parent.glob("*.py"))]
    for tree in trees:
        found = sorted((s for s in ast.walk(tree) if isinstance(s, (ast.Import, ast.ImportFrom))),
                       key=lambda s: (s.lineno, s.col_offset))
        assert names.imports(tree) == found                  # a walk of the statements
        tree_index.index(tree)
        assert names.imports(tree) == found                  # the tree's index
    assert sorted(s.names[0].name for s in names.imports(trees[0])) == list("abcdefhip")


def test_a_name_of_the_family_without_the_word_checkpoint_in_lower_case_is_found():
    """A file is examined where it spells the last word of a name of the family (mappings/reported.yaml), not
    only where it holds `checkpoint`: Megatron's CheckpointFunction, imported under another name."""
    text, result = translate("""
        from megatron.core.tensor_parallel.random import CheckpointFunction as CF


        def run(block, x):
            return CF.apply(block, False, x)
    """)
    assert sorted(codes(result)) == ["RC160", "RC161"]
    assert "# recompat: RC160 megatron.core.tensor_parallel.random.CheckpointFunction left as it is" in text


def test_selective_checkpointing_ops_read_as_values_are_renamed_and_calls_through_torch_ops_are_not():
    new, result = translate("""
        import torch
        from torch.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts

        def f(block, x):
            y = torch.ops.aten.mm.default(x, x)          # a torch kernel called: not an op reference
            ops = [torch.ops.aten.mm, torch.ops.aten.unknown_op.default]
            ctx = lambda: create_selective_checkpoint_contexts([torch.ops.aten.bmm.default])
            return checkpoint(block, y, use_reentrant=False, context_fn=ctx)
    """)
    assert "torch.ops.aten.mm.default(x, x)" in new
    assert "ops = [recompat.compat.selective.ops.aten.mm, recompat.compat.selective.ops.aten.unknown_op.default]" in new
    assert "recompat.compat.selective.create_selective_checkpoint_contexts([recompat.compat.selective.ops.aten.bmm.default])" in new
    assert "import recompat.compat.selective" in new
    found = codes(result)
    assert found.count("RC147") == 1 and "RC146" in found and "RC145" in found
    assert "RC115" in found          # context_fn=ctx: a name, whose contexts the call cannot see


def test_a_partial_of_checkpoint_becomes_the_added_function_unless_the_file_has_one_of_that_name():
    text, result = translate("""
        import functools
        from torch.utils.checkpoint import checkpoint

        ckpt = functools.partial(checkpoint, use_reentrant=False)
        again = functools.partial(checkpoint, use_reentrant=False)
    """)
    assert "ckpt = recompute_partial(mindspore.recompute, use_reentrant=False, early_stop=False)" in text
    assert "again = recompute_partial(mindspore.recompute, use_reentrant=False, early_stop=False)" in text
    assert text.count("def recompute_partial(") == 1, "added once"
    assert codes(result).count("RC122") == 2
    text, result = translate("""
        import functools
        from torch.utils.checkpoint import checkpoint


        def recompute_partial(x):
            return x


        ckpt = functools.partial(checkpoint, use_reentrant=False)
    """)
    assert "ckpt = functools.partial(mindspore.recompute, use_reentrant=False, early_stop=False)" in text
    assert "RC123" in codes(result) and [s.status for s in result.sites] == ["partial"]


@pytest.mark.parametrize("code, holders, found", [
    ('"""Saves a checkpoint."""\nimport torch\ny = torch.zeros(2)\n', (), False),
    ("import torch.utils.checkpoint as cp\ny = cp.checkpoint(f, x)\n", (), True),
    ("from torch.utils.checkpoint import checkpoint as ck\ny = ck(f, x)\n", (), True),
    ("from torch.utils.checkpoint import *\nimport torch\n", (), False),      # a star binds nothing named here
    ("import torch\nself.run_ckpt(block, x)\n", ("run_ckpt",), True),        # a holder another file assigns
    ("import functools, torch.utils.checkpoint\np = functools.partial(torch.utils.checkpoint.checkpoint)\n", (), True),
])
def test_the_walk_is_skipped_only_where_it_can_find_nothing(code, holders, found, monkeypatch):
    # the index decides before the walk; where it says nothing can be found, the walk finds nothing indeed
    from recompat import mappings
    from recompat.translator.source import Source
    from recompat.translator.torch_to_mindspore import TorchToMindSpore

    src = Source(code.encode(), "m.py")
    tx = TorchToMindSpore(src, src.parse(), mappings.default(), external_holders=holders)
    assert tx.may_find_sites() is found
    monkeypatch.setattr(TorchToMindSpore, "may_find_sites", lambda self: True)
    assert bool(translate_bytes(code.encode(), "m.py", holders=holders).sites) is found
