"""torch -> MindSpore rewrites, form by form: the exact text a user gets, and that it parses."""
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


def test_module_alias_named_like_the_function_and_cell_loop_variable():
    text, _ = translate("""
        import torch.nn as nn
        import torch.utils.checkpoint as checkpoint


        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([Block() for _ in range(4)])

            def forward(self, x):
                for blk in self.blocks:
                    x = checkpoint.checkpoint(blk, x)
                return x
    """)
    # a loop over a ModuleList yields Cells: reentrant (torch's default) is kept
    assert "x = mindspore.recompute(blk, x)\n" in text
    assert "import torch.utils.checkpoint" not in text


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


def test_lookalikes_are_left_alone():
    code = """
        from .utils import checkpoint
        from project.ckpt import checkpoint as ckpt


        def checkpoint_fn(x):
            return x


        class M:
            def forward(self, x):
                x = checkpoint(self.block, x)
                return ckpt(self.block, x)


        def load(path):
            checkpoint = torch.load(path)
            return checkpoint.checkpoint(path)
    """
    result = translate_bytes(textwrap.dedent(code).encode(), "m.py")
    assert not result.changed and result.sites == []


def test_project_wrapper_body_is_translated_and_its_callers_are_not():
    text, result = translate("""
        import torch.utils.checkpoint


        def checkpoint(function, *args, use_reentrant=None, **kwargs):
            return torch.utils.checkpoint.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)


        def block_forward(block, x):
            return checkpoint(block, x)
    """)
    # use_reentrant decided at run time: early_stop=False suits both forms (RC118)
    assert ("return mindspore.recompute(function, *args, use_reentrant=use_reentrant, **kwargs, early_stop=False)"
            in text)
    assert "return checkpoint(block, x)" in text
    assert "import torch.utils.checkpoint" not in text
    assert [s.status for s in result.sites] == ["partial"]
    assert set(codes(result)) == {"RC103", "RC114", "RC118", "RC100"}


def test_a_local_variable_does_not_shadow_the_import_elsewhere():
    text, _ = translate("""
        import torch
        from torch.utils.checkpoint import checkpoint


        def load(path):
            checkpoint = torch.load(path)
            return checkpoint["model"]


        def run(layer, x):
            return checkpoint(layer.forward, x)
    """)
    assert 'checkpoint = torch.load(path)\n    return checkpoint["model"]' in text
    assert "return mindspore.recompute(layer, x)" in text
    assert "from torch.utils.checkpoint import checkpoint" not in text


def test_call_and_forward_of_a_module_become_the_module():
    text, result = translate("""
        from torch.utils.checkpoint import checkpoint


        def run(layers, h, mask):
            for layer in layers:
                h = checkpoint(layer.__call__, h, mask, use_reentrant=False)
                h = checkpoint(layer.forward, h, mask)
            return h
    """)
    assert "h = mindspore.recompute(layer, h, mask, use_reentrant=False, early_stop=False)" in text
    assert "h = mindspore.recompute(layer, h, mask)\n" in text
    assert codes(result).count("RC102") == 2


def test_hf_partial_stored_in_an_attribute():
    text, result = translate("""
        import functools

        from torch.utils.checkpoint import checkpoint


        class Model(PreTrainedModel):
            def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
                gradient_checkpointing_kwargs = gradient_checkpointing_kwargs or {"use_reentrant": True}
                self._gradient_checkpointing_func = functools.partial(checkpoint, **gradient_checkpointing_kwargs)

            def forward(self, hidden, mask):
                for layer in self.layers:
                    if self.gradient_checkpointing and self.training:
                        hidden = self._gradient_checkpointing_func(layer.__call__, hidden, mask)
                    else:
                        hidden = layer(hidden, mask)
                return hidden
    """)
    assert "functools.partial(mindspore.recompute, **gradient_checkpointing_kwargs)" in text
    assert "hidden = self._gradient_checkpointing_func(layer, hidden, mask)" in text
    assert "hidden = layer(hidden, mask)" in text
    assert len(result.sites) == 2
    assert "RC114" in codes(result)


def test_partial_keywords_are_mapped():
    text, _ = translate("""
        from functools import partial
        from torch.utils.checkpoint import checkpoint

        ckpt = partial(checkpoint, use_reentrant=False, preserve_rng_state=False, determinism_check="none")


        def run(f, x):
            return ckpt(f, x)
    """)
    assert "ckpt = partial(mindspore.recompute, use_reentrant=False, save_rng_state=False, early_stop=False)" in text
    assert "return ckpt(f, x)" in text


def test_lambda_closure_and_splatted_inputs_get_the_non_reentrant_form():
    text, result = translate("""
        import torch.utils.checkpoint as cp


        def forward(self, prev_features, blk, kw):
            def closure(*inputs):
                return self.conv(torch.cat(inputs, 1))
            out = cp.checkpoint(closure, *prev_features)
            out = cp.checkpoint(lambda *i: blk(*i, **kw), out)
            return out
    """)
    assert "out = mindspore.recompute(closure, *prev_features, use_reentrant=False, early_stop=False)" in text
    assert "out = mindspore.recompute(lambda *i: blk(*i, **kw), out, use_reentrant=False, early_stop=False)" in text
    assert codes(result).count("RC101") == 2


def test_every_argument_is_a_recorded_decision():
    text, result = translate("""
        from torch.utils.checkpoint import checkpoint


        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x, m):
                return checkpoint(
                    self.block,
                    x,
                    use_reentrant=False,
                    preserve_rng_state=False,
                    context_fn=my_context,
                    determinism_check="none",
                    debug=True,
                    early_stop=False,
                    mask=m,
                )
    """)
    assert text.endswith(
        "        return mindspore.recompute(\n"
        "            self.block,\n"
        "            x,\n"
        "            use_reentrant=False,\n"
        "            save_rng_state=False,\n"
        "            context_fn=my_context,\n"
        "            early_stop=False,\n"
        "            mask=m,\n"
        "        )\n"
    )
    assert "save_rng_state=False," in text and "preserve_rng_state" not in text
    assert "determinism_check" not in text and "debug" not in text
    assert "early_stop=False," in text and "mask=m," in text and "context_fn=my_context," in text
    assert set(codes(result)) >= {"RC110", "RC112", "RC115", "RC116", "RC100"}
    assert result.sites[0].status == "partial"


def test_use_reentrant_none_and_reentrant_rng_state():
    text, result = translate("""
        from torch.utils.checkpoint import checkpoint


        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                x = checkpoint(self.block, x, use_reentrant=None)
                return checkpoint(self.block, x, preserve_rng_state=False)
    """)
    # None means torch's default (True); MindSpore would read None as False
    assert "x = mindspore.recompute(self.block, x, use_reentrant=True)" in text
    # MindSpore's reentrant backward needs the saved RNG state: the flag is dropped, not renamed
    assert "return mindspore.recompute(self.block, x)\n" in text
    assert "RC111" in codes(result)


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


def test_checkpoint_wrapper_and_composable_checkpoint_mark_cells():
    text, result = translate("""
        from torch.distributed._composable import checkpoint
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
            CheckpointImpl,
            checkpoint_wrapper,
        )


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = checkpoint_wrapper(Block(), checkpoint_impl=CheckpointImpl.REENTRANT)
                self.b = checkpoint_wrapper(Block())
                self.c = Block()
                checkpoint(self.c)
                self.layers[0] = checkpoint_wrapper(self.layers[0])
    """)
    assert "        self.a = Block()\n        self.a.recompute()\n" in text
    assert "        self.b = Block()\n        self.b.recompute(use_reentrant=False, early_stop=False)\n" in text
    assert "        self.c.recompute()\n" in text
    assert "        self.layers[0].recompute(use_reentrant=False, early_stop=False)\n" in text
    assert "torch" not in text
    assert codes(result) == ["RC134", "RC130", "RC130", "RC132", "RC130"]   # RC134: checkpoint_impl=REENTRANT


def test_apply_activation_checkpointing_marks_matching_subcells():
    text, _ = translate("""
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing


        def setup(model):
            apply_activation_checkpointing(model, check_fn=is_block)
    """)
    # non-reentrant, as torch's default checkpoint_wrapper_fn (checkpoint_wrapper, CheckpointImpl.NO_REENTRANT)
    assert textwrap.dedent("""\
        def setup(model):
            for _, cell in model.cells_and_names():
                if cell is not model and is_block(cell):
                    cell.recompute(use_reentrant=False, early_stop=False)
    """) in text


def test_style_cell_marks_in_init_and_calls_plainly():
    code = """
        import torch.nn as nn
        from torch.utils.checkpoint import checkpoint


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(12, 24)
                self.fc2 = nn.Linear(24, 48)  # the checkpointed layer
                self.head = nn.Linear(48, 2)

            def forward(self, x):
                x = self.fc1(x)
                x = checkpoint(self.fc2, x)
                if self.training:
                    x = checkpoint(self.head, x)
                else:
                    x = self.head(x)
                return x
    """
    text, result = translate(code, style="cell")
    assert "self.fc2 = nn.Linear(24, 48)  # the checkpointed layer\n        self.fc2.recompute()\n" in text
    assert "x = self.fc2(x)\n" in text
    # self.head is also called without checkpoint: the function form keeps that branch plain
    assert "x = mindspore.recompute(self.head, x)" in text
    assert "RC140" in codes(result) and "RC141" in codes(result)


def test_unconvertible_use_gets_a_comment_and_stays_valid():
    text, result = translate("""
        from torch.utils.checkpoint import checkpoint

        HOOKS = [checkpoint]
    """)
    assert "# recompat: RC190 torch.utils.checkpoint.checkpoint left as it is" in text
    assert "HOOKS = [checkpoint]" in text
    assert "from torch.utils.checkpoint import checkpoint" in text
    assert result.sites[0].status == "manual"


def test_nested_checkpoints_are_both_rewritten():
    text, _ = translate("""
        from torch.utils.checkpoint import checkpoint


        def f(a, b, x):
            return checkpoint(lambda y: checkpoint(b, y, use_reentrant=False), x, use_reentrant=False)
    """)
    assert ("return mindspore.recompute(lambda y: mindspore.recompute(b, y, use_reentrant=False, early_stop=False), x, "
            "use_reentrant=False, early_stop=False)") in text


def test_existing_mindspore_alias_is_reused():
    text, _ = translate("""
        import mindspore as ms
        from torch.utils.checkpoint import checkpoint


        def f(block, x):
            return checkpoint(block, x, use_reentrant=False)
    """)
    assert text.startswith("\nimport mindspore as ms\n\n\ndef f")
    assert "return ms.recompute(block, x, use_reentrant=False, early_stop=False)" in text


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


def test_non_reentrant_gets_early_stop_false_and_dropout_is_flagged():
    # MindSpore 2.10 crashes with early stop on blocks ending in conv/dropout (test_framework_facts.py)
    text, result = translate("""
        from torch.utils.checkpoint import checkpoint


        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()
                self.drop = nn.Dropout(0.1)

            def forward(self, x):
                x = checkpoint(self.block, x, use_reentrant=False, early_stop=True)
                return checkpoint(self.block, x)
    """)
    assert "x = mindspore.recompute(self.block, x, use_reentrant=False, early_stop=False)" in text
    assert "return mindspore.recompute(self.block, x)\n" in text  # reentrant: early stop does not apply
    assert codes(result).count("RC150") == 2
    assert all(s.status == "partial" for s in result.sites)


def test_function_level_imports_are_judged_in_their_function():
    text, _ = translate("""
        import inspect


        def run(f, x):
            from torch.utils.checkpoint import checkpoint

            return checkpoint(f, x, use_reentrant=False)


        def signature():
            from torch.utils.checkpoint import checkpoint

            return inspect.signature(checkpoint)
    """)
    assert text.count("from torch.utils.checkpoint import checkpoint") == 1  # still used in signature()
    assert "return inspect.signature(checkpoint)" in text
    assert "return mindspore.recompute(f, x, use_reentrant=False, early_stop=False)" in text


def test_an_unused_torch_checkpoint_import_is_removed():
    text, result = translate("""
        import torch.nn as nn
        from torch.utils.checkpoint import checkpoint


        class M(nn.Module):
            pass
    """)
    assert "checkpoint" not in text and "import torch.nn as nn" in text
    assert result.sites == []


def test_a_function_level_import_leaves_no_blank_line_opening_the_body():
    text, _ = translate("""
        def run(f, x):
            from torch.utils.checkpoint import checkpoint

            return checkpoint(f, x, use_reentrant=False)
    """)
    assert "def run(f, x):\n    return mindspore.recompute(f, x, use_reentrant=False, early_stop=False)\n" in text


@pytest.mark.parametrize("line, kept", [
    ("import os; from torch.utils.checkpoint import checkpoint", "import os\n"),
    ("from torch.utils.checkpoint import checkpoint; import os", "import os\n"),
    ("import os; from torch.utils.checkpoint import checkpoint; import re", "import os; import re\n"),
])
def test_an_import_sharing_its_line_goes_with_its_semicolon(line, kept):
    text, _ = translate(line + "\n\n\ndef run(f, x):\n    return checkpoint(f, x, use_reentrant=False)\n")
    assert kept in text and "pass" not in text


def test_a_dropped_last_argument_takes_the_comma_before_it_and_leaves_the_comments():
    text, result = translate("""
        from torch.utils.checkpoint import checkpoint


        def f(g, x):
            a = checkpoint(g, x, use_reentrant=False, debug=True, determinism_check="none")
            b = checkpoint(
                g,
                x,  # the input
                # about debug
                debug=True  # its own comment
            )
            return checkpoint(g, x, debug=True,
                              use_reentrant=False)
    """)
    assert "a = mindspore.recompute(g, x, use_reentrant=False, early_stop=False)\n" in text
    assert ("    b = mindspore.recompute(\n        g,\n        x, use_reentrant=False, early_stop=False  # the input\n"
            "        # about debug\n    )\n") in text
    assert "return mindspore.recompute(g, x,\n                      use_reentrant=False, early_stop=False)" in text
    assert codes(result).count("RC112") == 4


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
    assert [(s.line, s.status) for s in result.sites] == [(11, "manual"), (11, "manual")]
    assert codes(result) == ["RC191", "RC191"]
    assert text.count("# recompat: RC191 torch.utils.checkpoint.checkpoint left as it is") == 1


def test_a_partial_with_a_runtime_flag_gets_early_stop_false_once():
    text, result = translate("""
        import functools
        from torch.utils.checkpoint import checkpoint


        class Model(nn.Module):
            def enable(self, flag):
                self.ckpt = functools.partial(checkpoint, use_reentrant=flag)

            def forward(self, x):
                x = self.ckpt(self.block, x)
                return self.ckpt(self.block, x, early_stop=True)
    """)
    assert "self.ckpt = functools.partial(mindspore.recompute, use_reentrant=flag, early_stop=False)" in text
    assert "x = self.ckpt(self.block, x)\n" in text                           # the partial has it
    assert "return self.ckpt(self.block, x, early_stop=False)" in text        # the call's own overrides it
    assert codes(result).count("RC118") == 2


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
