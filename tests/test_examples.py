"""The embedded example project: it runs in torch, checkpointing changes no gradient, and the
translator converts every torch checkpoint site in it while leaving the project's own wrapper alone."""
import subprocess
import sys
from pathlib import Path

import pytest

from recompat.translator.engine import Options, run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@pytest.mark.runtime
def test_examples_train_with_and_without_checkpointing_agree():
    proc = subprocess.run([sys.executable, "-m", "examples.train", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_examples_translate_completely(tmp_path):
    out = tmp_path / "ported"
    report = run(Options(paths=[str(EXAMPLES)], output=str(out), quiet=True))
    assert report.exit_code == 0
    assert report.summary.sites["manual"] == 0
    for src in (EXAMPLES / "tinynets").rglob("*.py"):
        dst = out / src.relative_to(EXAMPLES)
        text = dst.read_text()
        for torch_form in ("import torch.utils.checkpoint", "from torch.utils.checkpoint", "checkpoint.checkpoint(",
                           "checkpoint_sequential(", "checkpoint_wrapper(", "cp("):
            assert torch_form not in text, (dst, torch_form)
        if "checkpoint" not in src.read_text():
            assert dst.read_bytes() == src.read_bytes(), f"{dst} has nothing to translate but changed"
    # the project's own wrapper: its body is translated, its callers are not
    assert "return mindspore.recompute(function, *args" in (out / "tinynets/utils.py").read_text()
    assert "from .utils import checkpoint" in (out / "tinynets/mixer.py").read_text()
    assert "x = checkpoint(blk, x)" in (out / "tinynets/mixer.py").read_text().replace("  ", " ")
    again = run(Options(paths=[str(out)], check=True, quiet=True))
    assert again.exit_code == 0, "translating the translated project again must change nothing"
