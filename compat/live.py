"""Live tensors per step: what a training run keeps alive from every step.

A run that keeps something of each step grows without bound; a few hundred steps in, it is out of memory, while
every loss and weight still agrees. Each side's live tensors (gc-tracked ``torch.Tensor`` / ``mindspore.Tensor``
objects, Parameters among them) are counted after up to LIVE_SAMPLES steps, spread over the run, with the
process's resident memory. MindSpore's count rising by at least one a step after the first WARM_UP steps, while
torch's does not, fails (MindSpore 2.10's non-reentrant ``mindspore.recompute(..., early_stop=True)`` keeps one
Tensor per block per step; ``early_stop=False`` keeps none). Resident memory is reported, never judged: the
allocators keep what they freed, so it rises without a leak.

Used by compare_training (both sides in one process, one after the other each step) and prove_job.
"""
from __future__ import annotations

import gc
import os

import numpy as np

from .compare import CompareRow

LIVE_SAMPLES = 12          # steps at which live tensors are counted (a gc walk costs ~30 ms)
WARM_UP = 2                # steps before the live-tensor count is taken as the base
NAME = "live tensors per step"

_IS: dict[tuple[type, type], bool] = {}


def live_tensors(cls: type) -> int:
    """The gc-tracked objects that are ``cls`` instances (torch.Tensor, mindspore.Tensor; Parameters count)."""
    n = 0
    for obj in gc.get_objects():
        key = (type(obj), cls)
        hit = _IS.get(key)
        if hit is None:
            try:
                hit = _IS[key] = issubclass(key[0], cls)
            except TypeError:
                hit = _IS[key] = False
        n += hit
    return n


def resident_bytes() -> int:
    """The process's resident memory (Linux; 0 where /proc cannot tell)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def sampled(steps: int) -> set[int]:
    """The steps (1-based) after which to count: at most LIVE_SAMPLES, the last among them."""
    return {int(k) for k in np.unique(np.linspace(1, steps, min(steps, LIVE_SAMPLES)).round())}


def _grows(live: dict[int, int]) -> tuple[bool, str]:
    after = sorted(k for k in live if k >= WARM_UP)
    if len(after) < 3:
        return False, ""
    first, last = after[0], after[-1]
    rise = live[last] - live[first]
    return rise >= last - first, f"{live[first]:,} live tensors after step {first}, {live[last]:,} after {last}"


def live_tensor_row(torch_live: dict[int, int], ms_live: dict[int, int], rss: dict[str, dict[int, int]]) -> CompareRow:
    """MindSpore's live tensors must not grow step after step where torch's do not. ``rss``: resident bytes per
    step, by whose they are ("torch", "MindSpore", or "the process" where both run in one)."""
    t_grows, t_text = _grows(torch_live)
    m_grows, m_text = _grows(ms_live)
    rose = {who: (max(r.values()) - min(r.values())) / 2**20 for who, r in rss.items() if r}
    rss_text = "; resident memory rose " + ", ".join(f"{v:.1f} MiB on {w}" for w, v in rose.items()) if rose else ""
    if not m_text:
        return CompareRow.verdict(NAME, "memory", True,
                                  f"not judged: it takes {WARM_UP + 2} steps or more{rss_text}")
    passed = not m_grows or t_grows
    message = f"torch: {t_text or 'not counted'}; MindSpore: {m_text}{rss_text}"
    if not passed:
        message += (" — MindSpore keeps about one more tensor per step where torch keeps none: something of every "
                    "step stays alive (MindSpore 2.10's non-reentrant recompute with early_stop=True does: pass "
                    "early_stop=False)")
    return CompareRow.verdict(NAME, "memory", passed, message)
