"""The ops a framework really runs, as its dispatch hook sees them (torch: aten overloads; MindSpore: op names).

    with OpsRun("mindspore") as ran:
        loss, grads = value_and_grad(x)
    ran.counts["MatMul"], ran.names[:5]

An outer logger sees what inner dispatch modes pass on: under selective checkpointing, the ops the recomputation
runs, and not those it hands back from its store. torch's modes apply in backward on CPU (the autograd engine runs
on the caller's thread there).
"""
from __future__ import annotations

from collections import Counter


class OpsRun:
    """Context manager logging every op `framework` runs while it is active, forward and backward."""

    def __init__(self, framework: str):
        if framework not in ("torch", "mindspore"):
            raise ValueError(f"framework must be 'torch' or 'mindspore', not {framework!r}")
        self.framework = framework
        self.names: list[str] = []
        self._mode = None

    @property
    def counts(self) -> Counter:
        return Counter(self.names)

    def __enter__(self):
        names = self.names
        if self.framework == "torch":
            from torch.utils._python_dispatch import TorchDispatchMode

            class _Log(TorchDispatchMode):
                def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                    names.append(str(func))
                    return func(*args, **(kwargs or {}))
        else:
            from mindspore.utils import MsDispatchMode

            class _Log(MsDispatchMode):
                def __ms_dispatch__(self, func, args, kwargs=None):
                    names.append(func.name)
                    return func(*args, **kwargs) if kwargs else func(*args)
        self._mode = _Log()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        mode, self._mode = self._mode, None
        return mode.__exit__(*exc)
