from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing


def enable(model, **kwargs):
    apply_activation_checkpointing(model, **kwargs)


def enable_with_policy(model, policy):
    apply_activation_checkpointing(model, auto_wrap_policy=policy)
