from mindspore import ops


def bins(y_pred, batch_size, channels, n):
    # the sizes become one tuple and device= goes: the tuple's closing parenthesis stays
    counts = ops.zeros((batch_size, channels, n))
    return counts


def feature_shape(input_size, device):
    return ops.zeros((*input_size,)).shape
