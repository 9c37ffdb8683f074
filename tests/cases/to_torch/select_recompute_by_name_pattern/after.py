import re

from mindspore import nn


def set_pattern_recompute(layer, pattern, set_on=True):
    """mindformers' select recompute: the attributes whose names match a pattern of the configuration."""
    for attr in dir(layer):
        if re.match(pattern, attr):
            operator = getattr(layer, attr)
            if hasattr(operator, "recompute"):
                # recompat: RC223 operator.recompute(...) left as it is: getattr(layer, attr) is an attribute chosen by its name at run time (select recompute by name pattern), so what it marks, operators or Cells, is known only then. In torch an operator's mark has no counterpart that saves memory (RC222) and a Cell's is torch.distributed._composable.checkpoint(cell); to carry the selection, checkpoint the module those names belong to with a selective policy (context_fn=functools.partial(torch.utils.checkpoint.create_selective_checkpoint_contexts, policy)) whose policy recomputes the selected ops
                operator.recompute(set_on)
    for name, cell in layer.name_cells().items():
        if re.match(pattern, name):
            # recompat: RC223 getattr(layer, name).recompute(...) left as it is: getattr(layer, name) is an attribute chosen by its name at run time (select recompute by name pattern), so what it marks, operators or Cells, is known only then. In torch an operator's mark has no counterpart that saves memory (RC222) and a Cell's is torch.distributed._composable.checkpoint(cell); to carry the selection, checkpoint the module those names belong to with a selective policy (context_fn=functools.partial(torch.utils.checkpoint.create_selective_checkpoint_contexts, policy)) whose policy recomputes the selected ops
            getattr(layer, name).recompute()
