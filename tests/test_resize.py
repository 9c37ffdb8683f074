"""nn.Upsample and F.interpolate (mappings/resize.yaml, converter interpolate_scale): a scale_factor goes as floats
with recompute_scale_factor=True, which MindSpore 2.10 needs on 3-D and 4-D input and which agrees with torch
wherever the input size times the factor is a whole number; a factor that is a variable makes a layer translated when
it is made (recompat.runtime.torch_signature, RC317); bicubic is refused."""
from __future__ import annotations

import os
import textwrap

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest

from conftest import translate_model

HEADER = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n\n\n"


def tx(body: str):
    out, diags = translate_model(HEADER + textwrap.dedent(body))
    return out, {d.code: d for d in diags}


def test_a_scale_factor_goes_as_floats_with_recompute_scale_factor():
    out, diags = tx("""\
        def f(x):
            up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
            return F.interpolate(up(x), scale_factor=(2, 3), mode="nearest")
        """)
    assert ('nn.Upsample(scale_factor=2.0, mode="bilinear", align_corners=True, recompute_scale_factor=True)'
            in out)
    assert 'ops.interpolate(up(x), scale_factor=(2.0, 3.0), mode="nearest", recompute_scale_factor=True)' in out
    assert "RC310" not in diags and "RC309" not in diags


def test_a_factor_that_is_no_whole_number_is_noted_and_bicubic_refused():
    out, diags = tx("""\
        def f(x):
            y = F.interpolate(x, scale_factor=0.5, mode="linear")
            return F.interpolate(y, size=(4, 4), mode="bicubic")
        """)
    assert "scale_factor=0.5" in out and "no whole number" in diags["RC310"].message
    assert 'F.interpolate(y, size=(4, 4), mode="bicubic")' in out and "bicubic" in diags["RC309"].message


def test_a_variable_factor_makes_the_layer_translate_when_it_is_made():
    out, diags = tx("""\
        def f(x, factor, mode):
            up = nn.Upsample(scale_factor=factor, mode=mode)
            return F.interpolate(x, scale_factor=factor)
        """)
    assert "up = torch_signature(nn.Upsample, 'torch.nn.Upsample')(scale_factor=factor, mode=mode)" in out
    assert "from recompat.runtime import torch_signature" in out and "RC317" in diags
    assert "F.interpolate(x, scale_factor=factor)" in out and "decided at run time" in diags["RC309"].message


@pytest.mark.runtime
@pytest.mark.parametrize("factor, mode, align", [((2, 2), "bilinear", True), (2, "nearest", None),
                                                 ((2.0, 3.0), "bilinear", False)])
def test_the_layer_made_at_run_time_computes_what_torchs_does(factor, mode, align):
    import mindspore
    import torch

    from recompat.runtime import torch_signature

    x = np.random.default_rng(0).standard_normal((2, 3, 5, 6)).astype(np.float32)
    made = torch_signature(mindspore.nn.Upsample, "torch.nn.Upsample")(scale_factor=factor, mode=mode,
                                                                        align_corners=align)
    want = torch.nn.Upsample(scale_factor=factor, mode=mode, align_corners=align)(torch.from_numpy(x)).numpy()
    got = made(mindspore.Tensor(x)).asnumpy()
    assert got.shape == want.shape and np.abs(got - want).max() < 1e-5
    with pytest.raises(TypeError, match="bicubic"):
        torch_signature(mindspore.nn.Upsample, "torch.nn.Upsample")(scale_factor=factor, mode="bicubic")


def test_a_factor_torch_already_recomputes_is_not_noted_and_an_infinite_one_is_refused():
    _, diags = tx("""\
        def f(x):
            return F.interpolate(x, scale_factor=1.5, recompute_scale_factor=True)
        """)
    assert "RC310" not in diags and "RC309" not in diags
    out, diags = tx("""\
        def f(x):
            return F.interpolate(x, scale_factor=1e999)
        """)
    assert "F.interpolate(x, scale_factor=1e999)" in out and "finite" in diags["RC309"].message
