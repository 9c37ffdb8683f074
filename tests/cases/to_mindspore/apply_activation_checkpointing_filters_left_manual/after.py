# recompat: RC161 torch names still imported: torch.distributed.algorithms._checkpoint.checkpoint_wrapper.apply_activation_checkpointing
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing


def enable(model, **kwargs):
    # recompat: RC190 torch.distributed.algorithms._checkpoint.checkpoint_wrapper.apply_activation_checkpointing left as it is: **kwargs may hold check_fn or auto_wrap_policy, filters that a loop written here cannot see
    apply_activation_checkpointing(model, **kwargs)


def enable_with_policy(model, policy):
    # recompat: RC190 torch.distributed.algorithms._checkpoint.checkpoint_wrapper.apply_activation_checkpointing left as it is: auto_wrap_policy=policy chooses the modules, and it has no MindSpore counterpart: express the choice as check_fn
    apply_activation_checkpointing(model, auto_wrap_policy=policy)
