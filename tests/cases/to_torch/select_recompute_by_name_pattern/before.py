import re

from mindspore import nn


def set_pattern_recompute(layer, pattern, set_on=True):
    """mindformers' select recompute: the attributes whose names match a pattern of the configuration."""
    for attr in dir(layer):
        if re.match(pattern, attr):
            operator = getattr(layer, attr)
            if hasattr(operator, "recompute"):
                operator.recompute(set_on)
    for name, cell in layer.name_cells().items():
        if re.match(pattern, name):
            getattr(layer, name).recompute()
