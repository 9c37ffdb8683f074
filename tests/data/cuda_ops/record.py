"""Record the aten ops torch dispatches for each probe on CUDA, for tests/test_selective.py to check offline.

Run on a machine with a CUDA GPU; it needs torch only (recompat and MindSpore need not be installed there):

    python tests/data/cuda_ops/record.py tests/data/cuda_ops/probes.json tests/data/cuda_ops/recorded.json

(a third argument, ``cpu``, dry-runs it here).

probes.json: [{"id", "torch" (an expression over the tensors below), "backend" (an SDPBackend name, or null)}].
The recording holds, per probe, the ops of its forward and of its backward (where the result needs a gradient).
"""
from __future__ import annotations

import contextlib
import json
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils._python_dispatch import TorchDispatchMode

SHAPES = {"x": (2, 3, 8), "x2": (3, 8), "w": (4, 8), "wt": (8, 4), "b": (4,), "q": (2, 2, 3, 4),
          "qa": (2, 2, 16, 64)}


class _Log(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


def _tensors(dtype, device):
    generator = torch.Generator().manual_seed(0)
    return {name: torch.randn(shape, generator=generator).to(device, dtype).requires_grad_()
            for name, shape in SHAPES.items()}


def record(probe: dict, device: str) -> dict:
    dtype = getattr(torch, probe.get("dtype") or "float32")
    scope = {"torch": torch, **_tensors(dtype, device)}
    backend = sdpa_kernel(getattr(SDPBackend, probe["backend"])) if probe.get("backend") else contextlib.nullcontext()
    try:
        with backend, torch.device(device):       # modules the probe builds (nn.LayerNorm(8)) on the device too
            with _Log() as forward:
                out = eval(probe["torch"], scope)
            out = out[0] if isinstance(out, tuple) else out
            backward = _Log()
            if out.requires_grad:
                with backward:
                    out.float().sum().backward()
    except Exception as err:                  # a backend this GPU lacks: recorded as such
        return {**probe, "error": f"{type(err).__name__}: {err}".splitlines()[0]}
    return {**probe, "forward": forward.names, "backward": backward.names}


def main(probes_path: str, out_path: str, device: str = "cuda") -> None:
    probes = json.load(open(probes_path, encoding="utf-8"))
    doc = {"torch": torch.__version__, "cuda": torch.version.cuda,
           "device": torch.cuda.get_device_name(0) if device == "cuda" else device,
           "probes": [record(p, device) for p in probes]}
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{len(probes)} probes recorded on {doc['device']} (torch {doc['torch']}, CUDA {doc['cuda']})")


if __name__ == "__main__":
    main(*sys.argv[1:])
