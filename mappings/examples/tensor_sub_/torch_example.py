"""torch.Tensor.sub_ in place, with a scale: a tensor shifted where it is held."""
SHAPE = (16, 16)


def init(tensor):
    tensor.sub_(2.0, alpha=0.5)
    return tensor
