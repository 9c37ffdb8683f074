"""Third-party libraries with a module per framework (mappings/libraries.yaml): the translation sends an import of
the torch module, or its name given to a call (a dynamic import), to the MindSpore module; each name that carries
over computes the same values and gradients there (einops: recompat.einops)."""
from __future__ import annotations

import importlib
import os
import textwrap

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest

from conftest import translate_model
from recompat import mappings

MODULES = mappings.default().modules


def tx(body: str):
    return translate_model("import torch\n" + textwrap.dedent(body))


def test_imports_and_module_names_given_to_calls_are_sent_to_the_mindspore_module():
    out, diags = tx("""\
        import importlib
        import einops
        from einops.layers.torch import Rearrange, Reduce
        from monai.utils import optional_import
        Rearrange2, _ = optional_import("einops.layers.torch", name="Rearrange")
        layers = importlib.import_module('einops.layers.torch')
        DOC = "einops.layers.torch"


        def f(x):
            return einops.rearrange(Rearrange("b c -> c b")(x), "a b -> b a")
        """)
    assert "import recompat.einops as einops\n" in out
    assert "from recompat.einops import Rearrange, Reduce\n" in out
    assert 'optional_import("recompat.einops", name="Rearrange")' in out
    assert "importlib.import_module('recompat.einops')" in out
    assert 'DOC = "einops.layers.torch"' in out          # not a call's argument: left alone
    assert [d.code for d in diags if d.code in ("RC318", "RC319")] == ["RC318"] * 4


def test_a_name_the_mindspore_module_lacks_keeps_the_import_and_says_so():
    out, diags = tx("""\
        import einops
        from einops.layers.torch import EinMix
        import einops.layers.torch


        def f(x):
            if not isinstance(x, einops.EinopsError):
                return x
        """)
    code = "\n".join(line for line in out.splitlines() if not line.startswith("# recompat: RC319"))
    assert "import einops\nfrom einops.layers.torch import EinMix\nimport einops.layers.torch\n" in code
    assert out.count("# recompat: RC319") == 3, "each kept import says why above it"
    manual = {d.message for d in diags if d.code == "RC319"}
    assert len(manual) == 3 and any("EinopsError" in m for m in manual) and any("EinMix" in m for m in manual), manual
    assert all(d.status == "manual" for d in diags if d.code == "RC319")


@pytest.mark.parametrize("pair", MODULES, ids=lambda p: p.torch)
def test_the_mindspore_module_has_every_name_that_carries_over(pair):
    pytest.importorskip("einops")
    module = importlib.import_module(pair.mindspore)
    assert not [n for n in pair.names if not hasattr(module, n)]
    assert not [n for n in pair.names if not hasattr(importlib.import_module(pair.torch), n)]


# (layer or function, pattern, keywords, input shape): MONAI's attention patterns among them
CASES = [
    ("Rearrange", "b h (qkv l d) -> qkv b l h d", dict(qkv=3, l=2), (2, 5, 12)),
    ("Rearrange", "b l h d -> b h (l d)", {}, (2, 2, 5, 3)),
    ("Rearrange", "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", dict(p1=2, p2=2), (2, 3, 4, 6)),
    ("Reduce", "b c h w -> b c", dict(reduction="mean"), (2, 3, 4, 5)),
    ("Reduce", "b c (h 2) w -> b c h w", dict(reduction="max"), (2, 3, 4, 5)),
    ("rearrange", "b c h w -> b (c h) w", {}, (2, 3, 4, 5)),
    ("repeat", "b c -> b c r", dict(r=3), (2, 3)),
    ("reduce", "b c h -> b h", dict(reduction="sum"), (2, 3, 4)),
    ("einsum", "b c h, h -> b c", {}, (2, 3, 4)),      # a second operand: the squares of the first row
]


@pytest.mark.runtime
@pytest.mark.parametrize("name,pattern,kwargs,shape", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_einops_computes_the_same_values_and_gradients_on_mindspore(name, pattern, kwargs, shape):
    pytest.importorskip("einops")
    import einops
    import einops.layers.torch
    import mindspore
    import torch

    import recompat.einops

    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if name[0].isupper():
        kw = {k: v for k, v in kwargs.items() if k != "reduction"}
        args = (pattern, kwargs["reduction"]) if "reduction" in kwargs else (pattern,)
        t_fn = getattr(einops.layers.torch, name)(*args, **kw)
        m_fn = getattr(recompat.einops, name)(*args, **kw)
    elif name == "einsum":   # einops.einsum(*tensors, pattern)
        t_fn = lambda v: einops.einsum(v, v[0, 0] ** 2, pattern)            # noqa: E731
        m_fn = lambda v: recompat.einops.einsum(v, v[0, 0] ** 2, pattern)   # noqa: E731
    else:
        t_fn = lambda v: getattr(einops, name)(v, pattern, **kwargs)         # noqa: E731
        m_fn = lambda v: getattr(recompat.einops, name)(v, pattern, **kwargs)   # noqa: E731
    tx_ = torch.tensor(x, requires_grad=True)
    t_out = t_fn(tx_)
    weights = np.random.default_rng(1).standard_normal(tuple(t_out.shape)).astype(np.float32)
    (t_out * torch.tensor(weights)).sum().backward()
    m_out, m_grad = mindspore.value_and_grad(lambda v: (m_fn(v) * mindspore.Tensor(weights)).sum())(
        mindspore.Tensor(x))
    np.testing.assert_allclose(m_fn(mindspore.Tensor(x)).asnumpy(), t_out.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(m_grad.asnumpy(), tx_.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.runtime
@pytest.mark.parametrize("pattern,kwargs,shape", [c[1:] for c in CASES if c[0] == "Rearrange"]
                         + [("b 1 c -> b c", {}, (2, 1, 3)), ("b c -> b 1 c", {}, (2, 3))])
def test_rearrange_compiles_in_graph_mode(pattern, kwargs, shape):
    """einops works a pattern out in Python, which GRAPH mode cannot compile (MONAI's ViT, UNETR and ViTAutoEnc
    did not); the layer's own plan (a reshape, a transpose, a reshape) compiles, and gives einops' values."""
    pytest.importorskip("einops")
    import einops.layers.torch
    import mindspore
    import torch

    from recompat.compat import recomputed_ops
    from recompat.einops import Rearrange

    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert recomputed_ops(_AfterDense(Rearrange(pattern, **kwargs), shape[-1]), mindspore.Tensor(x)) == []
    np.testing.assert_array_equal(Rearrange(pattern, **kwargs)(mindspore.Tensor(x)).asnumpy(),
                                  einops.layers.torch.Rearrange(pattern, **kwargs)(torch.tensor(x)).numpy())


def _AfterDense(layer, n):   # a Cell with a parameter before the layer: its gradient is what GRAPH mode compiles
    import mindspore

    class AfterDense(mindspore.nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc, self.layer = mindspore.nn.Dense(n, n), layer

        def construct(self, x):
            return self.layer(self.fc(x))

    return AfterDense()


@pytest.mark.runtime
def test_a_pattern_the_plan_does_not_cover_goes_through_einops():
    pytest.importorskip("einops")
    import mindspore

    from recompat.einops import Rearrange

    x = mindspore.Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    layer = Rearrange("b ... c -> b c ...")
    assert layer._plan is None and layer(x).shape == (2, 4, 3)
    with pytest.raises(ValueError, match=r"input axis 1 of length 3 does not split"):
        Rearrange("b (h d) c -> b h d c", h=2)(x)


@pytest.mark.runtime
def test_a_layer_is_a_cell_that_reads_back_as_its_pattern():
    pytest.importorskip("einops")
    import mindspore

    from recompat.einops import Rearrange

    layer = Rearrange("b (h d) -> b h d", h=2)
    assert isinstance(layer, mindspore.nn.Cell) and repr(layer) == "Rearrange('b (h d) -> b h d', h=2)"
    with pytest.raises(Exception, match="h d"):      # einops' own error names the pattern
        Rearrange("b (h d) -> b h d")(mindspore.Tensor(np.ones((2, 4), np.float32)))


def test_back_to_torch_each_name_goes_to_its_own_module():
    from recompat.compat.prove import every_entry_proven
    from recompat.translator.translate import translate_bytes

    code = textwrap.dedent("""\
        from mindspore import nn
        from recompat.einops import Rearrange, Reduce
        from recompat.einops import Rearrange, rearrange


        class M(nn.Cell):
            def construct(self, x):
                return rearrange(Rearrange("b c -> c b")(x), "a b -> b a")
        """).encode()
    r = translate_bytes(code, "m.py", to="torch", scope="model", mappings=every_entry_proven(mappings.default()))
    out = r.new_data.decode()
    assert "from einops.layers.torch import Rearrange, Reduce\n" in out
    assert "from recompat.einops import Rearrange, rearrange\n" in out      # two torch modules: left, and said
    manual = [d.message for s in r.sites for d in s.diagnostics if d.code == "RC319"]
    assert len(manual) == 1 and "separate statements" in manual[0], manual
