"""torch.Tensor.uniform_ in place with bounds that are not symmetric, as a truncated-normal initialiser starts."""
SHAPE = (128, 128)


def init(tensor):
    tensor.uniform_(-0.5, 0.9)
    return tensor
