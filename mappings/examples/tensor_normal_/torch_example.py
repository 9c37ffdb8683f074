"""torch.Tensor.normal_ in place with a mean and a standard deviation, as an initializer."""
SHAPE = (128, 128)


def init(tensor):
    return tensor.normal_(0.5, 2.0)
