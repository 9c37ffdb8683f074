"""torch.Tensor.mul_ in place: a tensor scaled where it is held (a parameter, as init code does)."""
SHAPE = (16, 16)


def init(tensor):
    tensor.mul_(0.5)
    return tensor
