"""Planted bugs: twins broken the way migrations break, which the suite must catch.

Each :class:`Mutant` changes one zoo twin (at build time, or after the weights were transferred) and names the
suite cases that must then fail. ``hunt(mutant)`` runs them; the catch rate is the fraction of mutants for which
at least one named case fails -- while the same cases pass without the mutant (``control``), so a failure is the
planted bug's and not the pair's.

=========================  ==================================================================  =============
mutant                     the bug                                                             caught by
=========================  ==================================================================  =============
gelu_approximate           MindSpore GELU left at approximate=True (torch's default is exact)   cross
layernorm_epsilon          LayerNorm epsilon not carried over (1e-3 instead of torch's 1e-5)    cross
batchnorm_momentum         BatchNorm momentum not converted (MindSpore's is 1 - torch's)        cross (buffers)
layers_swapped             two transformer layers applied in the wrong order                    cross
recompute_mark_dropped     the translated model lost its .recompute() mark                      memory
graph_mark_dropped         the residual blocks' .recompute() marks lost (GRAPH mode)            graph-recompute
graph_mark_misplaced       the mark put on the head Dense instead of the residual blocks        graph-recompute
weight_not_transferred     one parameter left at its initial value                              cross
sac_op_lost                the selective policy lost an op of its save list (bmm)              selective
sac_policy_inverted        the policy's MUST_SAVE and PREFER_RECOMPUTE swapped                  selective
sac_full_recompute         context_fn lost: selective checkpointing degraded to whole blocks    selective
sac_op_data_lost           selective.yaml lost the MindSpore names of aten.bmm.default          selective
=========================  ==================================================================  =============
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import zoo
from .suite import SEED, Case, Options, run_case


@dataclass(frozen=True)
class Mutant:
    name: str
    description: str
    pair: str
    cases: tuple[Case, ...]                                  # the cases that must fail with the bug planted
    side: str = "mindspore"                                  # the twin the bug is planted in
    build: Callable | None = None                            # (model, role) -> model, at build time
    transfer: Callable | None = None                         # (model) -> None, after the weights were copied

    def mutate(self, side: str, role: str, model):
        if side == self.side and self.build is not None:
            return self.build(model, role)
        return model

    def after_transfer(self, model) -> None:
        if self.transfer is not None:
            self.transfer(model)


@dataclass
class Hunt:
    mutant: Mutant
    caught: bool
    control_passed: bool
    messages: list[str]

    def to_dict(self) -> dict:
        return {"id": f"planted-bug-{self.mutant.name}", "pair": self.mutant.pair, "check": "planted-bug",
                "variant": self.mutant.name, "status": "caught" if self.caught else "missed",
                "control_passed": self.control_passed, "message": "; ".join(self.messages),
                "description": self.mutant.description}


def hunt(mutant: Mutant, options: Options | None = None) -> Hunt:
    """Run the mutant's cases with and without the bug planted."""
    planted = [run_case(case, mutant=mutant, options=options) for case in mutant.cases]
    control = [run_case(case, options=options) for case in mutant.cases]
    return Hunt(mutant, caught=any(o.status == "failed" for o in planted),
                control_passed=all(o.status == "passed" for o in control),
                messages=[f"{o.case.id}: {o.status}: {o.message.splitlines()[-1] if o.message else ''}"
                          for o in planted])


# --------------------------------------------------------------------------------------------------- the bugs

def _each(model, wanted: type, change: Callable) -> None:
    """``change(cell)`` for every cell of type ``wanted``, in place: parameters and their names stay as they are,
    so the planted setting is the only difference."""
    changed = [cell for _, cell in model.cells_and_names() if type(cell) is wanted]
    if not changed:
        raise LookupError(f"the twin has no {wanted.__name__} to plant the bug in")
    for cell in changed:
        change(cell)


def _gelu_approximate(model, role):
    from mindspore import nn
    _each(model, nn.GELU, lambda cell: setattr(cell, "approximate", "tanh"))     # what GELU() defaults to
    return model


def _layernorm_epsilon(model, role):
    from mindspore import nn, ops

    def change(cell):
        cell.epsilon = 1e-3
        cell.layer_norm = ops.LayerNorm(begin_norm_axis=cell.begin_norm_axis,
                                        begin_params_axis=cell.begin_params_axis, epsilon=1e-3)
    _each(model, nn.LayerNorm, change)
    return model


def _batchnorm_momentum(model, role):
    from mindspore import nn, ops

    def change(cell):    # nn.BatchNorm2d(momentum=0.1): torch's 0.1 passed through, its update weight is 0.9
        cell.momentum = 0.9
        cell.bn_train = ops.BatchNorm(is_training=True, epsilon=cell.eps, momentum=0.9, data_format=cell.format)
    _each(model, nn.BatchNorm2d, change)
    return model


def _swap_layers(model):
    from mindspore import nn
    first, second = model.layers[0], model.layers[1]
    model.layers = nn.CellList([second, first])


def _unmarked(pair: str, form: str, then: Callable | None = None):
    """The twin with recompute as the pair's plain twin (its marks lost), then ``then(twin)`` (a mark misplaced)."""
    def build(model, role):
        if role != "recompute":
            return model
        twin = zoo.get(pair).build_mindspore(recompute=False, form=form, seed=SEED)
        if then is not None:
            then(twin)
        return twin
    return build


def _forget_a_weight(model):
    import mindspore
    weight = model.fc1.weight
    fresh = np.random.default_rng(99).standard_normal(weight.shape).astype(np.float32) * 0.1
    weight.set_data(mindspore.Tensor(fresh))


def _policy_changed(change: Callable):
    """The MindSpore twin's selective policy (its context_fn) passed through `change(policy) -> policy`."""
    def build(model, role):
        from . import selective
        from .zoo.selective_block import titan_policy

        if getattr(model, "context_fn", None) is not None:
            policy = change(titan_policy(selective.ops, selective.CheckpointPolicy))
            model.context_fn = lambda: selective.create_selective_checkpoint_contexts(policy)
        return model
    return build


def _lose_bmm(policy):
    from .selective import CheckpointPolicy, ops
    return lambda ctx, op, *a, **k: (CheckpointPolicy.PREFER_RECOMPUTE if op == ops.aten.bmm.default
                                     else policy(ctx, op, *a, **k))


def _invert(policy):
    from .selective import CheckpointPolicy
    swap = {CheckpointPolicy.MUST_SAVE: CheckpointPolicy.PREFER_RECOMPUTE,
            CheckpointPolicy.PREFER_RECOMPUTE: CheckpointPolicy.MUST_SAVE}
    def inverted(ctx, op, *args, **kwargs):
        decision = policy(ctx, op, *args, **kwargs)      # once: torchtitan's policy counts the mms it is shown
        return swap.get(decision, decision)
    return inverted


def _op_data_without(torch_op: str):
    """The MindSpore twin's contexts read selective.yaml with `torch_op`'s MindSpore ops missing (the op data, not
    the policy, lost them): its policy is then shown those ops under their own names."""
    def build(model, role):
        import dataclasses

        from recompat import mappings

        from . import selective

        original = getattr(model, "context_fn", None)
        if original is None:
            return model
        data = mappings.default().selective
        table = selective._Table(dataclasses.replace(data, ops=tuple(e for e in data.ops if e.torch != torch_op)))

        def context_fn():
            forward, recompute = original()
            forward.table = table
            return forward, recompute
        model.context_fn = context_fn
        return model
    return build


def _drop_context_fn(model, role):
    if getattr(model, "context_fn", None) is not None:
        model.context_fn = None              # mindspore.recompute(..., context_fn=None): the whole block
    return model


def _cross(pair: str, *variants: str) -> tuple[Case, ...]:
    return tuple(Case(pair, "cross", v, "cpu", "pynative") for v in variants)


_SELECTIVE = (Case("selective_block", "selective", "policy", "cpu", "pynative"),)
_GRAPH_RESNET = (Case("resnet_bn", "graph-recompute", "cell", "cpu", "graph"),)

MUTANTS = (
    Mutant("gelu_approximate", "MindSpore's GELU built with approximate=True (tanh) where torch's is exact",
           "transformer", _cross("transformer", "plain"), build=_gelu_approximate),
    Mutant("layernorm_epsilon", "LayerNorm epsilon 1e-3 on the MindSpore side, torch's 1e-5 not carried over",
           "transformer", _cross("transformer", "plain"), build=_layernorm_epsilon),
    Mutant("batchnorm_momentum", "BatchNorm momentum 0.1 copied verbatim: MindSpore's momentum is 1 - torch's",
           "resnet_bn", _cross("resnet_bn", "plain"), build=_batchnorm_momentum),
    Mutant("layers_swapped", "the two transformer layers run in the wrong order on the MindSpore side",
           "transformer", _cross("transformer", "plain"), transfer=_swap_layers),
    Mutant("recompute_mark_dropped", "the MindSpore model lost its fc2.recompute() mark (Cell form)",
           "seed_fc", (Case("seed_fc", "memory", "mindspore:cell", "cpu", "pynative"),),
           build=_unmarked("seed_fc", "cell")),
    Mutant("graph_mark_dropped", "the compiled MindSpore model lost the .recompute() marks _make_layer puts on its "
           "residual blocks", "resnet_bn", _GRAPH_RESNET, build=_unmarked("resnet_bn", "cell")),
    Mutant("graph_mark_misplaced", "the .recompute() mark put on the head Dense (fc) instead of the residual blocks",
           "resnet_bn", _GRAPH_RESNET, build=_unmarked("resnet_bn", "cell", lambda twin: twin.fc.recompute())),
    Mutant("weight_not_transferred", "fc1.weight left at a fresh initial value instead of torch's",
           "seed_fc", _cross("seed_fc", "plain"), transfer=_forget_a_weight),
    Mutant("sac_op_lost", "the MindSpore twin's selective policy lost aten.bmm.default from its save list",
           "selective_block", _SELECTIVE, build=_policy_changed(_lose_bmm)),
    Mutant("sac_policy_inverted", "the MindSpore twin's policy returns PREFER_RECOMPUTE for MUST_SAVE and back",
           "selective_block", _SELECTIVE, build=_policy_changed(_invert)),
    Mutant("sac_full_recompute", "context_fn lost on the way: the MindSpore twin recomputes whole blocks",
           "selective_block", _SELECTIVE, build=_drop_context_fn),
    Mutant("sac_op_data_lost", "selective.yaml lost the MindSpore ops that stand for aten.bmm.default: the "
           "MindSpore twin's policy no longer recognises its batch matmuls", "selective_block", _SELECTIVE,
           build=_op_data_without("aten.bmm.default")),
)


def get(name: str) -> Mutant:
    for m in MUTANTS:
        if m.name == name:
            return m
    raise KeyError(f"no planted bug named {name!r}; planted bugs: {', '.join(m.name for m in MUTANTS)}")


def catch_rate(hunts: list[dict]) -> str:
    caught = sum(h["status"] == "caught" for h in hunts)
    missed = [h["variant"] for h in hunts if h["status"] != "caught"]
    return (f"planted bugs caught: {caught}/{len(hunts)} ({caught / len(hunts):.0%})"
            + (f"; missed: {', '.join(missed)}" if missed else ""))
