"""torch.Tensor.erfinv_ in place, after a scale into (-1, 1): the steps of a truncated-normal initialiser."""
SHAPE = (16, 16)


def init(tensor):
    tensor.mul_(0.1)
    tensor.erfinv_()
    return tensor
