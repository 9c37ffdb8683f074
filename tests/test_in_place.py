"""torch's in-place tensor methods on MindSpore (mappings/in_place.yaml, form assigned): MindSpore 2.10 on CPU has no
kernel for some (clamp_, erfinv_) and runs others without writing into the tensor (mul_, add_), so the translation
computes out of place and writes back through recompat.runtime.assign. And uniform_ with any bounds
(recompat.runtime.UniformBetween: MindSpore's Uniform initializer is symmetric)."""
from __future__ import annotations

import os
import textwrap

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest

from conftest import translate_model

HEADER = "import math\nimport torch\n\n\n"


def tx(body: str):
    return translate_model(HEADER + textwrap.dedent(body))


def test_in_place_arithmetic_is_written_back_through_the_runtime():
    """MONAI's truncated-normal initialiser, step by step."""
    out, diags = tx("""\
        def trunc_normal(tensor, mean, std, a, b):
            tensor.uniform_(2 * a - 1, 2 * b - 1)
            tensor.erfinv_()
            tensor.mul_(std * math.sqrt(2.0))
            tensor.add_(mean)
            tensor.clamp_(min=a, max=b)
            return tensor
        """)
    assert "initialized(tensor, UniformBetween(low=2 * a - 1, high=2 * b - 1))" in out
    assert "assign(tensor, tensor.erfinv())" in out
    assert "assign(tensor, tensor.mul(std * math.sqrt(2.0)))" in out
    assert "assign(tensor, tensor.add(mean))" in out
    assert "assign(tensor, tensor.clamp(min=a, max=b))" in out
    assert "from recompat.runtime import UniformBetween, assign, initialized" in out
    # clamp drops NaN on MindSpore: the domain probes' note (RC327, tests/test_domain.py) is the only one
    assert all(d.status == "converted" or d.code == "RC327" for d in diags), diags


def test_a_view_or_a_value_that_has_no_counterpart_stays_with_the_reason():
    out, diags = tx("""\
        def f(w, x):
            w[0].mul_(2.0)
            x.add_(w, alpha=2)
            return w
        """)
    assert "w[0].mul_(2.0)" in out and "x.add_(w, alpha=2)" in out
    by_api = {d.message.split(":")[0]: d for d in diags}
    assert by_api["torch.Tensor.mul_"].code == "RC303" and "a view or a result" in by_api["torch.Tensor.mul_"].message
    assert by_api["torch.Tensor.add_"].code == "RC309"


@pytest.mark.runtime
def test_the_runtime_writes_a_parameter_and_a_tensor_and_returns_them():
    import mindspore

    from recompat.runtime import UniformBetween, assign, initialized

    p = mindspore.Parameter(mindspore.Tensor(np.ones((4, 4), np.float32)), name="w")
    t = mindspore.Tensor(np.ones((4, 4), np.float32))
    assert assign(p, p.mul(3.0)) is p and assign(t, t.add(1.0)) is t
    assert np.all(p.asnumpy() == 3.0) and np.all(t.asnumpy() == 2.0)
    mindspore.set_seed(0)
    big = mindspore.Parameter(mindspore.Tensor(np.zeros((256, 256), np.float32)), name="u")
    drawn = initialized(big, UniformBetween(2.0, 5.0)).asnumpy()
    assert 2.0 <= drawn.min() < 2.01 and 4.99 < drawn.max() < 5.0 and abs(drawn.mean() - 3.5) < 0.02


def test_a_parameters_data_is_written_through_the_parameter():
    """w.data is another Tensor on MindSpore (tests/test_framework_facts.py): the parameter itself takes the values."""
    out, _ = tx("""\
        def f(w):
            w.data.mul_(0.5)
        """)
    assert "assign(w, w.data.mul(0.5))" in out
