"""translate --scope model: the mechanism that carries the core API set across, on a fixed set of entries.

The entries here are the test's own (tests/data/core_entries.yaml, beside the shipped checkpoint family), so
these tests pin how an entry's data drives the output: renames, positional arguments that must become keywords,
defaults written out where they differ, value conversions, call shapes, the manual fallback and the imports.
The shipped entries are proven by their paired examples (tests/test_model_examples.py).
"""
from __future__ import annotations

import ast
import shutil
import textwrap
from pathlib import Path

import pytest

from recompat import mappings
from recompat.cli import main
from recompat.translator.translate import translate_bytes

DATA = Path(__file__).parent / "data" / "core_entries.yaml"
UNPROVEN = {"t_gelu"}    # no output.txt: not translated (RC302)


@pytest.fixture(scope="module")
def maps(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mappings")
    for name in ("diagnostics.yaml", "parameters.yaml", "checkpoint.yaml", "recompute.yaml", "frameworks.yaml",
                 "markers.yaml", "schema.json"):
        shutil.copy(mappings.HERE / name, folder / name)
    shutil.copy(DATA, folder / "core.yaml")
    loaded = mappings.load(folder)
    for e in loaded.entries:
        if e.rule in mappings.CORE_RULES and e.id not in UNPROVEN:
            (folder / "examples" / e.id).mkdir(parents=True)
            (folder / "examples" / e.id / "output.txt").write_text("agree\n")
    return mappings.load(folder)


@pytest.fixture(autouse=True)
def use_maps(maps, monkeypatch):
    monkeypatch.setattr(mappings, "default", lambda: maps)


def tx(code: str, to: str = "mindspore"):
    code = HEADER + textwrap.dedent(code[len(HEADER):]) if code.startswith(HEADER) else textwrap.dedent(code)
    r = translate_bytes(code.encode(), "m.py", to=to, scope="model")
    out = (r.new_data or code.encode()).decode()
    ast.parse(out)
    codes = [d.code for s in r.sites for d in s.diagnostics]
    return out, codes, r


HEADER = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n\n\n"


def test_a_model_file_becomes_a_cell_with_construct():
    out, codes, _ = tx(HEADER + """\
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return F.relu(self.fc(x))
        """)
    assert out == textwrap.dedent("""\
        import mindspore
        from mindspore import nn, ops


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fc = nn.Dense(4, 2)

            def construct(self, x: mindspore.Tensor) -> mindspore.Tensor:
                return ops.relu(self.fc(x))
        """)
    assert set(codes) == {"RC300", "RC308"}


def test_keywords_are_renamed_and_positionals_past_a_mismatch_become_keywords():
    out, _, _ = tx(HEADER + "fc = nn.Linear(4, 2, False)\nfc2 = nn.Linear(in_features=4, out_features=2, bias=True)\n")
    assert "nn.Dense(4, 2, has_bias=False)" in out      # MindSpore's 3rd positional is weight_init
    assert "nn.Dense(in_channels=4, out_channels=2, has_bias=True)" in out


def test_a_left_out_parameter_whose_defaults_differ_is_written_out():
    out, codes, _ = tx(HEADER + "norm = nn.LayerNorm(8)\nbn = nn.BatchNorm2d(3)\nbn2 = nn.BatchNorm2d(3, momentum=0.2)\n")
    assert "nn.LayerNorm((8,), epsilon=1e-05)" in out                  # MindSpore's epsilon default is 1e-7
    assert "nn.BatchNorm2d(3)" in out                                  # 0.1 is MindSpore's 0.9: nothing to write
    assert "nn.BatchNorm2d(3, momentum=0.8)" in out                    # 1 - m
    assert "RC307" in codes


def test_conv_padding_becomes_pad_mode_both_ways():
    out, _, _ = tx(HEADER + "a = nn.Conv2d(3, 8, 3)\nb = nn.Conv2d(3, 8, 3, padding=1)\nc = nn.Conv2d(3, 8, 3, padding=(1, 2))\n")
    assert "a = nn.Conv2d(3, 8, 3, pad_mode='valid', has_bias=True)" in out
    assert "b = nn.Conv2d(3, 8, 3, padding=1, pad_mode='pad', has_bias=True)" in out
    assert "c = nn.Conv2d(3, 8, 3, padding=(1, 1, 2, 2), pad_mode='pad', has_bias=True)" in out
    back, _, _ = tx(out, to="torch")
    assert "a = nn.Conv2d(3, 8, 3, bias=True)" in back         # padding 0 is torch's default
    assert "b = nn.Conv2d(3, 8, 3, padding=1, bias=True)" in back
    assert "c = nn.Conv2d(3, 8, 3, padding=(1, 2), bias=True)" in back


def test_conv_padding_gives_conv1d_an_int_and_conv3d_six_values():
    from recompat.translator.convert import conv_padding

    names = {"padding": "padding"}
    assert conv_padding("mindspore", {"padding": "(1,)"}, names) == ({"pad_mode": "'pad'", "padding": "1"}, None)
    assert conv_padding("mindspore", {"padding": "(1, 0, 2)"}, names) == (
        {"pad_mode": "'pad'", "padding": "(1, 1, 0, 0, 2, 2)"}, None)
    back = {"padding": "padding", "pad_mode": "pad_mode"}
    assert conv_padding("torch", {"pad_mode": "'pad'", "padding": "(1, 1, 0, 0, 2, 2)"}, back) == (
        {"padding": "(1, 0, 2)"}, None)
    assert conv_padding("torch", {"pad_mode": "'pad'", "padding": "(1, 1, 2, 2)"}, back) == ({"padding": "(1, 2)"}, None)


def test_a_setting_chosen_at_run_time_is_converted_branch_by_branch():
    """`pad_mode="pad" if padding else "valid"` converts each branch, and what differs is chosen the same way;
    branches that give different target settings are refused with the reason."""
    from recompat.translator.convert import Unconvertible, convert_text

    back = {"padding": "padding", "pad_mode": "pad_mode"}
    out, note = convert_text("conv_padding", "torch", {"pad_mode": '"pad" if padding else "valid"',
                                                       "padding": "padding"}, back)
    assert out == {"padding": "padding if padding else 0"} and "taken for an int" in note
    out, note = convert_text("conv_padding", "torch", {"pad_mode": "'same' if keep else 'valid'", "padding": "0"},
                             back)
    assert out == {"padding": "'same' if keep else 0"} and "stride 1" in note
    out, _ = convert_text("conv_padding", "mindspore", {"padding": "1 if odd else (1, 2)"}, {"padding": "padding"})
    assert out == {"pad_mode": "'pad'", "padding": "1 if odd else (1, 1, 2, 2)"}
    with pytest.raises(Unconvertible, match="reflect"):
        convert_text("conv_padding", "mindspore", {"padding": "1", "padding_mode": "'reflect' if r else 'zeros'"},
                     {"padding": "padding", "padding_mode": "padding_mode"})


def test_a_value_with_no_counterpart_leaves_the_call_as_it_is():
    out, codes, r = tx(HEADER + "a = nn.Conv2d(3, 8, 3, padding_mode='reflect')\n")
    assert "nn.Conv2d(3, 8, 3, padding_mode='reflect')" in out
    assert "RC309" in codes
    assert "import torch" in out or "from torch import nn" in out, "the torch import stays for the manual call"


def test_sequential_takes_a_list_in_mindspore_and_back():
    out, _, _ = tx(HEADER + "body = nn.Sequential(nn.Linear(4, 4), nn.ReLU())\nrest = nn.Sequential(*layers)\n")
    assert "body = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()])" in out
    assert "rest = nn.SequentialCell([*layers])" in out
    back, _, _ = tx("from mindspore import nn\n\nbody = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()])\n"
                    "rest = nn.SequentialCell(layers)\n", to="torch")
    assert "body = nn.Sequential(nn.Linear(4, 4), nn.ReLU())" in back
    assert "rest = nn.Sequential(*layers)" in back


def test_tensor_methods_on_tensors_only():
    out, _, _ = tx(HEADER + """\
        class Net(nn.Module):
            def forward(self, x):
                n = x.size(0)
                y = x.transpose(1, 2).view(n, -1)
                return y, x.size(), "a b".split()
        """)
    assert "n = x.shape[0]" in out
    assert "y = x.swapaxes(1, 2).view(n, -1)" in out
    assert 'return y, x.shape, "a b".split()' in out


def test_an_api_outside_the_set_is_manual_and_keeps_its_import():
    out, codes, r = tx(HEADER + """\
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)
                self.attn = nn.MultiheadAttention(4, 2)
        """)
    assert "self.attn = nn.MultiheadAttention(4, 2)" in out
    assert "self.fc = mindspore.nn.Dense(4, 2)" in out, "nn still names torch's module: spelled out"
    assert "from torch import nn" in out and "import mindspore" in out
    manual = [s for s in r.sites if s.status == "manual"]
    assert [s.api for s in manual] == ["torch.nn.MultiheadAttention"]


@pytest.mark.parametrize("to", ["mindspore", "torch"])
def test_each_manual_site_gets_a_recompat_line_above_its_statement(to):
    """What is left by hand is marked where it is (README): above the innermost statement holding it, above a
    decorated definition's first decorator, once per statement and message; translating again adds none."""
    head = HEADER if to == "mindspore" else "import mindspore\nfrom mindspore import nn\n\n\n"
    unknown = "torch.cuda.synchronize" if to == "mindspore" else "mindspore.runtime.synchronize"
    marker = "torch.cuda.nvtx.range" if to == "mindspore" else "mindspore.runtime.event"
    base, fwd = ("nn.Module", "forward") if to == "mindspore" else ("nn.Cell", "construct")
    out, codes, r = tx(head + textwrap.dedent(f"""\
        class Net({base}):
            @staticmethod
            @{marker}("step")
            def f(x):
                return x

            def {fwd}(self, x):
                if x is not None:
                    {unknown}()
                y = (x +
                     {unknown}())
                {unknown}(); {unknown}()
                return y
        """), to=to)
    said = {d.code + " " + d.message for s in r.sites for d in s.diagnostics if d.status == "manual"}
    assert len(said) == 2, said
    lines = out.splitlines()
    comments = [i for i, line in enumerate(lines) if line.strip().startswith("# recompat: ")]
    below = [lines[i + 1].strip() for i in comments]
    assert below == ["@staticmethod", f"{unknown}()", "y = (x +", f"{unknown}(); {unknown}()"], out
    assert {lines[i].strip()[len("# recompat: "):] for i in comments} == said
    assert lines[comments[1]].startswith(" " * 12), "indented as its statement"
    again = translate_bytes(out.encode(), "m.py", to=to, scope="model")
    assert again.new_data in (None, out.encode()), "translating the output again adds no second line"


def test_a_name_imported_bare_in_annotations_and_defaults_is_one_site_each():
    # each annotation and default is visited once (a second visit edited the same span: an internal error)
    out, codes, r = tx("""\
        from torch import Tensor
        from torch.nn import Linear


        def f(x: list[Tensor], y: Tensor = None, layer=Linear) -> dict[str, Tensor]:
            return x
        """)
    assert "def f(x: list[mindspore.Tensor], y: mindspore.Tensor = None, layer=torch_signature(nn.Dense, 'torch.nn.Linear')) -> dict[str, mindspore.Tensor]:" in out
    assert sorted(s.api for s in r.sites) == ["torch.Tensor"] * 3 + ["torch.nn.Linear"]


def test_an_entry_without_a_passing_example_is_not_translated():
    out, codes, _ = tx(HEADER + "act = nn.GELU()\n")
    assert "act = nn.GELU()" in out and "from torch import nn" in out
    assert codes == ["RC302"]


def test_comments_and_layout_inside_a_call_are_kept():
    src = HEADER + textwrap.dedent("""\
        conv = nn.Conv2d(
            3, 8,  # stem
            kernel_size=3,
            padding=1,
        )
        """)
    out, _, _ = tx(src)
    assert "    3, 8,  # stem\n    kernel_size=3,\n" in out


def test_translating_the_output_again_changes_nothing():
    out, _, _ = tx(HEADER + """\
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
                self.norm = nn.LayerNorm(4)

            def forward(self, x):
                return self.norm(self.body(x)).transpose(0, 1)
        """)
    again = translate_bytes(out.encode(), "m.py", to="mindspore", scope="model")
    assert not again.changed


def test_round_trip_comes_back_to_equivalent_torch():
    src = HEADER + """\
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2, bias=False)
                self.norm = nn.LayerNorm(2, eps=1e-6)

            def forward(self, x):
                return F.relu(self.norm(self.fc(x)))
        """
    ms, _, _ = tx(src)
    back, _, _ = tx(ms, to="torch")
    assert "class Net(nn.Module):" in back and "def forward(self, x):" in back
    assert "nn.Linear(4, 2, bias=False)" in back
    assert "nn.LayerNorm(2, eps=1e-6)" in back
    assert "F.relu(" in back


def test_cli_scope_model_reports_the_conversion_rate(tmp_path, capsys):
    (tmp_path / "m.py").write_text(HEADER + "fc = nn.Linear(4, 2)\nattn = nn.MultiheadAttention(4, 2)\n")
    code = main(["translate", str(tmp_path), "--scope", "model"])
    err = capsys.readouterr().err
    assert code == 0
    assert "RC301 [manual] torch.nn.MultiheadAttention" in err
    assert "50" in err.splitlines()[-1] or "50" in err, err   # 1 of 2 sites converted


def test_unknown_scope_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["translate", ".", "--scope", "everything"])
    assert exc.value.code == 2


def test_what_a_dropped_argument_held_is_neither_a_site_nor_an_import():
    """device= has no counterpart and goes; the torch uses inside it go with it: no manual site is reported for
    code that is no longer there, and an import only it read is removed (the output reads no torch name)."""
    out, codes, r = tx(HEADER + """\
        class Net(nn.Module):
            def __init__(self, x):
                super().__init__()
                self.fc = nn.Linear(4, 2, device=torch.device("cpu") if x.is_cuda else x.device)
        """)
    assert "device" not in out and "torch" not in out.replace("torch.", "") and "import torch" not in out, out
    assert [s.api for s in r.sites if s.status == "manual"] == [], [(s.api, s.status) for s in r.sites]
    assert "RC306" in codes          # the drop itself is said


def test_a_source_name_still_read_elsewhere_keeps_its_import():
    out, codes, r = tx(HEADER + """\
        class Net(nn.Module):
            def __init__(self, x):
                super().__init__()
                self.fc = nn.Linear(4, 2, device=x.device)
                self.act = nn.SELU()
        """)
    assert "device" not in out
    assert "self.act = nn.SELU()" in out and "from torch import nn" in out, out    # nn stays torch's nn
    assert "mindspore.nn.Dense(4, 2)" in out
    assert [s.api for s in r.sites if s.status == "manual"] == ["torch.nn.SELU"]


# ----- values (dtypes), sizes as arguments, dtypes written from data

def test_a_dtype_is_a_value_renamed_either_way_aliases_too():
    out, codes, _ = tx(HEADER + """\
        def cast(x):
            return x.to(torch.float32), x.to(torch.float)
        """)
    assert "x.to(mindspore.float32), x.to(mindspore.float32)" in out and "import mindspore" in out, out
    assert "import torch" not in out and codes.count("RC300") == 2
    back, codes, _ = tx("import mindspore\n\n\ndef cast(x):\n    return x.astype(mindspore.float)\n", to="torch")
    assert "x.astype(torch.float32)" in back and "import torch" in back, back


@pytest.mark.parametrize("call,expected", [
    ("torch.zeros(2, 3)", "ops.zeros((2, 3))"),
    ("torch.zeros(n)", "ops.zeros(n)"),
    ("torch.zeros(x.shape)", "ops.zeros(x.shape)"),
    ("torch.zeros((2, 3))", "ops.zeros((2, 3))"),
    ("torch.zeros(*x.shape)", "ops.zeros((*x.shape,))"),
    ("torch.zeros([2, 3])", "ops.zeros((2, 3))"),               # a list written out as a tuple (tile refuses one)
    ("torch.zeros([b])", "ops.zeros((b,))"),
    ("torch.zeros([b, ])", "ops.zeros((b, ))"),
    ("torch.zeros([1, b, 3][:n])", "ops.zeros(tuple([1, b, 3][:n]))"),     # VNet's x.repeat([...][:dims])
    ("torch.zeros(b, 3, dtype=torch.float, device=x.device)", "ops.zeros((b, 3), dtype=mindspore.float32)"),
    ("torch.zeros(\n        b,  # rows\n        3,\n    )", "ops.zeros(\n        (b,  # rows\n        3),\n    )"),
])
def test_sizes_given_as_arguments_become_one_tuple(call, expected):
    out, codes, r = tx(HEADER + f"def make(x, n, b):\n    return {call}\n")
    assert f"return {expected}\n" in out, out
    assert [s.status for s in r.sites if s.api == "torch.zeros"] == ["partial" if "device" in call else "converted"]


@pytest.mark.parametrize("fill,dtype", [
    ("2.5", "mindspore.float32"), ("-1e9", "mindspore.float32"), ('float("-inf")', "mindspore.float32"),
    ("-math.inf", "mindspore.float32"), ("1 / 3", "mindspore.float32"), ("True", "mindspore.bool_"),
    ("3", None), ("-(2 * 4)", None),
])
def test_a_fill_value_gives_the_dtype_torch_would_take(fill, dtype):
    """MindSpore 2.10's ops.full makes int64 of any Python scalar (2.7 -> 2): the dtype torch takes from the
    fill value is written out, spelled and imported like every target name (here only ops is imported else)."""
    out, codes, _ = tx(f"import math\nimport torch\n\n\ndef make():\n    return torch.full((2,), {fill})\n")
    written = f", dtype={dtype}" if dtype else ""
    assert f"return ops.full((2,), {fill}{written})\n" in out, out
    assert ("import mindspore\n" in out) == bool(dtype), out
    assert codes == ["RC300"]


def test_a_fill_value_of_unknown_type_is_left_with_the_reason():
    out, codes, r = tx("import torch\n\n\ndef make(v):\n    return torch.full((2,), v)\n")
    assert "torch.full((2,), v)" in out and codes == ["RC309"]
    assert "ops.full makes int64 from a Python float" in r.sites[0].diagnostics[0].message
    out, codes, _ = tx("import torch\n\n\ndef make(v):\n    return torch.full((2,), v, dtype=torch.float32)\n")
    assert "ops.full((2,), v, dtype=mindspore.float32)" in out and codes == ["RC300", "RC300"], (out, codes)


# ----- compiler markers (mappings/markers.yaml)

def test_compiler_markers_are_replaced_by_what_they_give_eagerly():
    out, codes, r = tx(HEADER + """\
        from typing import List
        from torch.jit import Final

        torch.fx.wrap("helper")


        @torch.jit.interface
        class Proto(nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                pass


        class Net(nn.Module):
            scale: Final[float]

            def __init__(self):
                super().__init__()
                self.fc = torch.jit.script(nn.Linear(3, 3))

            @torch.jit.ignore(drop=False)
            def helper(self, x):  # kept
                return x * 2

            def forward(self, x):
                if torch.jit.is_scripting():
                    return x
                out: List[torch.Tensor] = torch.jit.annotate(List[torch.Tensor], [])
                return out
        """)
    assert "jit" not in out and "fx" not in out and "import torch" not in out, out
    assert "\n\nclass Proto(nn.Cell):" in out and "    scale: float\n" in out
    assert "self.fc = nn.Dense(3, 3)" in out
    assert "\n    def helper(self, x):  # kept\n" in out and "if False:" in out
    assert "out: List[mindspore.Tensor] = []" in out
    assert codes.count("RC312") == 7 and not [s for s in r.sites if s.status != "converted"]


def test_a_marker_called_another_way_is_an_api_use_like_any_other():
    out, codes, r = tx(HEADER + """\
        def make(m, example):
            return torch.jit.script(m, example_inputs=example), torch.jit.is_scripting(m)
        """)
    assert "torch.jit.script(m, example_inputs=example), torch.jit.is_scripting(m)" in out
    assert [(s.api, s.status) for s in r.sites] == [("torch.jit.script", "manual"), ("torch.jit.is_scripting", "manual")]



# ----- a class passed around as a value (recompat.runtime.torch_signature)

def test_a_layer_class_passed_as_a_value_takes_torchs_arguments_where_it_is_called():
    out, codes, r = tx(HEADER + """\
        import functools
        import typing
        from typing import cast

        TYPES = (nn.Linear, nn.Conv2d)
        make = functools.partial(nn.Linear, bias=False)


        class Net(nn.Module):
            def __init__(self, act=nn.ReLU):
                super().__init__()
                self.act = act()

            def forward(self, x: nn.Linear) -> nn.Module:
                if isinstance(x, (nn.Linear, nn.Conv2d)) or issubclass(type(x), nn.Linear):
                    return cast(torch.Tensor, x) + typing.cast(nn.Linear, x)
        """)
    assert "TYPES = (torch_signature(nn.Dense, 'torch.nn.Linear'), torch_signature(nn.Conv2d, 'torch.nn.Conv2d'))" in out, out
    assert "functools.partial(torch_signature(nn.Dense, 'torch.nn.Linear'), bias=False)" in out
    assert "def __init__(self, act=torch_signature(nn.ReLU, 'torch.nn.ReLU')):" in out
    assert "from recompat.runtime import torch_signature\n" in out
    # a type is no call: base classes, annotations, isinstance and issubclass keep the class itself
    assert "class Net(nn.Cell):" in out and "def construct(self, x: nn.Dense) -> nn.Cell:" in out
    assert "isinstance(x, (nn.Dense, nn.Conv2d)) or issubclass(type(x), nn.Dense)" in out
    # typing.cast is a marker (GRAPH mode cannot compile it): replaced by the value it casts
    assert "return x + x" in out and codes.count("RC312") == 2
    assert codes.count("RC313") == 4 and not [s for s in r.sites if s.status != "converted"]


def test_a_value_passed_to_torch_is_not_wrapped():
    """From MindSpore there is no adapter: a class whose call differs is renamed and reported partial (RC305)."""
    back, codes, r = tx("from mindspore import nn\n\n\nTYPES = (nn.Dense,)\n", to="torch")
    assert "TYPES = (nn.Linear,)" in back and "torch_signature" not in back
    assert codes == ["RC305"] and "renamed or converted parameters" in r.sites[0].diagnostics[0].message


def test_a_class_or_function_the_file_defines_is_no_layer_nor_tensor_receiver():
    """`_Pull.add_module(...)` on a class the file defines (an autograd.Function's apply, in real code) and
    `helper.view(...)` on a function are calls on those objects, not on a layer or a tensor: passed over as code
    of the file's own, where they were taken for a layer's or a tensor's methods."""
    out, codes, r = tx(HEADER + """\
        class Pull:
            pass


        def helper():
            pass


        def f(x, m):
            Pull.add_module("a", x)
            m.add_module("b", x)
            return helper.view(2), x.view(2)
        """)
    assert 'Pull.add_module("a", x)' in out and 'add_child(m, "b", x)' in out
    assert "helper.view(2)" in out
    assert sorted(s.api for s in r.sites if "view" in s.api or "add_module" in s.api) == [
        "torch.Tensor.view", "torch.nn.Module.add_module"]


# ----- the model base class's methods called on the model itself

def test_a_model_method_called_on_itself_is_a_site():
    out, codes, r = tx(HEADER + """\
        class Net(nn.Module):
            def __init__(self, other):
                super().__init__()
                self.add_module("fc", nn.Linear(4, 2))
                self.register_module("out", nn.Linear(2, 2))
                other.add_module("x", None)      # another object, not known here: taken for a layer
                self.zero_grad()

            def forward(self, x):
                return self.fc(x)
        """)
    assert 'self.insert_child_to_cell("fc", nn.Dense(4, 2))' in out
    assert 'self.insert_child_to_cell("out", nn.Dense(2, 2))' in out
    assert 'add_child(other, "x", None)' in out and "self.zero_grad()" in out
    assert [(s.api, s.status) for s in r.sites if s.status == "manual"] == [("torch.nn.Module.zero_grad", "manual")]


def test_a_method_the_project_defines_is_its_own():
    out, codes, r = tx(HEADER + """\
        class Base(nn.Module):
            def train(self, mode=True):
                return self


        class Net(Base):
            def __init__(self):
                super().__init__()
                self.train()
        """)
    assert "self.train()" in out and not [s for s in r.sites if s.status == "manual"], codes


def test_a_reexported_name_is_the_public_one():
    out, codes, _ = tx(HEADER + "ACTS = {'relu': nn.modules.ReLU, 'gelu': torch.nn.modules.activation.GELU}\n"
                                "layer = torch.nn.modules.linear.Linear(4, 2)\n")
    assert "'relu': torch_signature(nn.ReLU, 'torch.nn.ReLU')" in out and "layer = nn.Dense(4, 2)" in out, out
    assert "torch.nn.modules.activation.GELU" in out and codes.count("RC302") == 1   # read as t_gelu: unproven


def test_add_module_in_a_sequential_subclass_adds_to_the_sequence():
    """MindSpore's SequentialCell never runs a child insert_child_to_cell adds (measured): recompat.runtime.add_child
    does what torch's add_module does there."""
    out, codes, r = tx(HEADER + """\
        class Two(nn.Sequential):
            def __init__(self):
                super().__init__()
                self.add_module("a", nn.Linear(2, 2))


        class Three(Two):
            def __init__(self):
                super().__init__()
                super().add_module(name="b", module=nn.Linear(2, 2))
        """)
    assert 'add_child(self, "a", nn.Dense(2, 2))' in out and 'add_child(self, name="b", module=nn.Dense(2, 2))' in out
    assert "from recompat.runtime import add_child\n" in out, out
    messages = [d.message for s in r.sites for d in s.diagnostics if d.code == "RC314"]
    assert len(messages) == 2 and "on self (Three derives from torch.nn.Sequential)" in messages[1]


def test_a_layers_numbers_given_as_a_list_are_written_as_a_tuple():
    """torch's layers take any sequence of numbers; MindSpore's refuse a list (TypeError)."""
    out, codes, r = tx(HEADER + "conv = nn.Conv2d(1, 2, kernel_size=[3, 3], stride=[1,])\n")
    assert "kernel_size=(3, 3), stride=(1,)" in out, out


def test_add_module_on_a_container_the_code_builds_adds_to_the_sequence():
    out, codes, r = tx(HEADER + """\
        class Net(nn.Module):
            def __init__(self, other):
                super().__init__()
                self.layers = nn.Sequential()
                self.layers.add_module("fc", nn.Linear(2, 2))
                block = nn.Sequential()
                block.add_module("act", nn.ReLU())
                self.block = block
                other.add_module("x", None)       # its class is not known here: taken for a layer
        """)
    assert 'add_child(self.layers, "fc", nn.Dense(2, 2))' in out and 'add_child(block, "act", nn.ReLU())' in out
    assert 'add_child(other, "x", None)' in out and codes.count("RC314") == 3, out
    assert any("other (a layer whose class is not known here)" in d.message for s in r.sites for d in s.diagnostics)


def test_a_layers_methods_are_translated_on_a_receiver_that_is_not_self():
    """A layer made in another file (MONAI's get_conv_block builds a Convolution, then walks its modules()) or set
    by a base class of another file (self.final): the method is taken for the layer's, as x.view() is taken for a
    tensor's where x is not shown to be something else. (mappings/nn_modules.yaml's entries, not this module's.)"""
    code = HEADER + textwrap.dedent("""\
        from .blocks import Convolution


        def get_block(c):
            block = Convolution(c)
            for m in block.modules():
                m.apply(init)
            return block


        class Net(Base):
            def __init__(self):
                super().__init__()
                n = sum(p.numel() for p in self.body.parameters())
                names = [k for k, _ in nn.Linear(2, 2).named_parameters()]
                self.pad = Pad[nn.ConstantPad2d]          # the same parameters, but torch's take a list too


        Pad = {nn.ConstantPad2d: nn.ConstantPad2d}
        """)
    r = translate_bytes(code.encode(), "m.py", to="mindspore", scope="model", mappings=mappings.load(mappings.HERE))
    out = r.new_data.decode()
    assert "for m in (v for _, v in block.cells_and_names()):\n        m.apply(init)" in out, out
    assert "self.body.get_parameters()" in out and "nn.Dense(2, 2).parameters_and_names()" in out
    assert out.count("torch_signature(nn.ConstantPad2d, 'torch.nn.ConstantPad2d')") == 3, out
    assert [s.status for s in r.sites if s.api.startswith("torch.nn.Module.")] == ["converted"] * 4, r.sites


def test_torch_jit_isinstance_is_the_builtin_for_a_plain_class():
    out, codes, r = tx(HEADER + """\
        from typing import List


        def f(x, y):
            return torch.jit.isinstance(x, torch.Tensor), torch.jit.isinstance(y, List[torch.Tensor])
        """)
    assert "isinstance(x, mindspore.Tensor)" in out, out     # a type: no torch_signature
    assert "torch.jit.isinstance(y, List[" in out            # a subscripted generic: torch checks the items
    assert [s.api for s in r.sites if s.status == "manual"] == ["torch.jit.isinstance"]


@pytest.mark.parametrize("values,expected", [
    ({"padding": "1", "output_padding": "1"}, {"pad_mode": "'pad'", "padding": "(1, 0, 1, 0)"}),
    ({"padding": "(2, 1)", "output_padding": "(1, 0)"}, {"pad_mode": "'pad'", "padding": "(2, 1, 1, 1)"}),
    ({"padding": "0", "output_padding": "0"}, {"pad_mode": "'valid'", "padding": "0"}),
    ({"padding": "1", "output_padding": "2"}, "exceeds padding"),
    ({"padding": "p", "output_padding": "1"}, "decided at run time"),
])
def test_output_padding_is_carried_in_an_asymmetric_padding(values, expected):
    """MindSpore's own output_padding computes other values: (p, p - op) per axis crops to torch's output."""
    from recompat.translator import convert

    names = {"padding": "padding", "output_padding": None}
    if isinstance(expected, str):
        with pytest.raises(convert.Unconvertible, match=expected):
            convert.transpose_padding("mindspore", values, names)
    else:
        assert convert.transpose_padding("mindspore", values, names) == (expected, None)


def test_a_method_only_torchs_tensor_has_is_left_by_hand_never_passed_over():
    """x.detach() and x.cpu() would fail on MindSpore (its Tensor has neither): with no entry they are sites left by
    hand. A method a built-in type has too (d.values()) or one both Tensors have is not taken for one."""
    out, codes, r = tx(HEADER + """\
        def f(x, d):
            return x.detach().cpu(), list(d.values()), x.add(1)
        """)
    assert "x.detach().cpu()" in out and "d.values()" in out
    assert sorted(s.api for s in r.sites if s.status == "manual") == ["torch.Tensor.cpu", "torch.Tensor.detach"]
    back, codes, r = tx("from mindspore import nn\n\n\ndef f(x):\n    return x.asnumpy()\n", to="torch")
    assert [s.api for s in r.sites if s.status == "manual"] == ["mindspore.Tensor.asnumpy"], r.sites


def test_a_method_both_tensors_have_is_carried_only_by_an_entry_never_passed_over():
    """x.to(device) and x.copy_(y): MindSpore's Tensor has methods of these names, but nothing shows they agree
    (its to() takes a dtype only): with no entry they are left as they are and reported (RC320); one with an entry
    (x.view) is translated as the entry says, both ways."""
    out, codes, r = tx(HEADER + """\
        def f(x, y, d):
            return x.to(d).copy_(y).view(2, -1)
        """)
    assert "x.to(d).copy_(y).view(2, -1)" in out
    assert [(s.api, s.status) for s in r.sites] == [
        ("torch.Tensor.to", "manual"), ("torch.Tensor.copy_", "manual"), ("torch.Tensor.view", "converted")]
    assert codes.count("RC320") == 2
    message = next(d.message for s in r.sites for d in s.diagnostics if d.code == "RC320")
    assert "mindspore.Tensor.to has a method of this name too" in message, message
    back, codes, r = tx("from mindspore import nn\n\n\ndef f(x, t):\n    return x.to(t).view(2, -1)\n",
                        to="torch")
    assert [(s.api, s.status) for s in r.sites] == [
        ("mindspore.Tensor.to", "manual"), ("mindspore.Tensor.view", "converted")]
