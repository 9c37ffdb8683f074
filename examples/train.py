"""One training step for each example model on synthetic data, with activation checkpointing on.

    python -m examples.train                   # one SGD step per model; prints the losses
    python -m examples.train --check           # also the same step without checkpointing: loss and gradients must agree
    python -m examples.train --model resnet --model mlp --dropout 0.1 --check

Exit status: 0 done (and, with --check, everything agreed); 1 a --check mismatch; 2 a usage error.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Callable
from unittest import mock

import torch

from . import tinynets
from .tinynets import data, mlp

WRAPPER_PREFIX = "_checkpoint_wrapped_module."


def _call_plainly(function, *args, **kwargs):
    """Stands in for torch's checkpoint where a model has no switch of its own (the seed MLP)."""
    return function(*args)


@dataclass
class Example:
    name: str
    form: str  # how the model calls checkpointing
    # (the tinynets package, checkpointing, dropout) -> model; the package is a parameter so that the same builder
    # makes the translated twin from a translated copy of tinynets (recompat demo)
    build: Callable[[ModuleType, bool, float], torch.nn.Module]
    batch: Callable[[int], tuple]  # seed -> (inputs, target)
    plain: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext  # run with checkpointing off


def _encoder(nets, ckpt, p):
    config = nets.TinyEncoderConfig(hidden_dropout_prob=p, attention_probs_dropout_prob=p)
    model = nets.TinyEncoderForSequenceClassification(config)
    if ckpt:
        model.gradient_checkpointing_enable()
    return model


def _mixer(nets, ckpt, p):
    model = nets.TinyMixer(drop_rate=p)
    model.set_grad_checkpointing(ckpt)
    return model


def _convmixer(nets, ckpt, p):
    model = nets.TinyConvMixer()
    if ckpt:
        model.enable_activation_checkpointing()
    return model


EXAMPLES = [
    Example("mlp", "cp(self._checkpoint, x): a bound method, reentrant by default",
            lambda nets, ckpt, p: nets.Net(),
            lambda seed: data.feature_batch(num_features=12, num_outputs=2, seed=seed),
            plain=lambda: mock.patch.object(mlp, "cp", _call_plainly)),
    Example("encoder", "functools.partial(checkpoint, use_reentrant=False) held in self._gradient_checkpointing_func",
            _encoder,
            lambda seed: data.token_batch(seq_length=12, vocab_size=50, num_outputs=3, seed=seed)),
    Example("densenet", "cp.checkpoint(bn_function, *prev_features): a closure over a splatted list",
            lambda nets, ckpt, p: nets.TinyDenseNet(drop_rate=p, memory_efficient=ckpt),
            lambda seed: data.image_batch(size=16, num_outputs=10, seed=seed)),
    Example("resnet", "checkpoint.checkpoint(blk, x, use_reentrant=False) per block of a _make_layer stage",
            lambda nets, ckpt, p: nets.TinyResNet(use_checkpoint=ckpt),
            lambda seed: data.image_batch(size=16, num_outputs=10, seed=seed)),
    Example("trunk", "checkpoint_sequential(self.trunk, 3, x, use_reentrant=False) over 8 blocks",
            lambda nets, ckpt, p: nets.DeepMLP(in_features=20, dropout=p, checkpoint_segments=3 if ckpt else 0),
            lambda seed: data.feature_batch(num_features=20, num_outputs=4, seed=seed)),
    Example("mixer", "checkpoint(blk, x) through the project's own wrapper (from .utils import checkpoint)",
            _mixer,
            lambda seed: data.image_batch(size=16, num_outputs=10, seed=seed)),
    Example("convmixer", "checkpoint_wrapper(blk) on each block",
            _convmixer,
            lambda seed: data.image_batch(size=16, num_outputs=10, seed=seed)),
]


@dataclass
class StepResult:
    loss: float
    loss_after: float
    grads: dict
    buffers: dict
    recomputed: list  # names of the modules whose forward ran again during backward()
    params: int


def mse(output, target):
    return ((output - target) ** 2).mean()


def _canonical(name):
    return name.replace(WRAPPER_PREFIX, "")


def train_step(example: Example, checkpointing: bool, *, seed: int, dropout: float, lr: float) -> StepResult:
    torch.manual_seed(seed)
    model = example.build(tinynets, checkpointing, dropout)
    model.train()
    inputs, target = example.batch(seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    # A module whose forward runs during backward() is being recomputed.
    recomputed, in_backward = set(), [False]

    def note_call(name):
        def hook(module, args, output):  # returns None: the output is left as it is
            if in_backward[0]:
                recomputed.add(name)
        return hook

    handles = [m.register_forward_hook(note_call(n)) for n, m in model.named_modules()]
    torch.manual_seed(seed + 1)  # the dropout masks
    with contextlib.nullcontext() if checkpointing else example.plain():
        optimizer.zero_grad()
        loss = mse(model(*inputs), target)
        in_backward[0] = True
        loss.backward()
        in_backward[0] = False
    for h in handles:
        h.remove()
    grads = {_canonical(n): p.grad.detach().clone() for n, p in model.named_parameters()}
    optimizer.step()
    buffers = {_canonical(n): b.detach().clone() for n, b in model.named_buffers()}
    with contextlib.nullcontext() if checkpointing else example.plain():
        loss_after = mse(model(*inputs), target).item()
    return StepResult(
        loss=loss.item(),
        loss_after=loss_after,
        grads=grads,
        buffers=buffers,
        recomputed=sorted(_canonical(n) for n in recomputed if n),
        params=sum(p.numel() for p in model.parameters()),
    )


def compare(on: StepResult, off: StepResult, rtol: float, atol: float) -> list[str]:
    """What differs between the step with checkpointing and the one without, beyond the tolerance."""
    problems = []
    if not torch.allclose(torch.tensor(on.loss), torch.tensor(off.loss), rtol=rtol, atol=atol):
        problems.append(f"loss {on.loss!r} != {off.loss!r}")
    if on.grads.keys() != off.grads.keys():
        problems.append(f"parameters differ: {sorted(on.grads.keys() ^ off.grads.keys())}")
    common = sorted(on.grads.keys() & off.grads.keys())
    bad = {n: (on.grads[n] - off.grads[n]).abs().max().item() for n in common
           if not torch.allclose(on.grads[n], off.grads[n], rtol=rtol, atol=atol)}
    if bad:
        worst = max(bad, key=bad.get)
        problems.append(f"{len(bad)} of {len(common)} gradients differ (worst: {worst}, max |diff| {bad[worst]:.3g})")
    if not on.recomputed:
        problems.append("checkpointing on, yet no module was recomputed during backward")
    if off.recomputed:
        problems.append(f"checkpointing off, yet these were recomputed: {', '.join(off.recomputed)}")
    return problems


def max_grad_diff(on: StepResult, off: StepResult) -> float:
    diffs = [(on.grads[n] - off.grads[n]).abs().max().item() for n in on.grads.keys() & off.grads.keys()]
    return max(diffs, default=0.0)


def main(argv=None) -> int:
    names = [e.name for e in EXAMPLES]
    parser = argparse.ArgumentParser(prog="python -m examples.train", description=__doc__.split("\n")[0])
    parser.add_argument("--model", action="append", choices=names, help="train only these (repeatable; default: all)")
    parser.add_argument("--check", action="store_true",
                        help="also run each step with checkpointing off and compare loss, gradients and which modules "
                             "were recomputed; exit 1 on a mismatch")
    parser.add_argument("--dropout", type=float, default=0.0,
                        help="dropout probability for the models that have dropout (default: %(default)s, so that "
                             "runs in another framework can be compared number for number)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--atol", type=float, default=1e-6)
    args = parser.parse_args(argv)

    chosen = [e for e in EXAMPLES if not args.model or e.name in args.model]
    start = time.perf_counter()
    print(f"one SGD step per model (lr {args.lr}, seed {args.seed}, dropout {args.dropout}), "
          f"activation checkpointing on; torch {torch.__version__}")
    failed = []
    for example in chosen:
        on = train_step(example, True, seed=args.seed, dropout=args.dropout, lr=args.lr)
        print(f"{example.name:<10} {on.params:>7,} params  loss {on.loss:.6f} -> {on.loss_after:.6f}  "
              f"recomputed {len(on.recomputed):>2} module{'' if len(on.recomputed) == 1 else 's'}  [{example.form}]")
        if not args.check:
            continue
        off = train_step(example, False, seed=args.seed, dropout=args.dropout, lr=args.lr)
        problems = compare(on, off, args.rtol, args.atol)
        changed_buffers = [n for n in on.buffers if not torch.equal(on.buffers[n], off.buffers[n])]
        if problems:
            failed.append(example.name)
            print(f"  check FAILED: {'; '.join(problems)}")
        else:
            print(f"  check ok: loss without checkpointing {off.loss:.6f}, {len(off.grads)} gradients agree "
                  f"(max |diff| {max_grad_diff(on, off):.3g})")
        if changed_buffers:
            print(f"  note: {len(changed_buffers)} buffers differ (BatchNorm inside a checkpointed region updates "
                  f"its running statistics twice): {', '.join(changed_buffers[:3])}{', ...' if len(changed_buffers) > 3 else ''}")
    print(f"done in {time.perf_counter() - start:.2f}s", end="")
    if args.check:
        print(f"; check: {len(chosen) - len(failed)}/{len(chosen)} models agree with and without checkpointing")
        if failed:
            print(f"mismatch: {', '.join(failed)}", file=sys.stderr)
            return 1
    else:
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
