"""torch.nn.init on MindSpore (mappings/init.yaml, form initializer): the translation fills the same tensor through
recompat.runtime.initialized with the MindSpore initializer that draws the same distribution; the proof harness
(compat.examples.run_init_example) fails a pair that draws otherwise or fills nothing. And the loops real models
initialise with (`for m in self.modules(): if isinstance(m, nn.BatchNorm2d): nn.init.constant_(m.weight, 1)`): in an
isinstance branch a layer's tensors take the MindSpore names (weight -> gamma), looked up when it runs where the
classes hold them at different places (recompat.runtime.layer_tensor)."""
from __future__ import annotations

import os
import textwrap

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest

from conftest import translate_model
from recompat.compat.examples import ExampleError, run_init_example

HEADER = "import torch\nfrom torch import nn\n\n\n"


def tx(body: str):
    return translate_model(HEADER + textwrap.dedent(body))


def test_an_initializer_fills_the_same_tensor_through_the_runtime():
    out, diags = tx("""\
        def init(conv):
            nn.init.kaiming_normal_(conv.weight, 0.01, mode="fan_out")
            conv.bias = nn.init.constant_(conv.bias, val=0.0)
        """)
    assert "from recompat.runtime import initialized" in out
    assert ("initialized(conv.weight, mindspore.common.initializer.HeNormal(negative_slope=0.01, mode=\"fan_out\"))"
            in out)
    assert "conv.bias = initialized(conv.bias, mindspore.common.initializer.Constant(value=0.0))" in out
    # conv's class is not known here: where it were a BatchNorm, its weight would be gamma (noted, not guessed)
    assert "torch" not in out and all(d.status == "converted" or d.code == "RC310" for d in diags), diags
    assert sum("where it is a layer whose MindSpore counterpart holds" in d.message for d in diags) == 2


def test_as_tensor_around_the_tensor_is_the_tensor_itself():
    """MONAI's DenseNet: nn.init.constant_(torch.as_tensor(m.weight), 1). torch.as_tensor returns m.weight itself;
    mindspore.tensor(m.weight) would be a copy, and the fill would be lost."""
    out, diags = tx("""\
        def init(m):
            nn.init.constant_(torch.as_tensor(m.weight), 1)
        """)
    assert "initialized(m.weight, mindspore.common.initializer.Constant(value=1))" in out
    assert "mindspore.tensor" not in out and not any(d.message.startswith("torch.as_tensor") for d in diags)


def test_a_default_that_differs_is_written_and_a_generator_is_refused():
    out, diags = tx("""\
        def init(w, g):
            nn.init.normal_(w, mean=0.5)
            nn.init.normal_(w, generator=g)
        """)
    assert "initialized(w, mindspore.common.initializer.Normal(mean=0.5, sigma=1.0))" in out   # not 0.01
    assert "nn.init.normal_(w, generator=g)" in out
    assert any(d.code == "RC309" and "generator" in d.message for d in diags)


def test_no_tensor_to_fill_is_left_by_hand():
    out, diags = tx("""\
        def init(kwargs):
            nn.init.zeros_(**kwargs)
        """)
    assert "nn.init.zeros_(**kwargs)" in out and any(d.code == "RC303" for d in diags)


# ----- what runs -------------------------------------------------------------------------------------------
@pytest.mark.runtime
def test_initialized_fills_a_parameter_and_a_tensor_in_place_and_returns_them():
    import mindspore
    from mindspore.common.initializer import Constant, HeNormal

    from recompat.runtime import initialized

    dense = mindspore.nn.Dense(64, 256)
    assert initialized(dense.weight, HeNormal(mode="fan_out")) is dense.weight
    assert abs(dense.weight.asnumpy().std() / np.sqrt(2.0 / 256) - 1) < 0.05
    t = mindspore.Tensor(np.zeros((2, 3), np.float32))
    assert initialized(t, Constant(0.5)) is t and (t.asnumpy() == 0.5).all()


TORCH_SIDE = '''\
from torch import nn

SHAPE = (32, 64, 3, 3)


def init(tensor):
    return nn.init.kaiming_normal_(tensor, mode="fan_out")
'''

MS_SIDE = '''\
from mindspore.common.initializer import HeNormal
from recompat.runtime import initialized

SHAPE = (32, 64, 3, 3)


def init(tensor):
    {body}
'''


@pytest.mark.runtime
@pytest.mark.parametrize("body, expected", [
    ('return initialized(tensor, HeNormal(mode="fan_out"))', None),
    ('return initialized(tensor, HeNormal(mode="fan_in"))', "another distribution"),    # fan 64 x 9, not 32 x 9
    ("return tensor", "every value 7|another distribution"),                           # nothing filled
    ('initialized(tensor, HeNormal(mode="fan_out"))', "returned NoneType, not the tensor"),
], ids=["correct", "planted: fan_in for fan_out", "planted: no fill", "planted: nothing returned"])
def test_the_proof_fails_a_pair_that_draws_otherwise(tmp_path, body, expected):
    (tmp_path / "t.py").write_text(TORCH_SIDE)
    (tmp_path / "m.py").write_text(MS_SIDE.format(body=body))
    if expected is None:
        assert "the same distribution" in run_init_example(tmp_path / "t.py", tmp_path / "m.py")
        return
    with pytest.raises(ExampleError, match=expected) as err:
        run_init_example(tmp_path / "t.py", tmp_path / "m.py")
    assert str(tmp_path / "m.py") in str(err.value)


# ----- isinstance narrowing: the loops that initialise -------------------------------------------------------
def test_a_tensor_of_a_layer_narrowed_by_isinstance_takes_its_mindspore_name():
    out, diags = tx("""\
        def init(model):
            for m in model.modules():
                if isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    m.bias.set_data(m.running_mean)
                elif isinstance(m, nn.Linear):
                    nn.init.zeros_(m.bias)
            return m.weight
        """)
    assert "initialized(m.gamma, mindspore.common.initializer.Constant(value=1))" in out
    assert "m.beta.set_data(m.moving_mean)" in out
    assert "initialized(m.bias, mindspore.common.initializer.Zero())" in out      # Dense keeps weight and bias
    assert out.rstrip().endswith("return m.weight")                            # outside the branch: not narrowed
    assert {d.code for d in diags if d.code in ("RC315", "RC316")} == {"RC315"}


def test_classes_that_hold_a_tensor_at_different_places_look_it_up_when_they_run():
    out, diags = tx("""\
        def init(m, norm):
            if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm3d)):
                nn.init.ones_(m.weight)
                m.weight = None
            if isinstance(m, type(norm)):
                nn.init.zeros_(torch.as_tensor(m.bias))
                m.bias = None
                m = norm
                print(m.weight)
            if isinstance(m, (nn.Conv2d, nn.BatchNorm2d)):
                print(m.num_batches_tracked)
        """)
    assert "initialized(layer_tensor(m, 'weight'), mindspore.common.initializer.One())" in out
    assert "print(m.weight)" in out                    # m rebound in the branch: nothing narrowed there
    manual = [d.message for d in diags if d.status == "manual"]
    assert any("m.weight: m is nn.BatchNorm2d or nn.BatchNorm3d here" in m for m in manual), manual
    assert any(m.startswith("m.num_batches_tracked") and "has no num_batches_tracked" in m for m in manual), manual


@pytest.mark.runtime
def test_layer_tensor_finds_the_tensor_by_the_layers_class():
    import mindspore
    from mindspore.common.initializer import Constant

    from recompat.runtime import initialized, layer_tensor, torch_signature

    bn2, bn3 = mindspore.nn.BatchNorm2d(4), mindspore.nn.BatchNorm3d(4)
    assert layer_tensor(bn2, "weight") is bn2.gamma and layer_tensor(bn3, "running_var") is bn3.bn2d.moving_variance
    made = torch_signature(mindspore.nn.BatchNorm2d, "torch.nn.BatchNorm2d")(4, momentum=0.1)   # a subclass
    assert layer_tensor(made, "bias") is made.beta
    dense = mindspore.nn.Dense(2, 3)
    assert layer_tensor(dense, "weight") is dense.weight
    initialized(layer_tensor(bn3, "weight"), Constant(0.5))
    assert (bn3.bn2d.gamma.asnumpy() == 0.5).all()
    with pytest.raises(AttributeError, match="BatchNorm2d holds no single counterpart of torch's 'num_batches"):
        layer_tensor(bn2, "num_batches_tracked")


def test_the_tensor_to_fill_by_keyword_and_views_that_would_be_filled_as_copies():
    out, diags = tx("""\
        def init(m, w):
            nn.init.zeros_(tensor=torch.as_tensor(w))
            nn.init.zeros_(m.bias[:2])
            nn.init.trunc_normal_(w.t())
            nn.init.ones_(w.T)
            nn.init.ones_(m.weight.data)
        """)
    assert "initialized(w, mindspore.common.initializer.Zero())" in out           # not mindspore.tensor(w)
    assert "nn.init.zeros_(m.bias[:2])" in out and "nn.init.trunc_normal_(w.t())" in out
    assert "nn.init.ones_(w.T)" in out and "initialized(m.weight.data" in out     # .data shares its storage
    views = [d.message for d in diags if d.code == "RC303"]
    assert len(views) == 3 and all("a view or a result" in m for m in views), views


def test_or_chains_narrow_and_a_name_bound_again_in_the_branch_does_not():
    out, _ = tx("""\
        def init(m):
            if isinstance(m, nn.BatchNorm2d) or isinstance(m, nn.BatchNorm1d):
                nn.init.ones_(m.weight)
            if isinstance(m, nn.BatchNorm2d):
                key = lambda m: m.bias
                nn.init.ones_(m.weight)
            if isinstance(m, nn.BatchNorm2d):
                def inner(m):
                    return m.running_var
        """)
    assert "initialized(m.gamma, mindspore.common.initializer.One())" in out
    assert "lambda m: m.bias" in out and "initialized(m.weight," in out and "return m.running_var" in out


def test_a_layer_the_class_makes_is_known_by_its_attribute():
    out, diags = tx("""\
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm2d(4)
                self.fc = nn.Linear(4, 2)
                nn.init.zeros_(self.bn.weight)
                nn.init.zeros_(self.fc.weight)
                self.bn.bias.requires_grad = False

            def forward(self, x):
                return self.fc(self.bn(x).mean((2, 3))) * self.bn.running_var.mean()
        """)
    assert "initialized(self.bn.gamma, mindspore.common.initializer.Zero())" in out
    assert "initialized(self.fc.weight, mindspore.common.initializer.Zero())" in out
    assert "self.bn.beta.requires_grad = False" in out and "self.bn.moving_variance.mean()" in out
    # mean of an empty dim differs on MindSpore: the domain probes' note (RC327, tests/test_domain.py) is the only one
    assert not [d for d in diags if d.status != "converted" and d.code != "RC327"], diags


@pytest.mark.runtime
def test_the_proof_refuses_a_pair_that_fills_nothing_on_either_side(tmp_path):
    (tmp_path / "t.py").write_text("SHAPE = (4, 4)\n\n\ndef init(tensor):\n    return tensor\n")
    (tmp_path / "m.py").write_text("SHAPE = (4, 4)\n\n\ndef init(tensor):\n    return tensor\n")
    with pytest.raises(ExampleError, match="fills nothing"):
        run_init_example(tmp_path / "t.py", tmp_path / "m.py")


def test_in_place_fills_written_as_tensor_methods_take_the_same_path():
    """MONAI's EfficientNet and TransCheX: m.weight.data.normal_(0, s), .fill_(1), .zero_() (MindSpore's own
    in-place fills have no CPU kernel); a BatchNorm narrowed by isinstance fills its gamma."""
    out, diags = tx("""\
        def init(m, s):
            if isinstance(m, nn.BatchNorm2d):
                m.weight.data.fill_(1.0)
                m.bias.data.zero_()
            elif isinstance(m, nn.Linear):
                m.weight.data.normal_(0.0, s)
            w = m.weight[0].normal_()
        """)
    assert "initialized(m.gamma.data, mindspore.common.initializer.Constant(value=1.0))" in out
    assert "initialized(m.beta.data, mindspore.common.initializer.Zero())" in out
    assert "initialized(m.weight.data, mindspore.common.initializer.Normal(mean=0.0, sigma=s))" in out
    assert "w = m.weight[0].normal_()" in out and any(d.code == "RC303" and "a view" in d.message for d in diags)


@pytest.mark.runtime
@pytest.mark.parametrize("body, expected", [
    ("ops.rand(64, 64)", None),
    ("ops.randn(64, 64)", "another distribution"),                          # N(0, 1) for U[0, 1)
    ("ops.rand(64, 32)", "of shape"),
    ("ops.rand(64, 64, dtype=mindspore.float64)", "draws float64"),
    ("ops.ones((64, 64)) * 0.5", "another distribution"),                    # a constant draws nothing
    ("(ops.rand(64, 64) * 2).clip(0, 1)", "another distribution"),          # a near miss: half the values at 1
], ids=["correct", "planted: normal for uniform", "planted: shape", "planted: dtype", "planted: constant",
        "planted: other distribution"])
def test_a_random_functions_proof_fails_a_pair_that_draws_otherwise(tmp_path, body, expected):
    from recompat.compat.examples import run_draw_example

    (tmp_path / "t.py").write_text("import torch\n\n\ndef draw():\n    return torch.rand(64, 64)\n")
    (tmp_path / "m.py").write_text(f"import mindspore\nfrom mindspore import ops\n\n\ndef draw():\n    return {body}\n")
    if expected is None:
        assert "the same distribution" in run_draw_example(tmp_path / "t.py", tmp_path / "m.py")
        return
    with pytest.raises(ExampleError, match=expected) as err:
        run_draw_example(tmp_path / "t.py", tmp_path / "m.py")
    assert str(tmp_path / "m.py") in str(err.value)


@pytest.mark.runtime
def test_a_random_functions_proof_refuses_a_constant_draw(tmp_path):
    from recompat.compat.examples import run_draw_example

    (tmp_path / "t.py").write_text("import torch\n\n\ndef draw():\n    return torch.zeros(8)\n")
    (tmp_path / "m.py").write_text("from mindspore import ops\n\n\ndef draw():\n    return ops.zeros(8)\n")
    with pytest.raises(ExampleError, match="too few to tell a distribution"):
        run_draw_example(tmp_path / "t.py", tmp_path / "m.py")


# -- MindSpore -> torch: a layer's initializer arguments (weight_init='ones', gamma_init=..., bias_init=0.5) ------

MS_LAYERS = """\
import mindspore as ms
from mindspore import nn
from mindspore.common.initializer import HeUniform, Normal, TruncatedNormal


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(400, 300, weight_init=Normal(0.02), bias_init='zeros')
        self.fc2 = nn.Dense(400, 300, weight_init="He_Uniform", bias_init=0.5)  # kept
        self.fc3 = nn.Dense(400, 300, weight_init=TruncatedNormal(sigma=0.1, mean=1.0))
        self.bn = nn.BatchNorm2d(3, gamma_init='zeros', beta_init=-1)
        layer = nn.Dense(400, 300, weight_init=HeUniform(negative_slope=0.1, mode='fan_out'))
        self.layer = layer

    def construct(self, x):
        return self.fc(x)
"""


def to_torch(code: str):
    from recompat import mappings
    from recompat.compat.prove import every_entry_proven
    from recompat.translator.translate import translate_bytes

    r = translate_bytes(code.encode(), "m.py", to="torch", scope="model",
                        mappings=every_entry_proven(mappings.default()))
    return (r.new_data or code.encode()).decode(), [d for s in r.sites for d in s.diagnostics]


def test_a_layers_initializer_arguments_become_torch_init_calls_after_it_is_built():
    out, diags = to_torch(MS_LAYERS)
    assert """\
        self.fc = nn.Linear(400, 300)
        nn.init.normal_(self.fc.weight, std=0.02)
        nn.init.zeros_(self.fc.bias)
        self.fc2 = nn.Linear(400, 300)  # kept
        nn.init.kaiming_uniform_(self.fc2.weight)
        nn.init.constant_(self.fc2.bias, val=0.5)
        self.fc3 = nn.Linear(400, 300)
        nn.init.trunc_normal_(self.fc3.weight, std=0.1, mean=1.0)
        self.bn = nn.BatchNorm2d(3)
        nn.init.zeros_(self.bn.weight)
        nn.init.constant_(self.bn.bias, val=-1)
        layer = nn.Linear(400, 300)
        nn.init.kaiming_uniform_(layer.weight, a=0.1, mode='fan_out')
""" in out, out
    assert "mindspore" not in out and all(d.status == "converted" for d in diags), diags
    assert sum(d.code == "RC321" for d in diags) == 5
    again, _ = to_torch(out)
    assert again == out, "translating the output again changes nothing"


def test_the_translated_layers_hold_what_mindspores_initializers_draw():
    """Constants exactly; the draws by their spread (120,000 values each): Normal(0.02) has std 0.02; He uniform
    (fan_in 400, leaky_relu slope 0) is bounded by sqrt(6 / 400); fan_out 300 with slope 0.1 by
    sqrt(6 / (1 + 0.01) / 300); a normal truncated to [-2, 2] around mean 1 with std 0.1 is a plain normal there."""
    import torch

    out, _ = to_torch(MS_LAYERS)
    namespace: dict = {}
    exec(compile(out, "translated.py", "exec"), namespace)
    torch.manual_seed(0)
    net = namespace["Net"]()
    assert abs(net.fc.weight.std().item() / 0.02 - 1) < 0.02 and torch.all(net.fc.bias == 0)
    assert torch.all(net.fc2.bias == 0.5) and torch.all(net.bn.weight == 0) and torch.all(net.bn.bias == -1)
    bound = (6 / 400) ** 0.5
    assert bound * 0.99 < net.fc2.weight.abs().max().item() <= bound
    bound = (6 / (1 + 0.1 ** 2) / 300) ** 0.5
    assert bound * 0.99 < net.layer.weight.abs().max().item() <= bound
    assert abs(net.fc3.weight.mean().item() - 1.0) < 0.01 and abs(net.fc3.weight.std().item() / 0.1 - 1) < 0.02


@pytest.mark.parametrize("line, code", [
    ("self.seq = nn.SequentialCell([nn.Dense(3, 3, weight_init='ones')])", "RC322"),   # not a statement of its own
    ("self.fc = nn.Dense(3, 3, weight_init='orthogonal')", "RC309"),                    # no torch.nn.init entry
    ("self.fc = nn.Dense(3, 3, weight_init=my_init)", "RC309"),                          # a value not shown here
])
def test_an_initializer_that_cannot_follow_the_layer_leaves_it_as_it_is(line, code):
    source = MS_LAYERS.replace("        layer = nn.Dense(400, 300, weight_init=HeUniform(negative_slope=0.1, "
                               "mode='fan_out'))\n", f"        {line}\n        layer = None\n")
    out, diags = to_torch(source)
    layer = line[line.index("nn.Dense("):line.index(")", line.index("weight_init")) + 1]
    assert layer in out, out   # the MindSpore layer, as it was
    assert [d.code for d in diags if d.status == "manual"] == [code]
