"""recompat.runtime.einsum: torch.einsum on MindSpore, where MindSpore 2.10 has no CPU kernel of its own.

Generated equations (one to three operands, shared, summed and repeated labels, the output explicit or implicit,
``...`` broadcast dimensions, size-1 dimensions) give torch's values and gradients; an equation that does not fit
raises ValueError as torch does. The real equations of MONAI's attention blocks are pinned by name.
"""
from __future__ import annotations

import os

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.runtime

ms = pytest.importorskip("mindspore")
torch = pytest.importorskip("torch")

from recompat.runtime import einsum  # noqa: E402

LABELS = "abcdE"


@st.composite
def equations(draw):
    """(equation, operand shapes): a size per label (1 sometimes, to broadcast), each operand a few labels."""
    sizes = {label: draw(st.integers(1, 3)) for label in LABELS}
    ellipsis = draw(st.lists(st.integers(1, 2), max_size=2))     # the broadcast dimensions' sizes
    terms, shapes = [], []
    for _ in range(draw(st.integers(1, 3))):
        labels = draw(st.lists(st.sampled_from(LABELS), max_size=4))
        shape = [sizes[label] for label in labels]
        term = "".join(labels)
        if ellipsis and draw(st.booleans()):
            width = draw(st.integers(0, len(ellipsis)))
            at = draw(st.integers(0, len(labels)))
            dims = [draw(st.sampled_from([1, n])) for n in ellipsis[len(ellipsis) - width:]]   # broadcast by 1
            term, shape = term[:at] + "..." + term[at:], shape[:at] + dims + shape[at:]
        terms.append(term)
        shapes.append(tuple(shape))
    seen = [label for term in terms for label in term if label.isalpha()]
    if draw(st.booleans()):
        return ",".join(terms), shapes          # implicit output
    output = draw(st.permutations(sorted(set(seen))))
    output = "".join(output[:draw(st.integers(0, len(output)))])
    if any("..." in term for term in terms) and draw(st.booleans()):
        output = "..." + output
    return ",".join(terms) + "->" + output, shapes


def _both(equation, shapes, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    expected = torch.einsum(equation, *tensors)
    weight = torch.tensor(rng.standard_normal(tuple(expected.shape)).astype(np.float32))
    (expected * weight).sum().backward()

    inputs = [ms.Tensor(a) for a in arrays]
    got = einsum(equation, *inputs)
    grads = ms.grad(lambda *xs: (einsum(equation, *xs) * ms.Tensor(weight.numpy())).sum(),
                    tuple(range(len(inputs))))(*inputs)
    grads = grads if isinstance(grads, tuple) else (grads,)
    return expected, tensors, got, grads


def _assert_agree(equation, shapes):
    expected, tensors, got, grads = _both(equation, shapes)
    assert tuple(got.shape) == tuple(expected.shape), equation
    np.testing.assert_allclose(got.asnumpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-5, err_msg=equation)
    for i, (grad, tensor) in enumerate(zip(grads, tensors)):
        np.testing.assert_allclose(grad.asnumpy(), tensor.grad.numpy(), rtol=1e-5, atol=1e-5,
                                   err_msg=f"{equation}: the gradient of operand {i}")


@settings(max_examples=int(os.environ.get("RC_EXAMPLES", 60)), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(equations())
def test_generated_equations_give_torchs_values_and_gradients(case):
    equation, shapes = case
    note(f"torch.einsum({equation!r}) on shapes {shapes}")
    try:
        torch.einsum(equation, *[torch.zeros(s) for s in shapes])
    except RuntimeError as exc:          # torch refuses it (an output label twice, ...): so must we
        with pytest.raises(ValueError):
            einsum(equation, *[ms.Tensor(np.zeros(s, np.float32)) for s in shapes])
        note(f"torch: {exc}")
        return
    _assert_agree(equation, shapes)


@pytest.mark.parametrize("equation,shapes", [
    ("blxd,blyd->blxy", [(2, 3, 4, 5), (2, 3, 6, 5)]),     # MONAI's SABlock and CrossAttentionBlock
    ("bhxy,bhyd->bhxd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
    ("bhwc,hkc->bhwk", [(2, 3, 4, 5), (3, 6, 5)]),         # MONAI's relative positions
    ("qij,bpq->bpij", [(3, 4, 5), (2, 2, 3)]),             # MONAI's RegUNet warp
    ("ii->i", [(3, 3)]),                                   # a diagonal
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("...,...", [(1,), (2, 1)]),                           # found by the generator: an outer product, batched
    ("...,...->", [(1,), (2,)]),                           # found by the generator: a size-1 dimension summed
])
def test_equations_of_real_models_and_found_bugs(equation, shapes):
    _assert_agree(equation, shapes)


def test_operands_as_one_list_and_the_sublist_form():
    a, b = np.ones((4,), np.float32), np.arange(3, dtype=np.float32)
    pair = einsum("m,d->md", [ms.Tensor(a), ms.Tensor(b)])      # MONAI's pos_embed_utils passes a list
    assert pair.asnumpy().tolist() == torch.einsum("m,d->md", [torch.tensor(a), torch.tensor(b)]).tolist()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert (einsum(ms.Tensor(x), [0, 1], ms.Tensor(x), [2, 1], [0, 2]).asnumpy().tolist()
            == torch.einsum(torch.tensor(x), [0, 1], torch.tensor(x), [2, 1], [0, 2]).tolist())


@pytest.mark.parametrize("equation,shapes,match", [
    ("ij,jk->ik", [(2, 3)], "2 operand subscripts for 1 operands"),
    ("ijk->i", [(2, 3)], "'ijk' does not fit an operand of 2 dimensions"),
    ("ij->ix", [(2, 3)], "must each appear once"),
    ("ij->ii", [(2, 3)], "must each appear once"),
])
def test_an_equation_that_does_not_fit_names_what_is_wrong(equation, shapes, match):
    with pytest.raises(ValueError, match=match):
        einsum(equation, *[ms.Tensor(np.zeros(s, np.float32)) for s in shapes])


class _TwoEquations(ms.nn.Cell):
    """MONAI's self-attention's two einsums in one construct, after a layer with parameters (their gradients are
    what GRAPH mode compiles)."""

    def __init__(self):
        super().__init__()
        self.fc = ms.nn.Dense(5, 5)

    def construct(self, q, v):
        q = self.fc(q)
        att = ms.ops.softmax(einsum("blxd,blyd->blxy", q, q), axis=-1)
        return einsum("bhxy,bhyd->bhxd", att, v) + einsum("ii->i", q[0, 0, :, :])[None, None, None, :4].sum()


def test_graph_mode_compiles_einsum_with_the_values_of_pynative():
    """The steps are worked out from the equation and the shapes while GRAPH mode compiles (ops.constexpr): a
    construct with two equations compiles, and each gives what it gives in PyNative. (MONAI's ViT, UNETR and
    ViTAutoEnc did not compile while einsum worked the equation out in Python at run time.)"""
    from recompat.compat import recomputed_ops

    rng = np.random.default_rng(0)
    q, v = (ms.Tensor(rng.standard_normal(s).astype(np.float32)) for s in [(2, 3, 5, 5), (2, 3, 5, 4)])
    net = _TwoEquations()
    assert recomputed_ops(net, q, v) == []            # it compiles (and nothing is marked)
    eager = net(q, v).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        compiled = net(q, v).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(compiled, eager, rtol=1e-6, atol=1e-6)
