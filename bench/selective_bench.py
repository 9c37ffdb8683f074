"""Benchmark: selective activation checkpointing, torch and MindSpore side by side (CPU, PyNative).

Not a test: it prints figures. The zoo's selective_block pair (Llama-style blocks, torchtitan's selective policy:
save the matmuls and attention, recompute every second mm), built larger, runs on each side with no
checkpointing (the baseline), whole-block recompute and the policy. For each: the bytes kept for backward by the
forward (compat.memory.SavedTensors: saved-tensor hooks plus the policy's store) and the time of one step
(forward and backward) and of the backward alone, medians of --repeats, with ratios against the baseline of the
same side measured in the same run. MindSpore's backward is a step less a forward under no gradient.

Then the torch forms MindSpore's op-level marks could become (Primitive.recompute() on an attention's scale Mul
and Softmax, mindformers' pattern): no checkpointing (the marks dropped: the translation's choice, RC222), a
checkpoint around each marked op's call, one checkpoint around the attention with a policy that recomputes the
marked ops and saves every other op, one whose policy saves only the matmuls, and the whole attention
checkpointed (what RC222 suggests, recomputing more than the marks asked): bytes kept for backward, against no
checkpointing.

Last, the per-op cost of the dispatch hook MindSpore's selective checkpointing runs on: a chain of --ops small
elementwise ops (8 x 8 tensors, so that dispatch dominates), one gradient step each, recomputed whole
(mindspore.recompute(..., use_reentrant=False)), under an empty MsDispatchMode pair, and under recompat's contexts
(a policy that recomputes everything, so the same ops run); the cost per op is the difference over the ops run.

    python bench/selective_bench.py [--dim 256] [--layers 4] [--batch 4] [--seq 128] [--repeats 5] [--ops 300]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

os.environ.setdefault("GLOG_v", "3")
warnings.simplefilter("ignore")

import mindspore  # noqa: E402
import functools  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts  # noqa: E402

from recompat.compat.memory import SavedTensors  # noqa: E402
from recompat.compat.zoo.selective_block import MsModel, TorchModel  # noqa: E402

CONFIGS = (("none", False, "selective", "checkpoint"), ("whole blocks", True, "checkpoint", "function"),
           ("policy", True, "selective", "selective"))


def _median(f, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def torch_side(x, args, recompute, form):
    torch.manual_seed(0)
    model = TorchModel(recompute, form, dim=args.dim, heads=args.heads, layers=args.layers)
    t = torch.tensor(x, requires_grad=True)
    with SavedTensors("torch") as kept:
        model(t).sum()
    backward = []

    def step():
        loss = model(t).sum()
        start = time.perf_counter()
        loss.backward()
        backward.append(time.perf_counter() - start)
    step_s = _median(step, args.repeats)
    return kept.bytes, step_s, statistics.median(backward[-args.repeats:])


def mindspore_side(x, args, recompute, form):
    mindspore.set_seed(0)
    model = MsModel(recompute, form, dim=args.dim, heads=args.heads, layers=args.layers)
    t = mindspore.Tensor(x)
    grad = mindspore.value_and_grad(lambda a: model(a).sum(), grad_position=0, weights=model.trainable_params())
    with SavedTensors("mindspore") as kept:
        grad(t)
    step_s = _median(lambda: grad(t), args.repeats)
    forward_s = _median(lambda: model(t), args.repeats)      # no gradient taken: nothing kept, nothing recomputed
    return kept.bytes, step_s, step_s - forward_s


MARK_FORMS = ("marks dropped", "each marked op checkpointed", "one checkpoint, policy",
              "one checkpoint, matmuls saved", "whole attention checkpointed")
MATMULS = {torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default}


class MarkedAttention(torch.nn.Module):
    """An attention whose scale Mul and Softmax a MindSpore model would mark with Primitive.recompute()."""

    def __init__(self, dim, heads, form):
        super().__init__()
        self.heads, self.form = heads, form
        self.q, self.k, self.v, self.o = (torch.nn.Linear(dim, dim) for _ in range(4))

    def core(self, x):
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = (m(x).reshape(b, t, self.heads, hd).transpose(1, 2) for m in (self.q, self.k, self.v))
        scores = torch.matmul(q, k.transpose(-1, -2))

        def scale(s):
            return s * hd ** -0.5

        def softmax(s):
            return torch.softmax(s, -1)
        if self.form == "each marked op checkpointed":
            att = checkpoint(softmax, checkpoint(scale, scores, use_reentrant=False), use_reentrant=False)
        else:
            att = softmax(scale(scores))
        return self.o(torch.matmul(att, v).transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        if self.form == "whole attention checkpointed":
            return checkpoint(self.core, x, use_reentrant=False)
        if self.form == "one checkpoint, policy":
            marked = {torch.ops.aten._softmax.default, torch.ops.aten.mul.Tensor}

            def policy(ctx, op, *args, **kwargs):
                return CheckpointPolicy.MUST_RECOMPUTE if op in marked else CheckpointPolicy.MUST_SAVE
        elif self.form == "one checkpoint, matmuls saved":
            def policy(ctx, op, *args, **kwargs):
                return CheckpointPolicy.MUST_SAVE if op in MATMULS else CheckpointPolicy.PREFER_RECOMPUTE
        else:
            return self.core(x)
        return checkpoint(self.core, x, use_reentrant=False,
                          context_fn=functools.partial(create_selective_checkpoint_contexts, policy))


def marks_on_torch(args):
    x = torch.randn(args.batch, args.seq, args.dim, requires_grad=True)
    print(f"\nMindSpore op marks (scale Mul, Softmax) as torch code: attention, dim {args.dim}, {args.heads} heads")
    print(f"{'form':32} {'bytes kept':>14} {'x none':>7}")
    base = None
    for form in MARK_FORMS:
        torch.manual_seed(0)
        model = MarkedAttention(args.dim, args.heads, form)
        with SavedTensors("torch") as kept:
            y = model(x)
        y.sum().backward()
        base = base or kept.bytes
        print(f"{form:32} {kept.bytes:>14,} {kept.bytes / base:>7.3f}")


class _Chain(mindspore.nn.Cell):
    def __init__(self, n_ops):
        super().__init__()
        self.n_ops = n_ops

    def construct(self, x):
        for _ in range(self.n_ops // 2):
            x = mindspore.ops.tanh(x * 0.9)
        return x


class _Recomputed(mindspore.nn.Cell):
    def __init__(self, n_ops, context_fn):
        super().__init__()
        self.chain, self.context_fn = _Chain(n_ops), context_fn

    def construct(self, x):
        return mindspore.recompute(self.chain, x, use_reentrant=False, context_fn=self.context_fn, early_stop=False)


def dispatch_overhead(args):
    from mindspore.utils import MsDispatchMode

    from recompat.compat import selective

    class PassThrough(MsDispatchMode):
        def __ms_dispatch__(self, func, a, kwargs=None):
            return func(*a, **(kwargs or {}))

    def recompute_all(ctx, op, *a, **k):
        return selective.CheckpointPolicy.PREFER_RECOMPUTE

    forms = (("recomputed whole", None), ("empty MsDispatchMode pair", lambda: (PassThrough(), PassThrough())),
             ("recompat's contexts", lambda: selective.create_selective_checkpoint_contexts(recompute_all)))
    x = mindspore.Tensor(np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32))
    ran = args.ops * 2     # each op runs in the forward and again in the recomputation
    grads = [mindspore.value_and_grad(_Recomputed(args.ops, context_fn), grad_position=0) for _, context_fn in forms]
    for grad in grads:
        grad(x)                                          # warm up
    # the forms take turns and the fastest run of each is kept: pauses of a shared machine hit single runs
    steps = [[] for _ in forms]
    for _ in range(args.repeats * 3):
        for grad, times in zip(grads, steps):
            start = time.perf_counter()
            grad(x)
            times.append(time.perf_counter() - start)
    print(f"\nMindSpore dispatch hook: a chain of {args.ops} elementwise ops on 8 x 8, one gradient step; the "
          f"fastest of {args.repeats * 3}, the forms taking turns")
    print(f"{'form':28} {'step s':>9} {'x whole':>8} {'us per op run':>14}")
    base = min(steps[0])
    for (name, _), times in zip(forms, steps):
        step = min(times)
        print(f"{name:28} {step:>9.4f} {step / base:>8.2f} {(step - base) / ran * 1e6:>14.1f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ops", type=int, default=300)
    args = parser.parse_args(argv)
    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    x = np.random.default_rng(0).standard_normal((args.batch, args.seq, args.dim)).astype(np.float32)
    print(f"selective_block: {args.layers} blocks, dim {args.dim}, {args.heads} heads, batch {args.batch} x "
          f"{args.seq} tokens; medians of {args.repeats}")
    print(f"{'side':10} {'checkpointing':13} {'bytes kept':>14} {'x none':>7} {'step s':>8} {'x none':>7} "
          f"{'backward s':>10} {'x none':>7}")
    kept_by = {}
    for side, run in (("torch", torch_side), ("mindspore", mindspore_side)):
        base = None
        for name, recompute, torch_form, ms_form in CONFIGS:
            kept, step_s, back_s = run(x, args, recompute, torch_form if side == "torch" else ms_form)
            base = base or (kept, step_s, back_s)
            kept_by[side, name] = kept
            print(f"{side:10} {name:13} {kept:>14,} {kept / base[0]:>7.3f} {step_s:>8.4f} {step_s / base[1]:>7.2f} "
                  f"{back_s:>10.4f} {back_s / base[2]:>7.2f}")
    t, m = kept_by["torch", "policy"], kept_by["mindspore", "policy"]
    print(f"bytes kept under the policy: MindSpore / torch = {m / t:.4f}")
    marks_on_torch(args)
    dispatch_overhead(args)


if __name__ == "__main__":
    main()
