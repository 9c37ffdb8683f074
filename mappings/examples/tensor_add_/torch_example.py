"""torch.Tensor.add_ in place: a tensor shifted where it is held (a parameter, as init code does)."""
SHAPE = (16, 16)


def init(tensor):
    tensor.add_(-1.5)
    return tensor
