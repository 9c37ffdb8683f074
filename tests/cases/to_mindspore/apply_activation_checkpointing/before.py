from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing


def setup(model):
    apply_activation_checkpointing(model, check_fn=is_block)
