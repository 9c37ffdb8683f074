"""transfer_weights: torch <-> MindSpore by structure and name (compat/weights.py; layer pairs: the mapping entries'
`tensors` and compared params, mappings/parameters.yaml for pairs with no entry yet)."""
from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from mindspore import nn as mnn  # noqa: E402
from torch import nn as tnn  # noqa: E402

from recompat import mappings  # noqa: E402
from recompat.compat.weights import Transfer, WeightTransferError, transfer_weights  # noqa: E402

pytestmark = pytest.mark.runtime


@pytest.fixture(autouse=True)
def _context():
    ms.set_context(mode=ms.PYNATIVE_MODE)     # MindSpore's context is process-global: set it per test
    torch.manual_seed(0)
    ms.set_seed(0)


def rng(seed=0):
    return np.random.RandomState(seed)


def torch_out(model, *xs):
    model.eval()
    with torch.no_grad():
        return model(*(torch.from_numpy(x) for x in xs)).numpy()


def ms_out(model, *xs):
    model.set_train(False)
    return model(*(ms.Tensor(x) for x in xs)).asnumpy()


def randomize_torch(model, seed=1):
    """Every float tensor random (running_var positive, magnitudes as after init), so nothing passes by matching
    initial values."""
    r = rng(seed)
    with torch.no_grad():
        for name, t in [*model.named_parameters(), *model.named_buffers()]:
            if t.is_floating_point():
                v = r.uniform(0.5, 2.0, t.shape) if "running_var" in name else 0.3 * r.randn(*t.shape)
                t.copy_(torch.from_numpy(v.astype(np.float32)))


def randomize_ms(model, seed=2):
    r = rng(seed)
    for name, p in model.parameters_and_names():
        v = r.uniform(0.5, 2.0, p.shape) if "moving_variance" in name else 0.3 * r.randn(*p.shape)
        p.set_data(ms.Tensor(v.astype(np.float32)))


def torch_state(model) -> dict:
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def ms_state(model) -> dict:
    return {k: p.asnumpy().copy() for k, p in model.parameters_and_names()}


# ---------------------------------------------------------------------------------------------------------------
# twins: a conv net in Sequential / SequentialCell, a token net in ModuleList / CellList with nested attributes

def torch_convnet():
    return tnn.Sequential(
        tnn.Conv2d(3, 4, 3, padding=1), tnn.BatchNorm2d(4), tnn.ReLU(),
        tnn.Sequential(tnn.Conv2d(4, 6, 3, padding=1, bias=False), tnn.BatchNorm2d(6), tnn.ReLU()),
        tnn.Flatten(), tnn.Linear(6 * 5 * 5, 7))


def ms_convnet():
    return mnn.SequentialCell(
        mnn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True), mnn.BatchNorm2d(4, momentum=0.9), mnn.ReLU(),
        mnn.SequentialCell(mnn.Conv2d(4, 6, 3, pad_mode="pad", padding=1, has_bias=False),
                           mnn.BatchNorm2d(6, momentum=0.9), mnn.ReLU()),
        mnn.Flatten(), mnn.Dense(6 * 5 * 5, 7))


class TBlock(tnn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.norm = tnn.LayerNorm(d)
        self.mlp = tnn.Sequential(tnn.Linear(d, 2 * d), tnn.GELU(), tnn.Linear(2 * d, d))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class TInner(tnn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = tnn.Linear(d, d)
        self.norm = tnn.LayerNorm(d)


class TTokenNet(tnn.Module):
    def __init__(self, vocab=11, d=8, n=2):
        super().__init__()
        self.embed = tnn.Embedding(vocab, d)
        self.layers = tnn.ModuleList([TBlock(d) for _ in range(n)])
        self.inner = TInner(d)
        self.head = tnn.Linear(d, 3)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.inner.norm(self.inner.proj(x)))


class MBlock(mnn.Cell):
    def __init__(self, d=8):
        super().__init__()
        self.norm = mnn.LayerNorm((d,), epsilon=1e-5)
        self.mlp = mnn.SequentialCell(mnn.Dense(d, 2 * d), mnn.GELU(approximate=False), mnn.Dense(2 * d, d))

    def construct(self, x):
        return x + self.mlp(self.norm(x))


class MInner(mnn.Cell):
    def __init__(self, d=8):
        super().__init__()
        self.proj = mnn.Dense(d, d)
        self.norm = mnn.LayerNorm((d,), epsilon=1e-5)


class MTokenNet(mnn.Cell):
    def __init__(self, vocab=11, d=8, n=2):
        super().__init__()
        self.embed = mnn.Embedding(vocab, d)
        self.layers = mnn.CellList([MBlock(d) for _ in range(n)])
        self.inner = MInner(d)
        self.head = mnn.Dense(d, 3)

    def construct(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.inner.norm(self.inner.proj(x)))


def image():
    return rng(3).randn(2, 3, 5, 5).astype(np.float32)


def ids():
    return rng(4).randint(0, 11, size=(2, 5)).astype(np.int32)


TWINS = {
    "convnet": (torch_convnet, ms_convnet, image),
    "tokennet": (TTokenNet, MTokenNet, ids),
}


# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("twin", sorted(TWINS))
def test_torch_to_mindspore_forward_matches(twin):
    make_t, make_m, inputs = TWINS[twin]
    t, m = make_t(), make_m()
    randomize_torch(t)
    result = transfer_weights(t, m)
    assert isinstance(result, Transfer) and result.ok and result.copied
    assert result.direction == "torch->mindspore"
    assert result.warnings == []                       # the twins set every differing default
    x = inputs()
    np.testing.assert_allclose(ms_out(m, x), torch_out(t, x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("twin", sorted(TWINS))
def test_mindspore_to_torch_forward_matches(twin):
    make_t, make_m, inputs = TWINS[twin]
    t, m = make_t(), make_m()
    randomize_ms(m)
    result = transfer_weights(m, t)                    # order detected: MindSpore is the source
    assert result.direction == "mindspore->torch" and result.ok
    x = inputs()
    np.testing.assert_allclose(torch_out(t, x), ms_out(m, x), rtol=1e-5, atol=1e-6)


def test_round_trip_is_bit_exact():
    a, m, b = torch_convnet(), ms_convnet(), torch_convnet()
    randomize_torch(a)
    special = np.array([-0.0, 1e-45, -1e-40, np.inf, -np.inf, 3.4e38, 1.0 + 2 ** -23], np.float32)
    with torch.no_grad():
        a[5].bias[:7].copy_(torch.from_numpy(special))
    gamma = m[1].gamma
    transfer_weights(a, m)
    assert m[1].gamma is gamma and gamma.name == "1.gamma"      # set_data keeps the Parameter and its name
    transfer_weights(m, b)
    sa, sb = torch_state(a), torch_state(b)
    assert sa.keys() == sb.keys()
    for k in sa:
        if k.endswith("num_batches_tracked"):
            continue                                            # no MindSpore counterpart: skipped
        assert sa[k].dtype == sb[k].dtype == np.float32
        np.testing.assert_array_equal(sa[k].view(np.uint32), sb[k].view(np.uint32), err_msg=k)


def test_names_pair_by_path_and_layer_pair():
    t, m = TTokenNet(), MTokenNet()
    result = transfer_weights(t, m)
    nm = result.name_map
    assert nm["embed.weight"] == "embed.embedding_table"
    assert nm["layers.0.norm.weight"] == "layers.0.norm.gamma"
    assert nm["layers.1.norm.bias"] == "layers.1.norm.beta"
    assert nm["layers.1.mlp.2.weight"] == "layers.1.mlp.2.weight"      # Sequential index 2 (GELU is index 1)
    assert nm["inner.norm.weight"] == "inner.norm.gamma"
    assert set(nm.values()) == {name for name, _ in m.parameters_and_names()}
    assert set(nm) == {name for name, _ in t.named_parameters()}
    assert all(p.shape == tuple(dict(t.named_parameters())[p.torch_name].shape) for p in result.pairs)
    assert result.torch_name("layers.0.norm.gamma") == "layers.0.norm.weight"
    assert result.torch_name(m.layers[0].norm.gamma) == "layers.0.norm.weight"     # the Parameter itself


def test_batchnorm_buffers_transferred_and_num_batches_tracked_skipped():
    t, m = torch_convnet(), ms_convnet()
    randomize_torch(t)
    result = transfer_weights(t, m)
    assert result.name_map["1.running_mean"] == "1.moving_mean"
    assert result.name_map["3.1.running_var"] == "3.1.moving_variance"
    assert {"1.running_mean", "1.running_var", "3.1.running_mean", "3.1.running_var"} <= set(result.buffers)
    np.testing.assert_array_equal(m[3][1].moving_variance.asnumpy(), t[3][1].running_var.numpy())
    skipped = {s.name: s for s in result.skipped}
    assert set(skipped) == {"1.num_batches_tracked", "3.1.num_batches_tracked"}
    assert skipped["1.num_batches_tracked"].framework == "torch"
    assert "momentum=None" in skipped["1.num_batches_tracked"].reason
    x = image()                                         # eval mode: the running statistics are used
    np.testing.assert_allclose(ms_out(m, x), torch_out(t, x), rtol=1e-5, atol=1e-6)


def test_checkpoint_wrapper_prefix_is_dropped():
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

    t, m = TTokenNet(), MTokenNet()
    t.layers = tnn.ModuleList([checkpoint_wrapper(layer) for layer in t.layers])
    randomize_torch(t)
    result = transfer_weights(t, m)
    assert result.name_map["layers.0._checkpoint_wrapped_module.norm.weight"] == "layers.0.norm.gamma"
    assert set(result.name_map) == {n for n, _ in t.named_parameters()}   # torch's names, prefix kept
    x = ids()
    np.testing.assert_allclose(ms_out(m, x), torch_out(t, x), rtol=1e-5, atol=1e-6)
    randomize_ms(m)
    assert transfer_weights(m, t).ok                   # and back into the wrapped model
    np.testing.assert_allclose(torch_out(t, x), ms_out(m, x), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------------------------
# errors: every problem listed, nothing copied

class MExtraHead(MTokenNet):
    def __init__(self):
        super().__init__()
        self.extra = mnn.Dense(8, 2)


def test_extra_layer_on_one_side_raises_and_copies_nothing():
    t, m = TTokenNet(), MExtraHead()
    randomize_torch(t)
    before = ms_state(m)
    with pytest.raises(WeightTransferError) as err:
        transfer_weights(t, m)
    msg = str(err.value)
    assert "2 problems, nothing was copied" in msg
    assert "MindSpore parameter 'extra.weight' (2, 8) float32 in Dense 'extra' has no torch counterpart" in msg
    assert "'extra.bias' (2,)" in msg
    assert "the torch model has no module at 'extra'" in msg
    assert "What to do:" in msg and "strict=False" in msg
    after = ms_state(m)
    assert all(np.array_equal(before[k], after[k]) for k in before)
    assert len(err.value.transfer.problems) == 2


def test_missing_layer_raises_naming_each_parameter():
    class MNoHead(MTokenNet):
        def __init__(self):
            super().__init__()
            del self.head

    with pytest.raises(WeightTransferError) as err:
        transfer_weights(TTokenNet(), MNoHead())
    msg = str(err.value)
    assert "torch parameter 'head.weight' (3, 8) float32 in Linear 'head' has no MindSpore counterpart" in msg
    assert "torch parameter 'head.bias' (3,)" in msg
    assert "the MindSpore model has no cell at 'head'" in msg
    assert "its children: embed, layers, inner" in msg


def test_shape_mismatches_and_unmatched_are_all_listed():
    class MWrong(MTokenNet):
        def __init__(self):
            super().__init__()
            self.head = mnn.Dense(8, 4)                    # 4 outputs instead of 3
            self.layers[1].norm = mnn.LayerNorm((6,), epsilon=1e-5)
            self.inner.extra = mnn.Dense(2, 2)

    with pytest.raises(WeightTransferError) as err:
        transfer_weights(TTokenNet(), MWrong())
    msg = str(err.value)
    problems = err.value.transfer.problems
    assert len(problems) == 6 and "6 problems" in msg
    assert "shape mismatch: torch 'head.weight' (3, 8) in Linear 'head' vs MindSpore 'head.weight' (4, 8) in " \
           "Dense 'head'" in msg
    assert "shape mismatch: torch 'head.bias' (3,)" in msg
    assert "torch 'layers.1.norm.weight' (8,) in LayerNorm 'layers.1.norm' vs MindSpore 'layers.1.norm.gamma' (6,)" \
           in msg
    assert "'layers.1.norm.bias' (8,)" in msg
    assert "MindSpore parameter 'inner.extra.weight' (2, 2)" in msg and "'inner.extra.bias' (2,)" in msg
    assert {p.kind for p in problems} == {"shape", "unmatched"}


def test_strict_false_reports_and_copies_the_rest():
    t, m = TTokenNet(), MExtraHead()
    randomize_torch(t)
    result = transfer_weights(t, m, strict=False)
    assert not result.ok and result.copied
    assert sorted(p.ms_name for p in result.problems) == ["extra.bias", "extra.weight"]
    np.testing.assert_array_equal(m.head.weight.asnumpy(), t.head.weight.detach().numpy())
    assert "2 problems" in result.report()


def test_parameter_name_not_in_the_other_layer():
    t = tnn.Sequential(tnn.Linear(4, 3, bias=False))
    m = mnn.SequentialCell(mnn.Dense(4, 3, has_bias=True))     # bias on one side only
    with pytest.raises(WeightTransferError) as err:
        transfer_weights(t, m)
    assert "MindSpore parameter '0.bias' (3,) float32 in Dense '0'" in str(err.value)
    assert "registers bias as None" in str(err.value)


def test_tied_on_one_side_only_is_a_problem():
    t = tnn.Sequential(tnn.Linear(4, 4), tnn.Linear(4, 4))
    m = mnn.SequentialCell(mnn.Dense(4, 4), mnn.Dense(4, 4))
    m[1].weight = m[0].weight                                  # MindSpore ties, torch does not
    result = transfer_weights(t, m, strict=False)
    assert [p.kind for p in result.problems] == ["tied"]
    assert "tie them in both models or in neither" in str(result.problems[0])


def test_graph_mode_context_transfers_the_same():
    ms.set_context(mode=ms.GRAPH_MODE)        # set_data and asnumpy run eagerly in either mode
    t, m = torch_convnet(), ms_convnet()
    randomize_torch(t)
    result = transfer_weights(t, m)
    for tname, mname in result.name_map.items():
        want = dict([*t.named_parameters(), *t.named_buffers()])[tname].detach().numpy()
        np.testing.assert_array_equal(dict(m.parameters_and_names())[mname].asnumpy(), want, err_msg=tname)


def test_not_a_torch_and_a_mindspore_model():
    with pytest.raises(TypeError, match="a torch nn.Module and a MindSpore nn.Cell"):
        transfer_weights(tnn.Linear(2, 2), tnn.Linear(2, 2))


# ---------------------------------------------------------------------------------------------------------------
# what transfer does not catch, and the settings it flags

class TTwo(tnn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = tnn.Linear(8, 8), tnn.Linear(8, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class MTwoSwapped(mnn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = mnn.Dense(8, 8), mnn.Dense(8, 8)

    def construct(self, x):
        return self.fc1(ms.ops.relu(self.fc2(x)))              # planted bug: the other order, same shapes


def test_swapped_layers_pass_transfer_but_outputs_differ():
    t, m = TTwo(), MTwoSwapped()
    result = transfer_weights(t, m)                            # names pair by path: nothing to object to
    assert result.ok and result.warnings == []
    x = rng(5).randn(3, 8).astype(np.float32)
    a, b = torch_out(t, x), ms_out(m, x)
    assert not np.allclose(a, b, rtol=1e-5, atol=1e-6)        # the compare step catches it


def test_warnings_flag_settings_that_make_outputs_differ():
    t = tnn.Sequential(tnn.Conv2d(3, 4, 3), tnn.BatchNorm2d(4), tnn.Dropout(0.1), tnn.Flatten(),
                       tnn.LayerNorm(36), tnn.GELU())
    m = mnn.SequentialCell(mnn.Conv2d(3, 4, 3, has_bias=True), mnn.BatchNorm2d(4, momentum=0.1),
                           mnn.Dropout(p=0.2), mnn.Flatten(), mnn.LayerNorm((36,)), mnn.GELU())
    result = transfer_weights(t, m)
    assert result.ok and len(result.warnings) == 5
    text = "\n".join(result.warnings)
    assert "BatchNorm2d '1': torch momentum=0.1, but the paired MindSpore BatchNorm2d has momentum=0.1, " \
           "i.e. momentum=0.9 in torch's terms" in text
    assert "construct it with momentum=0.9" in text
    assert "Conv2d '0': torch padding=(0, 0)" in text and "pad_mode='same'" in text \
           and "construct it with pad_mode='valid'" in text
    assert "Dropout '2': torch p=0.1" in text and "construct it with p=0.1" in text
    assert "LayerNorm '4': torch eps=1e-05" in text and "epsilon=1e-07 (MindSpore's default)" in text
    assert "GELU '5': torch approximate='none'" in text and "construct it with approximate=False" in text


def test_no_warnings_when_settings_agree():
    t = tnn.Sequential(tnn.Conv2d(3, 4, 3, padding=1), tnn.BatchNorm2d(4, momentum=0.3), tnn.Dropout(0.2),
                       tnn.LeakyReLU(0.1))
    m = mnn.SequentialCell(mnn.Conv2d(3, 4, 3, has_bias=True), mnn.BatchNorm2d(4, momentum=0.7),
                           mnn.Dropout(keep_prob=0.8), mnn.LeakyReLU(0.1))     # 'same' with stride 1 = padding 1
    assert transfer_weights(t, m).warnings == []


def test_same_padding_with_a_stride_is_known_for_a_one_element_kernel():
    """Found on mindcv 0.3.0's resnet18 against torchvision's: its shortcut is Conv2d(k=1, stride=2,
    pad_mode='same'), which pads nothing whatever the input size, as torch's padding=0 does; a 3x3 kernel with a
    stride still pads by the input size and stays a warning."""
    t = tnn.Conv2d(4, 8, 1, stride=2, bias=False)
    m = mnn.Conv2d(4, 8, 1, stride=2, pad_mode="same")
    assert transfer_weights(t, m).warnings == []
    t3, m3 = tnn.Conv2d(4, 8, 3, stride=2, padding=1, bias=False), mnn.Conv2d(4, 8, 3, stride=2, pad_mode="same")
    (w,) = transfer_weights(t3, m3).warnings
    assert "pads by the input size" in w


def test_conv1d_layout_and_batchnorm3d_child():
    t = tnn.Sequential(tnn.Conv1d(2, 3, 3, padding=1), tnn.BatchNorm1d(3))
    m = mnn.SequentialCell(mnn.Conv1d(2, 3, 3, pad_mode="pad", padding=1, has_bias=True), mnn.BatchNorm1d(3))
    randomize_torch(t)
    result = transfer_weights(t, m)
    assert tuple(m[0].weight.shape) == (3, 2, 1, 3) and result.pairs[0].shape == (3, 2, 3)
    x = rng(6).randn(4, 2, 7).astype(np.float32)
    np.testing.assert_allclose(ms_out(m, x), torch_out(t, x), rtol=1e-5, atol=1e-6)
    back = tnn.Sequential(tnn.Conv1d(2, 3, 3, padding=1), tnn.BatchNorm1d(3))
    transfer_weights(m, back)
    np.testing.assert_array_equal(back[0].weight.detach().numpy(), t[0].weight.detach().numpy())

    t3, m3 = tnn.BatchNorm3d(3), mnn.BatchNorm3d(3)
    randomize_torch(t3)
    result = transfer_weights(t3, m3)
    assert result.name_map["running_var"] == "bn2d.moving_variance"
    x = rng(7).randn(2, 3, 2, 3, 4).astype(np.float32)
    np.testing.assert_allclose(ms_out(m3, x), torch_out(t3, x), rtol=1e-5, atol=1e-6)


def test_dtype_converted_to_the_destination():
    t = tnn.Linear(4, 3).to(torch.bfloat16)
    m = mnn.Dense(4, 3)
    result = transfer_weights(t, m)
    np.testing.assert_array_equal(m.weight.asnumpy(), t.weight.detach().float().numpy())
    assert m.weight.dtype == ms.float32
    assert any("dtype converted from bfloat16 to float32" in w for w in result.warnings)
    back = tnn.Linear(4, 3).to(torch.bfloat16)
    transfer_weights(m, back)
    assert back.weight.dtype == torch.bfloat16 and torch.equal(back.weight, t.weight)


def test_batchnorm_without_affine_skips_the_fixed_gamma_beta():
    t, m = tnn.BatchNorm2d(4, affine=False), mnn.BatchNorm2d(4, affine=False)
    randomize_torch(t)
    result = transfer_weights(t, m)
    assert {s.name for s in result.skipped} == {"gamma", "beta", "num_batches_tracked"}
    x = image().repeat(2, axis=1)[:, :4]
    np.testing.assert_allclose(ms_out(m, x), torch_out(t, x), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------------------------
# the data: a layer pair is its mapping entry (tensors, params with compare); parameters.yaml holds the pairs that
# have no entry yet, in the same terms, and the wrappers

def test_every_layer_pair_class_exists_in_the_installed_versions():
    for module in ("mindspore.mint", "torch.distributed.algorithms._checkpoint.checkpoint_wrapper",
                   "torch._dynamo.eval_frame", "torch.nn.parallel"):
        importlib.import_module(module)
    from recompat.compat.weights import _resolve

    maps = mappings.default()
    names = [c for layer in maps.layer_pairs for c in (layer.torch["api"], layer.mindspore["api"])]
    names += [w.cls for w in maps.wrappers]
    assert [n for n in names if not isinstance(_resolve(n), type)] == []
    assert maps.layer_pair("batchnorm2d").mindspore_tensor("running_var") == "moving_variance"
    assert maps.layer_pair("batchnorm2d") is maps.entry("batchnorm2d")      # one entry: translation's and transfer's
    assert maps.layer_pair("conv1d").mindspore_tensor("bias") == "bias"


def test_settings_are_the_entrys_params_with_their_conversions():
    """What transfer_weights compares is the entry's params: the same names, converters and defaults translation
    uses, not a second list."""
    maps = mappings.default()
    bn = maps.entry("batchnorm2d")
    assert {(p.torch, p.mindspore, p.convert) for p in bn.settings} == {("eps", "eps", None),
                                                                        ("momentum", "momentum", "one_minus")}
    assert bn.param("momentum", "torch").mindspore_default == "0.9"          # from the recorded signature
    conv = maps.entry("conv2d")
    assert conv.param("padding", "torch") in conv.settings and conv.param("padding", "torch").convert == "conv_padding"
    assert maps.entry("layernorm").param("eps", "torch") in maps.entry("layernorm").settings
    assert all(e.tensors is None for e in maps.entries if e.rule not in ("api_class",))   # only layers pair tensors


def test_transfer_and_translation_share_the_converter(monkeypatch):
    """A wrong one_minus would make translation and weight transfer wrong together, never disagree: transfer reads
    the conventions through translator/convert.py's converters (Dropout keeps p as keep_prob = 1 - p; the advice
    for BatchNorm's momentum is what translation writes)."""
    from recompat.translator import convert

    def planted(to, values, names):        # one_minus without the 1 -
        return {names[k]: v for k, v in values.items() if k in names}, None

    t = tnn.Sequential(tnn.Dropout(0.2), tnn.BatchNorm2d(4))
    m = mnn.SequentialCell(mnn.Dropout(keep_prob=0.8), mnn.BatchNorm2d(4, momentum=0.1))
    (right,) = transfer_weights(t, m).warnings
    assert "construct it with momentum=0.9" in right
    monkeypatch.setitem(convert.CONVERTERS, "one_minus", planted)
    dropout, momentum = transfer_weights(t, m).warnings
    assert "Dropout '0': torch p=0.2, but the paired MindSpore Dropout has p=0.8" in dropout
    assert "construct it with momentum=0.1" in momentum


def test_wrong_conv1d_padding_batchnorm3d_momentum_and_leaky_relu_slope():
    t = tnn.Sequential(tnn.Conv1d(2, 3, 3, padding=1), tnn.BatchNorm3d(3), tnn.LeakyReLU(0.1))
    m = mnn.SequentialCell(mnn.Conv1d(2, 3, 3, has_bias=True, pad_mode="valid"), mnn.BatchNorm3d(3, momentum=0.1),
                           mnn.LeakyReLU())
    text = "\n".join(transfer_weights(t, m).warnings)
    assert "Conv1d '0': torch padding=(1,) pads 1/1" in text and "construct it with pad_mode='pad', padding=1" in text
    assert "BatchNorm3d '1': torch momentum=0.1, but the paired MindSpore BatchNorm3d has momentum=0.1, " \
           "i.e. momentum=0.9 in torch's terms" in text
    assert "LeakyReLU '2': torch negative_slope=0.1, but the paired MindSpore LeakyReLU has alpha=0.2 " \
           "(MindSpore's default)" in text


def test_reflect_padding_has_no_mindspore_form():
    t = tnn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect")
    m = mnn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
    (w,) = transfer_weights(t, m).warnings
    assert "padding_mode='reflect'" in w and "pad with zeros only" in w and "ops.pad(..., mode='reflect')" in w


@pytest.fixture
def folder(tmp_path):
    for path in Path(mappings.__file__).parent.glob("*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def test_loader_rejects_bad_tensors(folder):
    modules = folder / "nn_modules.yaml"
    good = modules.read_text(encoding="utf-8")
    modules.write_text(good.replace("- {torch: bias, mindspore: beta}", "- {torch: bias, mindspore: gamma}", 1),
                       encoding="utf-8")
    with pytest.raises(mappings.MappingError, match=r"nn_modules\.yaml: entries/\d+ \(batchnorm1d\)/tensors: "
                                                    r"mindspore name\(s\) paired twice: gamma"):
        mappings.load(folder)
    modules.write_text(good.replace("        mindspore: null\n        why: \"torch counts",
                                    "        mindspore: 7\n        why: \"torch counts", 1), encoding="utf-8")
    with pytest.raises(mappings.MappingError, match=r"nn_modules\.yaml: does not match mappings/schema\.json:\n"
                                                    r"  at entries/\d+/tensors/4"):
        mappings.load(folder)


def test_loader_rejects_a_pair_in_two_places(folder):
    params = folder / "parameters.yaml"
    params.write_text(params.read_text(encoding="utf-8").replace(
        "  - id: mint_dropout\n    torch: {api: torch.nn.Dropout}\n    mindspore: {api: mindspore.mint.nn.Dropout}",
        "  - id: mint_dropout\n    torch: {api: torch.nn.Conv2d}\n    mindspore: {api: mindspore.nn.Conv2d}"),
        encoding="utf-8")
    with pytest.raises(mappings.MappingError, match=r"layer pair torch\.nn\.Conv2d / mindspore\.nn\.Conv2d defined "
                                                    r"twice \(conv2d and mint_dropout\)"):
        mappings.load(folder)


@pytest.mark.parametrize("compare, words", [
    ("{kept: momentum_of_sorts}", "kept: momentum_of_sorts is neither torch, trailing nor a MindSpore parameter"),
    ("{arguments: [begin_axis]}", "arguments: not MindSpore parameters of the entry: begin_axis"),
])
def test_loader_rejects_a_compare_naming_what_the_entry_lacks(folder, compare, words):
    modules = folder / "nn_modules.yaml"
    text = modules.read_text(encoding="utf-8")
    old = text[text.index("        compare:\n          kept: torch         # the Cell keeps 1 - its argument"):]
    old = old[:old.index("        note:")]                     # batchnorm1d's momentum: compare, with its why
    modules.write_text(text.replace(old, f"        compare: {compare}\n", 1), encoding="utf-8")
    with pytest.raises(mappings.MappingError, match=r"nn_modules\.yaml: entries/\d+/params/\d+/compare \(batchnorm1d, "
                                                    r"torch parameter momentum\)") as err:
        mappings.load(folder)
    assert words in str(err.value)
