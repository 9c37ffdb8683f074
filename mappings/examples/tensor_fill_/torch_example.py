"""torch.Tensor.fill_ in place through a parameter's .data (its storage), as an initializer."""
SHAPE = (128, 128)


def init(tensor):
    tensor.data.fill_(0.25)
    return tensor
