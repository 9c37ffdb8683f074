"""translate --scope model --to torch on MindSpore's training step (translator/steps_to_torch.py): a value_and_grad
step becomes torch's loop; one torch's loop cannot say is left whole, with its calls, and says why (RC348), never
half-rewritten. Whole outputs are in tests/cases/to_torch/model_scope_value_and_grad_*; that the translated loop
trains as the MindSpore script does is tests/test_jobs.py's (prove_job(..., to="torch"))."""
from __future__ import annotations

import ast
import textwrap

import pytest

from recompat.translator.translate import translate_bytes

HEAD = textwrap.dedent("""\
    import mindspore
    from mindspore import nn, ops
    from mindspore.experimental import optim

    model = nn.Dense(4, 1)
    optimizer = optim.SGD(model.trainable_params(), lr=0.1)
    loss_fn = nn.MSELoss()


    def forward_fn(x, y):
        return loss_fn(model(x), y)


    def two_outputs(x, y):
        out = model(x)
        return loss_fn(out, y), out


""")


def _translate(body: str):
    text = HEAD + textwrap.dedent(body)
    result = translate_bytes(text.encode(), "train.py", to="torch", scope="model")
    out = (result.new_data or text.encode()).decode()
    ast.parse(out)
    diagnostics = [d for s in result.sites for d in s.diagnostics]
    return text, out, diagnostics


REFUSED = {
    "gradients with respect to an input (grad_position left at 0)": (
        """\
        grad_fn = mindspore.value_and_grad(forward_fn)
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        """, "with respect to inputs"),
    "no weights": (
        """\
        grad_fn = mindspore.value_and_grad(forward_fn, None)
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        """, "given no weights"),
    "has_aux decided at run time": (
        """\
        aux = True
        grad_fn = mindspore.value_and_grad(two_outputs, None, optimizer.parameters, has_aux=aux)
        (loss, _), grads = grad_fn(x, y)
        optimizer(grads)
        """, "decided at run time"),
    "several outputs differentiated without has_aux (their sum)": (
        """\
        grad_fn = ops.value_and_grad(two_outputs, None, optimizer.parameters)
        (loss, out), grads = grad_fn(x, y)
        optimizer(grads)
        """, "returns several values and has_aux is not True"),
    "return_ids": (
        """\
        grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, return_ids=True)
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        """, "return_ids"),
    "gradients scaled by hand": (
        """\
        grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
        loss, grads = grad_fn(x, y)
        grads = [g * 0.5 for g in grads]
        optimizer(grads)
        """, "the gradients are read by `grads = [g * 0.5 for g in grads]`"),
    "gradients read after the update": (
        """\
        grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        print(len(grads))
        """, "read again by `print(len(grads))`, after the optimizer's update"),
    "gradients clipped, then never used": (
        """\
        grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
        loss, grads = grad_fn(x, y)
        grads = ops.clip_by_norm(grads, 1.0)
        """, "clipped after `loss, grads = grad_fn(x, y)` and then never used"),
    "the gradient function passed on": (
        """\
        grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
        steps = [grad_fn]
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        """, "grad_fn is used by `steps = [grad_fn]`"),
    "a call not unpacked": (
        """\
        grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
        out = grad_fn(x, y)
        optimizer(out[1])
        """, "its call `out = grad_fn(x, y)` is not unpacked as `value, grads = grad_fn(...)`"),
    "a clip with a norm torch computes otherwise": (
        """\
        grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
        loss, grads = grad_fn(x, y)
        grads = ops.clip_by_norm(grads, 1.0, norm_type=1.0)
        optimizer(grads)
        """, "norm_type=1.0 has no torch counterpart"),
    "a clip of weights recompat cannot name in torch": (
        """\
        weights = model.trainable_params()
        grad_fn = mindspore.value_and_grad(forward_fn, None, weights)
        loss, grads = grad_fn(x, y)
        grads = ops.clip_by_norm(grads, 1.0)
        optimizer(grads)
        """, "cannot tell torch's parameters from the weights weights"),
    "never called here": (
        """\
        grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
        """, "never called where it is seen"),
    "a call sharing its line": (
        """\
        grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
        x = 1; loss, grads = grad_fn(x, y)
        optimizer(grads)
        """, "shares a line with another statement"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_step_torchs_loop_cannot_say_is_left_whole_and_says_why(case):
    body, why = REFUSED[case]
    text, out, diagnostics = _translate(body)
    refused = [d for d in diagnostics if d.code == "RC348"]
    assert len(refused) == 1 and why in refused[0].message, [d.message for d in diagnostics]
    for line in textwrap.dedent(body).splitlines():     # each statement of the step, as it was: nothing half-done
        assert line in out.splitlines(), line
    code = "\n".join(line for line in out.splitlines() if not line.lstrip().startswith("#"))
    assert "zero_grad" not in code and "backward()" not in code
    assert "import mindspore\n" in code or "from mindspore import ops\n" in code     # what the step reads stays
    assert not any(d.code == "RC347" for d in diagnostics)


def test_the_loop_is_written_at_the_end_of_a_file_without_a_final_newline():
    body = ("grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)\n"
            "for step in range(2):\n"
            "    loss, grads = grad_fn(x, y)\n"
            "    optimizer(grads)")
    text, out, diagnostics = _translate(body)
    assert [d.code for d in diagnostics if d.code in ("RC347", "RC348")] == ["RC347"]
    assert out.endswith("    optimizer.step()")
    assert "    loss = forward_fn(x, y)\n    loss.backward()\n" in out
    assert "grad_fn" not in out


def test_each_call_of_one_gradient_function_becomes_a_loop_with_its_own_optimizer():
    body = """\
    other = optim.SGD(model.trainable_params(), lr=0.01)
    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)


    def first(x, y):
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        return loss


    def second(x, y):
        loss, g = grad_fn(x, y)
        other(g)
        return loss
    """
    text, out, diagnostics = _translate(body)
    done = [d for d in diagnostics if d.code == "RC347"]
    assert len(done) == 1 and "at its calls, 2 step(s) (optimizer, other)" in done[0].message
    assert "    optimizer.zero_grad()\n    loss = forward_fn(x, y)\n    loss.backward()\n    optimizer.step()\n" in out
    assert "    other.zero_grad()\n    loss = forward_fn(x, y)\n    loss.backward()\n    other.step()\n" in out


def test_a_call_whose_gradients_are_never_read_is_the_functions_call_alone():
    """Evaluation through the step's function (MindSpore computes gradients nobody reads): torch calls the
    function, with no zero_grad(), backward() or step()."""
    body = """\
    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)


    def train(x, y):
        loss, grads = grad_fn(x, y)
        optimizer(grads)


    def evaluate(x, y):
        loss, grads = grad_fn(x, y)
        return loss
    """
    text, out, diagnostics = _translate(body)
    done = [d.message for d in diagnostics if d.code == "RC347"]
    assert len(done) == 1 and "1 step(s) (optimizer)" in done[0] \
        and "1 call(s) whose gradients are never read: forward_fn(...) alone" in done[0]
    assert "def evaluate(x, y):\n    loss = forward_fn(x, y)\n    return loss\n" in out
    assert out.count("backward()") == 1 and out.count("zero_grad()") == 1


def test_a_name_defined_in_two_functions_is_each_functions_own():
    """Two training functions each define their own grad_fn (a real script's form): each call is its own
    definition's, never rewritten twice."""
    body = """\
    def train_a(x, y):
        grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)

        def step(x, y):
            loss, grads = grad_fn(x, y)
            optimizer(grads)
        step(x, y)


    def train_b(x, y):
        grad_fn = mindspore.value_and_grad(two_outputs, None, optimizer.parameters, has_aux=True)
        (loss, _), grads = grad_fn(x, y)
        optimizer(grads)


    def unrelated(grad_fn, x, y):
        return grad_fn(x, y)
    """
    text, out, diagnostics = _translate(body)
    assert [d.code for d in diagnostics if d.code in ("RC347", "RC348")] == ["RC347", "RC347"]
    assert "        loss = forward_fn(x, y)\n" in out and "    (loss, _) = two_outputs(x, y)\n" in out
    assert "    return grad_fn(x, y)\n" in out and out.count("zero_grad()") == 2


def test_one_name_assigned_twice_in_one_scope_is_left_whole():
    body = """\
    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
    grad_fn = mindspore.value_and_grad(two_outputs, None, optimizer.parameters, has_aux=True)
    (loss, _), grads = grad_fn(x, y)
    optimizer(grads)
    """
    text, out, diagnostics = _translate(body)
    refused = [d.message for d in diagnostics if d.code == "RC348"]
    assert len(refused) == 2 and all("grad_fn is assigned 2 times where it is seen" in m for m in refused)
    assert "    (loss, _), grads = grad_fn(x, y)" not in out and "(loss, _), grads = grad_fn(x, y)\n" in out
